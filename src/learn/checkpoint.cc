// rltrade learn: checkpoint save/load (see checkpoint.h). LibTorch throws c10::Error on
// I/O and format problems; this file is the edge that turns those into Status.
#include "learn/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/file_io.h"
#include "core/options.h"
#include "core/state_io.h"
#include "learn/es.h"
#include "learn/native_learner.h"
#include "learn/torch_error.h"
#include "learn/torch_normalizer.h"
#include "runlog/atomic_dir.h"
#include "runlog/manifest.h"

namespace rlt::learn {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "rltrade-ppo-checkpoint 2";
constexpr const char* kEnvStateFile = "envs.bin";

std::string Shapes(PpoTrainer& t) {
  return "num_envs " + std::to_string(t.venv().num_envs()) + "\nobs_dim " +
         std::to_string(t.venv().obs_dim()) + "\nact_dim " + std::to_string(t.venv().act_dim());
}

Status WriteFile(const fs::path& path, const std::string& text) {
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    return Status::IoError("cannot write " + path.string() + ": " +
                           (errno != 0 ? std::strerror(errno) : "write failed") +
                           " (disk full? free space or choose another --run-dir; the previous "
                           "checkpoint is intact)");
  }
  return Status::Ok();
}

// A checkpoint part; a missing one means the checkpoint is incomplete.
Result<std::string> ReadBytes(const fs::path& path) {
  Result<std::string> bytes = ReadFile(path.string());
  if (!bytes.ok() && bytes.status().code() == Status::Code::kNotFound) {
    return Status::NotFound(path.string() + " is missing; the checkpoint is incomplete");
  }
  return bytes;
}

// Serialises the trainer's non-module state into `out` (in memory: LibTorch's file writer
// throws from a destructor on I/O errors such as a full disk, which aborts the process).
void WriteState(PpoTrainer& t, std::ostream& out) {
  const PpoTrainer::State s = t.state();
  torch::serialize::OutputArchive a;
  a.write("counters", torch::tensor({s.total_steps, s.iterations}, torch::kLong));
  a.write("generator", t.generator().get_state());
  {
    std::lock_guard<std::mutex> lock(GlobalGeneratorMutex());
    a.write("global_generator", at::detail::getDefaultCPUGenerator().get_state());
  }
  std::vector<int64_t> starts(s.last_episode_starts.begin(), s.last_episode_starts.end());
  a.write("last_episode_starts", torch::tensor(starts, torch::kLong));
  std::vector<double> returns;
  std::vector<int64_t> lengths;
  for (const auto& [r, l] : s.episodes) {
    returns.push_back(r);
    lengths.push_back(l);
  }
  a.write("episode_returns", torch::tensor(returns, torch::kDouble));
  a.write("episode_lengths", torch::tensor(lengths, torch::kLong));
  if (Learner* native = t.learner()) {
    // The native backend's sampling / permutation RNG: 4 state words, the spare normal's
    // bits and its flag.
    const RngState r = native->rng_state();
    int64_t words[6];
    for (int i = 0; i < 4; ++i) std::memcpy(&words[i], &r.s[i], 8);
    std::memcpy(&words[4], &r.spare, 8);
    words[5] = r.has_spare;
    a.write("native_rng", torch::from_blob(words, {6}, torch::kLong).clone());
    // Recurrent policies: every env's LSTM states (h, c), so a resumed rollout continues.
    std::vector<float> states = native->RecurrentStates();
    if (!states.empty()) {
      a.write(
          "recurrent_states",
          torch::from_blob(states.data(), {static_cast<int64_t>(states.size())}, torch::kFloat32)
              .clone());
    }
  }
  a.save_to(out);
}

