// rltrade env: MemoryCueEnv implementation (see memory_cue.h).
#include "env/envs/memory_cue.h"

#include "core/options.h"

namespace rlt::env {

Result<std::unique_ptr<MemoryCueEnv>> MemoryCueEnv::Create(const MemoryCueOptions& o) {
  if (o.length < 2 || o.length > 10000) {
    return Status::InvalidArgument(
        "[env] length must be in [2, 10000] (the cue step and the "
        "decision step at least), got " +
        std::to_string(o.length));
  }
  return std::unique_ptr<MemoryCueEnv>(new MemoryCueEnv(o));
}

MemoryCueEnv::MemoryCueEnv(const MemoryCueOptions& options) : options_(options) {
  spec_.id = "memory_cue";
  spec_.obs_dim = 3;
  spec_.action.discrete = true;
  spec_.action.dim = 1;
  spec_.action.n = 2;
  spec_.info_names = {"correct"};
}

void MemoryCueEnv::Reset(float* obs, double* info) {
  cue_ = rng_.Bernoulli(0.5) ? 1 : 0;
  step_ = 0;
  Write(obs, info, 0.0);
}

StepResult MemoryCueEnv::Step(const float* action, float* obs, double* info) {
  StepResult r;
  ++step_;
  if (step_ < options_.length) {
    Write(obs, info, 0.0);
    return r;
  }
  const bool correct = (action[0] >= 0.5f ? 1 : 0) == cue_;
  r.reward = correct ? 1.0f : -1.0f;
  r.terminated = true;
  Write(obs, info, correct ? 1.0 : 0.0);
  return r;
}

void MemoryCueEnv::Write(float* obs, double* info, double correct) const {
  const bool show = step_ == 0;
  obs[0] = show && cue_ == 0 ? 1.0f : 0.0f;
  obs[1] = show && cue_ == 1 ? 1.0f : 0.0f;
  obs[2] = step_ == options_.length - 1 ? 1.0f : 0.0f;
  info[0] = correct;
}

void MemoryCueEnv::SaveState(StateWriter& out) const {
  Env::SaveState(out);
  out.Put<int32_t>(cue_);
  out.Put<int32_t>(step_);
}

Status MemoryCueEnv::LoadState(StateReader& in) {
  RLT_RETURN_IF_ERROR(Env::LoadState(in));
  int32_t cue = 0, step = 0;
  RLT_RETURN_IF_ERROR(in.Get(&cue, "memory_cue cue"));
  RLT_RETURN_IF_ERROR(in.Get(&step, "memory_cue step"));
  if (cue < 0 || cue > 1) return in.Error("memory_cue cue must be 0 or 1");
  if (step < 0 || step >= options_.length) return in.Error("memory_cue step out of range");
  cue_ = cue;
  step_ = step;
  return Status::Ok();
}

Result<std::unique_ptr<Env>> MakeMemoryCueEnv(const std::map<std::string, std::string>& settings) {
  MemoryCueOptions options;
  RLT_RETURN_IF_ERROR(SetOptions(options, settings, "[env]"));
  RLT_ASSIGN_OR_RETURN(auto env, MemoryCueEnv::Create(options));
  return std::unique_ptr<Env>(std::move(env));
}

}  // namespace rlt::env
