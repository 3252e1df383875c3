// rltrade pricing: input validation, names, and the scalar Black-Scholes-Merton reference
// (closed forms as in Haug 2007, "The Complete Guide to Option Pricing Formulas", 1.1 and
// 2.1). Written with libm and if/else on the option type, deliberately unlike the
// vectorised kernel in batch.cc, so that each checks the other.
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

Status CheckRange(const char* field, double v, double lo, double hi, const char* what) {
  if (std::isfinite(v) && v >= lo && v <= hi) return Status::Ok();
  return Status::InvalidArgument(std::string(field) + " = " + Num(v) + ": expected " + what +
                                 " in [" + Num(lo) + ", " + Num(hi) + "]");
}

}  // namespace

const char* OptionTypeName(OptionType type) { return type == OptionType::kCall ? "call" : "put"; }

Result<OptionType> ParseOptionType(std::string_view name) {
  if (name == "call" || name == "c") return OptionType::kCall;
  if (name == "put" || name == "p") return OptionType::kPut;
  return Status::InvalidArgument("option type '" + std::string(name) +
                                 "': expected 'call' or 'put'");
}

Status ValidateInputs(const OptionInputs& in, bool check_vol) {
  if (in.type != OptionType::kCall && in.type != OptionType::kPut) {
    return Status::InvalidArgument("type = " + std::to_string(static_cast<int>(in.type)) +
                                   ": expected call (+1) or put (-1)");
  }
  RLT_RETURN_IF_ERROR(CheckRange("spot", in.spot, kMinPrice, kMaxPrice, "a positive price"));
  RLT_RETURN_IF_ERROR(CheckRange("strike", in.strike, kMinPrice, kMaxPrice, "a positive price"));
  RLT_RETURN_IF_ERROR(CheckRange("rate", in.rate, -kMaxRate, kMaxRate,
                                 "a continuously compounded rate per year (0.05 = 5%)"));
  RLT_RETURN_IF_ERROR(CheckRange("dividend", in.dividend, -kMaxRate, kMaxRate,
                                 "a continuous dividend yield per year (0.02 = 2%)"));
  if (check_vol) {
    RLT_RETURN_IF_ERROR(
        CheckRange("vol", in.vol, kMinVol, kMaxVol, "a volatility per sqrt(year) (0.2 = 20%)"));
  }
  if (std::isnan(in.time) || in.time > kMaxTime) {
    return Status::InvalidArgument("time = " + Num(in.time) +
                                   ": expected years to expiry <= 100 (<= 0 means expired)");
  }
  return Status::Ok();
}

double NormalCdf(double x) { return 0.5 * std::erfc(-x * M_SQRT1_2); }
double NormalPdf(double x) { return std::exp(-0.5 * x * x) * (0.5 * M_2_SQRTPI * M_SQRT1_2); }

namespace internal {

double Intrinsic(const OptionInputs& in) {
  return std::max(Phi(in.type) * (in.spot - in.strike), 0.0);
}

Greeks ExpiredGreeks(const OptionInputs& in) {
  Greeks g;
  g.price = Intrinsic(in);
  const double phi = Phi(in.type);
  if (in.spot == in.strike) {
    g.delta = 0.5 * phi;
  } else if (g.price > 0) {
    g.delta = phi;
  }
  g.elasticity = g.price > 0 ? g.delta * in.spot / g.price : 0.0;
  return g;
}

double BsmPriceCarry(OptionType type, double s, double k, double t, double r, double b,
                     double vol) {
  const double sd = vol * std::sqrt(t);
  const double d1 = (std::log(s / k) + (b + 0.5 * vol * vol) * t) / sd;
  const double d2 = d1 - sd;
  const double fwd_disc = s * std::exp((b - r) * t);
  const double strike_disc = k * std::exp(-r * t);
  const double v = type == OptionType::kCall
                       ? fwd_disc * NormalCdf(d1) - strike_disc * NormalCdf(d2)
                       : strike_disc * NormalCdf(-d2) - fwd_disc * NormalCdf(-d1);
  return std::max(v, 0.0);
}

void BsmPriceVega(const OptionInputs& in, double* price, double* vega) {
  const double b = in.rate - in.dividend;
  *price = BsmPriceCarry(in.type, in.spot, in.strike, in.time, in.rate, b, in.vol);
  const double sd = in.vol * std::sqrt(in.time);
  const double d1 = (std::log(in.spot / in.strike) + (b + 0.5 * in.vol * in.vol) * in.time) / sd;
  *vega = in.spot * std::exp(-in.dividend * in.time) * NormalPdf(d1) * std::sqrt(in.time);
}

}  // namespace internal

Result<double> BsmPrice(const OptionInputs& in) {
  RLT_RETURN_IF_ERROR(ValidateInputs(in));
  if (internal::Expired(in)) return internal::Intrinsic(in);
  return internal::BsmPriceCarry(in.type, in.spot, in.strike, in.time, in.rate,
                                 in.rate - in.dividend, in.vol);
}

Result<Greeks> BsmGreeks(const OptionInputs& in) {
  RLT_RETURN_IF_ERROR(ValidateInputs(in));
  if (internal::Expired(in)) return internal::ExpiredGreeks(in);
  const double s = in.spot, k = in.strike, r = in.rate, q = in.dividend, t = in.time;
  const double sqrt_t = std::sqrt(t);
  const double sd = in.vol * sqrt_t;
  const double d1 = (std::log(s / k) + (r - q + 0.5 * in.vol * in.vol) * t) / sd;
  const double d2 = d1 - sd;
  const double s_disc = s * std::exp(-q * t);  // S e^{-qT}
  const double k_disc = k * std::exp(-r * t);  // K e^{-rT}
  const double pdf1 = NormalPdf(d1);
  Greeks g;
  if (in.type == OptionType::kCall) {
    g.price = s_disc * NormalCdf(d1) - k_disc * NormalCdf(d2);
    g.delta = std::exp(-q * t) * NormalCdf(d1);
    g.theta = -s_disc * pdf1 * in.vol / (2 * sqrt_t) - r * k_disc * NormalCdf(d2) +
              q * s_disc * NormalCdf(d1);
    g.rho = t * k_disc * NormalCdf(d2);
    g.dividend_rho = -t * s_disc * NormalCdf(d1);
  } else {
    g.price = k_disc * NormalCdf(-d2) - s_disc * NormalCdf(-d1);
    g.delta = -std::exp(-q * t) * NormalCdf(-d1);
    g.theta = -s_disc * pdf1 * in.vol / (2 * sqrt_t) + r * k_disc * NormalCdf(-d2) -
              q * s_disc * NormalCdf(-d1);
    g.rho = -t * k_disc * NormalCdf(-d2);
    g.dividend_rho = t * s_disc * NormalCdf(-d1);
  }
  g.price = std::max(g.price, 0.0);
  g.gamma = std::exp(-q * t) * pdf1 / (s * sd);
  g.vega = s_disc * pdf1 * sqrt_t;
  g.theta_per_day = g.theta / 365.0;
  g.elasticity = g.price > 1e-300 ? g.delta * s / g.price : 0.0;
  return g;
}

}  // namespace rlt::pricing
