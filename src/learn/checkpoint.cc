// rltrade learn: checkpoint save/load (see checkpoint.h). LibTorch-free; checkpoints of the
// LibTorch-archive format (version 2) are read through the torch plug-in
// (learn/torch_plugin.h) in builds with LibTorch.
#include "learn/checkpoint.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/file_io.h"
#include "core/options.h"
#include "core/state_io.h"
#include "learn/checkpoint_parts.h"
#include "learn/es.h"
#include "learn/native_learner.h"
#include "learn/torch_plugin.h"
#include "runlog/atomic_dir.h"
#include "runlog/manifest.h"

namespace rlt::learn {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "rltrade-ppo-checkpoint 3";
// Version 2: the same directory with LibTorch archives (policy.pt, optimizer.pt,
// normalizer.pt, state.pt) for the parts; read in builds with LibTorch.
constexpr const char* kFormatV2 = "rltrade-ppo-checkpoint 2";
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
// and FORMAT is `expected` + shapes (this trainer's algorithm, version and shapes) or
// `legacy` + shapes (an older version this build reads; *is_legacy is then set).
Status CheckFormat(const fs::path& dir, const std::string& expected, const std::string& legacy,
                   const std::string& shapes, bool* is_legacy) {
  Result<std::string> text = ReadFile((dir / "FORMAT").string());
  if (!text.ok()) {
    return Status::NotFound(dir.string() +
                            " is not a checkpoint (no FORMAT file); pass a "
                            "directory written by SaveCheckpoint");
  }
  RLT_RETURN_IF_ERROR(VerifyCheckpointFiles(dir));
  *is_legacy = *text == legacy + "\n" + shapes;
  if (*is_legacy) {
#ifdef RLT_WITH_TORCH
    return Status::Ok();
#else
    return Status::DataError(dir.string() + " was written by an older rltrade (" + legacy +
                             ": LibTorch archives), and this build has no LibTorch to read "
                             "them; convert it once with a LibTorch build: rltrade checkpoint "
                             "convert " +
                             dir.string());
#endif
  }
  if (*text != expected + "\n" + shapes) {
    return Status::DataError(dir.string() + "/FORMAT: expected\n" + expected + "\n" + shapes +
                             "got\n" + *text +
                             "(a checkpoint of another algorithm, version or env shape)");
  }
  return Status::Ok();
}

// A tensor file of the checkpoint, checked finite.
Result<native::TensorFile> ReadTensors(const fs::path& path) {
  if (!fs::exists(path)) {
    return Status::NotFound(path.string() + " is missing; the checkpoint is incomplete");
  }
  RLT_ASSIGN_OR_RETURN(native::TensorFile file, native::TensorFile::Read(path));
  RLT_RETURN_IF_ERROR(CheckFiniteTensors(file, path.string()));
  return file;
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
  PpoCheckpointParts parts;
  parts.learner = trainer.learner()->ExportState();
  parts.normalizer = trainer.normalizer()->stats();
  parts.trainer = trainer.state();
  parts.rng_kind = trainer.learner()->torch_backend() ? kRngTorch : kRngNative;
  parts.rng = trainer.learner()->RngWords();
  parts.recurrent_states = trainer.learner()->RecurrentStates();
  RLT_RETURN_IF_ERROR(WriteFile(tmp / "policy.rlt", parts.learner.params.Serialize()));
  RLT_RETURN_IF_ERROR(
      WriteFile(tmp / "optimizer.rlt", OptimizerToTensorFile(parts.learner).Serialize()));
  RLT_RETURN_IF_ERROR(
      WriteFile(tmp / "normalizer.rlt", NormalizerToTensorFile(parts.normalizer).Serialize()));
  RLT_RETURN_IF_ERROR(WriteFile(tmp / "state.rlt", StateToTensorFile(parts).Serialize()));
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

Status ConvertCheckpoints(const fs::path& path, std::vector<std::string>* converted,
                          std::vector<std::string>* current) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    return Status::Refused(path.string() +
                           " is not a directory; pass a checkpoint directory or a run directory");
  }
  std::vector<fs::path> dirs;
  if (fs::exists(path / "FORMAT", ec)) {
    dirs.push_back(path);
  } else {
    for (auto it = fs::recursive_directory_iterator(path, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (it.depth() > 3) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_directory(ec) && fs::exists(it->path() / "FORMAT", ec)) {
        dirs.push_back(it->path());
        it.disable_recursion_pending();
      }
    }
    if (ec) return Status::IoError("cannot list " + path.string() + ": " + ec.message());
  }
  if (dirs.empty()) {
    return Status::Refused(path.string() +
                           " holds no checkpoint (no FORMAT file in it or below); pass a "
                           "checkpoint directory or a run directory");
  }
  std::sort(dirs.begin(), dirs.end());
  // Checkpoints already in the native format need nothing (and no LibTorch); the others
  // are read through the torch plug-in.
  std::vector<fs::path> legacy;
  for (const fs::path& dir : dirs) {
    Result<std::string> format = ReadFile((dir / "FORMAT").string(), 1 << 16);
    const std::string first = format.ok() ? format->substr(0, format->find('\n')) : "";
    if (first == kFormat || first == "rltrade-es-checkpoint 2") {
      current->push_back(dir.string());
    } else {
      legacy.push_back(dir);
    }
  }
  if (legacy.empty()) return Status::Ok();
  const Result<const TorchApi*> torch = Torch();
  if (!torch.ok()) {
    return Status::Refused(legacy.front().string() +
                           " was written by an older rltrade (LibTorch archives): converting it "
                           "reads them with LibTorch, which this rltrade cannot load: " +
                           torch.status().message());
  }
  for (const fs::path& dir : legacy) {
    bool done = false;
    RLT_RETURN_IF_ERROR((*torch)->convert_checkpoint(dir, &done));
    (done ? converted : current)->push_back(dir.string());
  }
  return Status::Ok();
}

