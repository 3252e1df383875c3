// rltrade pricing: European and American equity options under Black-Scholes-Merton.
//
// What this is:
//  - Black-Scholes-Merton (BSM) with a continuous dividend yield q: price and Greeks.
//  - Implied volatility that always terminates (bracketed Newton, bisection fallback).
//  - American options: Cox-Ross-Rubinstein binomial tree, Barone-Adesi-Whaley (1987) and
//    Bjerksund-Stensland (1993).
//  - Batched versions over arrays (double and float) for pricing whole option chains for
//    all days at once; the BSM batch is a vectorised fast path checked against the scalar
//    reference (pricing_test: 1e-12*max(1,|v|) in double, 1e-6*max(1,|v|) in float).
// What this is not: a market-data layer (market/ builds chains), a volatility surface, or
// a model of discrete dividends. No LibTorch; depends on rlt_core only.
//
// Conventions (those of the oracles in ../shared/oracles, Haug 2007):
//  - Rates r and yields q are continuously compounded per year; T is in years; sigma is
//    per sqrt(year). Cost of carry b = r - q.
//  - vega and rho (and dividend rho) are per 1.00 change of sigma, r (and q) - not per 1%.
//  - theta is dV/dt per year (calendar time passing, i.e. -dV/dT); theta_per_day = theta/365.
//  - elasticity (lambda) = delta * S / V; 0 where V is 0.
//
// Input domain and limits (ValidateInputs; every function here checks it and returns an
// InvalidArgument Status naming the field, its value and the allowed range, never NaN):
//  - spot S and strike K: finite, in [1e-8, 1e12];
//  - vol sigma: finite, in [1e-6, 100] (sigma <= 0 is an error, not a limit);
//  - rate r and dividend yield q: finite, |r|, |q| <= 5 (500% per year);
//  - time T: finite, T <= 100 years. T <= kExpiredTime (including T <= 0) is the documented
//    limit "at expiry": the value is intrinsic, max(S-K, 0) for a call and max(K-S, 0) for a
//    put, undiscounted; delta is the payoff's slope (+-1 in the money, 0 out of it, +-0.5
//    at S == K); gamma, vega, theta, rho and dividend rho are 0.
// Within this domain every output is finite.
//
// Thread safety: all functions are pure and may be called concurrently. The batch
// functions write only the output arrays they are given.
#ifndef RLT_PRICING_PRICING_H_
#define RLT_PRICING_PRICING_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace rlt {
class WorkerPool;
}

