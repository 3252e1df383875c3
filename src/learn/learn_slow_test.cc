// Learning checks for rlt_learn (label `slow`, minutes; not part of the default `make test`).
// Run: ctest --test-dir build -L slow --output-on-failure
#include <gtest/gtest.h>

#include <cstdio>

#include "env/registry.h"
#include "learn/trainer.h"

namespace rlt::learn {
namespace {

struct LearningRun {
  double final_ep_rew_mean = 0, best_ep_rew_mean = -1e300, final_ep_len_mean = 0, fps = 0;
};

LearningRun Train(env::VecEnv& venv, const PpoOptions& o, uint64_t seed) {
  PpoTrainer trainer(venv, PolicyOptions{}, o, seed);
  LearningRun run;
  while (trainer.total_steps() < o.total_timesteps) {
    auto s = trainer.Iterate();
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) break;
    if (s->episodes_seen > 0) {
      run.final_ep_rew_mean = s->ep_rew_mean;
      run.final_ep_len_mean = s->ep_len_mean;
      run.best_ep_rew_mean = std::max(run.best_ep_rew_mean, s->ep_rew_mean);
    }
    run.fps = s->fps;
    if (s->iterations % 50 == 0) {
      std::printf("steps %lld ep_rew_mean %.1f value_loss %.4f approx_kl %.4f fps %.0f\n",
                  static_cast<long long>(s->total_timesteps), s->ep_rew_mean, s->update.value_loss,
                  s->update.approx_kl, s->fps);
    }
  }
  return run;
}

// RL Baselines3 Zoo hyperparameters for CartPole-v1 (hyperparams/ppo.yml).
TEST(PpoLearning, SolvesCartPoleWithRlZooSettings) {
  SetComputeThreads(1);
  auto envs = env::MakeEnvs("cartpole", {}, 8);
  ASSERT_TRUE(envs.ok()) << envs.status().ToString();
  env::VecEnv venv(std::move(*envs), 1);
  PpoOptions o;
  o.n_steps = 32;
  o.batch_size = 256;
  o.gae_lambda = 0.8;
  o.gamma = 0.98;
  o.n_epochs = 20;
  o.ent_coef = 0.0;
  o.learning_rate = Schedule::Linear(1e-3, 0.0);
  o.clip_range = Schedule::Linear(0.2, 0.0);
  o.total_timesteps = 100000;
  const LearningRun run = Train(venv, o, 0);
  std::printf("CartPole: final ep_rew_mean %.1f (best %.1f), fps %.0f\n", run.final_ep_rew_mean,
              run.best_ep_rew_mean, run.fps);
  EXPECT_GE(run.final_ep_rew_mean, 475.0);
}

// The example env with persistence 0.9: guessing "the last move repeats" earns
// 0.9 - 0.1 = 0.8 per step in expectation; a random policy earns 0.
TEST(PpoLearning, LearnsTheExampleEnvPersistence) {
  SetComputeThreads(1);
  auto envs = env::MakeEnvs("example", {{{"persistence", "0.9"}}, nullptr, nullptr}, 8);
  ASSERT_TRUE(envs.ok());
  env::VecEnv venv(std::move(*envs), 1);
  PpoOptions o;
  o.n_steps = 64;
  o.batch_size = 128;
  o.total_timesteps = 40000;
  const LearningRun run = Train(venv, o, 0);
  const double per_step = run.final_ep_rew_mean / run.final_ep_len_mean;
  std::printf("example: reward per step %.3f (optimum 0.8)\n", per_step);
  EXPECT_GE(per_step, 0.7);
}

}  // namespace
}  // namespace rlt::learn
