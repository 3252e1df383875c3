// Tests of environment state save/restore (Env::SaveState/LoadState and
// VecEnv::SaveState/LoadState): a restored environment continues bit for bit as the one it
// was saved from, whatever its own seed and history, and mismatched state is refused.
//
// Every test runs a reference env forward, saves it mid-run, records what the reference
// then outputs for fixed random actions, restores the state into a freshly built env
// (same options, another seed, already stepped elsewhere), replays the same actions and
// compares every output byte.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/state_io.h"
#include "env/registry.h"
#include "env/vec_env.h"
#include "market/synth.h"

namespace rlt::env {
namespace {

std::shared_ptr<const MarketDataset> SyntheticDataset(int days = 12) {
  market::SynthOptions so;
  so.num_days = days;  // 75 five-minute bars a session
  so.seed = 11;
  auto md = market::GenerateSynthetic(so);
  EXPECT_TRUE(md.ok());
  DatasetOptions dopt;
  dopt.preset = "fast22";
  auto ds = PrepareMarketDataset(std::move(md->symbols.front()), dopt, DateRange{});
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  return ds.value();
}

struct EnvCase {
  std::string name;  // test name suffix
  std::string id;
  std::map<std::string, std::string> settings;
};

void PrintTo(const EnvCase& c, std::ostream* os) { *os << c.name; }

EnvContext Context(const EnvCase& c) {
  EnvContext ctx;
  ctx.settings = c.settings;
  if (c.id == "intraday") {
    static const std::shared_ptr<const MarketDataset> kData = SyntheticDataset();
    ctx.market = kData;
  }
  return ctx;
}

std::vector<std::unique_ptr<Env>> Make(const EnvCase& c, int n) {
  auto envs = MakeEnvs(c.id, Context(c), n);
  EXPECT_TRUE(envs.ok()) << envs.status().ToString();
  return std::move(envs).value();
}

// Random actions for `steps` steps of `n` envs, covering (and exceeding) the action space.
std::vector<float> RandomActions(const EnvSpec& spec, int n, int steps, uint64_t seed) {
  Rng rng(seed);
  const ActionSpace& a = spec.action;
  std::vector<float> out(static_cast<size_t>(steps) * n * a.dim);
  for (size_t k = 0; k < out.size(); ++k) {
    const int d = static_cast<int>(k % a.dim);
    out[k] = a.discrete ? static_cast<float>(rng.UniformInt(a.n))
                        : static_cast<float>(rng.Uniform(a.low[d] - 0.2, a.high[d] + 0.2));
  }
  return out;
}

// Byte-for-byte equality of two buffers (NaN == NaN, -0 != +0).
template <typename T>
bool SameBytes(const T* a, const T* b, size_t n) {
  return std::memcmp(a, b, sizeof(T) * n) == 0;
}

// What one env outputs over a run of steps (its own resets included).
struct Trace {
  std::vector<float> obs, rewards;
  std::vector<uint8_t> flags;
  std::vector<double> info;
};

// Steps `env` with `actions` (steps x act_dim), resetting it where an episode ends, and
// records every output. `obs`/`info` are the env's rows.
Trace StepAndRecord(Env& env, const float* actions, int steps, float* obs, double* info) {
  const EnvSpec& spec = env.spec();
  const size_t info_dim = spec.info_names.size();
  Trace t;
  for (int s = 0; s < steps; ++s) {
    const StepResult r = env.Step(actions + static_cast<size_t>(s) * spec.action.dim, obs, info);
    t.rewards.push_back(r.reward);
    t.flags.push_back(static_cast<uint8_t>(r.terminated | (r.truncated << 1)));
    if (r.terminated || r.truncated) env.Reset(obs, info);
    t.obs.insert(t.obs.end(), obs, obs + spec.obs_dim);
    t.info.insert(t.info.end(), info, info + info_dim);
  }
  return t;
}

class EnvState : public ::testing::TestWithParam<EnvCase> {};

TEST_P(EnvState, RestoredIntoAFreshEnvContinuesBitForBit) {
  constexpr int kBefore = 170, kAfter = 260;
  auto a = std::move(Make(GetParam(), 1).front());
  const EnvSpec& spec = a->spec();
  std::vector<float> obs(spec.obs_dim);
  std::vector<double> info(spec.info_names.size());
  const std::vector<float> actions = RandomActions(spec, 1, kBefore + kAfter, 3);
  a->Seed(21);
  a->Reset(obs.data(), info.data());
  const Trace before = StepAndRecord(*a, actions.data(), kBefore, obs.data(), info.data());
  int episode_ends = 0;
  for (uint8_t f : before.flags) episode_ends += f != 0;

  StateWriter w;
  a->SaveState(w);
  const std::string saved = w.Release();
  const float* rest = actions.data() + static_cast<size_t>(kBefore) * spec.action.dim;
  const Trace expected = StepAndRecord(*a, rest, kAfter, obs.data(), info.data());

  // A fresh env with another seed, moved somewhere else first.
  auto b = std::move(Make(GetParam(), 1).front());
  std::vector<float> obs_b(spec.obs_dim);
  std::vector<double> info_b(spec.info_names.size());
  b->Seed(999);
  b->Reset(obs_b.data(), info_b.data());
  StepAndRecord(*b, actions.data(), 37, obs_b.data(), info_b.data());
  StateReader r(saved, "saved env");
  const Status loaded = b->LoadState(r);
  ASSERT_TRUE(loaded.ok()) << loaded.ToString();
  ASSERT_TRUE(r.Finish().ok()) << r.Finish().ToString();
  const Trace got = StepAndRecord(*b, rest, kAfter, obs_b.data(), info_b.data());

  ASSERT_EQ(got.obs.size(), expected.obs.size());
  EXPECT_TRUE(SameBytes(got.obs.data(), expected.obs.data(), got.obs.size()));
  EXPECT_TRUE(SameBytes(got.rewards.data(), expected.rewards.data(), got.rewards.size()));
  EXPECT_EQ(got.flags, expected.flags);
  EXPECT_TRUE(SameBytes(got.info.data(), expected.info.data(), got.info.size()));
  // The runs must cross episode boundaries, so Reset()'s draws after a restore are covered.
  int ends_after = 0;
  for (uint8_t f : expected.flags) ends_after += f != 0;
  EXPECT_GE(episode_ends + ends_after, 2) << "make the episodes shorter";
  EXPECT_GE(ends_after, 1);
}

TEST_P(EnvState, TruncatedStateIsADataErrorNotACrash) {
  auto a = std::move(Make(GetParam(), 1).front());
  std::vector<float> obs(a->spec().obs_dim);
  std::vector<double> info(a->spec().info_names.size());
  a->Seed(1);
  a->Reset(obs.data(), info.data());
  StateWriter w;
  a->SaveState(w);
  const std::string saved = w.Release();
  for (size_t cut : {size_t{0}, size_t{9}, saved.size() / 2, saved.size() - 1}) {
    StateReader r(std::string_view(saved).substr(0, cut));
    EXPECT_EQ(a->LoadState(r).code(), Status::Code::kDataError) << cut;
  }
}

const std::vector<EnvCase>& AllCases() {
  static const std::vector<EnvCase> kCases = {
      EnvCase{"Example", "example", {{"max_steps", "40"}, {"bound", "6"}}},
      EnvCase{"MemoryCue", "memory_cue", {{"length", "5"}}},
      EnvCase{"CartPole", "cartpole", {{"max_episode_steps", "60"}}},
      EnvCase{"Pendulum", "pendulum", {{"max_episode_steps", "50"}}},
      EnvCase{
          "HedgingGarchRebalanceEvery2",
          "hedging",
          {{"paths", "garch"}, {"rebalance_every", "2"}, {"cost", "0.01"}, {"step_weeks", "0.5"}}},
      EnvCase{"OptionsLogReturn",
              "options",
              {{"synthetic_days", "300"}, {"episode_days", "30"}, {"turnover_penalty", "0.1"}}},
      EnvCase{"OptionsShaped",
              "options",
              {{"synthetic_days", "300"}, {"episode_days", "25"}, {"reward", "shaped"}}},
      EnvCase{"IntradayPnl", "intraday", {{"drawdown_penalty", "0.5"}}},
      EnvCase{"IntradayShapedTarget",
              "intraday",
              {{"reward", "shaped"}, {"action_mode", "target_position"}}},
      EnvCase{"IntradayShapedTwoSessions",
              "intraday",
              {{"reward", "shaped"}, {"episode_sessions", "2"}, {"fill", "next_typical"}}}};
  return kCases;
}

INSTANTIATE_TEST_SUITE_P(AllEnvs, EnvState, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<EnvCase>& info) {
                           return info.param.name;
                         });

// A new environment that keeps mutable members must override SaveState/LoadState; this
// makes sure it is added to the cases above, where a forgotten member shows.
TEST(EnvStateCases, CoverEveryRegisteredEnvironment) {
  for (const EnvEntry& entry : EnvRegistry()) {
    bool covered = false;
    for (const EnvCase& c : AllCases()) covered |= c.id == entry.id;
    EXPECT_TRUE(covered) << "add '" << entry.id << "' to AllCases() in env_state_test.cc";
  }
}

// Every buffer of a VecEnv, as bytes.
std::string Buffers(const VecEnv& v) {
  const size_t n = v.num_envs(), obs = n * v.obs_dim(), info = n * v.info_dim();
  std::string s;
  auto add = [&s](const void* p, size_t bytes) { s.append(static_cast<const char*>(p), bytes); };
  add(v.observations(), sizeof(float) * obs);
  add(v.terminal_observations(), sizeof(float) * obs);
  add(v.rewards(), sizeof(float) * n);
  add(v.terminated(), n);
  add(v.truncated(), n);
  add(v.info(), sizeof(double) * info);
  add(v.terminal_info(), sizeof(double) * info);
  add(v.episode_returns(), sizeof(double) * n);
  add(v.episode_lengths(), sizeof(int64_t) * n);
  return s;
}

// Saves a VecEnv run with `save_threads` workers mid-run (with auto-resets before and
// after) and restores it into VecEnvs with other thread counts: every buffer after every
// later step is identical, episode returns/lengths of episodes spanning the save included.
void CheckVecEnvRoundTrip(const EnvCase& c, int n, int before, int after) {
  VecEnv a(Make(c, n), /*threads=*/3);
  const int act = a.act_dim();
  const std::vector<float> actions = RandomActions(a.spec(), n, before + after, 8);
  a.Reset(4);
  int episode_ends = 0;
  for (int s = 0; s < before; ++s) a.Step(actions.data() + static_cast<size_t>(s) * n * act);
  const std::string saved = a.SaveState();
  std::vector<std::string> expected;
  expected.push_back(Buffers(a));
  for (int s = before; s < before + after; ++s) {
    a.Step(actions.data() + static_cast<size_t>(s) * n * act);
    expected.push_back(Buffers(a));
    for (int i = 0; i < n; ++i) episode_ends += a.done(i);
  }
  EXPECT_GE(episode_ends, n) << "the replayed part should include auto-resets";
  for (int threads : {1, 2}) {
    VecEnv b(Make(c, n), threads);
    b.Reset(77);
    for (int s = 0; s < 5; ++s) b.Step(actions.data());
    const Status st = b.LoadState(saved, "envs.bin");
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(Buffers(b), expected[0]) << "threads " << threads;
    for (int s = before; s < before + after; ++s) {
      b.Step(actions.data() + static_cast<size_t>(s) * n * act);
      ASSERT_EQ(Buffers(b), expected[s - before + 1]) << "threads " << threads << " step " << s;
    }
    EXPECT_EQ(b.SaveState(), a.SaveState());
  }
}

TEST(VecEnvState, CartPoleRoundTripAcrossThreadCountsWithAutoResets) {
  CheckVecEnvRoundTrip({"", "cartpole", {{"max_episode_steps", "25"}}}, 7, 31, 80);
}

TEST(VecEnvState, IntradayShapedRoundTripAcrossThreadCountsWithAutoResets) {
  CheckVecEnvRoundTrip({"", "intraday", {{"reward", "shaped"}}}, 5, 100, 160);
}

TEST(VecEnvState, HeaderMismatchIsRefusedWithAClearErrorAndChangesNothing) {
  const EnvCase cartpole{"", "cartpole", {}};
  VecEnv a(Make(cartpole, 4), 1);
  a.Reset(1);
  const std::string saved = a.SaveState();

  VecEnv fewer(Make(cartpole, 3), 1);
  fewer.Reset(2);
  const std::string before = fewer.SaveState();
  const Status s = fewer.LoadState(saved, "ckpt/envs.bin");
  ASSERT_EQ(s.code(), Status::Code::kDataError);
  EXPECT_NE(s.message().find("ckpt/envs.bin"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("num_envs is 4 in the saved state but 3 here"), std::string::npos)
      << s.message();
  EXPECT_EQ(fewer.SaveState(), before);

  // Same shapes, another env id (no two registered envs share all shapes: edit the bytes).
  std::string renamed = saved;
  const size_t at = renamed.find("cartpole");
  ASSERT_NE(at, std::string::npos);
  renamed.replace(at, 8, "cartpolx");
  VecEnv same(Make(cartpole, 4), 1);
  const Status id = same.LoadState(renamed);
  ASSERT_EQ(id.code(), Status::Code::kDataError);
  EXPECT_NE(id.message().find("env id is 'cartpolx' in the saved state but 'cartpole' here"),
            std::string::npos)
      << id.message();

  VecEnv pendulum(Make({"", "pendulum", {}}, 4), 1);
  const Status dims = pendulum.LoadState(saved);
  ASSERT_EQ(dims.code(), Status::Code::kDataError);
  EXPECT_NE(dims.message().find("obs_dim is 4 in the saved state but 3 here"), std::string::npos)
      << dims.message();

  EXPECT_EQ(a.LoadState("garbage").code(), Status::Code::kDataError);
  for (size_t cut : {size_t{30}, saved.size() - 1}) {
    VecEnv c(Make(cartpole, 4), 1);
    EXPECT_EQ(c.LoadState(std::string_view(saved).substr(0, cut)).code(), Status::Code::kDataError)
        << cut;
  }
}

TEST(VecEnvState, IntradayStateFromOtherDataIsRefused) {
  EnvContext ctx;
  ctx.market = SyntheticDataset(/*days=*/12);
  auto a_envs = MakeEnvs("intraday", ctx, 2);
  ASSERT_TRUE(a_envs.ok());
  VecEnv a(std::move(a_envs).value(), 1);
  a.Reset(1);
  ctx.market = SyntheticDataset(/*days=*/14);  // same shapes, more bars
  auto b_envs = MakeEnvs("intraday", ctx, 2);
  ASSERT_TRUE(b_envs.ok());
  VecEnv b(std::move(b_envs).value(), 1);
  const Status s = b.LoadState(a.SaveState());
  ASSERT_EQ(s.code(), Status::Code::kDataError);
  EXPECT_NE(s.message().find("intraday bar count"), std::string::npos) << s.message();
}

// Found by fuzz/vec_env_state_fuzz: a running episode length of INT64_MAX loaded, and
// the next Step() overflowed it (UBSan: signed integer overflow in VecEnv::StepSlice).
TEST(VecEnvState, CorruptEpisodeLengthIsRefused) {
  auto made = MakeEnvs("cartpole", EnvContext{}, 3);
  ASSERT_TRUE(made.ok());
  VecEnv vec(std::move(made).value(), 1);
  vec.Reset(2);
  const std::string good = vec.SaveState();
  ASSERT_TRUE(vec.LoadState(good).ok());
  // The state ends with the running lengths, then the episode lengths (int64 x 3 each).
  for (size_t from_end : {size_t{48}, size_t{24}}) {
    for (int64_t bad : {std::numeric_limits<int64_t>::max(), int64_t{-1}}) {
      std::string bytes = good;
      std::memcpy(bytes.data() + bytes.size() - from_end, &bad, 8);
      const Status s = vec.LoadState(bytes);
      EXPECT_EQ(s.code(), Status::Code::kDataError) << bad;
      EXPECT_NE(s.message().find("episode length"), std::string::npos) << s.message();
    }
  }
}

// Found by fuzz/vec_env_state_fuzz: a state whose bytes were changed (a cash value, a
// share count, a bar index) loaded without error, and the next Step() failed the
// self-financing RLT_DCHECK, overflowed a share count, or read past the session. Each
// such state is now refused by LoadState with a DataError naming what is wrong.
TEST(EnvState, IntradayCorruptPortfolioIsRefused) {
  EnvContext ctx;
  ctx.market = SyntheticDataset();
  auto made = MakeEnvs("intraday", ctx, 1);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Env& env = *made->front();
  env.Seed(3);
  std::vector<float> obs(env.spec().obs_dim);
  std::vector<double> info(env.spec().info_names.size());
  env.Reset(obs.data(), info.data());
  const float buy[2] = {1.0f, 0.5f};  // original action mode: buy half the cash
  env.Step(buy, obs.data(), info.data());
  StateWriter w;
  env.SaveState(w);
  const std::string good = w.Release();
  // The layout of IntradayStockEnv::SaveState: the RNG (4 x u64, f64, u8), bar count and
  // eligible sessions (i64 each), t, pos, sessions_left (i32), cash, avg_price, realized,
  // costs (f64), shares, trades, last_traded (i64), ...
  constexpr size_t kT = 41 + 16, kSessionsLeft = kT + 8, kCash = kT + 12, kShares = kCash + 32;
  int32_t t = 0;
  std::memcpy(&t, good.data() + kT, 4);
  int64_t shares = 0;
  std::memcpy(&shares, good.data() + kShares, 8);
  ASSERT_GT(shares, 0) << "the buy did not fill; the test needs an open position";
  {
    StateReader in(good, "good");
    ASSERT_TRUE(env.LoadState(in).ok());  // the unchanged bytes load
  }
  auto refused = [&](const std::string& bytes, const std::string& fragment) {
    StateReader in(bytes, "corrupt");
    const Status s = env.LoadState(in);
    EXPECT_EQ(s.code(), Status::Code::kDataError) << fragment;
    EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
  };
  auto patched = [&](size_t offset, const auto& value) {
    std::string bytes = good;
    std::memcpy(bytes.data() + offset, &value, sizeof value);
    return bytes;
  };
  double cash = 0;
  std::memcpy(&cash, good.data() + kCash, 8);
  refused(patched(kCash, cash + 1000.0), "inconsistent");
  refused(patched(kCash, std::numeric_limits<double>::quiet_NaN()), "not finite");
  refused(patched(kShares, std::numeric_limits<int64_t>::max()), "share count");
  refused(patched(kSessionsLeft, int32_t{-1}), "sessions left");
  const market::Bars& bars = ctx.market->bars;
  const int32_t last_bar = bars.sessions[bars.session[t]].end - 1;
  refused(patched(kT, last_bar), "is not in its session");
}

}  // namespace
}  // namespace rlt::env