Status VerifyCheckpointFiles(const fs::path& dir) {
  return runlog::VerifyManifest(dir.lexically_normal().string(), /*complete=*/true);
}

Status CheckFiniteTensors(const native::TensorFile& tensors, const std::string& file) {
  for (const native::NamedTensor& t : tensors.tensors()) {
    bool finite = true;
    for (float v : t.f32) finite = finite && std::isfinite(v);
    for (double v : t.f64) finite = finite && std::isfinite(v);
    if (!finite) {
      return Status::DataError(file + ": tensor '" + t.name +
                               "' holds NaN or inf values; the checkpoint is unusable (training "
                               "diverged or the file was altered); use an earlier checkpoint");
    }
  }
  return Status::Ok();
}

Result<native::TensorFile> ReadPolicyParameters(const fs::path& dir, int obs_dim,
                                                const env::ActionSpace& action,
                                                const PolicyOptions& options) {
  const fs::path rlt = dir / "policy.rlt";
  if (fs::exists(rlt)) return ReadTensors(rlt);
#ifdef RLT_WITH_TORCH
  // Checkpoints written before policy.rlt existed.
  RLT_ASSIGN_OR_RETURN(const TorchApi* torch, Torch());
  return torch->read_policy_archive((dir / "policy.pt").string());
#else
  return Status::DataError(dir.string() +
                           " has no policy.rlt: it was written by an older rltrade (LibTorch "
                           "archives), and this build has no LibTorch to read them; convert it "
                           "once with a LibTorch build: rltrade checkpoint convert " +
                           dir.string());
#endif
}

Result<VecNormalizer> ReadNormalizer(const fs::path& dir, int obs_dim, int num_envs,
                                     const NormalizeOptions& options) {
  VecNormalizer normalizer(obs_dim, num_envs, options);
  const fs::path rlt = dir / "normalizer.rlt";
  if (!fs::exists(rlt) && fs::exists(dir / "normalizer.pt")) {
#ifdef RLT_WITH_TORCH
    RLT_ASSIGN_OR_RETURN(const TorchApi* torch, Torch());
    RLT_ASSIGN_OR_RETURN(const NormalizerStats stats,
                         torch->read_normalizer_archive((dir / "normalizer.pt").string()));
    RLT_RETURN_IF_ERROR(normalizer->set_stats(stats, (dir / "normalizer.pt").string()));
    return normalizer;
#else
    return Status::DataError(dir.string() +
                             " has normalizer.pt, not normalizer.rlt: it was written by an older "
                             "rltrade (LibTorch archives), and this build has no LibTorch to "
                             "read them; convert it once with a LibTorch build: rltrade "
                             "checkpoint convert " +
                             dir.string());
#endif
  }
  RLT_ASSIGN_OR_RETURN(const native::TensorFile file, ReadTensors(rlt));
  RLT_ASSIGN_OR_RETURN(const NormalizerStats stats, NormalizerFromTensorFile(file, rlt.string()));
  RLT_RETURN_IF_ERROR(normalizer->set_stats(stats, rlt.string()));
  return normalizer;
}

