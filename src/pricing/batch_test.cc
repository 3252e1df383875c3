// Tests of the vectorised fast path: its exp/log/normal tail against libm, and the batch
// kernels against the scalar reference (1e-12*max(1,|v|) in double, 1e-6*max(1,|v|) in
// float), threads, bad input, and the American batch.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "core/status_test_util.h"
#include "core/thread_pool.h"
#include "pricing/fast_math.h"
#include "pricing/pricing.h"
#include "pricing/test_util.h"

namespace rlt::pricing {
namespace {

using testing_util::RandomOption;

TEST(FastMath, ExpIsWithinFourUlpOfLibm) {
  double worst = 0;
  for (double x = -708; x <= 709; x += 0.00137) {
    const double ref = std::exp(x);
    worst = std::max(worst, std::abs(internal::FastExp(x) - ref) / ref);
  }
  EXPECT_LT(worst, 4 * std::numeric_limits<double>::epsilon());
  EXPECT_EQ(internal::FastExp(-800), 0.0);
  EXPECT_EQ(internal::FastExp(0), 1.0);
}

TEST(FastMath, LogIsWithinFourUlpOfLibm) {
  double worst = 0;
  for (double e = -300; e <= 300; e += 0.0123) {
    const double x = std::pow(10.0, e);
    const double ref = std::log(x);
    worst = std::max(worst, std::abs(internal::FastLog(x) - ref) / std::max(1.0, std::abs(ref)));
  }
  for (double x = 0.5; x < 2; x += 1e-6) {  // near 1, where ln x is small: relative error
    const double ref = std::log(x);
    if (ref != 0) worst = std::max(worst, std::abs(internal::FastLog(x) - ref) / std::abs(ref));
  }
  EXPECT_LT(worst, 4 * std::numeric_limits<double>::epsilon());
}

TEST(FastMath, NormalTailAndDensityMatchErfc) {
  double worst_abs = 0, worst_rel = 0;
  for (double x = -40; x <= 40; x += 0.000731) {
    const internal::NormalTailPdf n = internal::FastNormalTail(x);
    const double tail = 0.5 * std::erfc(std::abs(x) * M_SQRT1_2);
    worst_abs = std::max(worst_abs, std::abs(n.tail - tail));
    if (tail > 1e-300) worst_rel = std::max(worst_rel, std::abs(n.tail - tail) / tail);
    EXPECT_NEAR(n.pdf, NormalPdf(x), 4e-16 * NormalPdf(x) + 1e-300);
  }
  EXPECT_LT(worst_abs, 4e-16);  // ~4 ulp of 0.5
  // Relative accuracy limited by exp(-x^2/2) with x^2 rounded: ~x^2/2 ulp at the far tail
  // (x = 40: 800 ulp = 1.8e-13).
  EXPECT_LT(worst_rel, 4e-13);
}

struct Batch {
  std::vector<OptionType> type;
  std::vector<double> spot, strike, rate, dividend, vol, time;
  void Add(const OptionInputs& in) {
    type.push_back(in.type);
    spot.push_back(in.spot);
    strike.push_back(in.strike);
    rate.push_back(in.rate);
    dividend.push_back(in.dividend);
    vol.push_back(in.vol);
    time.push_back(in.time);
  }
  OptionBatch<double> View() const {
    return {type.size(), type.data(),     spot.data(), strike.data(),
            rate.data(), dividend.data(), vol.data(),  time.data()};
  }
};

template <typename T>
struct Outputs {
  explicit Outputs(size_t n) : v(8, std::vector<T>(n, T(-7))) {}
  GreeksBatch<T> View() {
    return {v[0].data(), v[1].data(), v[2].data(), v[3].data(),
            v[4].data(), v[5].data(), v[6].data(), v[7].data()};
  }
  std::vector<std::vector<T>> v;  // price, delta, gamma, vega, theta, rho, div rho, elasticity
};

// Random realistic options plus the edges: expired, at the strike, deep in and out of the
// money, tiny and huge vols, negative rates, the domain's corners.
Batch MakeBatch(int n, uint64_t seed, bool edges = true) {
  Rng rng(seed);
  Batch b;
  for (int i = 0; i < n; ++i) b.Add(RandomOption(rng));
  if (!edges) return b;
  for (double t : {0.0, -1.0, 1e-11, 1e-9, 1e-4}) {
    for (double k : {50.0, 100.0, 150.0}) {
      b.Add({OptionType::kCall, 100, k, 0.05, 0.01, 0.3, t});
      b.Add({OptionType::kPut, 100, k, 0.05, 0.01, 0.3, t});
    }
  }
  // Near (not at) the domain's ends, so that float rounding keeps them inside it.
  for (double v : {2e-6, 1e-3, 5.0, 99.0}) {
    for (double k : {2e-8, 90.0, 100.0, 9e11}) {
      b.Add({OptionType::kCall, 100, k, -0.01, 0.03, v, 0.5});
      b.Add({OptionType::kPut, 100, k, 4.9, -4.9, v, 99});
    }
  }
  return b;
}

TEST(Batch, DoubleFastPathMatchesTheScalarReferenceWithin1e12) {
  const Batch b = MakeBatch(20000, 31);
  const size_t n = b.type.size();
  Outputs<double> fast(n), ref(n);
  ASSERT_TRUE(BsmGreeksBatch(b.View(), fast.View()).ok());
  ASSERT_TRUE(BsmGreeksBatchReference(b.View(), ref.View()).ok());
  std::vector<double> price_only(n);
  ASSERT_TRUE(BsmPriceBatch(b.View(), price_only.data()).ok());
  const char* names[] = {"price", "delta", "gamma", "vega", "theta", "rho", "div_rho", "elast"};
  for (int k = 0; k < 8; ++k) {
    for (size_t i = 0; i < n; ++i) {
      const double r = ref.v[k][i], f = fast.v[k][i];
      ASSERT_TRUE(std::isfinite(f)) << names[k] << " " << i;
      // Elasticity divides by the price, which for far out-of-the-money options is a small
      // difference of two larger terms, S e^{-qT} N(phi d1) = |delta| S and
      // K e^{-rT} N(phi d2) = |rho| / T. Its tolerance is scaled by that condition number.
      const double cond =
          k == 7 && ref.v[0][i] > 0
              ? std::max(1.0, (std::abs(ref.v[1][i]) * b.spot[i] +
                               std::abs(ref.v[5][i]) / std::max(b.time[i], 1e-300)) /
                                  ref.v[0][i])
              : 1.0;
      ASSERT_NEAR(f, r, 1e-12 * std::max(1.0, std::abs(r)) * cond)
          << names[k] << " option " << i << " S=" << b.spot[i] << " K=" << b.strike[i]
          << " r=" << b.rate[i] << " q=" << b.dividend[i] << " vol=" << b.vol[i]
          << " T=" << b.time[i];
    }
  }
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(price_only[i], fast.v[0][i]) << i;
}

TEST(Batch, FloatFastPathMatchesTheScalarReferenceWithin1e6) {
  const Batch b = MakeBatch(20000, 32);
  const size_t n = b.type.size();
  // Float inputs; the reference prices the same (float-rounded) numbers in double.
  std::vector<float> s(n), k(n), r(n), q(n), v(n), t(n);
  Batch rounded;
  for (size_t i = 0; i < n; ++i) {
    s[i] = static_cast<float>(b.spot[i]);
    k[i] = static_cast<float>(b.strike[i]);
    r[i] = static_cast<float>(b.rate[i]);
    q[i] = static_cast<float>(b.dividend[i]);
    v[i] = static_cast<float>(b.vol[i]);
    t[i] = static_cast<float>(b.time[i]);
    rounded.Add({b.type[i], s[i], k[i], r[i], q[i], v[i], t[i]});
  }
  const OptionBatch<float> in{n,        b.type.data(), s.data(), k.data(),
                              r.data(), q.data(),      v.data(), t.data()};
  Outputs<float> fast(n);
  Outputs<double> ref(n);
  ASSERT_TRUE(BsmGreeksBatch(in, fast.View()).ok());
  ASSERT_TRUE(BsmGreeksBatchReference(rounded.View(), ref.View()).ok());
  std::vector<float> price_only(n);
  ASSERT_TRUE(BsmPriceBatch(in, price_only.data()).ok());
  for (int c = 0; c < 8; ++c) {
    for (size_t i = 0; i < n; ++i) {
      const double want = ref.v[c][i];
      if (std::abs(want) > std::numeric_limits<float>::max()) continue;  // not representable
      ASSERT_NEAR(fast.v[c][i], want, 1e-6 * std::max(1.0, std::abs(want))) << c << " " << i;
    }
  }
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(price_only[i], fast.v[0][i]) << i;
}

TEST(Batch, ThreadedResultsAreBitIdenticalToOneThread) {
  const Batch b = MakeBatch(10007, 33);
  const size_t n = b.type.size();
  Outputs<double> one(n), two(n);
  WorkerPool pool(2);
  ASSERT_TRUE(BsmGreeksBatch(b.View(), one.View()).ok());
  ASSERT_TRUE(BsmGreeksBatch(b.View(), two.View(), &pool).ok());
  EXPECT_EQ(one.v, two.v);
}

TEST(Batch, BadInputNamesTheOptionAndWritesNothing) {
  Batch b = MakeBatch(100, 34);
  b.vol[57] = -0.1;
  const size_t n = b.type.size();
  Outputs<double> out(n);
  Status st = BsmGreeksBatch(b.View(), out.View());
  ASSERT_TRUE(IsError(st, Status::Code::kInvalidArgument, "option 57 of"));
  EXPECT_NE(st.message().find("vol = -0.1"), std::string::npos) << st.message();
  for (const auto& col : out.v) {
    for (double x : col) ASSERT_EQ(x, -7.0);
  }
  b.vol[57] = 0.2;
  b.spot[3] = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> price(n, -7);
  st = BsmPriceBatch(b.View(), price.data());
  EXPECT_NE(st.message().find("option 3 of"), std::string::npos) << st.message();
  EXPECT_EQ(price[0], -7.0);
  b.spot[3] = 100;
  EXPECT_TRUE(BsmPriceBatch(b.View(), price.data()).ok());
}

TEST(Batch, AmericanBatchEqualsTheScalarModels) {
  const Batch b = MakeBatch(50, 35, /*edges=*/false);
  const size_t n = b.type.size();
  WorkerPool pool(2);
  for (Model m :
       {Model::kBsm, Model::kBinomial, Model::kBaroneAdesiWhaley, Model::kBjerksundStensland}) {
    ModelOptions o;
    o.binomial_steps = 200;
    std::vector<double> price(n);
    Status st = PriceBatch(m, b.View(), price.data(), o, &pool);
    ASSERT_TRUE(st.ok()) << ModelName(m) << " " << st.ToString();
    for (size_t i = 0; i < n; ++i) {
      const OptionInputs in{b.type[i],     b.spot[i], b.strike[i], b.rate[i],
                            b.dividend[i], b.vol[i],  b.time[i]};
      Result<double> want = Price(m, in, o);
      if (m == Model::kBsm) {
        EXPECT_NEAR(price[i], want.value(), 1e-12 * std::max(1.0, want.value()));
      } else {
        EXPECT_EQ(price[i], want.value()) << ModelName(m) << " " << i;
      }
    }
  }
}

TEST(Batch, EmptyBatchIsFine) {
  OptionBatch<double> empty;
  EXPECT_TRUE(BsmPriceBatch(empty, nullptr).ok());
  EXPECT_TRUE(BsmGreeksBatch(empty, GreeksBatch<double>{}).ok());
}

}  // namespace
}  // namespace rlt::pricing
