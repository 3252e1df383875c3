// rltrade env: ExampleEnv — the annotated template for writing a new environment.
//
// Copy this file pair to env/envs/<name>.{h,cc}, rename, add one line to registry.cc and
// write <name>_test.cc. What every environment does, shown here on a toy task:
//
//   The task: a hidden random walk x moves by +1 or -1 each step; the agent sees the
//   last `window` moves and is rewarded +1 for predicting the next move's sign (action 1
//   = up, 0 = down) and -1 otherwise. Moves repeat the previous move with probability
//   `persistence`, so there is something to learn when persistence != 0.5. An episode
//   lasts `max_steps` steps (truncated); it terminates early when |x| reaches `bound`.
//
// 1. Options: one struct, documented defaults, VisitFields() listing every key (this is
//    what maps the [env] section of a config onto it; unknown keys are errors).
// 2. Spec: obs_dim, action space, info names: fixed at construction.
// 3. Reset()/Step() write into the rows they are given. No allocation, no I/O, no
//    exceptions. Randomness only from rng_ (seeded seed + env index by the engine).
// 4. SaveState()/LoadState() carry every member Reset()/Step() change, after the base
//    class's rng_, so a checkpointed run continues bit for bit.
#ifndef RLT_ENV_ENVS_EXAMPLE_H_
#define RLT_ENV_ENVS_EXAMPLE_H_

#include <array>
#include <map>
#include <memory>
#include <string>

#include "core/status.h"
#include "env/env.h"

namespace rlt::env {

struct ExampleOptions {
  int window = 4;            // past moves in the observation (<= kMaxWindow)
  double persistence = 0.7;  // probability that a move repeats the previous one
  int max_steps = 100;       // episode length limit (truncation)
  int bound = 20;            // |x| >= bound terminates the episode

  template <typename V>
  void VisitFields(V& v) {
    v("window", &window, "past moves in the observation");
    v("persistence", &persistence, "probability that a move repeats the previous move");
    v("max_steps", &max_steps, "steps before truncation");
    v("bound", &bound, "terminate when |x| reaches this");
  }
};

class ExampleEnv : public Env {
 public:
  static constexpr int kMaxWindow = 32;
  static Result<std::unique_ptr<ExampleEnv>> Create(const ExampleOptions& options);

  const EnvSpec& spec() const override { return spec_; }
  void Reset(float* obs, double* info) override;
  StepResult Step(const float* action, float* obs, double* info) override;
  void SaveState(StateWriter& out) const override;
  Status LoadState(StateReader& in) override;

 private:
  explicit ExampleEnv(const ExampleOptions& options);
  int NextMove();
  void Write(float* obs, double* info) const;

  ExampleOptions options_;
  EnvSpec spec_;
  // State: a fixed-size history (no allocation in Step()).
  std::array<int, kMaxWindow> moves_{};  // most recent last
  int x_ = 0, steps_ = 0;
};

Result<std::unique_ptr<Env>> MakeExampleEnv(const std::map<std::string, std::string>& settings);

}  // namespace rlt::env

#endif  // RLT_ENV_ENVS_EXAMPLE_H_
