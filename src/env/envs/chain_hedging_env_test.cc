// Tests of the hedging environment on a listed chain (`[env] chain_file`,
// chain_hedging_env.h) on chain files written here: Black-Scholes quotes along a
// deterministic zig-zag path (as `rltrade hedge --chain`'s tests). The Black-Scholes delta
// walk against env::HedgeChainContract (the same conventions by a separate code path), the
// marks against Black-Scholes written here, the accounting against a cash account replayed
// here, and the bad inputs.
#include "env/envs/chain_hedging_env.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/civil_time.h"
#include "core/rng.h"
#include "env/registry.h"
#include "market/option_chain_csv.h"
#include "testing/testing.h"

namespace rlt::env {
namespace {

namespace fs = std::filesystem;

constexpr double kS0 = 100, kRate = 0.03;
constexpr int kDays = 15;

int32_t Day(int y, int m, int d) { return static_cast<int32_t>(DaysFromCivil(y, m, d)); }
std::string DateText(int32_t days) { return FormatDate(DateKey(CivilFromDays(days))); }

std::string Num17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

double Ncdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
// Black-Scholes value, phi = +1 call, -1 put (written here).
double Bs(double phi, double s, double k, double vol, double t) {
  const double d1 = (std::log(s / k) + (kRate + vol * vol / 2) * t) / (vol * std::sqrt(t));
  const double d2 = d1 - vol * std::sqrt(t);
  return phi * (s * Ncdf(phi * d1) - k * std::exp(-kRate * t) * Ncdf(phi * d2));
}
// The vol the quotes of date i are priced at: it moves, so a carried vol is told apart.
double VolOf(int i) { return 0.18 + 0.01 * (i % 5); }

struct Path {
  std::vector<int32_t> dates;
  std::vector<double> spot;
};

Path ZigZag() {
  Path p;
  for (int32_t d = Day(2024, 1, 2); static_cast<int>(p.dates.size()) < kDays; ++d) {
    if (Weekday(d) != 0 && Weekday(d) != 6) p.dates.push_back(d);
  }
  p.spot.push_back(kS0);
  for (int i = 1; i < kDays; ++i) {
    const double dt = (p.dates[i] - p.dates[i - 1]) / 365.0;
    const double sign = i % 2 == 1 ? 1 : -1;
    p.spot.push_back(p.spot.back() * std::exp(sign * 0.2 * std::sqrt(dt)));
  }
  return p;
}

const char kHeader[] = "quote_date,expiration,strike,type,bid,ask,underlying_price\n";

class ChainHedgingEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::NewScratchDir("rlt_chainhedgeenv_");
    path_ = ZigZag();
    expiry_ = path_.dates[kDays - 1];
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One contract's rows from date index `from` to the day before expiry; `unquoted`: a date
  // index with bid = ask = 0.
  void Rows(std::string* csv, double phi, double k, int from, int unquoted = -1) const {
    for (int i = from; i < kDays - 1; ++i) {
      const double v = Bs(phi, path_.spot[i], k, VolOf(i), (expiry_ - path_.dates[i]) / 365.0);
      const bool q = i != unquoted;
      *csv += DateText(path_.dates[i]) + "," + DateText(expiry_) + "," + Num17(k) + "," +
              (phi > 0 ? "C" : "P") + "," + (q ? Num17(v * 0.999) : "0") + "," +
              (q ? Num17(v * 1.001) : "0") + "," + Num17(path_.spot[i]) + "\n";
    }
  }
  // The call K 100 (no quote on date 5), the put K 95, the call K 105 first quoted on date 7.
  std::string Write() {
    std::string csv = kHeader;
    Rows(&csv, 1, 100, 0, 5);
    Rows(&csv, -1, 95, 0);
    Rows(&csv, 1, 105, 7);
    csv += DateText(expiry_) + "," + DateText(expiry_) + ",100,C,1,1.1," +
           Num17(path_.spot[kDays - 1]) + "\n";
    const std::string file = (dir_ / "chain.csv").string();
    std::ofstream(file) << csv;
    return file;
  }
  std::map<std::string, std::string> Settings(const std::string& file) const {
    return {{"chain_file", file},   {"rate", "0.03"},       {"cost", "0.001"},
            {"risk_aversion", "0"}, {"sequential", "true"}, {"min_days", "3"}};
  }
  std::string Id(double phi, double k) const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s:%s:%g", DateText(expiry_).c_str(), phi > 0 ? "C" : "P", k);
    return buf;
  }
  fs::path dir_;
  Path path_;
  int32_t expiry_ = 0;
};

