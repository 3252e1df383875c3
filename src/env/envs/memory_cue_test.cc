// rltrade env: MemoryCueEnv tests — the cue is shown only at the first step, only the last
// action is rewarded, and a policy that remembers the cue always wins while one that
// cannot remember wins half the time.
#include "env/envs/memory_cue.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/status_test_util.h"

namespace rlt::env {
namespace {

struct Episode {
  double reward = 0;
  int steps = 0;
  bool terminated = false;
};

// Plays one episode; `remember` answers with the cue seen at the first step, else 1.
Episode Play(MemoryCueEnv& env, bool remember, std::vector<float>* first_obs = nullptr) {
  std::vector<float> obs(3);
  std::vector<double> info(1);
  env.Reset(obs.data(), info.data());
  if (first_obs) *first_obs = obs;
  const float cue = obs[1] == 1.0f ? 1.0f : 0.0f;
  Episode e;
  for (;;) {
    const float action = remember ? cue : 1.0f;
    const StepResult r = env.Step(&action, obs.data(), info.data());
    ++e.steps;
    e.reward += r.reward;
    if (r.terminated || r.truncated) {
      e.terminated = r.terminated;
      EXPECT_EQ(info[0], r.reward > 0 ? 1.0 : 0.0);
      return e;
    }
    EXPECT_EQ(r.reward, 0.0f);
    EXPECT_EQ(obs[0] + obs[1], 0.0f) << "the cue must be hidden after the first step";
    EXPECT_EQ(obs[2], e.steps == 5 ? 1.0f : 0.0f) << "decide flag only at the last step";
  }
}

TEST(MemoryCue, RememberingWinsEveryEpisodeAndGuessingWinsHalf) {
  MemoryCueOptions o;
  o.length = 6;
  auto env = MemoryCueEnv::Create(o);
  ASSERT_TRUE(env.ok());
  (*env)->Seed(3);
  int ones = 0;
  double guess_total = 0;
  const int episodes = 2000;
  for (int k = 0; k < episodes; ++k) {
    std::vector<float> first;
    const Episode e = Play(**env, /*remember=*/true, &first);
    EXPECT_EQ(e.steps, 6);
    EXPECT_TRUE(e.terminated);
    EXPECT_EQ(e.reward, 1.0);
    EXPECT_EQ(first[0] + first[1], 1.0f) << "exactly one cue symbol at the first step";
    ones += first[1] == 1.0f;
    guess_total += Play(**env, /*remember=*/false).reward;
  }
  // Fair cues: the count of cue 1 is Binomial(2000, 1/2), sd ~22.4; 5 sd bounds.
  EXPECT_NEAR(ones, episodes / 2, 112);
  // A constant answer: mean reward 0 (+-1 per episode, sd of the mean ~0.022).
  EXPECT_NEAR(guess_total / episodes, 0.0, 0.12);
}

TEST(MemoryCue, LengthOutsideItsRangeIsRefused) {
  for (int bad : {1, 0, -3, 10001}) {
    MemoryCueOptions o;
    o.length = bad;
    const auto env = MemoryCueEnv::Create(o);
    ASSERT_TRUE(IsError(env, Status::Code::kInvalidArgument, "[env] length must be in [2, 10000]"))
        << bad;
  }
}

}  // namespace
}  // namespace rlt::env
