#include "env/vec_env.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/rng.h"
#include "core/status_test_util.h"
#include "env/envs/example.h"
#include "env/registry.h"
#include "market/synth.h"

namespace rlt::env {
namespace {

std::vector<std::unique_ptr<Env>> ExampleEnvs(int n, int max_steps) {
  EnvContext ctx;
  ctx.settings = {{"max_steps", std::to_string(max_steps)}, {"bound", "6"}};
  auto envs = MakeEnvs("example", ctx, n);
  EXPECT_TRUE(envs.ok());
  return std::move(envs).value();
}

std::shared_ptr<const MarketDataset> SyntheticDataset() {
  market::SynthOptions so;
  so.num_days = 30;
  so.seed = 5;
  auto md = market::GenerateSynthetic(so);
  EXPECT_TRUE(md.ok());
  DatasetOptions dopt;
  dopt.preset = "fast22";
  auto ds = PrepareMarketDataset(std::move(md->symbols.front()), dopt, DateRange{});
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  return ds.value();
}

// Env i of a VecEnv behaves exactly like a standalone env seeded seed + i, and on the
// step its episode ends, terminal_obs holds the standalone env's last observation while
// observations holds the first observation of the next episode (SB3 auto-reset).
TEST(VecEnv, AutoResetKeepsTerminalObservationAndMatchesStandaloneEnvs) {
  const int n = 5, obs_dim = 5;
  VecEnv vec(ExampleEnvs(n, 7), 2);
  auto standalone = ExampleEnvs(n, 7);
  const uint64_t seed = 100;
  vec.Reset(seed);
  std::vector<float> obs(n * obs_dim), terminal(obs_dim);
  std::vector<double> info(n * 2);
  for (int i = 0; i < n; ++i) {
    standalone[i]->Seed(seed + i);
    standalone[i]->Reset(&obs[i * obs_dim], &info[i * 2]);
  }
  ASSERT_EQ(0, std::memcmp(obs.data(), vec.observations(), sizeof(float) * obs.size()));
  Rng rng(1);
  int episodes_ended = 0;
  for (int step = 0; step < 60; ++step) {
    std::vector<float> actions(n);
    for (auto& a : actions) a = static_cast<float>(rng.UniformInt(2));
    vec.Step(actions.data());
    for (int i = 0; i < n; ++i) {
      StepResult r = standalone[i]->Step(&actions[i], &obs[i * obs_dim], &info[i * 2]);
      ASSERT_EQ(r.reward, vec.rewards()[i]);
      ASSERT_EQ(r.terminated, vec.terminated()[i] != 0);
      ASSERT_EQ(r.truncated, vec.truncated()[i] != 0);
      if (r.terminated || r.truncated) {
        ++episodes_ended;
        ASSERT_EQ(0, std::memcmp(&obs[i * obs_dim], vec.terminal_observations() + i * obs_dim,
                                 sizeof(float) * obs_dim));
        ASSERT_EQ(info[i * 2 + 1], vec.terminal_info()[i * 2 + 1]);  // steps of the episode
        ASSERT_EQ(vec.episode_lengths()[i], static_cast<int64_t>(info[i * 2 + 1]));
        standalone[i]->Reset(&obs[i * obs_dim], &info[i * 2]);
      }
      ASSERT_EQ(0, std::memcmp(&obs[i * obs_dim], vec.observations() + i * obs_dim,
                               sizeof(float) * obs_dim))
          << "env " << i << " step " << step;
    }
  }
  EXPECT_GT(episodes_ended, 20);  // truncation every 7 steps at most
}

TEST(VecEnv, TruncationIsDistinctFromTermination) {
  VecEnv vec(ExampleEnvs(64, 5), 1);
  vec.Reset(3);
  std::vector<float> actions(64, 1.0f);
  int terminated = 0, truncated = 0;
  for (int step = 0; step < 50; ++step) {
    vec.Step(actions.data());
    for (int i = 0; i < 64; ++i) {
      ASSERT_FALSE(vec.terminated()[i] && vec.truncated()[i]);
      terminated += vec.terminated()[i];
      truncated += vec.truncated()[i];
    }
  }
  // bound 6 within 5 steps is impossible, so every end is a truncation.
  EXPECT_EQ(terminated, 0);
  EXPECT_EQ(truncated, 64 * 10);
}

// The same seed gives bit-identical buffers whatever the number of worker threads.
TEST(VecEnv, ResultsDoNotDependOnTheNumberOfThreads) {
  auto data = SyntheticDataset();
  const int n = 37;
  std::vector<std::vector<float>> obs_by_threads, rew_by_threads;
  std::vector<std::vector<double>> info_by_threads;
  for (int threads : {1, 2, 3, 4}) {
    EnvContext ctx;
    ctx.market = data;
    ctx.settings = {{"episode_sessions", "2"}};
    auto envs = MakeEnvs("intraday", ctx, n);
    ASSERT_TRUE(envs.ok()) << envs.status().ToString();
    VecEnv vec(std::move(envs).value(), threads);
    ASSERT_EQ(vec.threads(), threads);
    vec.Reset(11);
    Rng rng(2);
    std::vector<float> obs_trace, rew_trace;
    std::vector<double> info_trace;
    std::vector<float> actions(n * 2);
    for (int step = 0; step < 400; ++step) {
      for (auto& a : actions) a = static_cast<float>(rng.Uniform(-1.0, 1.0));
      vec.Step(actions.data());
      obs_trace.insert(obs_trace.end(), vec.observations(), vec.observations() + n * vec.obs_dim());
      rew_trace.insert(rew_trace.end(), vec.rewards(), vec.rewards() + n);
      info_trace.insert(info_trace.end(), vec.info(), vec.info() + n * vec.info_dim());
    }
    obs_by_threads.push_back(std::move(obs_trace));
    rew_by_threads.push_back(std::move(rew_trace));
    info_by_threads.push_back(std::move(info_trace));
  }
  for (size_t k = 1; k < obs_by_threads.size(); ++k) {
    EXPECT_EQ(0, std::memcmp(obs_by_threads[0].data(), obs_by_threads[k].data(),
                             sizeof(float) * obs_by_threads[0].size()));
    EXPECT_EQ(0, std::memcmp(rew_by_threads[0].data(), rew_by_threads[k].data(),
                             sizeof(float) * rew_by_threads[0].size()));
    EXPECT_EQ(0, std::memcmp(info_by_threads[0].data(), info_by_threads[k].data(),
                             sizeof(double) * info_by_threads[0].size()));
  }
}

TEST(Registry, UnknownIdNamesTheNearestId) {
  auto envs = MakeEnvs("intrady", EnvContext{}, 1);
  ASSERT_TRUE(IsError(envs, Status::Code::kInvalidArgument,
                      "unknown environment id 'intrady'; did you mean 'intraday'"));
  auto no_data = MakeEnvs("intraday", EnvContext{}, 1);
  EXPECT_NE(no_data.status().message().find("needs market data"), std::string::npos);
}

}  // namespace
}  // namespace rlt::env
