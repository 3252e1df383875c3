// Micro-benchmark of rlt_learn: one PPO iteration (rollout + update) on 8 envs with the
// RL Zoo CartPole settings (n_steps 32, batch 256, 20 epochs) and on the example env.
// Reports env steps per second (items/s) and the phase breakdown as counters (seconds per
// iteration).
#include <benchmark/benchmark.h>

#include "env/registry.h"
#include "learn/trainer.h"

namespace rlt::learn {
namespace {

void RunIterations(benchmark::State& state, const char* env_id) {
  SetComputeThreads(1);
  auto envs = env::MakeEnvs(env_id, {}, 8);
  if (!envs.ok()) {
    state.SkipWithError(envs.status().ToString().c_str());
    return;
  }
  env::VecEnv venv(std::move(*envs), 1);
  PpoOptions o;
  o.n_steps = static_cast<int>(state.range(0));
  o.batch_size = 256;
  o.n_epochs = 20;
  o.gamma = 0.98;
  o.gae_lambda = 0.8;
  o.total_timesteps = 1 << 30;
  PpoTrainer trainer(venv, PolicyOptions{}, o, 0);
  for (auto _ : state) {
    auto s = trainer.Iterate();
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(trainer.total_steps());
  const TrainerTiming& t = trainer.timing();
  const double n = static_cast<double>(trainer.iterations());
  state.counters["env_step_s"] = t.env_step / n;
  state.counters["inference_s"] = t.inference / n;
  state.counters["gae_s"] = t.gae / n;
  state.counters["forward_s"] = t.update_forward / n;
  state.counters["backward_s"] = t.backward / n;
  state.counters["optimizer_s"] = t.optimizer / n;
}

void BM_PpoIterationCartPole(benchmark::State& state) { RunIterations(state, "cartpole"); }
void BM_PpoIterationExample(benchmark::State& state) { RunIterations(state, "example"); }
BENCHMARK(BM_PpoIterationCartPole)->Arg(32)->Arg(256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PpoIterationExample)->Arg(32)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rlt::learn

BENCHMARK_MAIN();
