// Tests of the learning-rate and coefficient schedules (no LibTorch): SB3's progress,
// warmup-cosine, parsing.
#include "learn/schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>

#include "core/status_test_util.h"

namespace rlt::learn {
namespace {

TEST(Schedule, ConstantAndLinearFollowSb3Progress) {
  auto at = [](const Schedule& s, double p) { return s.Value({p, 1, 1}); };
  EXPECT_EQ(at(*Schedule::Parse("3e-4"), 0.3), 3e-4);
  const Schedule lin = *Schedule::Parse("linear(1e-3, 0)");
  EXPECT_DOUBLE_EQ(at(lin, 1.0), 1e-3);
  EXPECT_DOUBLE_EQ(at(lin, 0.5), 5e-4);
  EXPECT_DOUBLE_EQ(at(lin, 0.0), 0.0);
  // The last rollout can overshoot total_timesteps: the value stays at `end`.
  EXPECT_DOUBLE_EQ(at(lin, -0.01), 0.0);
  const Schedule up = *Schedule::Parse(" linear( 0.1 , 0.3 ) ");
  EXPECT_DOUBLE_EQ(at(up, 0.25), 0.25);
  EXPECT_TRUE(IsError(Schedule::Parse("linear(1)"), Status::Code::kInvalidArgument,
                      "expected a number, linear(start, end) or warmup_cosine"));
  EXPECT_TRUE(IsError(Schedule::Parse("cosine(1, 2)"), Status::Code::kInvalidArgument,
                      "expected a number, linear(start, end) or warmup_cosine"));
  EXPECT_TRUE(IsError(Schedule::Parse("linear(a, 2)"), Status::Code::kInvalidArgument,
                      "argument 'a' is not a number"));
}

TEST(Schedule, WarmupCosineRisesLinearlyThenDecaysToTheFinalFraction) {
  const Schedule s = *Schedule::Parse("warmup_cosine(1e-3, 10, 0.1)");
  auto at = [&](int64_t u) { return s.Value({0.0, u, 110}); };
  EXPECT_DOUBLE_EQ(at(1), 1e-4);
  EXPECT_DOUBLE_EQ(at(5), 5e-4);
  EXPECT_DOUBLE_EQ(at(10), 1e-3);
  EXPECT_NEAR(at(60), 1e-3 * (0.1 + 0.9 * 0.5), 1e-15);  // half-way: cos(pi/2) = 0
  EXPECT_NEAR(at(35), 1e-3 * (0.1 + 0.9 * 0.5 * (1 + std::cos(std::numbers::pi / 4))), 1e-15);
  EXPECT_NEAR(at(110), 1e-4, 1e-15);
  EXPECT_EQ(Schedule::Parse(s.ToString())->ToString(), s.ToString());
}

}  // namespace
}  // namespace rlt::learn
