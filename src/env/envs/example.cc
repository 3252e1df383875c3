// rltrade env: ExampleEnv implementation (the template; see example.h).
#include "env/envs/example.h"

#include <cstdlib>

#include "core/options.h"

namespace rlt::env {

Result<std::unique_ptr<ExampleEnv>> ExampleEnv::Create(const ExampleOptions& o) {
  // Validate every option once, here, with a message that says what to change.
  if (o.window < 1 || o.window > kMaxWindow) {
    return Status::InvalidArgument("[env] window must be in [1, 32], got " +
                                   std::to_string(o.window));
  }
  if (!(o.persistence >= 0 && o.persistence <= 1)) {
    return Status::InvalidArgument("[env] persistence must be a probability in [0, 1]");
  }
  if (o.max_steps < 1 || o.bound < 1) {
    return Status::InvalidArgument("[env] max_steps and bound must be >= 1");
  }
  return std::unique_ptr<ExampleEnv>(new ExampleEnv(o));
}

ExampleEnv::ExampleEnv(const ExampleOptions& options) : options_(options) {
  spec_.id = "example";
  spec_.obs_dim = options.window + 1;  // past moves, then x / bound
  spec_.action.discrete = true;
  spec_.action.dim = 1;
  spec_.action.n = 2;
  spec_.info_names = {"x", "steps"};
}

int ExampleEnv::NextMove() {
  const int last = moves_[kMaxWindow - 1];
  if (last == 0) return rng_.Bernoulli(0.5) ? 1 : -1;
  return rng_.Bernoulli(options_.persistence) ? last : -last;
}

void ExampleEnv::Reset(float* obs, double* info) {
  moves_.fill(0);
  x_ = 0;
  steps_ = 0;
  for (int i = 0; i < options_.window; ++i) {  // a warm history so obs is never empty
    const int m = NextMove();
    for (int k = 0; k + 1 < kMaxWindow; ++k) moves_[k] = moves_[k + 1];
    moves_[kMaxWindow - 1] = m;
  }
  Write(obs, info);
}

StepResult ExampleEnv::Step(const float* action, float* obs, double* info) {
  const int move = NextMove();
  const int guess = action[0] >= 0.5f ? 1 : -1;  // Discrete action stored as a float
  for (int k = 0; k + 1 < kMaxWindow; ++k) moves_[k] = moves_[k + 1];
  moves_[kMaxWindow - 1] = move;
  x_ += move;
  ++steps_;
  StepResult r;
  r.reward = guess == move ? 1.0f : -1.0f;
  r.terminated = std::abs(x_) >= options_.bound;
  r.truncated = !r.terminated && steps_ >= options_.max_steps;
  Write(obs, info);
  return r;
}

void ExampleEnv::SaveState(StateWriter& out) const {
  Env::SaveState(out);  // rng_
  out.PutArray(moves_.data(), moves_.size());
  out.Put<int32_t>(x_);
  out.Put<int32_t>(steps_);
}

Status ExampleEnv::LoadState(StateReader& in) {
  RLT_RETURN_IF_ERROR(Env::LoadState(in));
  RLT_RETURN_IF_ERROR(in.GetArray(moves_.data(), moves_.size(), "example moves"));
  int32_t x = 0, steps = 0;
  RLT_RETURN_IF_ERROR(in.Get(&x, "example x"));
  RLT_RETURN_IF_ERROR(in.Get(&steps, "example steps"));
  for (int m : moves_) {
    if (m < -1 || m > 1) return in.Error("example moves must be -1, 0 or 1");
  }
  if (steps < 0) return in.Error("example steps must be >= 0");
  x_ = x;
  steps_ = steps;
  return Status::Ok();
}

void ExampleEnv::Write(float* obs, double* info) const {
  for (int i = 0; i < options_.window; ++i) {
    obs[i] = static_cast<float>(moves_[kMaxWindow - options_.window + i]);
  }
  obs[options_.window] = static_cast<float>(x_) / static_cast<float>(options_.bound);
  info[0] = x_;
  info[1] = steps_;
}

Result<std::unique_ptr<Env>> MakeExampleEnv(const std::map<std::string, std::string>& settings) {
  ExampleOptions options;
  RLT_RETURN_IF_ERROR(SetOptions(options, settings, "[env]"));
  RLT_ASSIGN_OR_RETURN(auto env, ExampleEnv::Create(options));
  return std::unique_ptr<Env>(std::move(env));
}

}  // namespace rlt::env