namespace {

// The parts of a version-3 checkpoint (the learner's parameter names and shapes come from
// policy.rlt).
Result<PpoCheckpointParts> ReadParts(const fs::path& dir) {
  PpoCheckpointParts parts;
  RLT_ASSIGN_OR_RETURN(parts.learner.params, ReadTensors(dir / "policy.rlt"));
  RLT_ASSIGN_OR_RETURN(const native::TensorFile optimizer, ReadTensors(dir / "optimizer.rlt"));
  RLT_RETURN_IF_ERROR(
      OptimizerFromTensorFile(optimizer, (dir / "optimizer.rlt").string(), &parts.learner));
  RLT_ASSIGN_OR_RETURN(const native::TensorFile normalizer, ReadTensors(dir / "normalizer.rlt"));
  RLT_ASSIGN_OR_RETURN(parts.normalizer,
                       NormalizerFromTensorFile(normalizer, (dir / "normalizer.rlt").string()));
  RLT_ASSIGN_OR_RETURN(const native::TensorFile state, ReadTensors(dir / "state.rlt"));
  RLT_RETURN_IF_ERROR(StateFromTensorFile(state, (dir / "state.rlt").string(), &parts));
  return parts;
}

// Everything but the environments into the trainer; every check before the first change.
Status ApplyParts(const PpoCheckpointParts& parts, const fs::path& dir, PpoTrainer& trainer) {
  const std::string where = dir.string();
  if (static_cast<int>(parts.trainer.last_episode_starts.size()) != trainer.venv().num_envs()) {
    return Status::DataError(
        where + ": the state holds " + std::to_string(parts.trainer.last_episode_starts.size()) +
        " environments' episode starts, expected " + std::to_string(trainer.venv().num_envs()));
  }
  Learner& learner = *trainer.learner();
  const LearnerState before = learner.ExportState();
  VecNormalizerImpl& normalizer = *trainer.normalizer();
  const NormalizerStats stats_before = normalizer.stats();
  RLT_RETURN_IF_ERROR(normalizer.set_stats(parts.normalizer, where + "/normalizer"));
  Status st = learner.ImportState(parts.learner, where + "/policy");
  // The random stream continues when the same backend wrote it (another backend's stream
  // has another form; that learner keeps its own).
  const bool same_kind = (parts.rng_kind == kRngTorch) == learner.torch_backend();
  if (st.ok() && same_kind) st = learner.SetRngWords(parts.rng, where + "/state");
  if (st.ok()) {
    st = learner.SetRecurrentStates(parts.recurrent_states);
    if (!st.ok()) st = Status::DataError(where + "/state: " + st.message());
  }
  if (!st.ok()) {
    RLT_CHECK(learner.ImportState(before, "the learner's previous state").ok());
    RLT_CHECK(normalizer.set_stats(stats_before, "the previous statistics").ok());
    return st;
  }
  trainer.set_state(parts.trainer);
  return Status::Ok();
}

}  // namespace

