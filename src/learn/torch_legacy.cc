// rltrade learn: reading and converting pre-native checkpoints (see torch_legacy.h).
#include "learn/torch_legacy.h"

#include <torch/torch.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <vector>

#include "core/file_io.h"
#include "learn/checkpoint.h"
#include "learn/torch_error.h"
#include "runlog/atomic_dir.h"
#include "runlog/manifest.h"

namespace rlt::learn {
namespace fs = std::filesystem;
namespace {

// Every float tensor of an archive (nested archives: their module's children) under its
// dotted name, in the archive's order (a module's own tensors, then its children's).
void CollectTensors(torch::serialize::InputArchive& archive, const std::string& prefix,
                    native::TensorFile* out) {
  for (const std::string& key : archive.keys()) {
    torch::Tensor t;
    if (archive.try_read(key, t)) {
      if (t.is_floating_point()) {
        const torch::Tensor c = t.detach().to(torch::kFloat32).contiguous();
        out->AddFloat32(prefix + key, c.sizes().vec(), c.data_ptr<float>());
      }
      continue;
    }
    torch::serialize::InputArchive child;
    if (archive.try_read(key, child)) CollectTensors(child, prefix + key + ".", out);
  }
}

std::vector<double> Doubles(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kFloat64).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

std::vector<int64_t> Longs(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

torch::Tensor ReadTensor(torch::serialize::InputArchive& a, const std::string& key,
                         const std::string& path) {
  torch::Tensor t;
  if (!a.try_read(key, t) && !a.try_read(key, t, /*is_buffer=*/true)) {
    throw std::runtime_error(path + " has no tensor '" + key + "'");
  }
  return t;
}

std::string AdamKey(const torch::Tensor& p) {
  return c10::guts::to_string(p.unsafeGetTensorImpl());
}

// The parameters' Adam state from optimizer.pt, mapped by position onto `params`.
Status ReadOptimizerArchive(const std::string& path, LearnerState* s) {
  std::vector<torch::Tensor> tensors;
  for (const native::NamedTensor& p : s->params.tensors()) {
    tensors.push_back(torch::zeros(p.shape, torch::kFloat32));
  }
  torch::optim::Adam adam(tensors, torch::optim::AdamOptions(1e-3).eps(1e-5));
  try {
    torch::load(adam, path);
  } catch (const std::exception& e) {
    return Status::DataError("reading " + path + ": " + TorchErrorMessage(e));
  }
  s->adam_step = 0;
  native::TensorFile m, v;
  auto& state = adam.state();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const native::NamedTensor& p = s->params.tensors()[i];
    auto it = state.find(AdamKey(tensors[i]));
    if (it == state.end()) continue;
    auto& a = static_cast<torch::optim::AdamParamState&>(*it->second);
    const torch::Tensor ea = a.exp_avg().to(torch::kFloat32).contiguous();
    const torch::Tensor eb = a.exp_avg_sq().to(torch::kFloat32).contiguous();
    if (ea.sizes().vec() != p.shape || eb.sizes().vec() != p.shape) {
      return Status::DataError(path + ": the Adam state of '" + p.name +
                               "' does not have the parameter's shape");
    }
    m.AddFloat32(p.name, p.shape, ea.data_ptr<float>());
    v.AddFloat32(p.name, p.shape, eb.data_ptr<float>());
    s->adam_step = std::max(s->adam_step, a.step());
  }
  if (s->adam_step > 0 && m.tensors().size() != tensors.size()) {
    return Status::DataError(path + ": Adam state for " + std::to_string(m.tensors().size()) +
                             " of " + std::to_string(tensors.size()) + " parameters");
  }
  s->exp_avg = s->adam_step > 0 ? std::move(m) : native::TensorFile();
  s->exp_avg_sq = s->adam_step > 0 ? std::move(v) : native::TensorFile();
  s->lr = static_cast<const torch::optim::AdamOptions&>(adam.param_groups().front().options()).lr();
  RLT_RETURN_IF_ERROR(CheckFiniteTensors(s->exp_avg, path));
  return CheckFiniteTensors(s->exp_avg_sq, path);
}

// state.pt: counters, episode window, the learner's random stream, recurrent states.
Status ReadStateArchive(const std::string& path, PpoCheckpointParts* p) {
  try {
    torch::serialize::InputArchive a;
    a.load_from(path);
    const std::vector<int64_t> counters = Longs(ReadTensor(a, "counters", path));
    const std::vector<int64_t> starts = Longs(ReadTensor(a, "last_episode_starts", path));
    const std::vector<double> returns = Doubles(ReadTensor(a, "episode_returns", path));
    const std::vector<int64_t> lengths = Longs(ReadTensor(a, "episode_lengths", path));
    if (counters.size() != 2 || returns.size() != lengths.size()) {
      return Status::DataError(path + ": counters or episode window malformed");
    }
    p->trainer = PpoTrainer::State{};
    p->trainer.total_steps = counters[0];
    p->trainer.iterations = counters[1];
    for (int64_t s : starts) p->trainer.last_episode_starts.push_back(s != 0);
    for (size_t e = 0; e < returns.size(); ++e)
      p->trainer.episodes.emplace_back(returns[e], lengths[e]);
    // The native backend wrote its stream as native_rng (6 words); the torch backend's is
    // the LibTorch generator's state, kept as TorchLearner::RngWords() packs it.
    torch::Tensor native_rng, generator, states;
    if (a.try_read("native_rng", native_rng)) {
      p->rng_kind = kRngNative;
      p->rng = Longs(native_rng);
    } else if (a.try_read("generator", generator)) {
      const torch::Tensor bytes = generator.contiguous();
      const int64_t n = bytes.numel();
      p->rng_kind = kRngTorch;
      p->rng.assign(1 + (n + 7) / 8, 0);
      p->rng[0] = n;
      std::memcpy(p->rng.data() + 1, bytes.data_ptr<uint8_t>(), n);
    }
    p->recurrent_states.clear();
    if (a.try_read("recurrent_states", states)) {
      const torch::Tensor c = states.to(torch::kFloat32).contiguous();
      p->recurrent_states.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    }
  } catch (const std::exception& e) {
    return Status::DataError("reading " + path + ": " + TorchErrorMessage(e));
  }
  return Status::Ok();
}

Status WriteBytes(const fs::path& path, const std::string& bytes) {
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  out.close();
  if (!out) {
    return Status::IoError("cannot write " + path.string() + ": " +
                           (errno != 0 ? std::strerror(errno) : "write failed") +
                           " (disk full? free space; the checkpoint is unchanged)");
  }
  return Status::Ok();
}

}  // namespace

Result<native::TensorFile> ReadPolicyArchive(const std::string& path) {
  native::TensorFile params;
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    CollectTensors(archive, "", &params);
  } catch (const std::exception& e) {
    return Status::DataError("reading " + path + ": " + TorchErrorMessage(e));
  }
  if (params.tensors().empty()) {
    return Status::DataError(path + " holds no parameters (not a policy archive)");
  }
  RLT_RETURN_IF_ERROR(CheckFiniteTensors(params, path));
  return params;
}

