// rltrade perf: `rltrade bench train` — the real training loop of a config, measured.
//
// For each (device, threads) setting, MeasureTraining() builds the config's trainer exactly
// as `rltrade train` does (train::OpenTrainingSession: same setup code, same thread settings,
// metrics and checkpoints written to a scratch directory), runs one warm-up update, then
// updates until `steps` env steps have passed, and reports:
//   env_steps_per_sec   env steps / wall seconds of the measured updates (end to end);
//   breakdown           fractions of that wall time per phase, from the trainer's measured
//                       accumulators (TrainerTiming); "other" is the remainder (clamped at 0,
//                       the fractions then renormalised so they sum to 1);
//   update_gflops       UpdateFlops() / (update_forward + backward + optimizer seconds);
//   peak_gflops         perf::PeakMatmulGflops(2000, threads): the machine's float32 matmul
//                       rate at the same thread count;
//   end_to_end_gflops   UpdateFlops() / wall seconds (environment, inference and update
//                       included), and end_to_end_fraction = that / peak_gflops;
//   peak_rss_bytes      VmHWM of the process after the run (a process-wide high-water mark:
//                       with several settings in one process it never decreases);
//   projected_seconds   config total_steps / env_steps_per_sec.
// Not a training run: nothing is saved outside the scratch directory, which is removed.
// The header is LibTorch-free.
#ifndef RLT_PERF_TRAIN_BENCH_H_
#define RLT_PERF_TRAIN_BENCH_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace rlt::perf {

struct TrainBenchOptions {
  std::string config_path;
  std::vector<std::string> overrides;  // "section.key=value", as `rltrade train --set`
  int64_t steps = 0;                   // env steps to measure; 0 = 4 updates' worth
  // Under mpirun: rounds of (rank 0 alone, then all ranks), alternated so that a machine
  // whose speed drifts affects both sides alike; the median round is reported.
  int rounds = 3;
  std::vector<std::string> devices = {"cpu"};
  std::vector<int> threads;  // empty: the config's [run] threads
  // Learner backends to measure side by side ("native", "torch"); empty: the config's
  // [policy] backend.
  std::vector<std::string> backends;
};

struct TrainBenchResult {
  std::string device;
  std::string backend;  // [policy] backend measured
  int threads = 0;
  int64_t steps = 0;  // measured env steps
  double seconds = 0;
  double env_steps_per_sec = 0;
  double env_steps_per_core = 0;  // env_steps_per_sec / threads (one rank's cores)
  std::string algo = "ppo";       // [algo] name (train/algorithm.h)
  bool dense_update = true;       // false: no FLOP figure (update_gflops 0), see update_note
  std::string update_note;        // what the phases mean for an update of another kind
  // (phase, fraction of wall time) in a fixed order: env_step, inference, advantage,
  // update_forward, backward, optimizer, logging, other.
  std::vector<std::pair<std::string, double>> breakdown;
  double update_gflops = 0, peak_gflops = 0;
  double end_to_end_gflops = 0, end_to_end_fraction = 0;
  int64_t peak_rss_bytes = 0;
  double projected_seconds = 0;
  int64_t total_steps = 0;  // the config's [run] total_steps
};

// Analytic FLOPs of one PPO update of an MLP actor-critic: per sample and dense layer
// (in -> out) 2*in*out multiply-adds forward and twice that backward (input and weight
// gradients), over the policy net (obs -> pi... -> action_outputs) and the value net
// (obs -> vf... -> 1), times samples (n_steps * num_envs) times n_epochs. Activations,
// losses and the optimizer are not counted (they are O(parameters), not O(samples x width)).
// lstm_hidden > 0: a recurrent policy, one LSTM (shared_lstm) or two of that many units
// before the towers, counted as 2 (obs_dim + H) 4H multiply-adds per step each (the gate
// products; element-wise gate math is not counted).
double UpdateFlops(int obs_dim, int action_outputs, const std::vector<int>& pi,
                   const std::vector<int>& vf, int64_t samples, int epochs, int lstm_hidden = 0,
                   bool shared_lstm = false);

// Devices this build can train on: "cpu", plus "cuda" when LibTorch sees a CUDA device
// (loads the torch plug-in, learn/torch_plugin.h).
std::vector<std::string> AvailableDevices();

// One result per (backend, device, threads) setting, backends outer, then devices. Errors: unknown
// or unavailable device, bad config, a training error.
Result<std::vector<TrainBenchResult>> MeasureTraining(const TrainBenchOptions& options);

// The results as a text table (one row per setting; phases in percent of wall time).
// `markdown`: a Markdown table.
std::string TrainBenchTable(const std::vector<TrainBenchResult>& results, bool markdown);

// A Markdown report: the table and a recommendation drawn from the measured numbers.
std::string TrainBenchMarkdown(const TrainBenchOptions& options,
                               const std::vector<TrainBenchResult>& results);

}  // namespace rlt::perf

#endif  // RLT_PERF_TRAIN_BENCH_H_
