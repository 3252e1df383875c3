// Tests of OptionsPortfolioEnv on a listed chain file (`chain_file`): a small real-shaped
// chain written here (5 quote dates, 2 expiries, 5 strikes, calls and puts), with the
// accounting, the settlement, the missing_quote marks and the errors checked against
// values computed in the test from the quotes it wrote (its own Black-Scholes formula and
// implied-vol bisection, independent of pricing/).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/options.h"
#include "core/status_test_util.h"
#include "env/envs/options_portfolio.h"
#include "market/option_chain.h"
#include "testing/testing.h"

namespace rlt::env {
namespace {

// --- An independent Black-Scholes-Merton ------------------------------------------------
double Ncdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

double Bs(bool call, double s, double k, double r, double q, double vol, double t) {
  const double sd = vol * std::sqrt(t);
  const double d1 = (std::log(s / k) + (r - q + 0.5 * vol * vol) * t) / sd;
  const double d2 = d1 - sd;
  return call ? s * std::exp(-q * t) * Ncdf(d1) - k * std::exp(-r * t) * Ncdf(d2)
              : k * std::exp(-r * t) * Ncdf(-d2) - s * std::exp(-q * t) * Ncdf(-d1);
}

// The vol at which Bs equals `price`, by bisection on [1e-4, 5] (Bs rises with vol).
double Iv(bool call, double s, double k, double r, double q, double t, double price) {
  double lo = 1e-4, hi = 5;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (Bs(call, s, k, r, q, mid, t) < price ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// --- The fixture chain ------------------------------------------------------------------
// Quote dates Mon 2020-01-06 .. Fri 2020-01-10 (days since 1970: 18267..18271), expiries
// Wed 2020-01-08 (near) and Wed 2020-02-05 (far), strikes 90..110 by 5. Quotes from a
// skewed vol at zero rates: ask = value + 0.10, bid = value - 0.10 (floored at 0), in
// cents, as text (the test reads its numbers back from that text, as the reader does).
constexpr int kDays = 5;
const char* kDates[kDays] = {"2020-01-06", "2020-01-07", "2020-01-08", "2020-01-09", "2020-01-10"};
constexpr int kDayNumber[kDays] = {18267, 18268, 18269, 18270, 18271};
const double kClose[kDays] = {100, 101, 103, 102, 104};
const char* kExpiries[2] = {"2020-01-08", "2020-02-05"};
constexpr int kExpiryNumber[2] = {18269, 18297};
const double kStrikes[5] = {90, 95, 100, 105, 110};

struct Quote {
  double bid = 0, ask = 0;
};
// (day, expiry index, call?, strike) -> quote
using Key = std::tuple<int, int, bool, double>;
using Skip = std::function<bool(int day, int expiry, bool call, double strike)>;

struct Chain {
  std::string path;
  std::map<Key, Quote> quotes;
};

Chain WriteChain(const std::string& dir, const Skip& skip, const std::string& extra_header = "",
                 const std::string& extra_value = "") {
  Chain chain;
  chain.path = dir + "/chain.csv";
  std::string csv =
      "quote_date,expiration,strike,type,bid,ask,underlying_last" + extra_header + "\n";
  for (int day = 0; day < kDays; ++day) {
    for (int e = 0; e < 2; ++e) {
      if (kExpiryNumber[e] < kDayNumber[day]) continue;  // expired
      const double t = (kExpiryNumber[e] - kDayNumber[day]) / 365.0;
      for (bool call : {true, false}) {
        for (double k : kStrikes) {
          if (skip && skip(day, e, call, k)) continue;
          const double vol = 0.25 - 0.4 * std::log(k / kClose[day]);
          const double value = t > 0 ? Bs(call, kClose[day], k, 0, 0, vol, t)
                                     : std::max(0.0, (call ? 1 : -1) * (kClose[day] - k));
          char bid[32], ask[32];
          std::snprintf(bid, sizeof(bid), "%.2f", std::max(0.0, value - 0.10));
          std::snprintf(ask, sizeof(ask), "%.2f", value + 0.10);
          char line[256];
          std::snprintf(line, sizeof(line), "%s,%s,%g,%s,%s,%s,%g%s\n", kDates[day], kExpiries[e],
                        k, call ? "C" : "P", bid, ask, kClose[day], extra_value.c_str());
          csv += line;
          chain.quotes[{day, e, call, k}] = {std::stod(bid), std::stod(ask)};
        }
      }
    }
  }
  testing::WriteFile(chain.path, csv);
  return chain;
}

// The same chain in memory (market::OptionChain), with `change` applied to its quotes
// first: quotes a chain file cannot hold until zero quotes are read as "no quote".
market::OptionChain MemoryChain(const Chain& written,
                                const std::function<void(std::map<Key, Quote>*)>& change) {
  std::map<Key, Quote> quotes = written.quotes;
  if (change) change(&quotes);
  market::OptionChain chain;
  chain.underlying = "FIXTURE";
  for (int day = 0; day < kDays; ++day) {
    chain.dates.push_back(kDayNumber[day]);
    chain.underlying_price.push_back(kClose[day]);
    chain.day_begin.push_back(static_cast<int64_t>(chain.size()));
    for (int e = 0; e < 2; ++e) {
      for (bool call : {true, false}) {  // calls first, strikes ascending
        for (double k : kStrikes) {
          const auto it = quotes.find({day, e, call, k});
          if (it == quotes.end()) continue;
          chain.AddContract(kExpiryNumber[e], k,
                            call ? market::OptionType::kCall : market::OptionType::kPut,
                            it->second.bid, it->second.ask);
        }
      }
    }
  }
  chain.day_begin.push_back(static_cast<int64_t>(chain.size()));
  return chain;
}

struct Runner {
  std::unique_ptr<OptionsPortfolioEnv> env;
  std::vector<float> obs;
  std::vector<double> info;
  explicit Runner(const std::map<std::string, std::string>& settings,
                  const market::OptionChain* memory = nullptr) {
    OptionsPortfolioOptions options;
    Status s = SetOptions(options, settings, "[env]");
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::shared_ptr<const OptionsData> data;
    if (memory != nullptr) {
      auto prepared = PrepareOptionsDataFromChain(options, *memory);
      EXPECT_TRUE(prepared.ok()) << prepared.status().ToString();
      data = std::move(prepared).value();
    }
    auto made = OptionsPortfolioEnv::Create(options, data);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    env = std::move(made).value();
    obs.resize(env->spec().obs_dim);
    info.resize(env->spec().info_names.size());
    env->Seed(1);
    env->Reset(obs.data(), info.data());
  }
  void Step(const std::vector<float>& action) { env->Step(action.data(), obs.data(), info.data()); }
  double NetWorth() const { return info[kOptInfoNetWorth]; }
};

// One bucket pair: the call (bucket 0) and the put (bucket 1) nearest `tenor` days at the
// money; no rates, so that cash is exactly the trades' sum.
std::map<std::string, std::string> Settings(const std::string& path, int tenor) {
  return {{"chain_file", path},    {"tenors", std::to_string(tenor)},
          {"moneyness", "1.0"},    {"random_start", "false"},
          {"episode_days", "10"},  {"rate", "0"},
          {"dividend", "0"},       {"fee_per_contract", "0.65"},
          {"max_position", "0.2"}, {"initial_cash", "1000000"}};
}

constexpr double kFee = 0.65, kCash = 1e6, kMult = 100;

TEST(OptionsChainFile, DaysClosesAndSelectionComeFromTheFile) {
  const testing::ScratchDir dir;
  const Chain chain = WriteChain(dir.path(), nullptr);
  Runner r(Settings(chain.path, 2));
  const OptionsData& d = r.env->data();
  ASSERT_EQ(d.num_days(), kDays);
  EXPECT_EQ(d.first_day, 0);
  for (int day = 0; day < kDays; ++day) {
    EXPECT_EQ(d.days[day], kDayNumber[day]);
    EXPECT_EQ(d.close[day], kClose[day]);
  }
  // Day 0: 2 days ahead is the near expiry; the strike nearest 1.0 x 100 is 100.
  const int32_t call = r.env->contract(0), put = r.env->contract(1);
  EXPECT_EQ(d.strike[call], 100);
  EXPECT_EQ(d.phi[call], 1.0);
  EXPECT_EQ(d.phi[put], -1.0);
  EXPECT_EQ(d.expiry_day[call], 2);  // 2020-01-08 is day 2
  EXPECT_EQ(r.env->spec().info_names.back(), "missing_quote_marks");
}

// Buy the at-the-money call at the ask on day 0, sell it all at the bid on day 1: cash is
// the initial cash less what was paid plus what was received, less the fees.
TEST(OptionsChainFile, BuysAtTheAskAndSellsAtTheBid) {
  const testing::ScratchDir dir;
  const Chain chain = WriteChain(dir.path(), nullptr);
  Runner r(Settings(chain.path, 2));
  const Quote q0 = chain.quotes.at({0, 0, true, 100.0});
  const Quote q1 = chain.quotes.at({1, 0, true, 100.0});
  r.Step({0, 1, 0});  // the call bucket at +max_position
  const double n = std::trunc(0.2 * kCash / ((q0.bid + q0.ask) / 2 * kMult));
  ASSERT_GT(n, 0);
  EXPECT_EQ(r.env->units(1), n);
  const double cash0 = kCash - n * (q0.ask * kMult + kFee);
  EXPECT_NEAR(r.env->cash(), cash0, 1e-9 * kCash);
  // Marked at day 1's mid.
  EXPECT_NEAR(r.NetWorth(), cash0 + n * (q1.bid + q1.ask) / 2 * kMult, 1e-9 * kCash);
  r.Step({0, 0, 0});  // flat: sell every contract at day 1's bid
  EXPECT_EQ(r.env->units(1), 0);
  const double cash1 = cash0 + n * (q1.bid * kMult - kFee);
  EXPECT_NEAR(r.env->cash(), cash1, 1e-9 * kCash);
  EXPECT_NEAR(r.NetWorth(), cash1, 1e-9 * kCash);
  EXPECT_EQ(r.info[kOptInfoMissingQuoteMarks], 0);
}

// Held to the near expiry (day 2, 2020-01-08): settled in cash at the intrinsic value on
// that day's close (103 - 100 = 3 per share), the bucket rolls to the far expiry.
TEST(OptionsChainFile, ExpirySettlesAtIntrinsicOnTheUnderlyingClose) {
  const testing::ScratchDir dir;
  const Chain chain = WriteChain(dir.path(), nullptr);
  auto settings = Settings(chain.path, 2);
  settings["max_position"] = "1";  // room to hold the position after the call's value rises
  Runner r(settings);
  const OptionsData& d = r.env->data();
  const int32_t c = r.env->contract(0);
  const Quote q0 = chain.quotes.at({0, 0, true, 100.0});
  const Quote q1 = chain.quotes.at({1, 0, true, 100.0});
  r.Step({0, 0.2f, 0});
  const double n = r.env->units(1);
  ASSERT_GT(n, 0);
  // Day 1: the weight of n + 0.5 contracts at the mid keeps exactly n (rounded toward 0).
  const float hold = static_cast<float>((n + 0.5) * (q1.bid + q1.ask) / 2 * kMult / r.NetWorth());
  ASSERT_LT(hold, 1);
  r.Step({0, hold, 0});  // no trade; into day 2, the expiry
  ASSERT_EQ(r.env->day(), 2);
  const double payoff = (kClose[2] - 100) * kMult;
  EXPECT_NEAR(r.NetWorth(), kCash - n * (q0.ask * kMult + kFee) + n * payoff, 1e-9 * kCash);
  EXPECT_NEAR(r.env->cash(), r.NetWorth(), 1e-12 * kCash);  // all in cash
  EXPECT_EQ(r.env->units(1), 0);                            // settled
  EXPECT_NE(r.env->contract(0), c);
  EXPECT_EQ(d.expiry_day[r.env->contract(0)], kDays);  // the far expiry: after the file
}

// The far call K = 100 (and its put) have no quote on day 1. Bought on day 0, it cannot
// trade on day 1 (no quote: the flat action keeps it) and is marked by missing_quote;
// quoted again on day 2.
Skip MissingOnDay1() {
  return [](int day, int e, bool, double k) { return day == 1 && e == 1 && k == 100; };
}

TEST(OptionsChainFile, MissingQuoteLastMarksAtTheLastQuote) {
  const testing::ScratchDir dir;
  const Chain chain = WriteChain(dir.path(), MissingOnDay1());
  auto settings = Settings(chain.path, 30);
  settings["missing_quote"] = "last";
  Runner r(settings);
  const OptionsData& d = r.env->data();
  ASSERT_EQ(d.strike[r.env->contract(0)], 100);
  ASSERT_EQ(d.expiry_day[r.env->contract(0)], kDays);  // the far expiry
  const Quote q0 = chain.quotes.at({0, 1, true, 100.0});
  r.Step({0, 1, 0});
  const double n = r.env->units(1);
  ASSERT_GT(n, 0);
  const double cash0 = kCash - n * (q0.ask * kMult + kFee);
  EXPECT_NEAR(r.NetWorth(), cash0 + n * (q0.bid + q0.ask) / 2 * kMult, 1e-9 * kCash);
  EXPECT_EQ(r.info[kOptInfoMissingQuoteMarks], 1);
  r.Step({0, 0, 0});  // no quote today: nothing is sold
  EXPECT_EQ(r.env->units(1), n);
  EXPECT_NEAR(r.env->cash(), cash0, 1e-9 * kCash);
  const Quote q2 = chain.quotes.at({2, 1, true, 100.0});
  EXPECT_NEAR(r.NetWorth(), cash0 + n * (q2.bid + q2.ask) / 2 * kMult, 1e-9 * kCash);
  EXPECT_EQ(r.info[kOptInfoMissingQuoteMarks], 1);  // quoted again: no new mark
}

// "surface": day 1's vol at K = 100 interpolated linearly in ln(K / F) between the
// out-of-the-money neighbours quoted that day (the 95 put below the forward, the 105 call
// above it), F = S e^{(r - q) T}; the mark is the Black-Scholes value at that vol. With
// rates, so that the forward and the discounting matter.
TEST(OptionsChainFile, MissingQuoteSurfaceMarksAtTheInterpolatedVol) {
  const testing::ScratchDir dir;
  const Chain chain = WriteChain(dir.path(), MissingOnDay1());
  const double r_rate = 0.03, q_div = 0.01;
  auto settings = Settings(chain.path, 30);
  settings["missing_quote"] = "surface";
  settings["rate"] = std::to_string(r_rate);
  settings["dividend"] = std::to_string(q_div);
  Runner r(settings);
  const OptionsData& d = r.env->data();
  const int32_t c = r.env->contract(0);
  r.Step({0, 1, 0});
  const double n = r.env->units(1);
  ASSERT_GT(n, 0);
  const double s = kClose[1], t = (kExpiryNumber[1] - kDayNumber[1]) / 365.0;
  const double f = s * std::exp((r_rate - q_div) * t);
  ASSERT_LT(95, f);
  ASSERT_GT(105, f);
  const Quote put95 = chain.quotes.at({1, 1, false, 95.0});
  const Quote call105 = chain.quotes.at({1, 1, true, 105.0});
  const double iv95 = Iv(false, s, 95, r_rate, q_div, t, (put95.bid + put95.ask) / 2);
  const double iv105 = Iv(true, s, 105, r_rate, q_div, t, (call105.bid + call105.ask) / 2);
  const double k95 = std::log(95 / f), k105 = std::log(105 / f), k100 = std::log(100 / f);
  const double iv = iv95 + (iv105 - iv95) * (k100 - k95) / (k105 - k95);
  const double mark = Bs(true, s, 100, r_rate, q_div, iv, t);
  const OptionsData::Row& row = d.rows[d.RowOf(c, 1)];
  EXPECT_EQ(row.flags & OptionsData::kQuoted, 0);
  EXPECT_NEAR(row.mid, mark, 1e-7 * mark);
  EXPECT_NEAR(row.features[2], iv, 1e-5 * iv);
  // Net worth: cash with a day's interest plus the contracts at that mark.
  const double cash0 = kCash - n * (chain.quotes.at({0, 1, true, 100.0}).ask * kMult + kFee);
  const double cash1 = cash0 * std::exp(r_rate / 365);
  EXPECT_NEAR(r.NetWorth(), cash1 + n * mark * kMult, 1e-9 * kCash);
  EXPECT_EQ(r.info[kOptInfoMissingQuoteMarks], 1);
  r.Step({0, 0, 0});
  EXPECT_EQ(r.env->units(1), n);  // no quote on day 1: not sold
  EXPECT_EQ(r.info[kOptInfoMissingQuoteMarks], 1);
}

// Zero quotes (in memory; the agreed convention of chain files: a zero ask is no offer, a
// zero bid no bid). Day 1: the far 100 call has neither (marked at its last quote, not
// traded), the far 100 put has an ask but no bid (quoted at mid = ask / 2, cannot be sold).
// Day 0: the far 105 call has no offer, so the 1.05 bucket cannot select it.
TEST(OptionsChainFile, ZeroAskIsNoOfferAndZeroBidIsNoBid) {
  const testing::ScratchDir dir;
  const Chain chain = WriteChain(dir.path(), nullptr);
  const market::OptionChain memory = MemoryChain(chain, [](std::map<Key, Quote>* q) {
    (*q)[{1, 1, true, 100.0}] = {0, 0};
    (*q)[{1, 1, false, 100.0}].bid = 0;
    (*q)[{0, 1, true, 105.0}] = {0, 0};
  });
  auto settings = Settings(chain.path, 30);
  settings["missing_quote"] = "last";
  settings["chain_file"] = "";
  {
    auto wide = settings;
    wide["moneyness"] = "1.05";
    Runner r(wide, &memory);
    EXPECT_NE(r.env->data().strike[r.env->contract(0)], 105);
    EXPECT_EQ(r.env->data().strike[r.env->contract(1)], 105);  // the put is offered
  }
  Runner r(settings, &memory);
  const Quote call0 = chain.quotes.at({0, 1, true, 100.0});
  const Quote put0 = chain.quotes.at({0, 1, false, 100.0});
  const Quote put1 = chain.quotes.at({1, 1, false, 100.0});
  r.Step({0, 1, 1});  // both far 100 contracts at +max_position
  const double nc = r.env->units(1), np = r.env->units(2);
  ASSERT_GT(nc, 0);
  ASSERT_GT(np, 0);
  const double cash0 = kCash - nc * (call0.ask * kMult + kFee) - np * (put0.ask * kMult + kFee);
  EXPECT_NEAR(r.env->cash(), cash0, 1e-9 * kCash);
  // Day 1: the call at its last mid (no quote), the put at its one-sided mid ask / 2.
  EXPECT_NEAR(r.NetWorth(),
              cash0 + nc * (call0.bid + call0.ask) / 2 * kMult + np * put1.ask / 2 * kMult,
              1e-9 * kCash);
  EXPECT_EQ(r.info[kOptInfoMissingQuoteMarks], 1);  // the call only: the put is quoted
  r.Step({0, 0, 0});                                // flat: neither can be sold on day 1
  EXPECT_EQ(r.env->units(1), nc);
  EXPECT_EQ(r.env->units(2), np);
  EXPECT_NEAR(r.env->cash(), cash0, 1e-9 * kCash);
  r.Step({0, 0, 0});  // day 2: both quoted, both sold at the bid
  const Quote call2 = chain.quotes.at({2, 1, true, 100.0});
  const Quote put2 = chain.quotes.at({2, 1, false, 100.0});
  EXPECT_EQ(r.env->units(1), 0);
  EXPECT_EQ(r.env->units(2), 0);
  EXPECT_NEAR(r.env->cash(),
              cash0 + nc * (call2.bid * kMult - kFee) + np * (put2.bid * kMult - kFee),
              1e-9 * kCash);
}

// With the far expiry listed only on the last date (and nothing on 2020-01-09), the file
// lists nothing to select on the near expiry's day (day 2): the buckets are empty that day
// (no contract, zero features, nothing bought) and select again on the next date. Random
// actions (beyond the box, NaN) stay self-financing with net worth = cash + positions at
// marks throughout, missing quotes included.
TEST(OptionsChainFile, EmptyBucketsAndRandomActionsStaySelfFinancing) {
  const testing::ScratchDir dir;
  const Chain near_only =
      WriteChain(dir.path(), [](int day, int e, bool, double) { return e == 1 && day < 4; });
  Runner r(Settings(near_only.path, 2));
  for (int day = 0; day < 2; ++day) r.Step({0, 1, -0.5f});
  ASSERT_EQ(r.env->day(), 2);
  EXPECT_EQ(r.env->contract(0), -1);
  EXPECT_EQ(r.env->contract(1), -1);
  EXPECT_EQ(r.env->units(1), 0);
  for (int j = 0; j < OptionsData::kBucketFeatures * 2; ++j) {
    EXPECT_EQ(r.obs[OptionsData::kUnderlyingFeatures + j], 0.0f) << j;
  }
  const double cash = r.env->cash();
  r.Step({0, 1, 1});  // nothing to buy
  EXPECT_EQ(r.env->units(1), 0);
  EXPECT_NEAR(r.env->cash(), cash, 1e-12 * kCash);
  ASSERT_EQ(r.env->data().num_days(), 4);
  ASSERT_EQ(r.env->day(), 3);  // 2020-01-10: the far expiry is selected again
  EXPECT_GE(r.env->contract(0), 0);
  EXPECT_EQ(r.env->data().expiry_day[r.env->contract(0)], 4);

  const testing::ScratchDir dir2;
  const Chain missing = WriteChain(dir2.path(), [](int day, int e, bool call, double k) {
    return (day == 1 && e == 1 && k >= 100) || (day == 3 && !call && k == 95);
  });
  for (const char* mode : {"surface", "last"}) {
    auto settings = Settings(missing.path, 30);
    settings["missing_quote"] = mode;
    settings["moneyness"] = "0.95,1,1.05";
    settings["rate"] = "0.02";
    settings["max_position"] = "0.5";
    Runner rr(settings);
    uint64_t state = 7;
    auto uniform = [&state] {  // a small LCG: the test's own stream
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<float>((state >> 11) * (1.0 / 9007199254740992.0));
    };
    for (int episode = 0; episode < 20; ++episode) {
      rr.env->Reset(rr.obs.data(), rr.info.data());
      for (int step = 0; step < kDays - 1; ++step) {
        std::vector<float> action(rr.env->spec().action.dim);
        for (float& a : action) a = 3 * uniform() - 1.5f;
        if (step == 1) action[1] = std::nanf("");
        const StepResult res = rr.env->Step(action.data(), rr.obs.data(), rr.info.data());
        const Status ok = CheckSelfFinancing(rr.env->books(), 1e-10);
        ASSERT_TRUE(ok.ok()) << mode << " " << ok.ToString();
        EXPECT_NEAR(rr.NetWorth(), rr.env->NetWorth(), 1e-9 * kCash);
        if (res.terminated || res.truncated) break;
      }
    }
  }
}

TEST(OptionsChainFile, ARangeTheFileDoesNotCoverNamesFileRangeAndDates) {
  const testing::ScratchDir dir;
  const Chain chain = WriteChain(dir.path(), nullptr);
  auto settings = Settings(chain.path, 30);
  settings["range"] = "2020-03-02:2020-03-31";
  OptionsPortfolioOptions options;
  ASSERT_TRUE(SetOptions(options, settings, "[env]").ok());
  const Status s = PrepareOptionsData(options).status();
  EXPECT_TRUE(IsError(s, Status::Code::kInvalidArgument, chain.path)) << s.ToString();
  EXPECT_NE(s.message().find("2020-03-02:2020-03-31"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("2020-01-06 to 2020-01-10"), std::string::npos) << s.ToString();
  // A range the file covers (a holiday or weekend at either end is fine).
  settings["range"] = "2020-01-04:2020-01-12";
  ASSERT_TRUE(SetOptions(options, settings, "[env]").ok());
  EXPECT_TRUE(PrepareOptionsData(options).ok());
}

TEST(OptionsChainFile, BadSettingsAndFilesAreErrors) {
  const testing::ScratchDir dir;
  const Chain chain = WriteChain(dir.path(), nullptr);
  OptionsPortfolioOptions options;
  auto settings = Settings(chain.path, 30);
  settings["missing_quote"] = "nearest";
  EXPECT_TRUE(IsError(SetOptions(options, settings, "[env]"), Status::Code::kInvalidArgument,
                      "missing_quote"));
  // Set directly (past SetOptions' list): the environment's own check.
  options = OptionsPortfolioOptions{};
  options.chain_file = chain.path;
  options.missing_quote = "nearest";
  EXPECT_TRUE(IsError(OptionsPortfolioEnv::Create(options, nullptr).status(),
                      Status::Code::kInvalidArgument, "missing_quote"));

  // No underlying price column.
  const std::string bare = dir.path() + "/bare.csv";
  testing::WriteFile(bare,
                     "quote_date,expiration,strike,type,bid,ask\n"
                     "2020-01-06,2020-02-05,100,C,1.0,1.2\n"
                     "2020-01-07,2020-02-05,100,C,1.0,1.2\n");
  options = OptionsPortfolioOptions{};
  options.chain_file = bare;
  Status s = OptionsPortfolioEnv::Create(options, nullptr).status();
  EXPECT_TRUE(IsError(s, Status::Code::kInvalidArgument, bare)) << s.ToString();
  EXPECT_NE(s.message().find("underlying_last"), std::string::npos) << s.ToString();

  // American exercise (a style column with A) is refused, naming the file and line.
  const testing::ScratchDir dir2;
  const Chain american = WriteChain(dir2.path(), nullptr, ",style", ",A");
  options.chain_file = american.path;
  s = OptionsPortfolioEnv::Create(options, nullptr).status();
  EXPECT_TRUE(IsError(s, Status::Code::kInvalidArgument, american.path + ":2")) << s.ToString();
  EXPECT_NE(s.message().find("American"), std::string::npos) << s.ToString();
  // European (E) is read.
  const testing::ScratchDir dir3;
  const Chain european = WriteChain(dir3.path(), nullptr, ",style", ",E");
  options.chain_file = european.path;
  EXPECT_TRUE(OptionsPortfolioEnv::Create(options, nullptr).ok());
}

// [env] underlying = a bar file beside chain_file: its closes are the days' closes; a bar
// file of another underlying (every close 1.5 times the chain's) or one that misses a
// quote date is an error naming the chain file, the line and the field.
TEST(OptionsChainFile, AnUnderlyingBarFileMustMatchTheChain) {
  const testing::ScratchDir dir;
  const Chain chain = WriteChain(dir.path(), nullptr);
  auto bars = [&](double scale, int days) {
    std::string csv = "date,open,high,low,close,volume\n";
    for (int day = 0; day < days; ++day) {
      const double c = kClose[day] * scale + 0.5;  // within 2 % of the chain's column
      csv += std::string(kDates[day]) + "," + std::to_string(c) + "," + std::to_string(c) + "," +
             std::to_string(c) + "," + std::to_string(c) + ",1000\n";
    }
    const std::string path =
        dir.path() + "/bars" + std::to_string(scale) + "_" + std::to_string(days) + ".csv";
    testing::WriteFile(path, csv);
    return path;
  };
  auto settings = Settings(chain.path, 30);
  settings["underlying"] = bars(1.0, kDays);
  {
    Runner r(settings);
    for (int day = 0; day < kDays; ++day) {
      EXPECT_NEAR(r.env->data().close[day], kClose[day] + 0.5, 1e-9 * kClose[day]) << day;
    }
  }
  OptionsPortfolioOptions options;
  settings["underlying"] = bars(1.5, kDays);
  ASSERT_TRUE(SetOptions(options, settings, "[env]").ok());
  Status s = OptionsPortfolioEnv::Create(options, nullptr).status();
  EXPECT_TRUE(IsError(s, Status::Code::kInvalidArgument,
                      chain.path + ":2: field 'underlying "
                                   "price'"))
      << s.ToString();
  settings["underlying"] = bars(1.0, kDays - 1);  // no close on 2020-01-10
  ASSERT_TRUE(SetOptions(options, settings, "[env]").ok());
  s = OptionsPortfolioEnv::Create(options, nullptr).status();
  EXPECT_TRUE(IsError(s, Status::Code::kInvalidArgument, "2020-01-10 has no close"))
      << s.ToString();
}

}  // namespace
}  // namespace rlt::env