Status ReadState(PpoTrainer& t, const fs::path& path) {
  torch::serialize::InputArchive a;
  a.load_from(path.string());
  torch::Tensor counters, gen, global_gen, starts, returns, lengths;
  a.read("counters", counters);
  a.read("generator", gen);
  a.read("global_generator", global_gen);
  a.read("last_episode_starts", starts);
  a.read("episode_returns", returns);
  a.read("episode_lengths", lengths);
  if (starts.numel() != t.venv().num_envs() || returns.numel() != lengths.numel()) {
    return Status::DataError(path.string() + ": state does not match this trainer's env count");
  }
  PpoTrainer::State s;
  s.total_steps = counters[0].item<int64_t>();
  s.iterations = counters[1].item<int64_t>();
  for (int64_t i = 0; i < starts.numel(); ++i) {
    s.last_episode_starts.push_back(static_cast<uint8_t>(starts[i].item<int64_t>()));
  }
  for (int64_t i = 0; i < returns.numel(); ++i) {
    s.episodes.emplace_back(returns[i].item<double>(), lengths[i].item<int64_t>());
  }
  t.set_state(s);
  torch::Tensor native_rng;
  if (Learner* native = t.learner(); native && a.try_read("native_rng", native_rng)) {
    if (native_rng.numel() != 6) {
      return Status::DataError(path.string() + ": native_rng has " +
                               std::to_string(native_rng.numel()) + " values, expected 6");
    }
    const torch::Tensor w = native_rng.to(torch::kLong).contiguous();
    RngState r;
    for (int i = 0; i < 4; ++i) std::memcpy(&r.s[i], w.data_ptr<int64_t>() + i, 8);
    std::memcpy(&r.spare, w.data_ptr<int64_t>() + 4, 8);
    r.has_spare = w.data_ptr<int64_t>()[5] != 0;
    native->set_rng_state(r);
  }
  if (Learner* native = t.learner()) {
    torch::Tensor states;
    std::vector<float> values;
    if (a.try_read("recurrent_states", states)) {
      const torch::Tensor c = states.to(torch::kFloat32).contiguous();
      values.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    }
    if (Status st = native->SetRecurrentStates(values); !st.ok()) {
      return Status::DataError(path.string() + ": " + st.message());
    }
  }
  t.generator().set_state(gen);
  std::lock_guard<std::mutex> lock(GlobalGeneratorMutex());
  at::Generator global = at::detail::getDefaultCPUGenerator();  // shares the impl
  global.set_state(global_gen);
  return Status::Ok();
}

constexpr const char* kGroupFile = "group.txt";
// Version 2 adds the recurrent states; version 1 (MLP policies only) is still read.
constexpr const char* kMemberMagic = "rltrade-member-state 2";
constexpr const char* kMemberMagicV1 = "rltrade-member-state 1";

std::string MemberFileName(int rank) { return "member_" + std::to_string(rank) + ".bin"; }

// What a data-parallel member holds that the others do not: its environments, its
// normaliser's per-env discounted returns, its envs' episode-start flags and (recurrent
// policies) their LSTM states.
std::string MemberState(PpoTrainer& t) {
  StateWriter w;
  w.PutString(kMemberMagic);
  w.PutString(t.venv().SaveState());
  const std::vector<double> returns = t.normalizer()->returns();
  w.Put<uint64_t>(returns.size());
  w.PutArray(returns.data(), returns.size());
  const PpoTrainer::State st = t.state();
  w.PutArray(st.last_episode_starts.data(), st.last_episode_starts.size());
  const std::vector<float> states =
      t.learner() ? t.learner()->RecurrentStates() : std::vector<float>{};
  w.Put<uint64_t>(states.size());
  w.PutArray(states.data(), states.size());
  return w.Release();
}

