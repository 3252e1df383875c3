// End-to-end tests of `rltrade hedge`: run the binary as a user would. The numbers are
// checked against Black-Scholes (Hull's 20-week example, price 2.40) and the discrete
// delta-hedging theory (SD of the hedging cost's PV ~ sqrt(pi/4) vega sigma sqrt(dt/T)),
// the flags against their documented ranges, and a trained run of the hedging
// environment against the command's RUN_DIR path. `hedge --chain` runs on chain files
// written here from Black-Scholes quotes along a deterministic path, against a replay of
// the hedge portfolio written here.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "core/civil_time.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;

using rlt::cli::testing_util::CmdResult;
using rlt::cli::testing_util::RunCli;

const std::string kHull =
    "hedge --spot 49 --strike 50 --rate 0.05 --drift 0.13 --vol 0.2 --maturity-weeks 20";

nlohmann::json Json(const CmdResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

TEST(HedgeCli, BsDeltaJsonHasTheContractKeysAndFollowsTheTheory) {
  const nlohmann::json j =
      Json(RunCli(kHull + " --rebalance-weeks 1 --paths 20000 --policy bs-delta --json"));
  for (const char* key : {"bs_price", "mean_cost", "sd_cost", "sd_over_price"}) {
    ASSERT_TRUE(j.contains(key)) << key << " missing in " << j.dump();
  }
  EXPECT_EQ(j.size(), 4u) << j.dump();
  EXPECT_NEAR(j["bs_price"].get<double>(), 2.40, 0.005);  // Hull: $240,000 for 100,000
  // sqrt(pi/4) vega sigma sqrt(dt/T), vega = S sqrt(T) n(d1) (computed here, not by us).
  const double t = 20 / 52.0, sd = 0.2 * std::sqrt(t);
  const double d1 = (std::log(49 / 50.0) + (0.05 + 0.02) * t) / sd;
  const double vega = 49 * std::sqrt(t) * std::exp(-0.5 * d1 * d1) / std::sqrt(2 * M_PI);
  const double theory = std::sqrt(M_PI / 4) * vega * 0.2 * std::sqrt(1 / 20.0);
  EXPECT_NEAR(j["sd_cost"].get<double>() / theory, 1.0, 0.10);
  EXPECT_NEAR(j["sd_over_price"].get<double>(),
              j["sd_cost"].get<double>() / j["bs_price"].get<double>(), 1e-12);
  // Costs make hedging dearer on the same paths (same seed).
  const nlohmann::json costly = Json(
      RunCli(kHull + " --rebalance-weeks 1 --paths 20000 --policy bs-delta --cost 0.01 --json"));
  EXPECT_GT(costly["mean_cost"].get<double>(), j["mean_cost"].get<double>() + 0.1);
}

TEST(HedgeCli, BadFlagsAreClearErrors) {
  struct Case {
    std::string flags, fragment;
  };
  const Case cases[] = {
      {"--spot 0 --strike 50 --vol 0.2 --maturity-weeks 20 --rebalance-weeks 1", "--spot"},
      {"--spot 49 --strike nan --vol 0.2 --maturity-weeks 20 --rebalance-weeks 1", "--strike"},
      {"--spot 49 --strike 50 --vol -0.2 --maturity-weeks 20 --rebalance-weeks 1", "--vol"},
      {"--spot 49 --strike 50 --vol 0.2 --maturity-weeks 0 --rebalance-weeks 1",
       "--maturity-weeks"},
      {"--spot 49 --strike 50 --vol 0.2 --maturity-weeks 20 --rebalance-weeks 21",
       "--rebalance-weeks"},
      {"--spot 49 --strike 50 --vol 0.2 --maturity-weeks 20 --rebalance-weeks 0",
       "--rebalance-weeks"},
      {"--spot 49 --strike 50 --vol inf --maturity-weeks 20 --rebalance-weeks 1", "--vol"},
  };
  for (const Case& c : cases) {
    const CmdResult r =
        RunCli("hedge " + c.flags + " --rate 0.05 --drift 0.1 --paths 10 --policy bs-delta");
    // nan and inf are not plain decimal numbers: refused while parsing (usage error, 2).
    const bool not_a_number =
        c.flags.find("nan") != std::string::npos || c.flags.find("inf") != std::string::npos;
    EXPECT_EQ(r.exit_code, not_a_number ? 2 : 1) << c.flags << "\n" << r.out;
    EXPECT_NE(r.out.find(c.fragment), std::string::npos) << r.out;
  }
  const std::string ok = kHull + " --rebalance-weeks 1 ";
  CmdResult paths = RunCli(ok + "--paths 0 --policy bs-delta");
  EXPECT_EQ(paths.exit_code, 1);
  EXPECT_NE(paths.out.find("--paths"), std::string::npos) << paths.out;
  CmdResult many = RunCli(ok + "--paths 100000000000 --policy bs-delta");
  EXPECT_NE(many.exit_code, 0) << many.out;
  CmdResult cost = RunCli(ok + "--paths 10 --policy bs-delta --cost -0.01");
  EXPECT_EQ(cost.exit_code, 1);
  EXPECT_NE(cost.out.find("--cost"), std::string::npos) << cost.out;
  CmdResult nan_rate = RunCli(
      "hedge --spot 49 --strike 50 --rate nan --drift 0.1 --vol 0.2 --maturity-weeks 20 "
      "--rebalance-weeks 1 --paths 10 --policy bs-delta");
  EXPECT_EQ(nan_rate.exit_code, 2);
  EXPECT_NE(nan_rate.out.find("--rate"), std::string::npos) << nan_rate.out;
  CmdResult no_run = RunCli(ok + "--paths 10 --policy /nonexistent/run");
  EXPECT_EQ(no_run.exit_code, 1);
  EXPECT_NE(no_run.out.find("config.toml"), std::string::npos) << no_run.out;
}

class HedgeRun : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = rlt::testing::NewScratchDir("rlt_hedgecli_"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Train(const std::string& env_section) {
    const std::string config = (dir_ / "tiny.toml").string();
    std::ofstream(config) << "[run]\ntotal_steps = 256\nseed = 1\nthreads = 1\n[env]\n"
                          << env_section << "num_envs = 2\n[algo]\nn_steps = 64\n"
                          << "batch_size = 64\nn_epochs = 1\n";
    const std::string run = (dir_ / "run").string();
    const CmdResult r = RunCli("train " + config + " --run-dir " + run + " --quiet");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return run;
  }
  fs::path dir_;
};

TEST_F(HedgeRun, ATrainedHedgingPolicyRunsOnTheCommandsParameters) {
  const std::string run = Train("id = \"hedging\"\nstep_weeks = 2\n");
  const nlohmann::json j =
      Json(RunCli(kHull + " --rebalance-weeks 1 --paths 300 --policy " + run + " --json"));
  for (const char* key : {"bs_price", "mean_cost", "sd_cost", "sd_over_price"}) {
    ASSERT_TRUE(j.contains(key)) << key << " missing in " << j.dump();
  }
  EXPECT_NEAR(j["bs_price"].get<double>(), 2.40, 0.005);
  EXPECT_TRUE(std::isfinite(j["sd_cost"].get<double>()));
  EXPECT_GT(j["sd_cost"].get<double>(), 0.0);
}

TEST_F(HedgeRun, ARunOfAnotherEnvironmentIsRefusedClearly) {
  const std::string run = Train("id = \"cartpole\"\n");
  const CmdResult r = RunCli(kHull + " --rebalance-weeks 1 --paths 10 --policy " + run);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("hedging"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cartpole"), std::string::npos) << r.out;
}

// ---------------------------------------------------------------------------------------
// --chain: listed contracts along a chain file.

// The fixture: weekdays from 2024-01-02, the underlying on a zig-zag around the model's
// drift (each log return (r - vol^2/2) dt +- vol sqrt(dt): its square is the model's
// variance), Black-Scholes quotes at constant vol, bid and ask the value -+ 0.1%.
constexpr double kS0 = 100, kVol = 0.2, kRate = 0.03;
constexpr int kDays = 40;

int32_t Day(int y, int m, int d) { return static_cast<int32_t>(rlt::DaysFromCivil(y, m, d)); }
std::string DateText(int32_t days) {
  const rlt::CivilDate c = rlt::CivilFromDays(days);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", c.year, c.month, c.day);
  return buf;
}

struct Path {
  std::vector<int32_t> dates;
  std::vector<double> spot;
};

Path ZigZag() {
  Path p;
  for (int32_t d = Day(2024, 1, 2); static_cast<int>(p.dates.size()) < kDays; ++d) {
    if (rlt::Weekday(d) != 0 && rlt::Weekday(d) != 6) p.dates.push_back(d);
  }
  p.spot.push_back(kS0);
  for (int i = 1; i < kDays; ++i) {
    const double dt = (p.dates[i] - p.dates[i - 1]) / 365.0;
    const double sign = i % 2 == 1 ? 1 : -1;
    p.spot.push_back(p.spot.back() *
                     std::exp((kRate - kVol * kVol / 2) * dt + sign * kVol * std::sqrt(dt)));
  }
  return p;
}

double Ncdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
// Black-Scholes value and delta, phi = +1 call, -1 put (written here, not ours).
double Bs(double phi, double s, double k, double t, double* delta = nullptr) {
  const double d1 = (std::log(s / k) + (kRate + kVol * kVol / 2) * t) / (kVol * std::sqrt(t));
  const double d2 = d1 - kVol * std::sqrt(t);
  if (delta != nullptr) *delta = phi > 0 ? Ncdf(d1) : Ncdf(d1) - 1;
  return phi * (s * Ncdf(phi * d1) - k * std::exp(-kRate * t) * Ncdf(phi * d2));
}

std::string Num17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// One contract's rows: quoted from date index `from` up to its expiry (or the file's end).
void Rows(std::string* csv, const Path& p, int32_t expiry, double phi, double k, int from,
          bool underlying = true) {
  for (int i = from; i < kDays && p.dates[i] < expiry; ++i) {
    const double v = Bs(phi, p.spot[i], k, (expiry - p.dates[i]) / 365.0);
    *csv += DateText(p.dates[i]) + "," + DateText(expiry) + "," + Num17(k) + "," +
            (phi > 0 ? "C" : "P") + "," + Num17(v * 0.999) + "," + Num17(v * 1.001) + "," +
            (underlying ? Num17(p.spot[i]) : "") + "\n";
  }
}
const char kHeader[] = "quote_date,expiration,strike,type,bid,ask,underlying_price\n";

// The expected result: the short option sold at the mid, Black-Scholes delta every date
// before expiry, cash at kRate over calendar days, cost on every trade and the final sale.
double ReplayPnl(const Path& p, double phi, double k, double cost, int from = 0) {
  const int e = kDays - 1;
  const int32_t expiry = p.dates[e];
  double cash = Bs(phi, p.spot[from], k, (expiry - p.dates[from]) / 365.0), shares = 0;
  for (int i = from; i < e; ++i) {
    if (i > from) cash *= std::exp(kRate * (p.dates[i] - p.dates[i - 1]) / 365.0);
    double delta = 0;
    Bs(phi, p.spot[i], k, (expiry - p.dates[i]) / 365.0, &delta);
    cash -= (delta - shares) * p.spot[i] + cost * std::abs(delta - shares) * p.spot[i];
    shares = delta;
  }
  cash *= std::exp(kRate * (expiry - p.dates[e - 1]) / 365.0);
  cash += shares * p.spot[e] - cost * std::abs(shares) * p.spot[e];
  return cash - std::max(phi * (p.spot[e] - k), 0.0);
}

class HedgeChain : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = rlt::testing::NewScratchDir("rlt_hedgechain_");
    path_ = ZigZag();
    expiry_ = path_.dates[kDays - 1];
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& csv) {
    const std::string file = (dir_ / name).string();
    std::ofstream(file) << csv;
    return file;
  }
  // The call K 100 and the put K 95, from the first date to the expiry (the expiry day's
  // rows too: the option is settled there, not hedged).
  std::string TwoContracts() {
    std::string csv = kHeader;
    Rows(&csv, path_, expiry_, 1, 100, 0);
    Rows(&csv, path_, expiry_, -1, 95, 0);
    csv += DateText(expiry_) + "," + DateText(expiry_) + ",100,C,1,1.1," +
           Num17(path_.spot[kDays - 1]) + "\n";
    return csv;
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

TEST_F(HedgeChain, DailyDeltaHedgeMatchesAnIndependentReplayAndIsSmallOnAModelPath) {
  const std::string file = Write("chain.csv", TwoContracts());
  for (const double phi : {1.0, -1.0}) {
    const double k = phi > 0 ? 100 : 95;
    const nlohmann::json j =
        Json(RunCli("hedge --chain " + file + " --contract " + Id(phi, k) + " --rate 0.03 --json"));
    ASSERT_TRUE(j.contains("pnl")) << j.dump();
    const double premium = Bs(phi, kS0, k, (expiry_ - path_.dates[0]) / 365.0);
    EXPECT_NEAR(j.at("premium").get<double>(), premium, 1e-12 * premium);
    EXPECT_NEAR(j.at("iv0").get<double>(), kVol, 1e-8);
    EXPECT_EQ(j.at("hedge_days").get<int>(), kDays - 1);
    // The vol is solved from every mid (one too small to invert would carry the last).
    EXPECT_EQ(j.at("iv_days").at("solved").get<int>() + j.at("iv_days").at("carried").get<int>(),
              kDays - 1);
    EXPECT_GE(j.at("iv_days").at("solved").get<int>(), kDays - 3);
    const double expected = ReplayPnl(path_, phi, k, 0);
    // The vol solved from the mid is the model's to ~1e-10: the P&L agrees to far less
    // than a cent per 100 of premium.
    EXPECT_NEAR(j.at("pnl").get<double>(), expected, 1e-6 * premium) << j.dump();
    EXPECT_NEAR(j.at("pnl_over_premium").get<double>(), expected / premium, 1e-6);
    // The path realises the model's variance every step: the hedge replicates the option
    // to a small fraction of its premium (random paths: an SD of ~15% at 39 rebalancings).
    EXPECT_LT(std::abs(expected / premium), 0.03) << expected / premium;
    EXPECT_NEAR(j.at("payoff").get<double>(), std::max(phi * (path_.spot[kDays - 1] - k), 0.0),
                1e-12 * kS0);
    EXPECT_EQ(j.at("contract").get<std::string>(), Id(phi, k));
  }
  // The text output of the same.
  const CmdResult text =
      RunCli("hedge --chain " + file + " --contract " + Id(1, 100) + " --rate 0.03");
  EXPECT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("pnl_over_premium"), std::string::npos) << text.out;
}

TEST_F(HedgeChain, CostsMakeHedgingDearerByWhatTheTradesPay) {
  const std::string file = Write("chain.csv", TwoContracts());
  const std::string cmd = "hedge --chain " + file + " --contract " + Id(1, 100) + " --rate 0.03";
  const nlohmann::json free = Json(RunCli(cmd + " --json"));
  const nlohmann::json costly = Json(RunCli(cmd + " --cost 0.002 --json"));
  ASSERT_TRUE(free.contains("pnl") && costly.contains("pnl"));
  const double premium = free.at("premium").get<double>();
  EXPECT_LT(costly.at("pnl").get<double>(), free.at("pnl").get<double>() - 0.1);
  EXPECT_NEAR(costly.at("pnl").get<double>(), ReplayPnl(path_, 1, 100, 0.002), 1e-6 * premium);
  EXPECT_GT(costly.at("costs").get<double>(), 0.1);
  EXPECT_EQ(free.at("costs").get<double>(), 0.0);
}

TEST_F(HedgeChain, AllHedgesTheContractsThatLiveLongEnoughAndDescribesTheErrors) {
  std::string csv = TwoContracts();
  Rows(&csv, path_, expiry_, 1, 105, kDays - 4);        // 3 hedge days: too short at 5
  Rows(&csv, path_, expiry_ + 30, 1, 100, kDays - 10);  // expires after the file
  const std::string file = Write("chain.csv", csv);
  const std::string out = (dir_ / "per_contract.csv").string();
  const nlohmann::json j =
      Json(RunCli("hedge --chain " + file + " --contract all --rate 0.03 --json --out " + out));
  ASSERT_TRUE(j.contains("pnl")) << j.dump();
  EXPECT_EQ(j.at("contracts").get<int>(), 4);
  EXPECT_EQ(j.at("hedged").get<int>(), 2);
  EXPECT_EQ(j.at("min_days").get<int>(), 5);
  EXPECT_EQ(j.at("skipped").at("too-short").get<int>(), 1);
  EXPECT_EQ(j.at("skipped").at("expires-after-file").get<int>(), 1);
  // The distribution of the two replayed errors: mean, sample SD, quantiles interpolated.
  const double a = ReplayPnl(path_, 1, 100, 0), b = ReplayPnl(path_, -1, 95, 0);
  const double lo = std::min(a, b), hi = std::max(a, b), scale = std::abs(a) + std::abs(b);
  const nlohmann::json& pnl = j.at("pnl");
  EXPECT_NEAR(pnl.at("mean").get<double>(), (a + b) / 2, 1e-6 * scale + 1e-9);
  EXPECT_NEAR(pnl.at("sd").get<double>(), std::abs(a - b) / std::sqrt(2.0), 1e-6 * scale + 1e-9);
  EXPECT_NEAR(pnl.at("q05").get<double>(), lo + 0.05 * (hi - lo), 1e-6 * scale + 1e-9);
  EXPECT_NEAR(pnl.at("q50").get<double>(), (a + b) / 2, 1e-6 * scale + 1e-9);
  EXPECT_NEAR(pnl.at("q95").get<double>(), lo + 0.95 * (hi - lo), 1e-6 * scale + 1e-9);
  for (const char* key : {"mean", "sd", "q05", "q25", "q50", "q75", "q95"}) {
    EXPECT_TRUE(j.at("pnl_over_premium").contains(key)) << key;
  }
  // One row per hedged contract, and a header.
  const std::string rows = rlt::testing::ReadFile(out);
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 3) << rows;
  EXPECT_EQ(rows.rfind("contract,occ,type,strike,expiry,", 0), 0u) << rows;
  EXPECT_NE(rows.find(Id(-1, 95)), std::string::npos) << rows;
  // A lower --min-days takes the short-lived contract too; list says why each is skipped.
  const nlohmann::json two =
      Json(RunCli("hedge --chain " + file + " --contract all --min-days 2 --json"));
  EXPECT_EQ(two.at("hedged").get<int>(), 3) << two.dump();
  const CmdResult list = RunCli("hedge --chain " + file + " --contract list");
  EXPECT_EQ(list.exit_code, 0) << list.out;
  EXPECT_NE(list.out.find(Id(1, 105)), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("fewer than 5"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("after the chain's last quote date"), std::string::npos) << list.out;
}

TEST_F(HedgeChain, ADayWithoutAQuoteCarriesTheLastVol) {
  // Day 5 of the call: ask 0, "no quote" (read as such, or dropped as a bad row by the
  // reader of today: either way the day has no quote for the contract).
  // The put keeps the date (and its underlying price) in the chain when the reader drops
  // the call's row.
  std::string csv = kHeader;
  Rows(&csv, path_, expiry_, 1, 100, 0);
  Rows(&csv, path_, expiry_, -1, 95, 0);
  const std::string day5 = DateText(path_.dates[5]) + "," + DateText(expiry_) + ",100,C,";
  const size_t at = csv.find(day5);
  ASSERT_NE(at, std::string::npos);
  const size_t end = csv.find('\n', at);
  csv.replace(at, end - at, day5 + "0,0," + Num17(path_.spot[5]));
  csv += DateText(expiry_) + "," + DateText(expiry_) + ",100,C,1,1.1," +
         Num17(path_.spot[kDays - 1]) + "\n";
  const std::string file = Write("chain.csv", csv);
  const nlohmann::json j = Json(RunCli("hedge --chain " + file + " --contract " + Id(1, 100) +
                                       " --rate 0.03 --on-bad-rows drop --json"));
  ASSERT_TRUE(j.contains("pnl")) << j.dump();
  EXPECT_EQ(j.at("quoted_days").get<int>(), kDays - 2);
  EXPECT_EQ(j.at("iv_days").at("carried").get<int>(), 1);
  // The carried vol is the model's: the same hedge as with every quote.
  const double premium = j.at("premium").get<double>();
  EXPECT_NEAR(j.at("pnl").get<double>(), ReplayPnl(path_, 1, 100, 0), 1e-6 * premium);
}

TEST_F(HedgeChain, BadInputIsAClearErrorAndWritesNothing) {
  const std::string file = Write("chain.csv", TwoContracts());
  const std::string out = (dir_ / "out.csv").string();
  const std::string base = "hedge --chain " + file + " --out " + out + " ";
  // An unknown contract: says how to see the valid ones.
  CmdResult r = RunCli(base + "--contract 2024-01-31:C:101");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("--contract list"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2024-01-31:C:101"), std::string::npos) << r.out;
  // Flags the chain replaces: each named.
  r = RunCli(base + "--contract " + Id(1, 100) + " --strike 100 --vol 0.2");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--strike, --vol cannot be given with --chain"), std::string::npos) << r.out;
  r = RunCli(base + "--contract " + Id(1, 100) + " --paths 10");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--paths"), std::string::npos) << r.out;
  r = RunCli("hedge --chain " + file);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--contract is required"), std::string::npos) << r.out;
  r = RunCli(base + "--contract " + Id(1, 100) + " --policy " + dir_.string());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("only bs-delta"), std::string::npos) << r.out;
  // Chain flags without --chain; the simulation's flags missing.
  r = RunCli(kHull + " --rebalance-weeks 1 --paths 10 --policy bs-delta --contract all");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--contract needs --chain"), std::string::npos) << r.out;
  r = RunCli("hedge --spot 49 --strike 50 --rate 0.05 --paths 10 --policy bs-delta");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--drift, --vol, --maturity-weeks, --rebalance-weeks are required"),
            std::string::npos)
      << r.out;
  // No underlying price: one contract and all.
  std::string csv = kHeader;
  Rows(&csv, path_, expiry_, 1, 100, 0, /*underlying=*/false);
  csv += DateText(expiry_) + "," + DateText(expiry_) + ",100,C,1,1.1,\n";
  const std::string bare = Write("bare.csv", csv);
  r = RunCli("hedge --chain " + bare + " --out " + out + " --contract " + Id(1, 100));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("no underlying price on 2024-01-02"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("underlying_last"), std::string::npos) << r.out;
  r = RunCli("hedge --chain " + bare + " --out " + out + " --contract all --json");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("none of its 1 contracts can be hedged"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no-underlying-price"), std::string::npos) << r.out;
  // A missing file.
  r = RunCli("hedge --chain " + (dir_ / "none.csv").string() + " --contract all");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("none.csv"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
  // Nothing but the inputs in the directory (no temporary files left).
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 2);
}

// The hedging environment fed by the chain (`[env] chain_file`): trained on the contracts
// that live within [split] train (one expiring at its end; the two quoted from the start
// expire in the test range and belong to neither), evaluated on the one that lives within
// test, where its Black-Scholes delta baseline is the command's hedge of the same contract.
TEST_F(HedgeChain, TheEnvironmentTrainsAndEvaluatesOnTheChainsContracts) {
  std::string csv = TwoContracts();
  Rows(&csv, path_, path_.dates[20], 1, 100, 0);  // the training range's contract
  Rows(&csv, path_, expiry_, 1, 105, 25);         // the test range's one contract
  const std::string file = Write("chain.csv", csv);
  auto config = [&](const std::string& contracts) {
    const std::string path =
        (dir_ / ("hedge_" + std::to_string(contracts.size()) + ".toml")).string();
    std::ofstream(path) << "[run]\ntotal_steps = 256\nseed = 1\nthreads = 1\n[split]\ntrain = \""
                        << DateText(path_.dates[0]) << ":" << DateText(path_.dates[20])
                        << "\"\ntest = \"" << DateText(path_.dates[21]) << ":" << DateText(expiry_)
                        << "\"\n[env]\nid = \"hedging\"\nnum_envs = 2\nchain_file = \"" << file
                        << "\"\ncontracts = \"" << contracts
                        << "\"\nrate = 0.03\ncost = 0.001\n[algo]\nn_steps = 64\n"
                        << "batch_size = 64\nn_epochs = 1\n";
    return path;
  };
  const std::string run = (dir_ / "run").string();
  CmdResult r = RunCli("train " + config("all") + " --run-dir " + run + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = RunCli("eval " + run + " --range test");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const fs::path out = fs::path(run) / "eval" / "test";
  std::ifstream in(out / "contracts.csv");
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_EQ(header, "contract,return,pnl,costs,bs_delta_return,bs_delta_pnl");
  ASSERT_EQ(row.rfind(Id(1, 105) + ",", 0), 0u) << row;
  std::string extra;
  EXPECT_FALSE(std::getline(in, extra)) << "one contract lives within the test range";
  const double bs_pnl = std::stod(row.substr(row.rfind(',') + 1));
  const nlohmann::json j = Json(RunCli("hedge --chain " + file + " --contract " + Id(1, 105) +
                                       " --rate 0.03 --cost 0.001 --json"));
  ASSERT_TRUE(j.contains("pnl")) << j.dump();
  // The env's hedge ratios are floats (its observation): ~1e-7 of a share per trade.
  EXPECT_NEAR(bs_pnl, j.at("pnl").get<double>(), 1e-4 * j.at("premium").get<double>()) << row;
  std::ifstream summary_file(out / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(summary_file);
  EXPECT_EQ(summary.at("contracts").get<int>(), 1);
  EXPECT_TRUE(summary.at("benchmarks").contains("bs_delta")) << summary.dump();
  // An unknown contract: where to list the file's, and no run directory.
  const std::string bad_run = (dir_ / "bad_run").string();
  r = RunCli("train " + config(Id(1, 101)) + " --run-dir " + bad_run + " --quiet");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("--contract list"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(bad_run));
}

// configs/hedging_ppo_spxw.toml trains a few hundred steps and evaluates on February's
// contracts, when the shared data is there.
TEST(HedgeChainRealData, SpxwHedgingConfigTrainsAndEvaluates) {
  const fs::path chain =
      fs::path(RLT_SHARED_DIR) / "data/options/SPXW_chain_EOD_2018-01-02_2018-02-28_optopsy.csv";
  if (!fs::exists(chain)) GTEST_SKIP() << chain << " not present";
  const fs::path dir = rlt::testing::NewScratchDir("rlt_hedgespxw_");
  const std::string run = (dir / "run").string();
  CmdResult r = RunCli("train " + std::string(RLT_SOURCE_DIR) +
                       "/configs/hedging_ppo_spxw.toml --set run.total_steps=512 --set "
                       "env.chain_file=" +
                       chain.string() + " --run-dir " + run + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = RunCli("eval " + run + " --range test");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream summary_file(fs::path(run) / "eval" / "test" / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(summary_file);
  // The file lists the 28 February expiry from 1 February on: hundreds of contracts.
  EXPECT_GT(summary.at("contracts").get<int>(), 100) << summary.dump();
  EXPECT_TRUE(
      std::isfinite(summary.at("benchmarks").at("bs_delta").at("pnl").at("mean").get<double>()));
  fs::remove_all(dir);
}

// The real chain, when the shared data is there: every contract that lives 5 quote dates.
TEST(HedgeChainRealData, SpxwChainAll) {
  const fs::path chain =
      "/work/shared/data/options/SPXW_chain_EOD_2018-01-02_2018-02-28_optopsy.csv";
  if (!fs::exists(chain)) GTEST_SKIP() << chain << " not present";
  const nlohmann::json j = Json(RunCli("hedge --chain " + chain.string() +
                                       " --contract all --on-bad-rows drop --rate 0.015 --json"));
  ASSERT_TRUE(j.contains("hedged")) << j.dump();
  EXPECT_GT(j.at("hedged").get<int>(), 10) << j.dump();
  const nlohmann::json& q = j.at("pnl_over_premium");
  EXPECT_LE(q.at("q05").get<double>(), q.at("q50").get<double>());
  EXPECT_LE(q.at("q50").get<double>(), q.at("q95").get<double>());
}

}  // namespace
