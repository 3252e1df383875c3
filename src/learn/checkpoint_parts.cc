// rltrade learn: checkpoint parts as tensor files (see checkpoint_parts.h).
#include "learn/checkpoint_parts.h"

#include <cmath>

namespace rlt::learn {
namespace {

using native::DType;
using native::NamedTensor;
using native::TensorFile;

// A vector tensor of `dtype` with `length` entries (any length when < 0).
Result<const NamedTensor*> GetVector(const TensorFile& file, const std::string& name, DType dtype,
                                     int64_t length, const std::string& origin) {
  const NamedTensor* t = file.Find(name);
  if (t == nullptr) {
    return Status::DataError(origin + ": no tensor named '" + name +
                             "' (not a checkpoint of this rltrade version)");
  }
  if (t->dtype != dtype || t->shape.size() != 1 || (length >= 0 && t->shape[0] != length)) {
    std::string expected = "a vector";
    if (length >= 0) expected = native::ShapeString({length});
    return Status::DataError(origin + ": tensor '" + name + "' has shape " +
                             native::ShapeString(t->shape) + ", expected " + expected +
                             " of the right type (the checkpoint belongs to another env shape)");
  }
  return t;
}

Result<double> GetScalar64(const TensorFile& file, const std::string& name,
                           const std::string& origin) {
  RLT_ASSIGN_OR_RETURN(const NamedTensor* t, file.Get(name, DType::kFloat64, {}, origin));
  return t->f64[0];
}

Result<int64_t> GetScalarInt(const TensorFile& file, const std::string& name,
                             const std::string& origin) {
  RLT_ASSIGN_OR_RETURN(const NamedTensor* t, file.Get(name, DType::kInt64, {}, origin));
  return t->i64[0];
}

}  // namespace

TensorFile OptimizerToTensorFile(const LearnerState& s) {
  TensorFile file;
  file.AddInt64("step", {}, &s.adam_step);
  file.AddFloat64("lr", {}, &s.lr);
  if (s.adam_step > 0) {
    for (const NamedTensor& t : s.exp_avg.tensors()) {
      file.AddFloat32("exp_avg." + t.name, t.shape, t.f32.data());
    }
    for (const NamedTensor& t : s.exp_avg_sq.tensors()) {
      file.AddFloat32("exp_avg_sq." + t.name, t.shape, t.f32.data());
    }
  }
  return file;
}

Status OptimizerFromTensorFile(const TensorFile& file, const std::string& origin, LearnerState* s) {
  RLT_ASSIGN_OR_RETURN(const int64_t step, GetScalarInt(file, "step", origin));
  RLT_ASSIGN_OR_RETURN(const double lr, GetScalar64(file, "lr", origin));
  if (step < 0 || !std::isfinite(lr) || lr < 0) {
    return Status::DataError(origin + ": Adam's step " + std::to_string(step) +
                             " or learning rate is out of range (the file was altered)");
  }
  TensorFile m, v;
  if (step > 0) {
    for (const NamedTensor& p : s->params.tensors()) {
      RLT_ASSIGN_OR_RETURN(const NamedTensor* a,
                           file.Get("exp_avg." + p.name, DType::kFloat32, p.shape, origin));
      RLT_ASSIGN_OR_RETURN(const NamedTensor* b,
                           file.Get("exp_avg_sq." + p.name, DType::kFloat32, p.shape, origin));
      m.AddFloat32(p.name, p.shape, a->f32.data());
      v.AddFloat32(p.name, p.shape, b->f32.data());
    }
  }
  s->adam_step = step;
  s->lr = lr;
  s->exp_avg = std::move(m);
  s->exp_avg_sq = std::move(v);
  return Status::Ok();
}

TensorFile NormalizerToTensorFile(const NormalizerStats& s) {
  TensorFile file;
  file.AddFloat64("obs_mean", {static_cast<int64_t>(s.obs_mean.size())}, s.obs_mean.data());
  file.AddFloat64("obs_var", {static_cast<int64_t>(s.obs_var.size())}, s.obs_var.data());
  file.AddFloat64("obs_count", {}, &s.obs_count);
  file.AddFloat64("ret_mean", {}, &s.ret_mean);
  file.AddFloat64("ret_var", {}, &s.ret_var);
  file.AddFloat64("ret_count", {}, &s.ret_count);
  file.AddFloat64("returns", {static_cast<int64_t>(s.returns.size())}, s.returns.data());
  return file;
}

Result<NormalizerStats> NormalizerFromTensorFile(const TensorFile& file,
                                                 const std::string& origin) {
  NormalizerStats s;
  RLT_ASSIGN_OR_RETURN(const NamedTensor* mean,
                       GetVector(file, "obs_mean", DType::kFloat64, -1, origin));
  RLT_ASSIGN_OR_RETURN(const NamedTensor* var,
                       GetVector(file, "obs_var", DType::kFloat64, -1, origin));
  RLT_ASSIGN_OR_RETURN(const NamedTensor* returns,
                       GetVector(file, "returns", DType::kFloat64, -1, origin));
  s.obs_mean = mean->f64;
  s.obs_var = var->f64;
  s.returns = returns->f64;
  RLT_ASSIGN_OR_RETURN(s.obs_count, GetScalar64(file, "obs_count", origin));
  RLT_ASSIGN_OR_RETURN(s.ret_mean, GetScalar64(file, "ret_mean", origin));
  RLT_ASSIGN_OR_RETURN(s.ret_var, GetScalar64(file, "ret_var", origin));
  RLT_ASSIGN_OR_RETURN(s.ret_count, GetScalar64(file, "ret_count", origin));
  return s;
}

TensorFile StateToTensorFile(const PpoCheckpointParts& p) {
  TensorFile file;
  const int64_t counters[2] = {p.trainer.total_steps, p.trainer.iterations};
  file.AddInt64("counters", {2}, counters);
  const std::vector<int64_t> starts(p.trainer.last_episode_starts.begin(),
                                    p.trainer.last_episode_starts.end());
  file.AddInt64("last_episode_starts", {static_cast<int64_t>(starts.size())}, starts.data());
  std::vector<double> returns;
  std::vector<int64_t> lengths;
  for (const auto& [r, l] : p.trainer.episodes) {
    returns.push_back(r);
    lengths.push_back(l);
  }
  const int64_t k = static_cast<int64_t>(returns.size());
  file.AddFloat64("episode_returns", {k}, returns.data());
  file.AddInt64("episode_lengths", {k}, lengths.data());
  file.AddInt64("rng_kind", {}, &p.rng_kind);
  file.AddInt64("rng", {static_cast<int64_t>(p.rng.size())}, p.rng.data());
  if (!p.recurrent_states.empty()) {
    file.AddFloat32("recurrent_states", {static_cast<int64_t>(p.recurrent_states.size())},
                    p.recurrent_states.data());
  }
  return file;
}

Status StateFromTensorFile(const TensorFile& file, const std::string& origin,
                           PpoCheckpointParts* p) {
  RLT_ASSIGN_OR_RETURN(const NamedTensor* counters,
                       GetVector(file, "counters", DType::kInt64, 2, origin));
  RLT_ASSIGN_OR_RETURN(const NamedTensor* starts,
                       GetVector(file, "last_episode_starts", DType::kInt64, -1, origin));
  RLT_ASSIGN_OR_RETURN(const NamedTensor* returns,
                       GetVector(file, "episode_returns", DType::kFloat64, -1, origin));
  RLT_ASSIGN_OR_RETURN(const NamedTensor* lengths,
                       GetVector(file, "episode_lengths", DType::kInt64, returns->numel(), origin));
  RLT_ASSIGN_OR_RETURN(const NamedTensor* rng, GetVector(file, "rng", DType::kInt64, -1, origin));
  RLT_ASSIGN_OR_RETURN(p->rng_kind, GetScalarInt(file, "rng_kind", origin));
  if (counters->i64[0] < 0 || counters->i64[1] < 0 ||
      (p->rng_kind != kRngNative && p->rng_kind != kRngTorch)) {
    return Status::DataError(origin + ": counters or rng_kind out of range (the file was altered)");
  }
  p->trainer = PpoTrainer::State{};
  p->trainer.total_steps = counters->i64[0];
  p->trainer.iterations = counters->i64[1];
  for (int64_t s : starts->i64) p->trainer.last_episode_starts.push_back(s != 0);
  for (int64_t e = 0; e < returns->numel(); ++e) {
    p->trainer.episodes.emplace_back(returns->f64[e], lengths->i64[e]);
  }
  p->rng = rng->i64;
  p->recurrent_states.clear();
  if (file.Find("recurrent_states") != nullptr) {
    RLT_ASSIGN_OR_RETURN(const NamedTensor* states,
                         GetVector(file, "recurrent_states", DType::kFloat32, -1, origin));
    p->recurrent_states = states->f32;
  }
  return Status::Ok();
}

}  // namespace rlt::learn