Status SetMemberState(PpoTrainer& t, std::string_view bytes, const std::string& what) {
  StateReader r(bytes, what);
  std::string_view magic;
  RLT_RETURN_IF_ERROR(r.GetString(&magic, "format"));
  if (magic != kMemberMagic && magic != kMemberMagicV1) {
    return Status::DataError(what + ": format is \"" + std::string(magic) + "\", expected \"" +
                             kMemberMagic + "\" (not a member state of this rltrade version)");
  }
  std::string_view env_state;
  RLT_RETURN_IF_ERROR(r.GetString(&env_state, "environment state"));
  RLT_RETURN_IF_ERROR(r.Expect<uint64_t>(t.venv().num_envs(), "environments"));
  std::vector<double> returns(t.venv().num_envs());
  RLT_RETURN_IF_ERROR(r.GetArray(returns.data(), returns.size(), "discounted returns"));
  PpoTrainer::State st = t.state();
  RLT_RETURN_IF_ERROR(
      r.GetArray(st.last_episode_starts.data(), st.last_episode_starts.size(), "episode starts"));
  std::vector<float> states;
  if (magic == kMemberMagic) {
    const size_t expected = t.learner() ? t.learner()->RecurrentStates().size() : 0;
    RLT_RETURN_IF_ERROR(r.Expect<uint64_t>(expected, "recurrent state values"));
    states.resize(expected);
    RLT_RETURN_IF_ERROR(r.GetArray(states.data(), states.size(), "recurrent states"));
  }
  RLT_RETURN_IF_ERROR(r.Finish());
  RLT_RETURN_IF_ERROR(t.venv().LoadState(std::string(env_state), what));
  if (t.learner()) {
    if (Status st_rec = t.learner()->SetRecurrentStates(states); !st_rec.ok()) {
      return Status::DataError(what + ": " + st_rec.message());
    }
  }
  t.normalizer()->set_returns(returns);
  t.set_state(st);
  return Status::Ok();
}

// The checkpoint's group ("ranks K" and "envs_per_rank N" lines), {1, 0} when it has none
// (written by one process).
std::pair<int, int> ReadGroup(const fs::path& dir) {
  Result<std::string> text = ReadFile((dir / kGroupFile).string());
  if (!text.ok()) return {1, 0};
  int ranks = 1, envs = 0;
  std::sscanf(text->c_str(), "ranks %d\nenvs_per_rank %d", &ranks, &envs);
  return {ranks, envs};
}

// A loader's first checks: `dir` holds a FORMAT file, its MANIFEST matches every file,
// and FORMAT is `expected` (this trainer's algorithm, version and shapes).
Status CheckFormat(const fs::path& dir, const std::string& expected) {
  Result<std::string> text = ReadFile((dir / "FORMAT").string());
  if (!text.ok()) {
    return Status::NotFound(dir.string() +
                            " is not a checkpoint (no FORMAT file); pass a "
                            "directory written by SaveCheckpoint");
  }
  RLT_RETURN_IF_ERROR(VerifyCheckpointFiles(dir));
  if (*text != expected) {
    return Status::DataError(dir.string() + "/FORMAT: expected\n" + expected + "got\n" + *text +
                             "(a checkpoint of another algorithm, version or env shape)");
  }
  return Status::Ok();
}

// policy.pt, policy.rlt (the same parameters in the LibTorch-free tensor format,
// native/tensor_file.h) and normalizer.pt into the staging directory `tmp`. Serialised in
// memory first, then written with our own checked I/O, so that a full disk is a Status
// (the previous checkpoint intact) rather than an abort inside LibTorch.
Status WritePolicyFiles(const fs::path& tmp, ActorCritic& policy, VecNormalizer& normalizer) {
  std::ostringstream policy_bytes;
  try {
    torch::save(policy, policy_bytes);
  } catch (const std::exception& e) {
    return Status::IoError("serialising checkpoint " + tmp.string() + ": " + TorchErrorMessage(e));
  }
  Result<std::string> normalizer_bytes = NormalizerToTorchArchive(*normalizer);
  if (!normalizer_bytes.ok()) {
    return Status::IoError("serialising checkpoint " + tmp.string() + ": " +
                           normalizer_bytes.status().message());
  }
  RLT_RETURN_IF_ERROR(WriteFile(tmp / "policy.pt", policy_bytes.str()));
  RLT_RETURN_IF_ERROR(WriteFile(tmp / "policy.rlt", PolicyToTensorFile(policy).Serialize()));
  return WriteFile(tmp / "normalizer.pt", *normalizer_bytes);
}

// A staging directory for checkpoint `dir` (its parents created).
Result<runlog::StagingDir> StageCheckpoint(const fs::path& dir) {
  const fs::path final_dir = dir.lexically_normal();
  std::error_code ec;
  if (final_dir.has_parent_path()) fs::create_directories(final_dir.parent_path(), ec);
  if (ec) {
    return Status::IoError("cannot create " + final_dir.parent_path().string() + ": " +
                           ec.message());
  }
  return runlog::StagingDir::Create(final_dir.string());
}