namespace rlt::pricing {

// The sign phi of the payoff max(phi*(S-K), 0) is the enum's value.
enum class OptionType : int8_t { kCall = 1, kPut = -1 };

// "call" or "put".
const char* OptionTypeName(OptionType type);
Result<OptionType> ParseOptionType(std::string_view name);

// The domain above as constants: S and K in [kMinPrice, kMaxPrice], sigma in [kMinVol,
// kMaxVol], |r| and |q| <= kMaxRate, T <= kMaxTime.
inline constexpr double kMinPrice = 1e-8;
inline constexpr double kMaxPrice = 1e12;
inline constexpr double kMinVol = 1e-6;
inline constexpr double kMaxVol = 100;
inline constexpr double kMaxRate = 5;
inline constexpr double kMaxTime = 100;
// The binomial tree's steps: 1..kMaxBinomialSteps.
inline constexpr int kMaxBinomialSteps = 100000;

// At or below this time to expiry (years, ~3 ms) an option is treated as expired.
inline constexpr double kExpiredTime = 1e-10;

// One option and its market.
struct OptionInputs {
  OptionType type = OptionType::kCall;
  double spot = 100;    // S, price of the underlying
  double strike = 100;  // K
  double rate = 0;      // r, continuously compounded risk-free rate per year
  double dividend = 0;  // q, continuous dividend yield per year
  double vol = 0.2;     // sigma, per sqrt(year); ignored by ImpliedVol
  double time = 1;      // T, years to expiry (<= kExpiredTime: expired, intrinsic value)
};

// Price and sensitivities (see the conventions above).
struct Greeks {
  double price = 0;
  double delta = 0;          // dV/dS
  double gamma = 0;          // d2V/dS2
  double vega = 0;           // dV/dsigma, per 1.00
  double theta = 0;          // -dV/dT, per year
  double theta_per_day = 0;  // theta / 365
  double rho = 0;            // dV/dr, per 1.00
  double dividend_rho = 0;   // dV/dq, per 1.00
  double elasticity = 0;     // delta * S / V (0 where V == 0)
};

// OK when `in` lies in the domain above; else InvalidArgument naming the field, e.g.
// "vol = -0.2: expected a volatility in [1e-06, 100] (per sqrt(year), 0.2 = 20%)".
// `check_vol` = false skips sigma (for implied volatility).
Status ValidateInputs(const OptionInputs& in, bool check_vol = true);

// Standard normal CDF and density (std::erfc / std::exp based reference).
double NormalCdf(double x);
double NormalPdf(double x);

// ---------------------------------------------------------------------------------------
// Black-Scholes-Merton, scalar reference (closed forms from Haug 2007, ch. 1 and 2).

Result<double> BsmPrice(const OptionInputs& in);
Result<Greeks> BsmGreeks(const OptionInputs& in);

// ---------------------------------------------------------------------------------------
// American options. Each returns the same values as BSM where early exercise is never
// optimal (calls with q <= 0, puts with r <= 0) only up to its own approximation error;
// an expired option is worth its intrinsic value.

// Cox-Ross-Rubinstein (1979) binomial tree with `steps` time steps (>= 1), u = exp(sigma
// sqrt(dt)), d = 1/u, p = (exp((r-q) dt) - d)/(u - d). `american` = false prices the
// European option on the same tree. O(steps^2) time, O(steps) memory. The error falls
// like 1/steps and oscillates between odd and even steps. InvalidArgument when p is not in
// (0, 1) (|r-q| too large for sigma at this dt: use more steps).
Result<double> BinomialPrice(const OptionInputs& in, int steps, bool american = true);

// Barone-Adesi and Whaley (1987) quadratic approximation, critical price found by
// Newton's method (Haug 2007, 3.1.1). Matches Haug's published table to 3e-3. As an
// approximation it is close to the tree (~1e-3) for short maturities; errors reach ~1% of
// the value for maturities of years and a few % for far out-of-the-money calls with
// r near 0 and q > 0, and more with negative rates.
// OutOfRange if the critical price does not converge (use the tree then).
Result<double> BaroneAdesiWhaleyPrice(const OptionInputs& in);

// Bjerksund and Stensland (1993) flat-boundary closed form (Haug 2007, 3.1.2); puts via
// the put-call transformation P(S, K, T, r, b, sigma) = C(K, S, T, r - b, -b, sigma).
// The flat-boundary strategy is a lower bound of the American value, but with high vols
// it can be worth less than never exercising; the result is therefore floored at the
// European (BSM) value, the other lower bound. OutOfRange where the closed form is
// undefined: with high rates and a small yield (calls; puts with the roles of r and q
// swapped, e.g. r = 2, q = 1e-4) the boundary at expiry lies beyond the perpetual one and
// the formula overflows; use the tree there.
Result<double> BjerksundStenslandPrice(const OptionInputs& in);

// ---------------------------------------------------------------------------------------
// Any model by name.

enum class Model { kBsm, kBinomial, kBaroneAdesiWhaley, kBjerksundStensland };
// "bsm", "binomial", "baw", "bjerksund".
const char* ModelName(Model model);
Result<Model> ParseModel(std::string_view name);

struct ModelOptions {
  int binomial_steps = 1000;  // time steps of the binomial tree (>= 1)
};

Result<double> Price(Model model, const OptionInputs& in, const ModelOptions& options = {});

// BSM: the closed forms. Other models: central finite differences of Price() (bumps:
// S by 1e-3 S for delta and gamma; sigma by 1e-4 max(sigma, 0.01), or sigma/2 when
// smaller; r and q by 1e-4; T by 1e-4 years, or T/2 when shorter). Where a central
// difference would leave the domain (sigma = 100, r = 5, T = 100, S = 1e-8, ...) it is
// one-sided and second order, inward, so every input of the domain has Greeks. Where the
// model cannot price a bumped input the step is halved (up to 20 times); an error of a
// bumped price names the Greek and the bumped value next to the given one. For the binomial tree,
// delta, gamma and theta come from the tree's own nodes at steps 1 and 2 (Hull, "Options, Futures
// and Other Derivatives", ch. 21), which do not oscillate with S the way bumped trees do.
// Elasticity = delta * S / price.
Result<Greeks> ModelGreeks(Model model, const OptionInputs& in, const ModelOptions& options = {});

// ---------------------------------------------------------------------------------------
// Implied volatility: the sigma at which Price(model, in) equals `price` (in.vol ignored).

struct ImpliedVolOptions {
  double min_vol = 1e-6;         // the search bracket [min_vol, max_vol]
  double max_vol = 10;           //
  double price_tolerance = 0;    // |model - price|; 0 = 1e-12 * max(1, price) (BSM),
                                 // 1e-9 * max(1, price) (other models)
  double vol_tolerance = 1e-14;  // stop when the bracket is narrower than this
  int max_iterations = 200;      // hard cap: the solver always returns
  ModelOptions model;            // for the American models
};

// Always terminates. The no-arbitrage bounds are checked first: a price at or below
// the lower bound (intrinsic value; for European options max(phi (S e^{-qT} - K e^{-rT}),
// 0)) or at or above the upper bound (S e^{-qT} for a call, K e^{-rT} for a European put,
// S and K for American ones) is OutOfRange with both bounds in the message; so is a price
// outside [Price(min_vol), Price(max_vol)]. Expired options (T <= kExpiredTime) have no
// implied volatility (OutOfRange). BSM uses Newton steps with the analytic vega inside a
// shrinking bracket, bisecting whenever Newton would leave it; other models use the
// secant (regula falsi, Illinois variant) inside the bracket. American models that cannot
// price at min_vol (a tree whose up probability leaves (0, 1), BAW whose critical price
// does not converge) start the bracket at the smallest min_vol * 2^k they can price.
Result<double> ImpliedVol(Model model, const OptionInputs& in, double price,
                          const ImpliedVolOptions& options = {});

// ---------------------------------------------------------------------------------------
// Batches: structure-of-arrays views, n elements each (T = double or float). The arrays
// are not owned. Outputs must not overlap inputs.

template <typename T>
struct OptionBatch {
  size_t size = 0;
  const OptionType* type = nullptr;
  const T* spot = nullptr;
  const T* strike = nullptr;
  const T* rate = nullptr;
  const T* dividend = nullptr;
  const T* vol = nullptr;
  const T* time = nullptr;
};

// Outputs of BsmGreeksBatch, all required; theta_per_day is theta / 365.
template <typename T>
struct GreeksBatch {
  T* price = nullptr;
  T* delta = nullptr;
  T* gamma = nullptr;
  T* vega = nullptr;
  T* theta = nullptr;
  T* rho = nullptr;
  T* dividend_rho = nullptr;
  T* elasticity = nullptr;
};

// Validates every element first (InvalidArgument naming the first bad index and field;
// nothing is written then), then prices. Vectorised (AVX-512/AVX2 with -march=native):
// branch-free polynomial exp, log and normal CDF (pricing/fast_math.h). Float batches
// compute in double and round the results: float arithmetic would lose ~1e-5 to
// cancellation in S N(d1) - K N(d2) for S ~ 100, outside the 1e-6 budget. Float outputs
// beyond float's range (only near the domain's corners, e.g. gamma at S = 1e-8) are +-inf. With a
// pool the work is split into contiguous slices, one per worker; results do not depend on it.
Status BsmPriceBatch(const OptionBatch<double>& in, double* price, WorkerPool* pool = nullptr);
Status BsmPriceBatch(const OptionBatch<float>& in, float* price, WorkerPool* pool = nullptr);
Status BsmGreeksBatch(const OptionBatch<double>& in, const GreeksBatch<double>& out,
                      WorkerPool* pool = nullptr);
Status BsmGreeksBatch(const OptionBatch<float>& in, const GreeksBatch<float>& out,
                      WorkerPool* pool = nullptr);

// Plain loop over the scalar reference (BsmGreeks) - the oracle of the fast path.
Status BsmGreeksBatchReference(const OptionBatch<double>& in, const GreeksBatch<double>& out);

// Any model, prices only: BSM takes the vectorised path; the American models loop over
// the scalar functions (split over the pool's workers).
Status PriceBatch(Model model, const OptionBatch<double>& in, double* price,
                  const ModelOptions& options = {}, WorkerPool* pool = nullptr);

}  // namespace rlt::pricing

#endif  // RLT_PRICING_PRICING_H_