Status LoadCheckpoint(const fs::path& dir, PpoTrainer& trainer) {
  bool legacy = false;
  RLT_RETURN_IF_ERROR(CheckFormat(dir, kFormat, kFormatV2, Shapes(trainer) + "\n", &legacy));
  PpoCheckpointParts parts;
  if (legacy) {
#ifdef RLT_WITH_TORCH
    RLT_ASSIGN_OR_RETURN(const TorchApi* torch, Torch());
    RLT_ASSIGN_OR_RETURN(parts, torch->read_legacy_ppo_parts(dir));
#endif
  } else {
    RLT_ASSIGN_OR_RETURN(parts, ReadParts(dir));
  }
  // The env state first: its header check (env id, shapes) fails before anything changes.
  RLT_ASSIGN_OR_RETURN(const std::string env_state, ReadBytes(dir / kEnvStateFile));
  RLT_RETURN_IF_ERROR(
      trainer.venv().LoadState(env_state, (dir / kEnvStateFile).lexically_normal().string()));
  RLT_RETURN_IF_ERROR(ApplyParts(parts, dir, trainer));
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

constexpr const char* kEsFormat = "rltrade-es-checkpoint 2";
// Version 1: normalizer.pt (a LibTorch archive) instead of normalizer.rlt, and policy.pt.
constexpr const char* kEsFormatV1 = "rltrade-es-checkpoint 1";
constexpr const char* kEsStateFile = "es_state.bin";

std::string EsShapes(EsTrainer& t) {
  return "num_envs " + std::to_string(t.venv().num_envs()) + "\nobs_dim " +
         std::to_string(t.venv().obs_dim()) + "\nact_dim " + std::to_string(t.venv().act_dim()) +
         "\n";
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
  RLT_RETURN_IF_ERROR(WriteFile(tmp / "policy.rlt", trainer.PolicyParameters().Serialize()));
  RLT_RETURN_IF_ERROR(WriteFile(tmp / "normalizer.rlt",
                                NormalizerToTensorFile(trainer.normalizer()->stats()).Serialize()));
  RLT_RETURN_IF_ERROR(WriteFile(tmp / kEsStateFile, trainer.SaveState()));
  RLT_RETURN_IF_ERROR(WriteFile(tmp / "FORMAT", std::string(kEsFormat) + "\n" + EsShapes(trainer)));
  RLT_RETURN_IF_ERROR(runlog::WriteDirManifest(tmp.string()));
  return staging.Commit(/*replace=*/true);
}

Status LoadEsCheckpoint(const fs::path& dir, EsTrainer& trainer) {
  bool legacy = false;
  RLT_RETURN_IF_ERROR(CheckFormat(dir, kEsFormat, kEsFormatV1, EsShapes(trainer), &legacy));
  RLT_ASSIGN_OR_RETURN(const std::string state, ReadBytes(dir / kEsStateFile));
  RLT_ASSIGN_OR_RETURN(
      VecNormalizer normalizer,
      ReadNormalizer(dir, trainer.venv().obs_dim(), trainer.venv().num_envs(), NormalizeOptions{}));
  // The parameters come from es_state.bin (policy.rlt holds the same actor for the loaders).
  RLT_RETURN_IF_ERROR(trainer.LoadState(state, (dir / kEsStateFile).lexically_normal().string()));
  RLT_CHECK(trainer.normalizer()->set_stats(normalizer->stats(), "normalizer").ok());
  return Status::Ok();
}

}  // namespace

Status PpoTrainer::Save(const fs::path& dir,
                        const std::map<std::string, std::string>& extra_files) {
  return SaveCheckpoint(dir, *this, extra_files);
}

Status PpoTrainer::Load(const fs::path& dir) { return LoadCheckpoint(dir, *this); }

Status EsTrainer::Save(const fs::path& dir, const std::map<std::string, std::string>& extra_files) {
  // Every rank holds the same state: rank 0 writes.
  Status written = Status::Ok();
  if (group_ == nullptr || group_->rank() == 0)
    written = WriteEsCheckpointFiles(dir, *this, extra_files);
  return group_ == nullptr ? written : OutcomeOfRankZero(group_, written);
}

Status EsTrainer::Load(const fs::path& dir) { return LoadEsCheckpoint(dir, *this); }

Status SaveCheckpoint(const fs::path& dir, Trainer& trainer,
                      const std::map<std::string, std::string>& extra_files) {
  return trainer.Save(dir, extra_files);
}

Status LoadCheckpoint(const fs::path& dir, Trainer& trainer) { return trainer.Load(dir); }

}  // namespace rlt::learn