std::unique_ptr<Env> Make(const std::map<std::string, std::string>& settings) {
  EnvContext ctx;
  ctx.settings = settings;
  Result<std::vector<std::unique_ptr<Env>>> envs = MakeEnvs("hedging", ctx, 1);
  EXPECT_TRUE(envs.ok()) << envs.status().ToString();
  if (!envs.ok()) return nullptr;
  return std::move((*envs)[0]);
}

std::string ErrorOf(const std::map<std::string, std::string>& settings) {
  EnvContext ctx;
  ctx.settings = settings;
  Result<std::vector<std::unique_ptr<Env>>> envs = MakeEnvs("hedging", ctx, 1);
  return envs.ok() ? std::string("(no error)") : envs.status().message();
}

TEST_F(ChainHedgingEnvTest, TheBsDeltaWalkReproducesHedgeChainContract) {
  const std::string file = Write();
  std::unique_ptr<Env> env = Make(Settings(file));
  ASSERT_NE(env, nullptr);
  auto* chain_env = dynamic_cast<ChainHedgingEnv*>(env.get());
  ASSERT_NE(chain_env, nullptr);
  ASSERT_EQ(chain_env->num_contracts(), 3);
  // The reference: the command's function on the file as read back.
  Result<market::OptionChain> chain = market::ReadOptionChainCsv(file, market::ChainReadOptions{});
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  const std::vector<ChainContract> all = ListChainContracts(*chain);
  ChainHedgeOptions o;
  o.rate = kRate;
  o.cost = 0.001;
  const size_t info_dim = env->spec().info_names.size();
  std::vector<float> obs(ChainHedgingEnv::kObsDim);
  std::vector<double> info(info_dim);
  for (int episode = 0; episode < 3; ++episode) {
    env->Reset(obs.data(), info.data());
    const ChainContract& k = chain_env->data().contracts[chain_env->contract()];
    EXPECT_EQ(chain_env->contract(), episode);  // sequential: in order
    const int64_t i = FindChainContract(all, k.id);
    ASSERT_GE(i, 0);
    Result<ChainHedgeResult> ref = HedgeChainContract(*chain, all[i], o);
    ASSERT_TRUE(ref.ok());
    ASSERT_EQ(ref->skip, HedgeSkip::kNone) << ref->why;
    EXPECT_FLOAT_EQ(obs[0], 1.0f);
    EXPECT_NEAR(info[ChainHedgingEnv::kInfoWealth], 0, 1e-12 * ref->premium);
    double rewards = 0;
    int steps = 0;
    for (;;) {
      float action = obs[3];  // BsDeltaPolicy
      BsDeltaPolicy(obs.data(), 1, &action, steps == 0);
      const StepResult r = env->Step(&action, obs.data(), info.data());
      rewards += r.reward;
      ++steps;
      if (r.terminated) break;
      ASSERT_LT(steps, kDays) << "no termination at expiry";
    }
    EXPECT_EQ(steps, ref->hedge_days) << k.id;
    // Float hedge ratios (the observation): ~1e-7 of a share of ~100 per trade.
    const double tol = 1e-4 * ref->premium;
    EXPECT_NEAR(info[ChainHedgingEnv::kInfoWealth], ref->pnl, tol) << k.id;
    EXPECT_NEAR(rewards, ref->pnl, tol) << k.id;  // risk_aversion 0: reward = pnl
    EXPECT_NEAR(info[ChainHedgingEnv::kInfoCosts], ref->costs, 1e-4 * ref->costs + 1e-12) << k.id;
    EXPECT_EQ(info[ChainHedgingEnv::kInfoDate], expiry_);
  }
}

TEST_F(ChainHedgingEnvTest, ADayWithoutAQuoteIsMarkedAtTheLastVol) {
  const std::string file = Write();
  std::map<std::string, std::string> s = Settings(file);
  s["contracts"] = Id(1, 100);
  std::unique_ptr<Env> env = Make(s);
  ASSERT_NE(env, nullptr);
  std::vector<float> obs(ChainHedgingEnv::kObsDim);
  std::vector<double> info(env->spec().info_names.size());
  env->Reset(obs.data(), info.data());
  for (int i = 1; i <= 6; ++i) {
    const float zero = 0;
    ASSERT_FALSE(env->Step(&zero, obs.data(), info.data()).terminated);
    const double t = (expiry_ - path_.dates[i]) / 365.0;
    const double s_i = path_.spot[i];
    if (i == 5) {
      // No quote: Black-Scholes at the vol of date 4 (solved from its mid), not date 5's.
      const double v = Bs(1, s_i, 100, VolOf(4), t);
      EXPECT_NEAR(info[ChainHedgingEnv::kInfoOptionValue], v, 1e-6 * v);
      EXPECT_NEAR(obs[4], VolOf(4), 1e-6);
      EXPECT_GT(std::abs(Bs(1, s_i, 100, VolOf(5), t) - v), 1e-3 * v);  // the test tells
    } else {
      // Quoted: the mid (the value at the date's vol).
      const double v = Bs(1, s_i, 100, VolOf(i), t);
      EXPECT_NEAR(info[ChainHedgingEnv::kInfoOptionValue], v, 1e-9 * v);
      EXPECT_NEAR(obs[4], VolOf(i), 1e-6);
    }
  }
}