// The caller's extra files into the staging directory `tmp`; names it must not use are
// refused. `reserved`: the kind's own state file.
Status WriteExtraFiles(const fs::path& tmp, const std::map<std::string, std::string>& extra_files,
                       const char* reserved) {
  for (const auto& [name, contents] : extra_files) {
    if (name.empty() || name.find('/') != std::string::npos || name == "FORMAT" ||
        name == reserved) {
      return Status::InvalidArgument("checkpoint extra file name '" + name +
                                     "' must be a plain file name other than FORMAT and " +
                                     reserved);
    }
    RLT_RETURN_IF_ERROR(WriteFile(tmp / name, contents));
  }
  return Status::Ok();
}

// Data-parallel saves: rank 0 runs `write` and every rank returns its outcome.
Status OutcomeOfRankZero(Collective* group, const Status& written) {
  const std::vector<std::string> outcome = group->Allgather(
      group->rank() == 0 ? (written.ok() ? std::string() : "E" + written.message()) : "",
      "the checkpoint's outcome");
  if (group->rank() == 0) return written;
  return outcome[0].empty() ? Status::Ok() : Status::IoError(outcome[0].substr(1));
}

// Writes the checkpoint (rank 0 of a group writes every member's state next to its own).
Status WriteCheckpointFiles(const fs::path& dir, PpoTrainer& trainer,
                            const std::map<std::string, std::string>& extra_files,
                            const std::vector<std::string>& members);

}  // namespace

Status SaveCheckpoint(const fs::path& dir, PpoTrainer& trainer,
                      const std::map<std::string, std::string>& extra_files) {
  Collective* group = trainer.group();
  if (group == nullptr) return WriteCheckpointFiles(dir, trainer, extra_files, {});
  // Every member sends its state; rank 0 writes and tells the others how it went.
  const std::vector<std::string> members =
      group->Allgather(MemberState(trainer), "the checkpoint's member states");
  Status written = Status::Ok();
  if (group->rank() == 0) written = WriteCheckpointFiles(dir, trainer, extra_files, members);
  return OutcomeOfRankZero(group, written);
}

namespace {

Status WriteCheckpointFiles(const fs::path& dir, PpoTrainer& trainer,
                            const std::map<std::string, std::string>& extra_files,
                            const std::vector<std::string>& members) {
  RLT_ASSIGN_OR_RETURN(runlog::StagingDir staging, StageCheckpoint(dir));
  const fs::path tmp = staging.path();
  std::string options;
  for (const auto& row : DescribeOptions(trainer.ppo_options())) {
    options += "ppo." + row.key + " = " + row.value + "\n";
  }
  for (const auto& row : DescribeOptions(trainer.policy_options())) {
    options += "policy." + row.key + " = " + row.value + "\n";
  }
  RLT_RETURN_IF_ERROR(WriteFile(tmp / "options.txt", options));
  RLT_RETURN_IF_ERROR(WriteFile(tmp / kEnvStateFile, trainer.venv().SaveState()));
  RLT_RETURN_IF_ERROR(WriteExtraFiles(tmp, extra_files, kEnvStateFile));
  // In memory first, then our own checked I/O (as WritePolicyFiles).
  RLT_RETURN_IF_ERROR(WritePolicyFiles(tmp, trainer.policy(), trainer.normalizer()));
  std::ostringstream optimizer, state;
  try {
    torch::save(trainer.optimizer(), optimizer);
    WriteState(trainer, state);
  } catch (const std::exception& e) {
    return Status::IoError("serialising checkpoint " + tmp.string() + ": " + TorchErrorMessage(e));
  }
  RLT_RETURN_IF_ERROR(WriteFile(tmp / "optimizer.pt", optimizer.str()));
  RLT_RETURN_IF_ERROR(WriteFile(tmp / "state.pt", state.str()));
  if (!members.empty()) {
    // Data-parallel: rank 0's state is the files above; the other ranks' next to them.
    RLT_RETURN_IF_ERROR(
        WriteFile(tmp / kGroupFile, "ranks " + std::to_string(members.size()) + "\nenvs_per_rank " +
                                        std::to_string(trainer.venv().num_envs()) + "\n"));
    for (size_t r = 1; r < members.size(); ++r) {
      RLT_RETURN_IF_ERROR(WriteFile(tmp / MemberFileName(static_cast<int>(r)), members[r]));
    }
  }
  RLT_RETURN_IF_ERROR(
      WriteFile(tmp / "FORMAT", std::string(kFormat) + "\n" + Shapes(trainer) + "\n"));
  // Last: the checksums of everything above (and of any file a caller or backend added).
  RLT_RETURN_IF_ERROR(runlog::WriteDirManifest(tmp.string()));
  return staging.Commit(/*replace=*/true);
}

}  // namespace

