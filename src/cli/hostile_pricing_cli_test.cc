// End-to-end regression tests of the pricing commands (`price`, `iv`, `chain check`,
// `chain synth`, `hedge`) against hostile input: each runs the command as a user would and
// asserts the exit code, a message fragment and that nothing is left on disk.
//  - Correct numbers: the binomial tree's Greeks with 2 steps, checked against the tree
//    written out node by node here; Greeks of the American models at the domain's edges.
//  - Chains: one bad row (expiry beyond 100 years, underlying -3 or 0) is a problem with
//    its file:line and does not keep the rest of its date from being priced; quotes below
//    the no-arbitrage bound are warnings naming file:line and the vol they were given.
//  - Work estimates: requests that cannot finish in reasonable time or memory are refused
//    before any work, naming the command's own flags.
//  - Numbers on the command line are plain decimals: "0x10", "inf", "010" are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/numeric_flags.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;
using rlt::testing::RunRltrade;
using rlt::testing::ScratchDir;
using rlt::testing::WriteFile;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool IsEmptyDir(const std::string& dir) { return fs::is_empty(dir); }

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A 2-step CRR tree for an American put written out node by node (Hull, "Options,
// Futures and Other Derivatives", ch. 21: delta from step 1, gamma and theta from step 2).
struct HandTree {
  double price, delta, gamma, theta;
};
HandTree TwoStepAmericanPut(double s, double k, double r, double q, double vol, double t) {
  const double dt = t / 2, u = std::exp(vol * std::sqrt(dt)), d = 1 / u;
  const double p = (std::exp((r - q) * dt) - d) / (u - d), disc = std::exp(-r * dt);
  auto payoff = [&](double x) { return std::max(k - x, 0.0); };
  const double fuu = payoff(s * u * u), fud = payoff(s), fdd = payoff(s * d * d);
  const double fu = std::max(disc * (p * fuu + (1 - p) * fud), payoff(s * u));
  const double fd = std::max(disc * (p * fud + (1 - p) * fdd), payoff(s * d));
  const double f = std::max(disc * (p * fu + (1 - p) * fd), payoff(s));
  return {f, (fu - fd) / (s * u - s * d),
          ((fuu - fud) / (s * u * u - s) - (fud - fdd) / (s - s * d * d)) /
              (0.5 * (s * u * u - s * d * d)),
          (fud - f) / (2 * dt)};
}

void ExpectRelNear(double got, double want, double rel, const std::string& what) {
  EXPECT_LE(std::abs(got - want), rel * std::max(1.0, std::abs(want)))
      << what << ": " << got << " vs " << want;
}

TEST(HostilePricingCli, BinomialTwoStepGreeksComeFromTheTree) {
  ScratchDir dir("rlt_hostile_pricing_");
  const auto r = RunRltrade(
      "price --model binomial --steps 2 --greeks --json --type put --spot 95 --strike 100 "
      "--rate 0.05 --div 0.01 --vol 0.3 --time 0.5",
      "cd " + dir.path() + " &&", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  const HandTree want = TwoStepAmericanPut(95, 100, 0.05, 0.01, 0.3, 0.5);
  ExpectRelNear(j["price"].get<double>(), want.price, 1e-9, "price");
  ExpectRelNear(j["delta"].get<double>(), want.delta, 1e-9, "delta");
  ExpectRelNear(j["gamma"].get<double>(), want.gamma, 1e-9, "gamma");
  ExpectRelNear(j["theta"].get<double>(), want.theta, 1e-9, "theta");
  ExpectRelNear(j["theta_per_day"].get<double>(), want.theta / 365, 1e-9, "theta_per_day");
  EXPECT_NE(j["gamma"].get<double>(), 0.0);
  EXPECT_TRUE(IsEmptyDir(dir.path()));
}

// The domain's edges (docs/pricing.md: vol <= 100, |r|, |q| <= 5, T <= 100) have Greeks under the
// American models; pricing_test checks every edge and model, this the command itself.
TEST(HostilePricingCli, AmericanGreeksAtTheDocumentedEdges) {
  ScratchDir dir("rlt_hostile_pricing_");
  const std::vector<std::string> cases = {
      // The reported case: the vol bump leaked into the error as "vol = 100.01".
      "--model bjerksund --type call --spot 100 --strike 100 --vol 100 --time 1",
      // A call tree whose top node overflowed (inf) at vol 100.
      "--model binomial --steps 200 --type call --spot 100 --strike 100 --vol 100 --time 1",
      // T = 100 and r = 5 at once: the time and rate bumps used to leave the domain.
      "--model bjerksund --type put --spot 100 --strike 100 --vol 0.2 --time 100 --rate 5"};
  for (const std::string& c : cases) {
    const auto r = RunRltrade("price --greeks --json " + c, "cd " + dir.path() + " &&", "&1");
    EXPECT_EQ(r.exit_code, 0) << c << "\n" << r.out;
    EXPECT_FALSE(Contains(r.out, "100.01")) << c << "\n" << r.out;
    EXPECT_FALSE(Contains(r.out, "100.0001")) << c << "\n" << r.out;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << c << "\n" << r.out;
    for (const char* key : {"price", "delta", "gamma", "vega", "theta", "rho", "dividend_rho"}) {
      ASSERT_TRUE(j[key].is_number()) << c << " " << key << "\n" << r.out;
      EXPECT_TRUE(std::isfinite(j[key].get<double>())) << c << " " << key;
    }
  }
  EXPECT_TRUE(IsEmptyDir(dir.path()));
}

TEST(HostilePricingCli, NumbersMustBePlainDecimals) {
  ScratchDir dir("rlt_hostile_pricing_");
  // The reported case: --spot 0x10 was read as 16.
  auto r = RunRltrade("price --model bsm --type call --strike 100 --vol 0.2 --time 1 --spot 0x10",
                      "cd " + dir.path() + " &&");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Contains(r.out, "--spot")) << r.out;
  EXPECT_TRUE(Contains(r.out, "'0x10' is not a plain decimal number")) << r.out;
  EXPECT_FALSE(Contains(r.out, "price          ")) << r.out;  // nothing was priced

  // Every numeric flag of the commands, each with a form strtod/strtoll would take (the
  // forms rotate over the flags; one run per flag).
  const std::vector<std::string> bad_numbers = {"0x10", "inf", "nan", "0x1p3", "1,5", "1e"};
  const std::vector<std::string> bad_integers = {"0x10", "010", "1e3", "2.0", "-0x1"};
  const std::string p = "price --type call --spot 100 --strike 100 --vol 0.2 --time 1 ";
  const std::string iv = "iv --type call --spot 100 --strike 100 --time 1 --price 10 ";
  const std::string hedge =
      "hedge --spot 49 --strike 50 --rate 0.05 --drift 0.13 --vol 0.2 --maturity-weeks 20 "
      "--rebalance-weeks 1 --paths 100 --policy bs-delta ";
  const std::string chain_file = dir / "c.csv";
  WriteFile(chain_file,
            "quote_date,expiration,strike,type,bid,ask,underlying_price\n"
            "2024-01-02,2024-01-19,100,C,2.0,2.2,100\n");
  const std::vector<std::pair<std::string, bool>> flags = {
      // (command with the flag last, integer?)
      {"price --type call --strike 100 --vol 0.2 --time 1 --spot", false},
      {"price --type call --spot 100 --vol 0.2 --time 1 --strike", false},
      {p + "--rate", false},
      {p + "--div", false},
      {"price --type call --spot 100 --strike 100 --time 1 --vol", false},
      {"price --type call --spot 100 --strike 100 --vol 0.2 --time", false},
      {p + "--model binomial --steps", true},
      {"iv --type call --spot 100 --strike 100 --time 1 --price", false},
      {iv + "--div", false},
      {iv + "--model binomial --steps", true},
      {"chain check " + chain_file + " --rate", false},
      {"chain check " + chain_file + " --div", false},
      {"chain check " + chain_file + " --max-problems", true},
      {"chain synth --out " + (dir / "s.csv") + " --synthetic", true},
      {hedge + "--spot", false},
      {hedge + "--strike", false},
      {hedge + "--rate", false},
      {hedge + "--drift", false},
      {hedge + "--vol", false},
      {hedge + "--maturity-weeks", false},
      {hedge + "--rebalance-weeks", false},
      {hedge + "--cost", false},
      {hedge + "--paths", true},
      {hedge + "--seed", true},
  };
  for (size_t i = 0; i < flags.size(); ++i) {
    const auto& [command, integer] = flags[i];
    const std::string flag = command.substr(command.rfind(' ') + 1);
    const std::string v =
        integer ? bad_integers[i % bad_integers.size()] : bad_numbers[i % bad_numbers.size()];
    r = RunRltrade(command + " '" + v + "'", "cd " + dir.path() + " &&");
    EXPECT_EQ(r.exit_code, 2) << command << " '" << v << "'\n" << r.out;
    EXPECT_TRUE(Contains(r.out, flag)) << command << " '" << v << "'\n" << r.out;
    EXPECT_TRUE(Contains(
        r.out, integer ? "is not a plain decimal integer" : "is not a plain decimal number"))
        << command << " '" << v << "'\n"
        << r.out;
  }
  // Ordinary forms still work.
  r = RunRltrade("price --type put --spot 1e2 --strike +100 --rate -0.01 --vol .2 --time 1.",
                 "cd " + dir.path() + " &&");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  // Nothing but the chain file the test wrote.
  EXPECT_FALSE(fs::exists(dir / "s.csv"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

// The validators themselves, on every form (in process: no binary needed).
TEST(HostilePricingCli, PlainDecimalForms) {
  using rlt::cli::numeric_flags_internal::IsPlainDecimal;
  using rlt::cli::numeric_flags_internal::IsPlainInteger;
  for (const char* ok : {"100", "-0.25", "+5", "1e-3", "1E+3", ".2", "1.", "0", "007.5"}) {
    EXPECT_TRUE(IsPlainDecimal(ok)) << ok;
  }
  for (const char* bad : {"0x10", "0X10", "0x1p3", "inf", "-inf", "nan", "NAN", "1,5", " 7", "7 ",
                          "", ".", "-", "1e", "1e+", "--1", "1_000", "infinity", "1.2.3"}) {
    EXPECT_FALSE(IsPlainDecimal(bad)) << bad;
  }
  for (const char* ok : {"0", "1000", "-3", "+4"}) EXPECT_TRUE(IsPlainInteger(ok, true)) << ok;
  for (const char* bad : {"0x10", "010", "00", "1e3", "2.0", "", "-", " 1", "1 "}) {
    EXPECT_FALSE(IsPlainInteger(bad, true)) << bad;
  }
  EXPECT_FALSE(IsPlainInteger("-1", false));
  EXPECT_FALSE(IsPlainInteger("+1", false));
  EXPECT_TRUE(IsPlainInteger("18446744073709551615", false));
}

// A chain of one quote date with four contracts; `extra` rows are appended (line 6 on).
std::string Chain(const std::string& extra) {
  return "quote_date,expiration,strike,type,bid,ask,underlying_price\n"  // line 1
         "2024-01-02,2024-03-15,100,C,4.9,5.1,101\n"                     // 2
         "2024-01-02,2024-03-15,100,P,3.4,3.6,101\n"                     // 3
         "2024-01-02,2024-03-15,105,C,2.7,2.9,101\n"                     // 4
         "2024-01-02,2024-03-15,95,P,1.9,2.1,101\n" +                    // 5
         extra;
}

TEST(HostilePricingCli, ChainCheckReportsARowBeyondAHundredYearsAndPricesTheRest) {
  ScratchDir dir("rlt_hostile_pricing_");
  const std::string file = dir / "far.csv";
  WriteFile(file, Chain("2024-01-02,2150-01-16,100,C,50,60,101\n"));  // line 6
  auto r = RunRltrade("chain check " + file);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, file + ":6: column 'expiration': expiry>100y")) << r.out;
  EXPECT_FALSE(Contains(r.out, "no problems found")) << r.out;
  EXPECT_FALSE(Contains(r.out, "option 3 of")) << r.out;
  EXPECT_TRUE(Contains(r.out, "implied vol solved from the mid for 4")) << r.out;

  r = RunRltrade("chain check " + file + " --json", "", "/dev/null");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["problem_counts"]["expiry>100y"], 1);
  EXPECT_EQ(j["iv_solved"], 4);
  EXPECT_EQ(j["iv_from_file"], 0);
  EXPECT_EQ(j["iv_filled"], 0);
  EXPECT_EQ(j["ok"], false);

  r = RunRltrade("chain check " + file + " --json --on-bad-rows drop", "", "/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["contracts"], 4);
  EXPECT_EQ(j["iv_solved"], 4);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(HostilePricingCli, ChainCheckReportsANonPositiveUnderlyingAndPricesTheRest) {
  ScratchDir dir("rlt_hostile_pricing_");
  for (const char* underlying : {"-3", "0"}) {
    const std::string file = dir / "u.csv";
    // The bad row first on its date: its price used to become the date's.
    WriteFile(file,
              "quote_date,expiration,strike,type,bid,ask,underlying_price\n"
              "2024-01-02,2024-03-15,90,C,11.9,12.1," +
                  std::string(underlying) + "\n" + Chain("").substr(Chain("").find('\n') + 1));
    auto r = RunRltrade("chain check " + file);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_TRUE(Contains(r.out, file + ":2: column 'underlying_price': underlying<=0")) << r.out;
    EXPECT_FALSE(Contains(r.out, "no problems found")) << r.out;
    EXPECT_TRUE(Contains(r.out, "implied vol solved from the mid for 4")) << r.out;
    r = RunRltrade("chain check " + file + " --on-bad-rows drop --json", "", "/dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j["problem_counts"]["underlying<=0"], 1);
    EXPECT_EQ(j["iv_solved"], 4) << r.out;
  }
}

TEST(HostilePricingCli, ChainCheckWarnsAboutQuotesBelowTheLowerBound) {
  ScratchDir dir("rlt_hostile_pricing_");
  const std::string file = dir / "stale.csv";
  // Line 6: a call at 1.0 with spot 101 and strike 50: 51 below its intrinsic value.
  WriteFile(file, Chain("2024-01-02,2024-03-15,50,C,0.9,1.1,101\n"));
  auto r = RunRltrade("chain check " + file);
  EXPECT_EQ(r.exit_code, 0) << r.out;  // stale quotes are warnings, not problems
  EXPECT_TRUE(Contains(r.out, "1 warning(s)")) << r.out;
  EXPECT_TRUE(Contains(r.out, file + ":6: call 50 expiring 2024-03-15")) << r.out;
  EXPECT_TRUE(Contains(r.out, "mid 1 <= lower bound")) << r.out;
  EXPECT_TRUE(Contains(r.out, "filled with the median")) << r.out;
  EXPECT_TRUE(Contains(r.out, "filled for 1")) << r.out;

  r = RunRltrade("chain check " + file + " --json", "", "/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["warning_counts"]["mid<=lower-bound"], 1);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["warnings"][0]["line"], 6);
  EXPECT_EQ(j["warnings"][0]["file"], file);
  EXPECT_EQ(j["iv_filled"], 1);
  EXPECT_EQ(j["ok"], true);

  // A quote above the upper bound (a put worth more than its discounted strike) too.
  WriteFile(file, Chain("2024-01-02,2024-03-15,50,P,60,61,101\n"));
  r = RunRltrade("chain check " + file + " --json", "", "/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const auto k = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(k.is_discarded()) << r.out;
  EXPECT_EQ(k["warning_counts"]["mid>=upper-bound"], 1) << r.out;
}

// A date on which no quote has an implied vol cannot be priced: that is an error (exit 1)
// naming file:line, never "no problems found", and the JSON keeps the iv_* keys.
TEST(HostilePricingCli, ChainCheckThatCannotPriceFails) {
  ScratchDir dir("rlt_hostile_pricing_");
  const std::string file = dir / "unpriceable.csv";
  WriteFile(file,
            "quote_date,expiration,strike,type,bid,ask,underlying_price\n"
            "2024-01-02,2024-03-15,50,C,0.9,1.1,101\n");
  auto r = RunRltrade("chain check " + file);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_FALSE(Contains(r.out, "no problems found")) << r.out;
  EXPECT_TRUE(Contains(r.out, file + ":2: no implied vol")) << r.out;
  r = RunRltrade("chain check " + file + " --json", "", "/dev/null");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  for (const char* key : {"iv_solved", "iv_from_file", "iv_filled", "pricing_error"}) {
    EXPECT_TRUE(j.contains(key)) << key << "\n" << r.out;
  }
  EXPECT_EQ(j["ok"], false);

  r = RunRltrade("chain check " + file + " --rate 7");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "--rate 7: expected")) << r.out;
}

TEST(HostilePricingCli, ChainSynthRefusesWhatCannotFinish) {
  ScratchDir dir("rlt_hostile_pricing_");
  const std::string out = dir / "chain.csv";
  for (const char* days : {"100000", "10000"}) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = RunRltrade(std::string("chain synth --synthetic ") + days + " --out " + out);
    EXPECT_LT(Seconds(start), 20.0) << days;
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_TRUE(Contains(r.out, std::string("--synthetic ") + days + " would list about")) << r.out;
    EXPECT_TRUE(Contains(r.out, "lower --synthetic to at most")) << r.out;
    EXPECT_TRUE(Contains(r.out, "The limit is 3000000 contracts")) << r.out;
    EXPECT_FALSE(Contains(r.out, "num_envs")) << r.out;
    EXPECT_FALSE(fs::exists(out));
  }
  // More contracts a day make fewer days fit; the message names the --set keys.
  auto r = RunRltrade("chain synth --synthetic 2000 --set monthly_expiries=60 --out " + out);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "--set monthly_expiries=N (now 60)")) << r.out;
  EXPECT_FALSE(fs::exists(out));
  // A small chain is still written.
  r = RunRltrade("chain synth --synthetic 30 --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(HostilePricingCli, HedgeRefusesWhatCannotFinish) {
  ScratchDir dir("rlt_hostile_pricing_");
  const auto start = std::chrono::steady_clock::now();
  // 10 million paths x 520,000 steps: 5.2e12 environment steps.
  const auto r = RunRltrade(
      "hedge --spot 49 --strike 50 --rate 0.05 --drift 0.13 --vol 0.2 --maturity-weeks 52 "
      "--rebalance-weeks 0.0001 --paths 10000000 --policy bs-delta",
      "cd " + dir.path() + " &&");
  EXPECT_LT(Seconds(start), 10.0);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "--paths 10000000 x 520000 rebalancing steps")) << r.out;
  EXPECT_TRUE(Contains(r.out, "The limit is 1e+09 steps")) << r.out;
  EXPECT_TRUE(Contains(r.out, "lower --paths to at most 1923")) << r.out;
  EXPECT_TRUE(IsEmptyDir(dir.path()));
}

TEST(HostilePricingCli, BinomialRefusesTreesThatCannotFinish) {
  ScratchDir dir("rlt_hostile_pricing_");
  const std::string option = " --type put --spot 100 --strike 100 --rate 0.05 --time 1";
  auto start = std::chrono::steady_clock::now();
  auto r = RunRltrade("iv --model binomial --steps 100000 --price 8" + option,
                      "cd " + dir.path() + " &&");
  EXPECT_LT(Seconds(start), 10.0);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "iv --model binomial --steps 100000")) << r.out;
  EXPECT_TRUE(Contains(r.out, "lower --steps to at most")) << r.out;
  start = std::chrono::steady_clock::now();
  r = RunRltrade("price --model binomial --steps 100000 --greeks --vol 0.2" + option,
                 "cd " + dir.path() + " &&");
  EXPECT_LT(Seconds(start), 10.0);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "price --model binomial --steps 100000 --greeks")) << r.out;
  // Within the limit it works (a few hundred steps: milliseconds).
  r = RunRltrade("iv --model binomial --steps 500 --price 8" + option, "cd " + dir.path() + " &&");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(IsEmptyDir(dir.path()));
}

}  // namespace
