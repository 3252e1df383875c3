// rltrade pricing (internal): branch-free exp, log and normal CDF that GCC vectorises.
//
// Why not libm: std::exp/log/erfc are calls the compiler cannot vectorise (glibc's libmvec
// variants need -ffast-math, which would also remove our NaN checks). Why not SLEEF: it is
// one more system dependency for three functions, and its vector entry points need
// intrinsics types in the kernel; these inline functions keep the kernel a plain loop
// that -march=native turns into AVX-512 (or AVX2) code, and the same source is the
// scalar fallback. Every function is a straight line of arithmetic and selects.
//
// Accuracy (pricing_test checks against libm on dense grids): FastExp and FastLog within
// a few ulp; FastNormalTail within ~1e-16 absolute. Domains: FastExp any x (underflows to
// 0 below -708, saturates at exp(709)); FastLog finite x > 0 in the normal range.
#ifndef RLT_PRICING_FAST_MATH_H_
#define RLT_PRICING_FAST_MATH_H_

#include <bit>
#include <cstdint>

namespace rlt::pricing::internal {

// e^x: x = k ln2 + r with |r| <= ln2/2 (Cody-Waite split of ln2), e^r by its Taylor
// polynomial to degree 13 (truncation < 1e-17 relative), 2^k built in the exponent bits.
[[gnu::always_inline]] inline double FastExp(double x) {
  constexpr double kLog2e = 1.4426950408889634074;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // ln2 with 21 trailing zero bits
  constexpr double kLn2Lo = 1.90821492927058770002e-10;  // ln2 - kLn2Hi
  constexpr double kRound = 6755399441055744.0;          // 1.5 * 2^52: rounds to integer
  const double xc = x < -708.0 ? -708.0 : (x > 709.0 ? 709.0 : x);
  const double k = (xc * kLog2e + kRound) - kRound;
  const double r = (xc - k * kLn2Hi) - k * kLn2Lo;
  // Horner on 1/n! coefficients.
  double p = 1.0 / 6227020800.0;  // 1/13!
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const int64_t biased = static_cast<int64_t>(k) + 1023;
  const double scale = std::bit_cast<double>(static_cast<uint64_t>(biased) << 52);
  return x < -708.0 ? 0.0 : p * scale;
}

// ln x for finite x > 0 (normal): x = m 2^e with m in [sqrt(1/2), sqrt(2)),
// ln m = 2 atanh(f), f = (m - 1)/(m + 1), |f| <= 0.172, by the atanh series
// 2 f (1 + f^2/3 + f^4/5 + ...) to f^23 (truncation < 1e-18 relative).
[[gnu::always_inline]] inline double FastLog(double x) {
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kSqrt2 = 1.41421356237309504880;
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  const int64_t raw_exponent = static_cast<int64_t>(bits >> 52) - 1023;
  const double m0 =
      std::bit_cast<double>((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);  // [1,2)
  const bool high = m0 > kSqrt2;
  const double m = high ? m0 * 0.5 : m0;
  const double e = static_cast<double>(raw_exponent) + (high ? 1.0 : 0.0);
  const double f = (m - 1.0) / (m + 1.0);
  const double s = f * f;
  double p = 1.0 / 23.0;
  p = p * s + 1.0 / 21.0;
  p = p * s + 1.0 / 19.0;
  p = p * s + 1.0 / 17.0;
  p = p * s + 1.0 / 15.0;
  p = p * s + 1.0 / 13.0;
  p = p * s + 1.0 / 11.0;
  p = p * s + 1.0 / 9.0;
  p = p * s + 1.0 / 7.0;
  p = p * s + 1.0 / 5.0;
  p = p * s + 1.0 / 3.0;
  const double log_m = 2.0 * f + 2.0 * f * s * p;
  return e * kLn2Hi + (log_m + e * kLn2Lo);
}

// erfcx(z) = exp(z^2) erfc(z) for z >= 0 as a degree-23 polynomial in
// t = (z - 3.75)/(z + 3.75), which maps [0, inf) onto [-1, 1) (Schonfelder 1978's
// variable). Coefficients: Chebyshev interpolation of erfcx(z(t)) at 24 nodes computed
// here with mpmath at 50 digits (mpmath.chebyfit; interpolation error 7.3e-18), written
// highest degree first.
[[gnu::always_inline]] inline double FastErfcx(double z) {
  constexpr double kC[24] = {
      9.16108606728347429946e-11, 3.32362165319529392994e-10, -1.09867534353551413064e-9,
      -4.06360546127115657634e-9, 8.84969973414794056545e-9,  3.02595650884446866878e-8,
      -7.23171621065688891303e-8, -1.82248627283652342186e-7, 6.59262336906858352775e-7,
      7.4782507600581904576e-7,   -6.18334936549319430401e-6, 3.58401764958771358632e-6,
      4.78987570403489157171e-5,  -1.52462748839284431379e-4, -2.5535326573753876202e-5,
      1.80296243158014518525e-3,  -8.22062115460687821032e-3, 2.41432239708994478453e-2,
      -5.48023266949533560138e-2, 1.02604312032281370776e-1,  -1.63571895523924436688e-1,
      2.26008066916619678345e-1,  -2.73421931495426480713e-1, 1.45589721275038545391e-1};
  const double t = (z - 3.75) / (z + 3.75);
  double p = kC[0];
#pragma GCC unroll 24
  for (int i = 1; i < 24; ++i) p = p * t + kC[i];
  return p;
}

// Normal tail and density sharing one exponential: for x in [-40, 40],
// tail = N(-|x|) = erfc(|x|/sqrt2)/2 and pdf = exp(-x^2/2)/sqrt(2 pi).
struct NormalTailPdf {
  double tail;
  double pdf;
};
[[gnu::always_inline]] inline NormalTailPdf FastNormalTail(double x) {
  constexpr double kInvSqrt2 = 0.70710678118654752440;
  constexpr double kInvSqrt2Pi = 0.39894228040143267794;
  const double e = FastExp(-0.5 * x * x);
  const double z = (x < 0 ? -x : x) * kInvSqrt2;
  return {0.5 * e * FastErfcx(z), e * kInvSqrt2Pi};
}

// N(x) from the tail: N(x) = tail for x < 0, 1 - tail otherwise.
inline double CdfFromTail(double x, double tail) { return x < 0 ? tail : 1.0 - tail; }

}  // namespace rlt::pricing::internal

#endif  // RLT_PRICING_FAST_MATH_H_
