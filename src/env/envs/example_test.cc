#include "env/envs/example.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/status_test_util.h"

namespace rlt::env {
namespace {

TEST(ExampleEnv, RewardsCorrectSignPredictions) {
  ExampleOptions o;
  o.persistence = 1.0;  // every move repeats the first one: predictable after one step
  o.max_steps = 10;
  o.bound = 100;
  auto env = ExampleEnv::Create(o);
  ASSERT_TRUE(env.ok());
  float obs[5];
  double info[2];
  (*env)->Seed(1);
  (*env)->Reset(obs, info);
  const float up = obs[3] > 0 ? 1.0f : 0.0f;  // the last move, repeated forever
  for (int i = 0; i < 10; ++i) {
    StepResult r = (*env)->Step(&up, obs, info);
    EXPECT_EQ(r.reward, 1.0f);
    EXPECT_EQ(r.truncated, i == 9);
  }
  EXPECT_EQ(std::fabs(info[0]), 10.0);
}

TEST(ExampleEnv, RejectsInvalidOptionsAndUnknownKeys) {
  ExampleOptions o;
  o.window = 0;
  EXPECT_TRUE(IsError(ExampleEnv::Create(o), Status::Code::kInvalidArgument,
                      "window must be in [1, 32], got 0"));
  auto env = MakeExampleEnv({{"persistance", "0.5"}});
  ASSERT_TRUE(IsError(env, Status::Code::kInvalidArgument, "did you mean 'persistence'"));
}

}  // namespace
}  // namespace rlt::env