Result<NormalizerStats> ReadNormalizerArchive(const std::string& path) {
  NormalizerStats s;
  try {
    torch::serialize::InputArchive a;
    a.load_from(path);
    s.obs_mean = Doubles(ReadTensor(a, "obs_mean", path));
    s.obs_var = Doubles(ReadTensor(a, "obs_var", path));
    s.returns = Doubles(ReadTensor(a, "returns", path));
    for (auto [key, out] :
         {std::pair{"obs_count", &s.obs_count}, std::pair{"ret_mean", &s.ret_mean},
          std::pair{"ret_var", &s.ret_var}, std::pair{"ret_count", &s.ret_count}}) {
      const std::vector<double> v = Doubles(ReadTensor(a, key, path));
      if (v.size() != 1) {
        return Status::DataError(path + ": '" + key + "' has " + std::to_string(v.size()) +
                                 " values, expected 1 (not a normaliser archive)");
      }
      *out = v[0];
    }
  } catch (const std::exception& e) {
    return Status::DataError("reading " + path + ": " + TorchErrorMessage(e));
  }
  return s;
}

Result<PpoCheckpointParts> ReadLegacyPpoParts(const fs::path& dir) {
  PpoCheckpointParts parts;
  RLT_ASSIGN_OR_RETURN(parts.learner.params, ReadPolicyArchive((dir / "policy.pt").string()));
  RLT_RETURN_IF_ERROR(ReadOptimizerArchive((dir / "optimizer.pt").string(), &parts.learner));
  RLT_ASSIGN_OR_RETURN(parts.normalizer, ReadNormalizerArchive((dir / "normalizer.pt").string()));
  RLT_RETURN_IF_ERROR(ReadStateArchive((dir / "state.pt").string(), &parts));
  return parts;
}