TEST_F(ChainHedgingEnvTest, TheEpisodeEndsAtExpiryWithTheSettlement) {
  const std::string file = Write();
  std::map<std::string, std::string> s = Settings(file);
  s["contracts"] = Id(-1, 95);
  s["cost"] = "0";
  std::unique_ptr<Env> env = Make(s);
  ASSERT_NE(env, nullptr);
  std::vector<float> obs(ChainHedgingEnv::kObsDim);
  std::vector<double> info(env->spec().info_names.size());
  env->Reset(obs.data(), info.data());
  const double t0 = (expiry_ - path_.dates[0]) / 365.0;
  const double premium = Bs(-1, kS0, 95, VolOf(0), t0);
  int steps = 0;
  StepResult r;
  do {
    const float zero = 0;  // unhedged: the premium compounds, the payoff is paid
    r = env->Step(&zero, obs.data(), info.data());
    ++steps;
  } while (!r.terminated && steps < 100);
  EXPECT_EQ(steps, kDays - 1);
  const double payoff = std::max(95 - path_.spot[kDays - 1], 0.0);
  const double expected = premium * std::exp(kRate * t0) - payoff;
  EXPECT_NEAR(info[ChainHedgingEnv::kInfoWealth], expected, 1e-9 * premium);
  EXPECT_EQ(info[ChainHedgingEnv::kInfoOptionValue], 0);
  EXPECT_EQ(info[ChainHedgingEnv::kInfoHedge], 0);
  EXPECT_DOUBLE_EQ(info[ChainHedgingEnv::kInfoSpot], path_.spot[kDays - 1]);
}

TEST_F(ChainHedgingEnvTest, RandomActionsKeepTheAccountingSelfFinancing) {
  const std::string file = Write();
  std::map<std::string, std::string> s = Settings(file);
  s["quantity"] = "3";
  s["cost"] = "0.002";
  std::unique_ptr<Env> env = Make(s);
  ASSERT_NE(env, nullptr);
  auto* chain_env = dynamic_cast<ChainHedgingEnv*>(env.get());
  ASSERT_NE(chain_env, nullptr);
  std::vector<float> obs(ChainHedgingEnv::kObsDim);
  std::vector<double> info(env->spec().info_names.size());
  Rng rng(7);
  for (int episode = 0; episode < 3; ++episode) {
    env->Reset(obs.data(), info.data());
    // The cash account replayed here from the actions, the dates and the spots.
    double cash = info[ChainHedgingEnv::kInfoCash], shares = 0, rewards = 0;
    const double scale = cash;  // the premium received
    for (;;) {
      const double spot = info[ChainHedgingEnv::kInfoSpot];
      const auto date = static_cast<int32_t>(info[ChainHedgingEnv::kInfoDate]);
      const double wealth_before = info[ChainHedgingEnv::kInfoWealth];
      const float action = static_cast<float>(rng.Uniform(-1.5, 1.5));  // some clipped
      const double target = 3 * std::clamp(static_cast<double>(action), -1.0, 1.0);
      cash -= (target - shares) * spot + 0.002 * std::abs(target - shares) * spot;
      shares = target;
      const StepResult r = env->Step(&action, obs.data(), info.data());
      rewards += r.reward;
      const double dt = (info[ChainHedgingEnv::kInfoDate] - date) / 365.0;
      cash *= std::exp(kRate * dt);
      const double s1 = info[ChainHedgingEnv::kInfoSpot];
      if (r.terminated) {
        const ChainContract& k = chain_env->data().contracts[chain_env->contract()];
        const double phi = k.right == pricing::OptionType::kCall ? 1 : -1;
        cash +=
            shares * s1 - 0.002 * std::abs(shares) * s1 - 3 * std::max(phi * (s1 - k.strike), 0.0);
        shares = 0;
      }
      EXPECT_NEAR(info[ChainHedgingEnv::kInfoCash], cash, 1e-9 * (scale + std::abs(cash)))
          << "the cash account";
      // W = cash + shares S - quantity V changes by the step's pnl (risk_aversion 0).
      const double wealth = info[ChainHedgingEnv::kInfoCash] +
                            info[ChainHedgingEnv::kInfoHedge] * 3 * s1 -
                            info[ChainHedgingEnv::kInfoOptionValue];
      EXPECT_NEAR(wealth, info[ChainHedgingEnv::kInfoWealth], 1e-9 * scale);
      EXPECT_NEAR(wealth - wealth_before, r.reward, 1e-5 * scale);
      if (r.terminated) break;
    }
    EXPECT_NEAR(rewards, info[ChainHedgingEnv::kInfoWealth], 1e-4 * scale);
  }
}

