// rltrade env: the single-environment interface and the spaces it declares.
//
// An Env is one environment instance. It never allocates in Step(), never throws, and
// never does I/O: everything it reads was prepared before stepping (docs/ARCHITECTURE.md). The
// batched engine (vec_env.h) owns N of them and gives each its rows of the shared
// structure-of-arrays buffers, so Reset()/Step() write their outputs straight into those
// rows through raw pointers.
//
// Adding an environment: one file pair env/envs/<name>.{h,cc} with an Options struct,
// an entry in registry.cc (registry.h lists every edit it takes), and <name>_test.cc.
// env/envs/example.h is the annotated template.
//
// State: SaveState()/LoadState() carry everything Reset()/Step() change (the RNG and the
// episode state), so a checkpointed env continues exactly where it was. Options, spec and
// prepared data are not state: LoadState() goes into an env constructed with the same
// options (and data). An env that adds mutable members overrides both and calls the base
// versions first; the base versions carry only rng_. env_state_test.cc checks every
// registered env (add a case for a new one).
#ifndef RLT_ENV_ENV_H_
#define RLT_ENV_ENV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/state_io.h"
#include "core/status.h"

namespace rlt::env {

// An action space: a Box of `dim` floats within [low, high], or Discrete(n) (one float
// holding the integer action 0..n-1, so the action buffer layout is the same).
struct ActionSpace {
  bool discrete = false;
  int dim = 1;              // floats per action
  int n = 0;                // Discrete: number of actions
  std::vector<float> low;   // Box: (dim)
  std::vector<float> high;  // Box: (dim)
};

struct EnvSpec {
  std::string id;
  int obs_dim = 0;
  ActionSpace action;
  // Names of the per-env info values (net worth, position, ...), in buffer order.
  std::vector<std::string> info_names;
};

struct StepResult {
  float reward = 0.0f;
  bool terminated = false;  // the MDP ended (e.g. data exhausted, stop-out)
  bool truncated = false;   // cut by a time limit; the state is not terminal
};

// One environment. Not thread-safe; the engine steps each env from one thread at a time.
class Env {
 public:
  virtual ~Env() = default;
  virtual const EnvSpec& spec() const = 0;

  // Reseeds the env's own random stream (the engine seeds env i with seed + i).
  void Seed(uint64_t seed) { rng_.Seed(seed); }

  // Starts an episode. Writes obs (spec().obs_dim floats) and info (info_names.size()).
  virtual void Reset(float* obs, double* info) = 0;
  // REQUIRES: Reset() was called and no episode end was returned since.
  // Applies `action` (spec().action.dim floats), writes the next obs and info.
  virtual StepResult Step(const float* action, float* obs, double* info) = 0;

  // Appends the env's mutable state (RNG and episode state) to `out`. May allocate; not
  // for the stepping path.
  virtual void SaveState(StateWriter& out) const { out.PutRng(rng_.state()); }
  // Restores what SaveState() wrote, from an env built with the same options and data;
  // the next Step() then continues as the saved env's would have, bit for bit. Does not
  // write obs/info (the engine keeps those). A malformed or mismatched input is a
  // DataError; the env's state is then unspecified: Reset() it or load again.
  virtual Status LoadState(StateReader& in) {
    RngState rng;
    RLT_RETURN_IF_ERROR(in.GetRng(&rng, "env rng"));
    rng_.set_state(rng);
    return Status::Ok();
  }

 protected:
  Rng rng_;
};

}  // namespace rlt::env

#endif  // RLT_ENV_ENV_H_