Status VerifyCheckpointFiles(const fs::path& dir) {
  return runlog::VerifyManifest(dir.lexically_normal().string(), /*complete=*/true);
}

Status CheckFiniteModule(const torch::nn::Module& module, const std::string& file) {
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    if (!torch::isfinite(item.value()).all().item<bool>()) {
      return Status::DataError(file + ": parameter '" + item.key() +
                               "' holds NaN or inf values; the checkpoint is unusable (training "
                               "diverged or the file was altered); use an earlier checkpoint");
    }
  }
  for (const auto& item : module.named_buffers(/*recurse=*/true)) {
    if (item.value().is_floating_point() && !torch::isfinite(item.value()).all().item<bool>()) {
      return Status::DataError(file + ": buffer '" + item.key() +
                               "' holds NaN or inf values; the checkpoint is unusable (training "
                               "diverged or the file was altered); use an earlier checkpoint");
    }
  }
  return Status::Ok();
}

Status LoadCheckpoint(const fs::path& dir, PpoTrainer& trainer) {
  RLT_RETURN_IF_ERROR(CheckFormat(dir, std::string(kFormat) + "\n" + Shapes(trainer) + "\n"));
  // The env state first: its header check (env id, shapes) fails before anything changes.
  RLT_ASSIGN_OR_RETURN(const std::string env_state, ReadBytes(dir / kEnvStateFile));
  RLT_RETURN_IF_ERROR(
      trainer.venv().LoadState(env_state, (dir / kEnvStateFile).lexically_normal().string()));
  try {
    torch::load(trainer.policy(), (dir / "policy.pt").string());
    RLT_RETURN_IF_ERROR(LoadNormalizerFromTorchArchive((dir / "normalizer.pt").string(),
                                                       trainer.normalizer().get()));
    torch::load(trainer.optimizer(), (dir / "optimizer.pt").string());
    RLT_RETURN_IF_ERROR(CheckFiniteModule(*trainer.policy(), (dir / "policy.pt").string()));
    RLT_RETURN_IF_ERROR(ReadState(trainer, dir / "state.pt"));
    trainer.SyncFromTorch();  // native backend: parameters and Adam state from the files
  } catch (const std::exception& e) {
    return Status::DataError("reading checkpoint " + dir.string() + ": " + TorchErrorMessage(e));
  }
  // Data-parallel: each member continues its own environments when the checkpoint was
  // written by as many ranks of as many environments; otherwise every member starts its
  // environments afresh (the policy, optimiser, normalisers and counters are kept).
  const auto [ranks, envs_per_rank] = ReadGroup(dir);
  Collective* group = trainer.group();
  const int ranks_now = group != nullptr ? group->size() : 1;
  const bool same =
      ranks == ranks_now && (ranks == 1 || envs_per_rank == trainer.venv().num_envs());
  if (!same) {
    trainer.RestartEnvironments(
        StreamSeed(trainer.seed(), 3, static_cast<uint64_t>(trainer.total_steps()), 0, 0));
    if (group == nullptr || group->rank() == 0) {
      std::fprintf(stderr,
                   "note: %s was written by %d rank%s of %d environments and this run has %d: "
                   "the policy, optimiser, normalisers and counters continue, every environment "
                   "starts a new episode\n",
                   dir.string().c_str(), ranks, ranks == 1 ? "" : "s",
                   ranks == 1 ? trainer.venv().num_envs() : envs_per_rank, ranks_now);
    }
    return Status::Ok();
  }
  if (group != nullptr && group->rank() > 0) {
    const fs::path member = dir / MemberFileName(group->rank());
    RLT_ASSIGN_OR_RETURN(const std::string bytes, ReadBytes(member));
    RLT_RETURN_IF_ERROR(SetMemberState(trainer, bytes, member.lexically_normal().string()));
  }
  return Status::Ok();
}