// A contract belongs to a range when its whole life, first quote to expiry, lies in it:
// a range from date 6 to the expiry holds only the call first quoted on date 7; a range
// that ends before the expiry holds none (their lives would run into the next range).
TEST_F(ChainHedgingEnvTest, TheRangeSelectsContractsThatLiveWithinIt) {
  const std::string file = Write();
  std::map<std::string, std::string> s = Settings(file);
  s["range"] = DateText(path_.dates[6]) + ":" + DateText(path_.dates[kDays - 1]);
  std::unique_ptr<Env> env = Make(s);
  ASSERT_NE(env, nullptr);
  auto* chain_env = dynamic_cast<ChainHedgingEnv*>(env.get());
  ASSERT_EQ(chain_env->num_contracts(), 1);
  EXPECT_EQ(chain_env->data().contracts[0].id, Id(1, 105));
  s["range"] = DateText(path_.dates[0]) + ":" + DateText(path_.dates[kDays - 3]);
  const std::string e = ErrorOf(s);
  EXPECT_NE(e.find("lives within range"), std::string::npos) << e;
}

TEST_F(ChainHedgingEnvTest, BadInputIsAClearError) {
  const std::string file = Write();
  std::map<std::string, std::string> s = Settings(file);
  // A range the file does not cover: the file, the range and the file's dates.
  s["range"] = "2025-01-02:2025-01-31";
  std::string e = ErrorOf(s);
  EXPECT_NE(e.find(file), std::string::npos) << e;
  EXPECT_NE(e.find("2025-01-02:2025-01-31"), std::string::npos) << e;
  EXPECT_NE(e.find(DateText(path_.dates[0])), std::string::npos) << e;
  EXPECT_NE(e.find(DateText(expiry_)), std::string::npos) << e;
  // An unknown contract: where to list them.
  s = Settings(file);
  s["contracts"] = Id(1, 100) + ", " + Id(1, 101);
  e = ErrorOf(s);
  EXPECT_NE(e.find(Id(1, 101)), std::string::npos) << e;
  EXPECT_NE(e.find("rltrade hedge --chain " + file + " --contract list"), std::string::npos) << e;
  // Path keys with a chain file are refused by name.
  s = Settings(file);
  s["spot"] = "60";
  s["maturity_weeks"] = "10";
  e = ErrorOf(s);
  EXPECT_NE(e.find("spot, maturity_weeks cannot be given with chain_file"), std::string::npos) << e;
  // Chain keys without a chain file.
  e = ErrorOf({{"contracts", Id(1, 100)}});
  EXPECT_NE(e.find("chain_file only"), std::string::npos) << e;
  // A named contract too short to hedge.
  s = Settings(file);
  s["contracts"] = Id(1, 105);
  s["min_days"] = "10";
  e = ErrorOf(s);
  EXPECT_NE(e.find("too-short"), std::string::npos) << e;
}

TEST_F(ChainHedgingEnvTest, SavedStateResumesTheEpisode) {
  const std::string file = Write();
  std::unique_ptr<Env> a = Make(Settings(file));
  std::unique_ptr<Env> b = Make(Settings(file));
  ASSERT_TRUE(a && b);
  std::vector<float> obs(ChainHedgingEnv::kObsDim), obs_b(ChainHedgingEnv::kObsDim);
  std::vector<double> info(a->spec().info_names.size()), info_b(info.size());
  a->Reset(obs.data(), info.data());
  a->Reset(obs.data(), info.data());  // the second contract
  const float h = 0.3f;
  a->Step(&h, obs.data(), info.data());
  StateWriter w;
  a->SaveState(w);
  StateReader r(w.data());
  ASSERT_TRUE(b->LoadState(r).ok());
  const StepResult ra = a->Step(&h, obs.data(), info.data());
  const StepResult rb = b->Step(&h, obs_b.data(), info_b.data());
  EXPECT_EQ(ra.reward, rb.reward);
  EXPECT_EQ(info, info_b);
  EXPECT_EQ(obs, obs_b);
}

}  // namespace
}  // namespace rlt::env
