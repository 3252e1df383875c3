// Tests of env::HedgeChainContract on chains built in memory: the portfolio arithmetic
// against an independent replay written here, the choice of the day's vol (the file's,
// the mid's, the last known, none yet), the skips, the contract identifiers.
#include "env/envs/chain_hedging.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/civil_time.h"

namespace rlt::env {
namespace {

using market::OptionChain;
using pricing::OptionType;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int32_t Day(int y, int m, int d) { return static_cast<int32_t>(DaysFromCivil(y, m, d)); }

// A chain with the given quote dates and underlying prices; rows are added day by day
// with Row() and each day closed with EndDay().
struct Builder {
  OptionChain c;
  Builder(std::vector<int32_t> dates, std::vector<double> spots) {
    c.underlying = "SPXW";
    c.dates = std::move(dates);
    c.underlying_price = std::move(spots);
    c.day_begin = {0};
  }
  void Row(int32_t expiry, double strike, OptionType type, double bid, double ask,
           double iv = kNaN) {
    const size_t i = c.AddContract(expiry, strike, type, bid, ask);
    c.implied_vol[i] = iv;
  }
  void EndDay() { c.day_begin.push_back(static_cast<int64_t>(c.size())); }
};

// N(d1) by erfc, written here (not pricing::NormalCdf).
double CallDelta(double s, double k, double r, double vol, double t) {
  const double d1 = (std::log(s / k) + (r + vol * vol / 2) * t) / (vol * std::sqrt(t));
  return 0.5 * std::erfc(-d1 / std::sqrt(2.0));
}
double CallPrice(double s, double k, double r, double vol, double t) {
  const double d1 = (std::log(s / k) + (r + vol * vol / 2) * t) / (vol * std::sqrt(t));
  const double d2 = d1 - vol * std::sqrt(t);
  return s * 0.5 * std::erfc(-d1 / std::sqrt(2.0)) -
         k * std::exp(-r * t) * 0.5 * std::erfc(-d2 / std::sqrt(2.0));
}

TEST(ChainHedging, ReplaysTheHedgeWithTheFilesVolAndCarriesItOverDaysWithoutAQuote) {
  const int32_t e = Day(2024, 1, 12);
  const std::vector<int32_t> dates = {Day(2024, 1, 2), Day(2024, 1, 3), Day(2024, 1, 5),
                                      Day(2024, 1, 8), e};
  const std::vector<double> spots = {100, 101.5, 99.0, 102.0, 103.25};
  Builder b(dates, spots);
  b.Row(e, 100, OptionType::kCall, 2.9, 3.1, 0.20);  // sold at the mid 3.0
  b.EndDay();
  b.Row(e, 100, OptionType::kCall, 3.4, 3.6, 0.25);
  b.EndDay();
  b.Row(e, 100, OptionType::kCall, 0.0, 0.0, 0.50);  // no quote: its IV is not used
  b.EndDay();
  b.Row(e, 95, OptionType::kCall, 7.0, 7.2, 0.3);  // another contract only
  b.EndDay();
  b.Row(e, 100, OptionType::kCall, 3.2, 3.3, 0.3);  // the expiry day: settled, not hedged
  b.EndDay();
  const std::vector<ChainContract> contracts = ListChainContracts(b.c);
  ASSERT_EQ(contracts.size(), 2u);
  const int64_t i = FindChainContract(contracts, "2024-01-12:C:100");
  ASSERT_GE(i, 0);
  ChainHedgeOptions o;
  o.rate = 0.04;
  o.cost = 0.002;
  const Result<ChainHedgeResult> res = HedgeChainContract(b.c, contracts[i], o);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  ASSERT_EQ(res->skip, HedgeSkip::kNone) << res->why;

  // The replay: vols 0.20, 0.25, then 0.25 carried twice.
  const double vols[] = {0.20, 0.25, 0.25, 0.25};
  double cash = 3.0, shares = 0, costs = 0;
  for (int d = 0; d < 4; ++d) {
    if (d > 0) cash *= std::exp(o.rate * (dates[d] - dates[d - 1]) / 365.0);
    const double t = (e - dates[d]) / 365.0;
    const double target = CallDelta(spots[d], 100, o.rate, vols[d], t);
    costs += o.cost * std::abs(target - shares) * spots[d];
    cash -= (target - shares) * spots[d] + o.cost * std::abs(target - shares) * spots[d];
    shares = target;
  }
  cash *= std::exp(o.rate * (e - dates[3]) / 365.0);
  cash += shares * spots[4] - o.cost * shares * spots[4];
  costs += o.cost * shares * spots[4];
  const double pnl = cash - (spots[4] - 100);
  EXPECT_NEAR(res->pnl, pnl, 1e-12 * 100);
  EXPECT_NEAR(res->pnl_over_premium, pnl / 3.0, 1e-12 * 100);
  EXPECT_NEAR(res->costs, costs, 1e-12 * 100);
  EXPECT_DOUBLE_EQ(res->premium, 3.0);
  EXPECT_NEAR(res->half_spread0, 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(res->payoff, 3.25);
  EXPECT_EQ(res->first_date, dates[0]);
  EXPECT_EQ(res->hedge_days, 4);
  EXPECT_EQ(res->quoted_days, 2);
  EXPECT_EQ(res->file_iv_days, 2);
  EXPECT_EQ(res->carried_iv_days, 2);
  EXPECT_EQ(res->solved_iv_days, 0);
  EXPECT_EQ(res->no_iv_days, 0);
  EXPECT_DOUBLE_EQ(res->iv0, 0.20);
}

TEST(ChainHedging, SolvesTheVolFromTheMidAndUsesTheZeroVolLimitBeforeAnyVolIsKnown) {
  const int32_t e = Day(2024, 3, 1);
  const std::vector<int32_t> dates = {Day(2024, 1, 2), Day(2024, 1, 3), e};
  const std::vector<double> spots = {100, 98, 97};
  const double t0 = (e - dates[0]) / 365.0;
  const double mid = CallPrice(100, 105, 0.01, 0.3, t0);
  {
    Builder b(dates, spots);
    b.Row(e, 105, OptionType::kCall, mid - 0.05, mid + 0.05);
    b.EndDay();
    b.EndDay();  // no row: the solved vol carries
    b.EndDay();
    const std::vector<ChainContract> cs = ListChainContracts(b.c);
    ASSERT_EQ(cs.size(), 1u);
    ChainHedgeOptions o;
    o.rate = 0.01;
    const Result<ChainHedgeResult> res = HedgeChainContract(b.c, cs[0], o);
    ASSERT_TRUE(res.ok());
    ASSERT_EQ(res->skip, HedgeSkip::kNone) << res->why;
    EXPECT_NEAR(res->iv0, 0.3, 1e-9);
    EXPECT_EQ(res->solved_iv_days, 1);
    EXPECT_EQ(res->carried_iv_days, 1);
  }
  {
    // A put quoted below its intrinsic value: no vol, the hedge is the zero-vol limit,
    // -1 share per put sold in the money.
    Builder b(dates, spots);
    b.Row(e, 120, OptionType::kPut, 10.0, 10.2);  // intrinsic ~20
    b.EndDay();
    b.EndDay();
    b.EndDay();
    const std::vector<ChainContract> cs = ListChainContracts(b.c);
    const Result<ChainHedgeResult> res = HedgeChainContract(b.c, cs[0], ChainHedgeOptions{});
    ASSERT_TRUE(res.ok());
    ASSERT_EQ(res->skip, HedgeSkip::kNone) << res->why;
    EXPECT_EQ(res->no_iv_days, 2);
    EXPECT_TRUE(std::isnan(res->iv0));
    // Short 1 share from 100, then the payoff 23 at 97: 10.1 + 100 - 97 - 23.
    EXPECT_NEAR(res->pnl, 10.1 + 100 - 97 - 23, 1e-12 * 100);
  }
}

TEST(ChainHedging, SkipsWhatCannotBeHedgedAndSaysWhy) {
  const std::vector<int32_t> dates = {Day(2024, 1, 2), Day(2024, 1, 3), Day(2024, 1, 4),
                                      Day(2024, 1, 8)};
  Builder b(dates, {100, kNaN, 101, 102});
  const int32_t after = Day(2024, 2, 1), holiday = Day(2024, 1, 5), e = Day(2024, 1, 8);
  b.Row(holiday, 100, OptionType::kCall, 1, 1.2);
  b.Row(after, 100, OptionType::kCall, 1, 1.2);
  b.Row(e, 100, OptionType::kPut, 0, 1.2);  // no bid: no quote
  b.EndDay();
  b.EndDay();
  b.Row(e, 100, OptionType::kCall, 1, 1.2);  // from day 2: 1 hedge day
  b.EndDay();
  b.Row(e, 90, OptionType::kPut, 1, 1.2);  // quoted only on its expiry day
  b.EndDay();
  const std::vector<ChainContract> cs = ListChainContracts(b.c);
  ASSERT_EQ(cs.size(), 5u);
  ChainHedgeOptions o;
  o.min_days = 2;
  auto skip = [&](const char* id) {
    const int64_t i = FindChainContract(cs, id);
    EXPECT_GE(i, 0) << id;
    if (i < 0) return HedgeSkip::kNone;
    Result<ChainHedgeResult> r = HedgeChainContract(b.c, cs[i], o);
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r->why.empty(), r->skip == HedgeSkip::kNone) << id << ": " << r->why;
    return r->skip;
  };
  EXPECT_EQ(skip("2024-01-05:C:100"), HedgeSkip::kExpiryNotQuoted);
  EXPECT_EQ(skip("2024-02-01:C:100"), HedgeSkip::kExpiresAfterFile);
  EXPECT_EQ(skip("2024-01-08:P:100"), HedgeSkip::kNoQuote);
  EXPECT_EQ(skip("2024-01-08:P:90"), HedgeSkip::kNoQuote);
  EXPECT_EQ(skip("2024-01-08:C:100"), HedgeSkip::kTooShort);
  o.min_days = 1;
  EXPECT_EQ(skip("2024-01-08:C:100"), HedgeSkip::kNone);
  // From day 0 its life crosses the day without an underlying price.
  Builder b2(dates, {100, kNaN, 101, 102});
  b2.Row(e, 100, OptionType::kCall, 1, 1.2);
  b2.EndDay();
  b2.EndDay();
  b2.EndDay();
  b2.EndDay();
  const std::vector<ChainContract> cs2 = ListChainContracts(b2.c);
  Result<ChainHedgeResult> r = HedgeChainContract(b2.c, cs2[0], o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->skip, HedgeSkip::kNoUnderlying);
  EXPECT_NE(r->why.find("2024-01-03"), std::string::npos) << r->why;
  // Bad options are errors.
  o.cost = -0.1;
  EXPECT_FALSE(HedgeChainContract(b2.c, cs2[0], o).ok());
  o.cost = 0;
  o.rate = kNaN;
  EXPECT_FALSE(HedgeChainContract(b2.c, cs2[0], o).ok());
}

TEST(ChainHedging, ContractIdsAndOccSymbols) {
  Builder b({Day(2018, 1, 2)}, {2700});
  const int32_t e = Day(2018, 1, 31);
  b.Row(e, 2700, OptionType::kCall, 10, 11);
  b.Row(e, 2712.5, OptionType::kCall, 10, 11);
  b.Row(e, 2700, OptionType::kPut, 10, 11);
  b.EndDay();
  const std::vector<ChainContract> cs = ListChainContracts(b.c);
  ASSERT_EQ(cs.size(), 3u);
  EXPECT_EQ(cs[0].id, "2018-01-31:C:2700");
  EXPECT_EQ(cs[0].occ, "SPXW180131C02700000");
  EXPECT_EQ(cs[1].id, "2018-01-31:C:2712.5");
  EXPECT_EQ(cs[1].occ, "SPXW180131C02712500");
  EXPECT_EQ(cs[2].id, "2018-01-31:P:2700");
  EXPECT_EQ(cs[2].occ, "SPXW180131P02700000");
  EXPECT_EQ(FindChainContract(cs, "spxw180131p02700000"), 2);
  EXPECT_EQ(FindChainContract(cs, "2018-01-31:call:2712.50"), 1);
  EXPECT_EQ(FindChainContract(cs, "1/31/2018:P:2700"), 2);
  EXPECT_EQ(FindChainContract(cs, "2018-01-31:C:2705"), -1);
  EXPECT_EQ(FindChainContract(cs, "2018-01-31:X:2700"), -1);
  EXPECT_EQ(FindChainContract(cs, "SPXW180131C02705000"), -1);
  // No symbol (or one that is not an OCC root): no OCC form.
  b.c.underlying = "my chain.csv";
  EXPECT_EQ(ListChainContracts(b.c)[0].occ, "");
}

TEST(ChainHedging, SortedQuantileInterpolatesBetweenOrderStatistics) {
  const std::vector<double> v = {1, 2, 4, 8, 16};
  EXPECT_DOUBLE_EQ(SortedQuantile(v, 0), 1);
  EXPECT_DOUBLE_EQ(SortedQuantile(v, 0.5), 4);
  EXPECT_DOUBLE_EQ(SortedQuantile(v, 1), 16);
  EXPECT_DOUBLE_EQ(SortedQuantile(v, 0.05), 1 + 0.2 * 1);  // position 0.2
  EXPECT_DOUBLE_EQ(SortedQuantile(v, 0.95), 8 + 0.8 * 8);  // position 3.8
  EXPECT_DOUBLE_EQ(SortedQuantile({3.5}, 0.25), 3.5);
}

}  // namespace
}  // namespace rlt::env
