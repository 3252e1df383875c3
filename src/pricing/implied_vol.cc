// rltrade pricing: implied volatility by a bracketed root search that always terminates.
//
// The model price is increasing in sigma, so [min_vol, max_vol] brackets the answer once
// the target lies between the prices at its ends. Each iteration shrinks the bracket:
// BSM takes a Newton step (analytic vega) when it lands strictly inside the bracket and
// bisects otherwise; the American models (no analytic vega) use regula falsi with the
// Illinois modification, bisecting when it stalls. Both stop at max_iterations.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "pricing/internal.h"
#include "pricing/pricing.h"

namespace rlt::pricing {
namespace {

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

struct Bracket {
  double lo, hi;      // vols
  double f_lo, f_hi;  // model price - target at lo (<= 0) and hi (>= 0)
};

Result<double> SolveBsm(OptionInputs in, double target, Bracket br, double tol,
                        const ImpliedVolOptions& o) {
  // Start at the inflection point of price(sigma), sqrt(2 |ln(F/K)| / T), from which Newton
  // converges monotonically (Manaster and Koehler 1982); 0.2 when at the money.
  const double log_moneyness = std::log(in.spot / in.strike) + (in.rate - in.dividend) * in.time;
  double vol = std::sqrt(2 * std::abs(log_moneyness) / in.time);
  if (!(vol > br.lo && vol < br.hi)) vol = std::clamp(0.2, br.lo, br.hi);
  double best = vol, best_err = INFINITY;
  for (int iter = 0; iter < o.max_iterations; ++iter) {
    in.vol = vol;
    double price = 0, vega = 0;
    internal::BsmPriceVega(in, &price, &vega);
    const double diff = price - target;
    if (std::abs(diff) < best_err) best = vol, best_err = std::abs(diff);
    if (std::abs(diff) <= tol) return vol;
    (diff > 0 ? br.hi : br.lo) = vol;
    if (br.hi - br.lo <= o.vol_tolerance * std::max(1.0, br.hi)) return best;
    const double newton = vol - diff / vega;
    vol = (vega > 0 && newton > br.lo && newton < br.hi) ? newton : 0.5 * (br.lo + br.hi);
  }
  return best;
}

Result<double> SolveGeneric(Model model, OptionInputs in, double target, Bracket br, double tol,
                            const ImpliedVolOptions& o) {
  int side = 0;  // which end was kept last time (Illinois: halve its function value)
  for (int iter = 0; iter < o.max_iterations; ++iter) {
    if (br.hi - br.lo <= o.vol_tolerance * std::max(1.0, br.hi)) break;
    double vol = (br.lo * br.f_hi - br.hi * br.f_lo) / (br.f_hi - br.f_lo);
    if (!(vol > br.lo && vol < br.hi)) vol = 0.5 * (br.lo + br.hi);
    in.vol = vol;
    RLT_ASSIGN_OR_RETURN(const double price, Price(model, in, o.model));
    const double diff = price - target;
    if (std::abs(diff) <= tol) return vol;
    if (diff > 0) {
      br.hi = vol, br.f_hi = diff;
      if (side == +1) br.f_lo *= 0.5;
      side = +1;
    } else {
      br.lo = vol, br.f_lo = diff;
      if (side == -1) br.f_hi *= 0.5;
      side = -1;
    }
  }
  return std::abs(br.f_lo) < std::abs(br.f_hi) ? br.lo : br.hi;
}

}  // namespace

Result<double> ImpliedVol(Model model, const OptionInputs& in, double price,
                          const ImpliedVolOptions& o) {
  RLT_RETURN_IF_ERROR(ValidateInputs(in, /*check_vol=*/false));
  if (!(o.min_vol >= 1e-6 && o.max_vol <= 100 && o.min_vol < o.max_vol && o.max_iterations >= 1)) {
    return Status::InvalidArgument(
        "implied vol options: expected 1e-6 <= min_vol < max_vol <= 100 and max_iterations "
        ">= 1, got [" +
        Num(o.min_vol) + ", " + Num(o.max_vol) + "], " + std::to_string(o.max_iterations));
  }
  if (!std::isfinite(price)) {
    return Status::InvalidArgument("price = " + Num(price) + ": expected a finite option price");
  }
  if (internal::Expired(in)) {
    return Status::OutOfRange("time = " + Num(in.time) +
                              ": an expired option has no implied volatility");
  }
  const double phi = internal::Phi(in.type);
  const double s_disc = in.spot * std::exp(-in.dividend * in.time);
  const double k_disc = in.strike * std::exp(-in.rate * in.time);
  double lower = std::max(phi * (s_disc - k_disc), 0.0);
  double upper = in.type == OptionType::kCall ? s_disc : k_disc;
  if (model != Model::kBsm) {
    lower = std::max(lower, internal::Intrinsic(in));
    upper = in.type == OptionType::kCall ? in.spot : in.strike;
  }
  if (!(price > lower && price < upper)) {
    return Status::OutOfRange("price = " + Num(price) + " is outside the no-arbitrage bounds (" +
                              Num(lower) + ", " + Num(upper) + ") of this " +
                              OptionTypeName(in.type) + " under " + ModelName(model) +
                              ": no volatility reproduces it");
  }
  const double tol = o.price_tolerance > 0
                         ? o.price_tolerance
                         : (model == Model::kBsm ? 1e-12 : 1e-9) * std::max(1.0, price);
  OptionInputs at = in;
  at.vol = o.min_vol;
  Result<double> low_price = Price(model, at, o.model);
  // The American models fail at very small vols (the tree's up probability leaves (0, 1);
  // BAW's critical price stops converging): raise the bracket's low end until they price.
  while (!low_price.ok() && model != Model::kBsm && at.vol * 2 < o.max_vol) {
    at.vol *= 2;
    low_price = Price(model, at, o.model);
  }
  if (!low_price.ok()) return low_price.status();
  const double vol_lo = at.vol, p_lo = *low_price;
  at.vol = o.max_vol;
  RLT_ASSIGN_OR_RETURN(const double p_hi, Price(model, at, o.model));
  if (price < p_lo - tol || price > p_hi + tol) {
    return Status::OutOfRange("price = " + Num(price) + " needs a volatility outside [" +
                              Num(vol_lo) + ", " + Num(o.max_vol) +
                              "] (prices there: " + Num(p_lo) + ", " + Num(p_hi) + ")");
  }
  if (std::abs(price - p_lo) <= tol) return vol_lo;
  if (std::abs(price - p_hi) <= tol) return o.max_vol;
  const Bracket br{vol_lo, o.max_vol, p_lo - price, p_hi - price};
  if (model == Model::kBsm) return SolveBsm(in, price, br, tol, o);
  return SolveGeneric(model, in, price, br, tol, o);
}

}  // namespace rlt::pricing
