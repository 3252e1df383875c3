// Tests of the risk limits (paper/risk.h): each rule refuses what exceeds it and names
// itself, orders that only reduce the position always pass, the rate limit counts 60 s of
// feed time, and bad files are errors naming the line, the key and the fix.
#include "paper/risk.h"

#include <gtest/gtest.h>

#include <string>

#include "core/status_test_util.h"

namespace rlt::paper {
namespace {

OrderCheck Order(double quantity, double position = 0) {
  OrderCheck o;
  o.quantity = quantity;
  o.position = position;
  o.price = 100;
  o.last_price = 100;
  o.net_worth = 100000;
  o.minute_of_day = 10 * 60;
  o.time = 1700000000;
  return o;
}

std::string RuleOf(RiskGate& gate, const OrderCheck& o) {
  std::string detail;
  return gate.Check(o, &detail);
}

TEST(Risk, EachLimitRefusesWhatExceedsItAndNamesItself) {
  auto limits = ParseRiskLimits(
      "max_order_shares = 100\nmax_position_shares = 150\nmax_position_value = 12000.0\n"
      "max_gross_exposure = 0.5\nprice_collar = 0.01\ntrading_hours = \"09:30-16:00\"\n"
      "flatten_before_close = \"15:55\"\n",
      "r.toml");
  ASSERT_TRUE(limits.ok()) << limits.status().message();
  RiskGate gate(*limits);
  EXPECT_EQ(RuleOf(gate, Order(100)), "");
  EXPECT_EQ(RuleOf(gate, Order(101)), "max_order_shares");
  EXPECT_EQ(RuleOf(gate, Order(-60, -100)), "max_position_shares");  // 160 short
  EXPECT_EQ(RuleOf(gate, Order(30, 100)), "max_position_value");     // 130 x 100 = 13,000
  OrderCheck poor = Order(100);
  poor.net_worth = 15000;  // 10,000 / 15,000 = 0.67 > 0.5
  EXPECT_EQ(RuleOf(gate, poor), "max_gross_exposure");
  OrderCheck jump = Order(10);
  jump.price = 101.5;  // 1.5% from the last price
  EXPECT_EQ(RuleOf(gate, jump), "price_collar");
  OrderCheck early = Order(10);
  early.minute_of_day = 9 * 60 + 29;
  EXPECT_EQ(RuleOf(gate, early), "trading_hours");
  OrderCheck late = Order(10);
  late.minute_of_day = 15 * 60 + 55;
  EXPECT_EQ(RuleOf(gate, late), "flatten_before_close");
  EXPECT_TRUE(gate.MustFlatten(15 * 60 + 55));
  EXPECT_FALSE(gate.MayOpen(15 * 60 + 56));
  EXPECT_TRUE(gate.MayOpen(12 * 60));
  // Getting out always passes: a sale of a long position outside the hours, far from the
  // last price, bigger than the order limit.
  OrderCheck out = Order(-140, 140);
  out.minute_of_day = 17 * 60;
  out.price = 80;
  EXPECT_EQ(RuleOf(gate, out), "");
  // A flip is not a reduction.
  EXPECT_EQ(RuleOf(gate, Order(-90, 50)), "");
  EXPECT_NE(RuleOf(gate, Order(-200, 50)), "");
}

TEST(Risk, TheRateLimitCountsTheLastSixtySecondsOfFeedTime) {
  auto limits = ParseRiskLimits("max_orders_per_minute = 2\n", "r.toml");
  ASSERT_TRUE(limits.ok());
  RiskGate gate(*limits);
  OrderCheck o = Order(1);
  EXPECT_EQ(RuleOf(gate, o), "");
  o.time += 10;
  EXPECT_EQ(RuleOf(gate, o), "");
  o.time += 10;
  EXPECT_EQ(RuleOf(gate, o), "max_orders_per_minute");
  OrderCheck reduce = Order(-1, 2);  // a reduction passes, and counts
  reduce.time = o.time;
  EXPECT_EQ(RuleOf(gate, reduce), "");
  o.time += 41;  // the first order is now more than 60 s old; two remain in the window
  EXPECT_EQ(RuleOf(gate, o), "max_orders_per_minute");
  o.time += 20;  // both are now more than 60 s old
  EXPECT_EQ(RuleOf(gate, o), "");
}

TEST(Risk, BadFilesNameTheLineTheKeyAndTheFix) {
  auto bad = ParseRiskLimits("max_order_shares = 10\nmax_postion_value = 5\n", "r.toml");
  ASSERT_TRUE(IsError(
      bad, Status::Code::kInvalidArgument,
      "r.toml:2: 'max_postion_value': unknown risk limit; did you mean 'max_position_value'?"));
  bad = ParseRiskLimits("max_daily_loss = -5\n", "r.toml");
  ASSERT_TRUE(IsError(bad, Status::Code::kInvalidArgument,
                      "r.toml:1: 'max_daily_loss': expected a finite number"));
  bad = ParseRiskLimits("flatten_before_close = \"25:00\"\n", "r.toml");
  EXPECT_TRUE(IsError(bad, Status::Code::kInvalidArgument,
                      "r.toml:1: 'flatten_before_close': expected \"HH:MM\""));
  bad = ParseRiskLimits("max_orders_per_minute = 0\n", "r.toml");
  EXPECT_TRUE(IsError(bad, Status::Code::kInvalidArgument,
                      "r.toml:1: 'max_orders_per_minute': expected a whole number of orders"));
  bad = ParseRiskLimits("max_order_shares = [1\n", "r.toml");
  ASSERT_TRUE(IsError(bad, Status::Code::kInvalidArgument, "r.toml:1:"));
  // A stale-feed limit of 0 s (or more than a day) would refuse every order: refused with
  // its range.
  for (const char* v : {"0", "86401"}) {
    bad = ParseRiskLimits(std::string("stale_feed_seconds = ") + v + "\n", "r.toml");
    ASSERT_TRUE(
        IsError(bad, Status::Code::kInvalidArgument,
                "r.toml:1: 'stale_feed_seconds': expected a number of seconds > 0 and <= 86400"))
        << v;
  }
  EXPECT_TRUE(ParseRiskLimits("stale_feed_seconds = 0.5\n", "r.toml").ok());
  const auto none = ParseRiskLimits("# no limits\n", "r.toml");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->any);
}

}  // namespace
}  // namespace rlt::paper