// ---- evolution strategies ----

namespace {

constexpr const char* kEsFormat = "rltrade-es-checkpoint 1";
constexpr const char* kEsStateFile = "es_state.bin";

std::string EsFormat(EsTrainer& t) {
  return std::string(kEsFormat) + "\nnum_envs " + std::to_string(t.venv().num_envs()) +
         "\nobs_dim " + std::to_string(t.venv().obs_dim()) + "\nact_dim " +
         std::to_string(t.venv().act_dim()) + "\n";
}

Status WriteEsCheckpointFiles(const fs::path& dir, EsTrainer& trainer,
                              const std::map<std::string, std::string>& extra_files) {
  RLT_ASSIGN_OR_RETURN(runlog::StagingDir staging, StageCheckpoint(dir));
  const fs::path tmp = staging.path();
  // The normalisation keys every loader reads (PolicyRunner::Load), then the ES options.
  PpoOptions norm;
  norm.norm_obs = trainer.options().norm_obs;
  norm.norm_reward = false;
  norm.clip_obs = trainer.options().clip_obs;
  std::string options;
  for (const auto& row : DescribeOptions(norm)) {
    if (row.key == "norm_obs" || row.key == "norm_reward" || row.key == "clip_obs") {
      options += "ppo." + row.key + " = " + row.value + "\n";
    }
  }
  EsOptions es = trainer.options();
  for (const auto& row : DescribeOptions(es)) options += "es." + row.key + " = " + row.value + "\n";
  for (const auto& row : DescribeOptions(trainer.policy_options())) {
    options += "policy." + row.key + " = " + row.value + "\n";
  }
  RLT_RETURN_IF_ERROR(WriteFile(tmp / "options.txt", options));
  RLT_RETURN_IF_ERROR(WriteExtraFiles(tmp, extra_files, kEsStateFile));
  RLT_RETURN_IF_ERROR(WritePolicyFiles(tmp, trainer.policy(), trainer.normalizer()));
  RLT_RETURN_IF_ERROR(WriteFile(tmp / kEsStateFile, trainer.SaveState()));
  RLT_RETURN_IF_ERROR(WriteFile(tmp / "FORMAT", EsFormat(trainer)));
  RLT_RETURN_IF_ERROR(runlog::WriteDirManifest(tmp.string()));
  return staging.Commit(/*replace=*/true);
}

Status LoadEsCheckpoint(const fs::path& dir, EsTrainer& trainer) {
  RLT_RETURN_IF_ERROR(CheckFormat(dir, EsFormat(trainer)));
  RLT_ASSIGN_OR_RETURN(const std::string state, ReadBytes(dir / kEsStateFile));
  RLT_RETURN_IF_ERROR(
      LoadNormalizerFromTorchArchive((dir / "normalizer.pt").string(), trainer.normalizer().get()));
  // The parameters come from es_state.bin (policy.pt holds the same actor for the loaders).
  return trainer.LoadState(state, (dir / kEsStateFile).lexically_normal().string());
}

}  // namespace

Status SaveCheckpoint(const fs::path& dir, Trainer& trainer,
                      const std::map<std::string, std::string>& extra_files) {
  if (auto* ppo = dynamic_cast<PpoTrainer*>(&trainer))
    return SaveCheckpoint(dir, *ppo, extra_files);
  auto& es = dynamic_cast<EsTrainer&>(trainer);
  Collective* group = es.group();
  // Every rank holds the same state: rank 0 writes.
  Status written = Status::Ok();
  if (group == nullptr || group->rank() == 0)
    written = WriteEsCheckpointFiles(dir, es, extra_files);
  return group == nullptr ? written : OutcomeOfRankZero(group, written);
}

Status LoadCheckpoint(const fs::path& dir, Trainer& trainer) {
  if (auto* ppo = dynamic_cast<PpoTrainer*>(&trainer)) return LoadCheckpoint(dir, *ppo);
  return LoadEsCheckpoint(dir, dynamic_cast<EsTrainer&>(trainer));
}

}  // namespace rlt::learn