Status ConvertCheckpoint(const fs::path& dir, bool* converted) {
  *converted = false;
  Result<std::string> format = ReadFile((dir / "FORMAT").string());
  if (!format.ok()) {
    return Status::NotFound(dir.string() + " is not a checkpoint (no FORMAT file)");
  }
  const std::string first = format->substr(0, format->find('\n'));
  const bool ppo = first == "rltrade-ppo-checkpoint 2", es = first == "rltrade-es-checkpoint 1";
  if (first == "rltrade-ppo-checkpoint 3" || first == "rltrade-es-checkpoint 2")
    return Status::Ok();
  if (!ppo && !es) {
    return Status::DataError(dir.string() + "/FORMAT: \"" + first +
                             "\" is no checkpoint version this rltrade converts");
  }
  RLT_RETURN_IF_ERROR(VerifyCheckpointFiles(dir));
  // Everything is read before anything is written.
  PpoCheckpointParts parts;
  native::TensorFile policy;
  if (ppo) {
    RLT_ASSIGN_OR_RETURN(parts, ReadLegacyPpoParts(dir));
    policy = parts.learner.params;
  } else {
    RLT_ASSIGN_OR_RETURN(parts.normalizer, ReadNormalizerArchive((dir / "normalizer.pt").string()));
    RLT_ASSIGN_OR_RETURN(policy, ReadPolicyArchive((dir / "policy.pt").string()));
  }
  RLT_ASSIGN_OR_RETURN(runlog::StagingDir staging,
                       runlog::StagingDir::Create(dir.lexically_normal().string()));
  const fs::path tmp = staging.path();
  const std::vector<std::string> dropped = {"policy.pt", "optimizer.pt", "normalizer.pt",
                                            "state.pt",  "FORMAT",       "MANIFEST"};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (std::find(dropped.begin(), dropped.end(), name) != dropped.end()) continue;
    fs::copy(entry.path(), tmp / name, fs::copy_options::recursive, ec);
    if (ec) return Status::IoError("cannot copy " + entry.path().string() + ": " + ec.message());
  }
  if (ec) return Status::IoError("cannot list " + dir.string() + ": " + ec.message());
  RLT_RETURN_IF_ERROR(WriteBytes(tmp / "policy.rlt", policy.Serialize()));
  RLT_RETURN_IF_ERROR(
      WriteBytes(tmp / "normalizer.rlt", NormalizerToTensorFile(parts.normalizer).Serialize()));
  if (ppo) {
    RLT_RETURN_IF_ERROR(
        WriteBytes(tmp / "optimizer.rlt", OptimizerToTensorFile(parts.learner).Serialize()));
    RLT_RETURN_IF_ERROR(WriteBytes(tmp / "state.rlt", StateToTensorFile(parts).Serialize()));
  }
  const std::string rest = format->substr(first.size());
  RLT_RETURN_IF_ERROR(WriteBytes(
      tmp / "FORMAT", (ppo ? "rltrade-ppo-checkpoint 3" : "rltrade-es-checkpoint 2") + rest));
  RLT_RETURN_IF_ERROR(runlog::WriteDirManifest(tmp.string()));
  RLT_RETURN_IF_ERROR(staging.Commit(/*replace=*/true));
  *converted = true;
  return Status::Ok();
}

}  // namespace rlt::learn
