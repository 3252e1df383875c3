// rltrade env: MemoryCueEnv — a memory task for recurrent policies ("memory_cue").
//
// The task: at the first step the observation shows a cue, one of two symbols drawn at
// random; for the next `length` - 1 steps the cue is hidden (the observation carries only
// a "decide now" flag, set at the last step). The action at the last step (Discrete(2)) is
// rewarded +1 when it names the cue and -1 otherwise; earlier actions earn nothing. The
// episode then terminates. A policy without memory cannot beat chance (expected reward 0);
// one that remembers the cue earns 1. Recurrent PPO's learning test (learn/).
// Observation (3): [cue is 0, cue is 1, decide now]. Info: "correct" (1 after a right
// decision, else 0).
#ifndef RLT_ENV_ENVS_MEMORY_CUE_H_
#define RLT_ENV_ENVS_MEMORY_CUE_H_

#include <map>
#include <memory>
#include <string>

#include "core/status.h"
#include "env/env.h"

namespace rlt::env {

struct MemoryCueOptions {
  int length = 8;  // steps per episode: the cue at the first, the decision at the last

  template <typename V>
  void VisitFields(V& v) {
    v("length", &length, "steps per episode (cue first, decision last), in [2, 10000]");
  }
};

class MemoryCueEnv : public Env {
 public:
  static Result<std::unique_ptr<MemoryCueEnv>> Create(const MemoryCueOptions& options);

  const EnvSpec& spec() const override { return spec_; }
  void Reset(float* obs, double* info) override;
  StepResult Step(const float* action, float* obs, double* info) override;
  void SaveState(StateWriter& out) const override;
  Status LoadState(StateReader& in) override;

 private:
  explicit MemoryCueEnv(const MemoryCueOptions& options);
  void Write(float* obs, double* info, double correct) const;

  MemoryCueOptions options_;
  EnvSpec spec_;
  int cue_ = 0, step_ = 0;
};

Result<std::unique_ptr<Env>> MakeMemoryCueEnv(const std::map<std::string, std::string>& settings);

}  // namespace rlt::env

#endif  // RLT_ENV_ENVS_MEMORY_CUE_H_
