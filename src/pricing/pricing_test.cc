// Tests of the scalar BSM reference and implied volatility: the published oracle values
// (QuantLib's test suite / Haug), finite differences, put-call parity, round trips, and
// every kind of bad input.
#include "pricing/pricing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "core/rng.h"
#include "core/status_test_util.h"
#include "pricing/test_util.h"

namespace rlt::pricing {
namespace {

using testing_util::InputsOf;
using testing_util::Num;
using testing_util::RandomOption;
using testing_util::ReadOracle;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Bsm, PricesEveryEuropeanOracleRowWithin1e4) {
  const auto rows = ReadOracle("bsm_european.csv");
  if (rows.empty()) GTEST_SKIP() << "no ../shared/oracles";
  ASSERT_EQ(rows.size(), 7u);
  for (const auto& row : rows) {
    const OptionInputs in = InputsOf(row);
    Result<double> v = BsmPrice(in);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_NEAR(*v, Num(row, "value"), 1e-4) << row.at("type") << " K=" << in.strike;
    Result<Greeks> g = BsmGreeks(in);
    ASSERT_TRUE(g.ok());
    EXPECT_NEAR(g->price, Num(row, "value"), 1e-4);
  }
}

TEST(Bsm, MatchesEveryGreekOracleRowWithin1e4) {
  const auto rows = ReadOracle("bsm_greeks.csv");
  if (rows.empty()) GTEST_SKIP() << "no ../shared/oracles";
  ASSERT_EQ(rows.size(), 11u);
  const std::map<std::string, std::function<double(const Greeks&)>> pick = {
      {"delta", [](const Greeks& g) { return g.delta; }},
      {"gamma", [](const Greeks& g) { return g.gamma; }},
      {"vega", [](const Greeks& g) { return g.vega; }},
      {"theta", [](const Greeks& g) { return g.theta; }},
      {"theta_per_day", [](const Greeks& g) { return g.theta_per_day; }},
      {"rho", [](const Greeks& g) { return g.rho; }},
      {"dividend_rho", [](const Greeks& g) { return g.dividend_rho; }},
      {"elasticity", [](const Greeks& g) { return g.elasticity; }}};
  for (const auto& row : rows) {
    const std::string greek = row.at("greek");
    ASSERT_TRUE(pick.count(greek)) << "unknown greek " << greek;
    Result<Greeks> g = BsmGreeks(InputsOf(row));
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_NEAR(pick.at(greek)(*g), Num(row, "value"), 1e-4) << greek << " " << row.at("type");
  }
}

// Central differences of the price (an independent route to every Greek).
TEST(Bsm, GreeksMatchFiniteDifferencesOfThePrice) {
  Rng rng(7);
  for (int i = 0; i < 300; ++i) {
    const OptionInputs in = RandomOption(rng);
    auto price_with = [&](double OptionInputs::*field, double h) {
      OptionInputs b = in;
      b.*field += h;
      return BsmPrice(b).value();
    };
    auto diff = [&](double OptionInputs::*field, double h) {
      return (price_with(field, h) - price_with(field, -h)) / (2 * h);
    };
    const Greeks g = BsmGreeks(in).value();
    const double hs = 1e-5 * in.spot;
    const double scale = std::max(1.0, in.spot);
    EXPECT_NEAR(g.delta, diff(&OptionInputs::spot, hs), 1e-7) << i;
    auto delta_at = [&](double h) {
      OptionInputs b = in;
      b.spot += h;
      return BsmGreeks(b).value().delta;
    };
    EXPECT_NEAR(g.gamma, (delta_at(hs) - delta_at(-hs)) / (2 * hs), 1e-7 + 1e-5 * g.gamma) << i;
    EXPECT_NEAR(g.vega, diff(&OptionInputs::vol, 1e-5), 1e-6 * scale) << i;
    EXPECT_NEAR(g.rho, diff(&OptionInputs::rate, 1e-5), 1e-6 * scale) << i;
    EXPECT_NEAR(g.dividend_rho, diff(&OptionInputs::dividend, 1e-5), 1e-6 * scale) << i;
    const double ht = std::min(1e-5, 0.5 * in.time);
    EXPECT_NEAR(g.theta, -diff(&OptionInputs::time, ht), 1e-4 * scale) << i;
    EXPECT_DOUBLE_EQ(g.theta_per_day, g.theta / 365);
    EXPECT_NEAR(g.elasticity * g.price, g.delta * in.spot, 1e-9 * scale) << i;
  }
}

TEST(Bsm, SatisfiesPutCallParity) {
  Rng rng(11);
  for (int i = 0; i < 2000; ++i) {
    OptionInputs call = RandomOption(rng);
    call.type = OptionType::kCall;
    OptionInputs put = call;
    put.type = OptionType::kPut;
    const double c = BsmPrice(call).value(), p = BsmPrice(put).value();
    const double forward_gap = call.spot * std::exp(-call.dividend * call.time) -
                               call.strike * std::exp(-call.rate * call.time);
    EXPECT_NEAR(c - p, forward_gap, 1e-11 * std::max(call.spot, call.strike)) << i;
    const Greeks gc = BsmGreeks(call).value(), gp = BsmGreeks(put).value();
    EXPECT_NEAR(gc.delta - gp.delta, std::exp(-call.dividend * call.time), 1e-12) << i;
    EXPECT_NEAR(gc.gamma, gp.gamma, 1e-12 * std::max(1.0, gc.gamma));
    EXPECT_NEAR(gc.vega, gp.vega, 1e-12 * std::max(1.0, gc.vega));
  }
}

TEST(Bsm, PriceStaysWithinNoArbitrageBounds) {
  Rng rng(12);
  for (int i = 0; i < 2000; ++i) {
    const OptionInputs in = RandomOption(rng);
    const double v = BsmPrice(in).value();
    const double s_disc = in.spot * std::exp(-in.dividend * in.time);
    const double k_disc = in.strike * std::exp(-in.rate * in.time);
    const double phi = in.type == OptionType::kCall ? 1 : -1;
    EXPECT_GE(v, std::max(phi * (s_disc - k_disc), 0.0) - 1e-12 * in.spot);
    EXPECT_LE(v, in.type == OptionType::kCall ? s_disc : k_disc);
  }
}

TEST(ImpliedVol, RoundTripsBsmPrices) {
  Rng rng(13);
  int solved = 0;
  for (int i = 0; i < 2000; ++i) {
    OptionInputs in = RandomOption(rng);
    in.vol = rng.Uniform(0.01, 3.0);
    const Greeks g = BsmGreeks(in).value();
    Result<double> iv = ImpliedVol(Model::kBsm, in, g.price);
    if (!iv.ok()) {
      // Only prices indistinguishable from a bound may fail, and then with OutOfRange.
      EXPECT_EQ(iv.status().code(), Status::Code::kOutOfRange) << iv.status().ToString();
      EXPECT_LT(g.vega * in.vol, 1e-9 * std::max(1.0, g.price)) << i << " " << in.vol;
      continue;
    }
    ++solved;
    OptionInputs back = in;
    back.vol = *iv;
    EXPECT_NEAR(BsmPrice(back).value(), g.price, 1e-11 * std::max(1.0, g.price)) << i;
    // The vol is as exact as the price tolerance allows: dsigma = dprice / vega.
    if (g.vega > 1e-3) {
      EXPECT_NEAR(*iv, in.vol, 2e-12 * std::max(1.0, g.price) / g.vega + 1e-12) << i;
    }
  }
  EXPECT_GT(solved, 1900);
}

TEST(ImpliedVol, RejectsPricesOutsideTheNoArbitrageBounds) {
  OptionInputs in;  // S = K = 100, r = q = 0, T = 1
  in.rate = 0.05;
  in.spot = 120;
  const double lower = 120 - 100 * std::exp(-0.05);
  for (double p : {lower - 1, lower, 0.0, -1.0, 120.0, 150.0}) {
    Result<double> iv = ImpliedVol(Model::kBsm, in, p);
    ASSERT_TRUE(IsError(iv, Status::Code::kOutOfRange, "no-arbitrage")) << p;
  }
  EXPECT_EQ(ImpliedVol(Model::kBsm, in, kNaN).status().code(), Status::Code::kInvalidArgument);
  in.time = 0;
  EXPECT_EQ(ImpliedVol(Model::kBsm, in, 25).status().code(), Status::Code::kOutOfRange);
}

TEST(ImpliedVol, TerminatesOnEveryPriceInsideTheBounds) {
  // A sweep across the whole open interval, including prices that need vols far above
  // max_vol: every call returns (a vol or OutOfRange) - none hangs or returns NaN.
  OptionInputs in;
  in.time = 0.1;
  for (int i = 1; i < 1000; ++i) {
    const double p = 100.0 * i / 1000.0;
    Result<double> iv = ImpliedVol(Model::kBsm, in, p);
    if (iv.ok()) {
      EXPECT_TRUE(std::isfinite(*iv));
    } else {
      EXPECT_EQ(iv.status().code(), Status::Code::kOutOfRange) << p;
    }
  }
}

// --- Bad input: a clear error or the documented limit, never NaN, never a crash. ---

TEST(BadInput, ExpiredOptionIsWorthItsIntrinsicValue) {
  for (double t : {0.0, -1.0, 1e-12, -std::numeric_limits<double>::infinity()}) {
    OptionInputs in;
    in.spot = 110;
    in.strike = 100;
    in.time = t;
    in.rate = 0.05;
    EXPECT_EQ(BsmPrice(in).value(), 10.0) << t;
    const Greeks g = BsmGreeks(in).value();
    EXPECT_EQ(g.delta, 1.0);
    EXPECT_EQ(g.gamma, 0.0);
    EXPECT_EQ(g.vega, 0.0);
    EXPECT_EQ(g.theta, 0.0);
    EXPECT_EQ(g.rho, 0.0);
    EXPECT_DOUBLE_EQ(g.elasticity, 11.0);
    in.type = OptionType::kPut;
    EXPECT_EQ(BsmPrice(in).value(), 0.0);
    EXPECT_EQ(BsmGreeks(in).value().delta, 0.0);
    EXPECT_EQ(BsmGreeks(in).value().elasticity, 0.0);
    in.spot = 100;
    EXPECT_EQ(BsmGreeks(in).value().delta, -0.5);
    for (Model m : {Model::kBinomial, Model::kBaroneAdesiWhaley, Model::kBjerksundStensland}) {
      EXPECT_EQ(Price(m, in).value(), 0.0);
      in.spot = 90;
      EXPECT_EQ(Price(m, in).value(), 10.0);
      in.spot = 100;
    }
  }
}

TEST(BadInput, NonPositiveOrNaNInputsAreInvalidArgumentsNamingTheField) {
  struct Case {
    double OptionInputs::*field;
    double value;
    const char* name;
  };
  const Case cases[] = {
      {&OptionInputs::vol, 0.0, "vol"},
      {&OptionInputs::vol, -0.2, "vol"},
      {&OptionInputs::vol, kNaN, "vol"},
      {&OptionInputs::spot, 0.0, "spot"},
      {&OptionInputs::spot, -5.0, "spot"},
      {&OptionInputs::spot, kNaN, "spot"},
      {&OptionInputs::strike, 0.0, "strike"},
      {&OptionInputs::strike, -1.0, "strike"},
      {&OptionInputs::strike, kNaN, "strike"},
      {&OptionInputs::rate, kNaN, "rate"},
      {&OptionInputs::dividend, kNaN, "dividend"},
      {&OptionInputs::time, kNaN, "time"},
      {&OptionInputs::rate, INFINITY, "rate"},
      {&OptionInputs::time, INFINITY, "time"},
  };
  for (const Case& c : cases) {
    OptionInputs in;
    in.*c.field = c.value;
    for (Model m :
         {Model::kBsm, Model::kBinomial, Model::kBaroneAdesiWhaley, Model::kBjerksundStensland}) {
      Result<double> v = Price(m, in);
      ASSERT_TRUE(IsError(v, Status::Code::kInvalidArgument, c.name))
          << c.name << "=" << c.value << " " << ModelName(m);
      EXPECT_EQ(v.status().message().rfind(c.name, 0), 0u) << v.status().message();
      EXPECT_TRUE(IsError(ModelGreeks(m, in), Status::Code::kInvalidArgument, c.name));
    }
    if (c.field != &OptionInputs::vol) {
      EXPECT_TRUE(IsError(ImpliedVol(Model::kBsm, in, 10), Status::Code::kInvalidArgument, c.name))
          << c.name;
    }
  }
  OptionInputs bad_type;
  bad_type.type = static_cast<OptionType>(3);
  EXPECT_TRUE(IsError(BsmPrice(bad_type), Status::Code::kInvalidArgument, "type = 3"));
}

TEST(BadInput, EveryOutputIsFiniteAtTheCornersOfTheDomain) {
  const double spots[] = {1e-8, 1, 1e12}, vols[] = {1e-6, 0.3, 100};
  const double rates[] = {-5, 0, 5}, times[] = {2e-10, 1e-3, 100};
  int checked = 0;
  for (OptionType type : {OptionType::kCall, OptionType::kPut}) {
    for (double s : spots) {
      for (double k : spots) {
        for (double v : vols) {
          for (double r : rates) {
            for (double q : rates) {
              for (double t : times) {
                const OptionInputs in{type, s, k, r, q, v, t};
                const Greeks g = BsmGreeks(in).value();
                for (double x : {g.price, g.delta, g.gamma, g.vega, g.theta, g.rho, g.dividend_rho,
                                 g.elasticity}) {
                  ASSERT_TRUE(std::isfinite(x))
                      << s << " " << k << " " << v << " " << r << " " << q << " " << t;
                }
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 3 * 3 * 3 * 3 * 3 * 3);
}

TEST(Names, ParseAndPrintModelsAndTypes) {
  for (const char* name : {"bsm", "binomial", "baw", "bjerksund"}) {
    EXPECT_STREQ(ModelName(ParseModel(name).value()), name);
  }
  EXPECT_TRUE(IsError(ParseModel("black"), Status::Code::kInvalidArgument, "model 'black'"));
  EXPECT_EQ(ParseOptionType("put").value(), OptionType::kPut);
  EXPECT_TRUE(IsError(ParseOptionType("straddle"), Status::Code::kInvalidArgument,
                      "option type 'straddle'"));
}

}  // namespace
}  // namespace rlt::pricing
