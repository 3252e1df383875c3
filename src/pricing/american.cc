// rltrade pricing: American options (binomial tree, Barone-Adesi-Whaley, Bjerksund-
// Stensland 1993), model names and dispatch, and Greeks of any model.
// Formulas follow Haug 2007, "The Complete Guide to Option Pricing Formulas", 3.1 and 7.1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "pricing/internal.h"
#include "pricing/pricing.h"

namespace rlt::pricing {
namespace {

using internal::BsmPriceCarry;
using internal::Expired;
using internal::Intrinsic;
using internal::Phi;

// ln of the largest node spot a call tree builds (DBL_MAX is ~e^709.8).
constexpr double kMaxLogNodeSpot = 700;

struct TreeResult {
  double price = 0;
  double delta = 0, gamma = 0, theta = 0;  // from the first two steps (steps >= 2)
  bool node_greeks = true;                 // false: delta, gamma, theta are not set
};

// CRR tree, backward induction over one array of node values.
Result<TreeResult> Tree(const OptionInputs& in, int steps, bool american) {
  const double dt = in.time / steps;
  // A call whose top node S u^steps overflows (high vol and many steps: e.g. vol 100 with
  // 50 steps) would be worth inf. Its value is that of the put with S and K swapped and r
  // and q swapped (McDonald and Schroder 1998), which the CRR tree satisfies to rounding;
  // the put's payoff is bounded by its strike. Its nodes are the put's, so the Greeks come
  // from finite differences then.
  if (in.type == OptionType::kCall &&
      std::log(in.spot) + steps * in.vol * std::sqrt(dt) > kMaxLogNodeSpot) {
    OptionInputs put = in;
    put.type = OptionType::kPut;
    put.spot = in.strike;
    put.strike = in.spot;
    put.rate = in.dividend;
    put.dividend = in.rate;
    RLT_ASSIGN_OR_RETURN(TreeResult r, Tree(put, steps, american));
    r.node_greeks = false;
    return r;
  }
  const double u = std::exp(in.vol * std::sqrt(dt));
  const double d = 1.0 / u;
  const double p = (std::exp((in.rate - in.dividend) * dt) - d) / (u - d);
  if (!(p > 0 && p < 1)) {
    return Status::InvalidArgument("binomial tree: up probability " + std::to_string(p) +
                                   " is outside (0, 1) with " + std::to_string(steps) +
                                   " steps (|r - q| is large against vol): use more steps");
  }
  const double disc = std::exp(-in.rate * dt);
  const double phi = Phi(in.type);
  // spot[steps + m] = S u^m, m in [-steps, steps].
  std::vector<double> spot(2 * steps + 1);
  for (int m = -steps; m <= steps; ++m) spot[steps + m] = in.spot * std::pow(u, m);
  std::vector<double> v(steps + 1);
  for (int j = 0; j <= steps; ++j) v[j] = std::max(phi * (spot[2 * j] - in.strike), 0.0);
  TreeResult out;
  // The node values at time steps 2 and 1 (Hull's Greeks). With steps == 2 the layer at
  // step 2 is the payoff itself, which the loop below never visits as i == 2.
  double step2[3] = {0, 0, 0}, step1[2] = {0, 0};
  if (steps == 2) std::copy(v.begin(), v.begin() + 3, step2);
  for (int i = steps - 1; i >= 0; --i) {
    for (int j = 0; j <= i; ++j) {
      const double cont = disc * (p * v[j + 1] + (1 - p) * v[j]);
      v[j] = american ? std::max(cont, phi * (spot[steps + 2 * j - i] - in.strike)) : cont;
    }
    if (i == 2) std::copy(v.begin(), v.begin() + 3, step2);
    if (i == 1) std::copy(v.begin(), v.begin() + 2, step1);
  }
  out.price = v[0];
  if (steps >= 2) {
    const double s = in.spot;
    const double su = s * u, sd = s * d, suu = s * u * u, sdd = s * d * d;
    out.delta = (step1[1] - step1[0]) / (su - sd);
    out.gamma = ((step2[2] - step2[1]) / (suu - s) - (step2[1] - step2[0]) / (s - sdd)) /
                (0.5 * (suu - sdd));
    out.theta = (step2[1] - out.price) / (2 * dt);
  }
  return out;
}

double NCdf(double x) { return NormalCdf(x); }

// Barone-Adesi-Whaley call with carry b < r (else European), T > 0.
Result<double> BawCall(double s, double k, double t, double r, double b, double vol) {
  if (b >= r) return BsmPriceCarry(OptionType::kCall, s, k, t, r, b, vol);
  const double v2 = vol * vol, sd = vol * std::sqrt(t);
  const double m = 2 * r / v2, n = 2 * b / v2;
  const double m_over_k = r != 0 ? m / -std::expm1(-r * t) : 2 / (v2 * t);
  const double q2 = 0.5 * (-(n - 1) + std::sqrt((n - 1) * (n - 1) + 4 * m_over_k));
  const double carry = std::exp((b - r) * t);
  // Seed (Barone-Adesi and Whaley 1987, as in Haug 2007): the perpetual critical price.
  const double disc_inf = (n - 1) * (n - 1) + 4 * m;
  const double q2_inf = disc_inf > 0 ? 0.5 * (-(n - 1) + std::sqrt(disc_inf)) : 0;
  double si = 2 * k;
  if (q2_inf > 1) {
    const double s_inf = k / (1 - 1 / q2_inf);
    const double h2 = -(b * t + 2 * sd) * k / (s_inf - k);
    si = k + (s_inf - k) * (1 - std::exp(h2));
  }
  bool converged = false;
  for (int iter = 0; iter < 200 && !converged; ++iter) {
    const double d1 = (std::log(si / k) + (b + 0.5 * v2) * t) / sd;
    const double rhs =
        BsmPriceCarry(OptionType::kCall, si, k, t, r, b, vol) + (1 - carry * NCdf(d1)) * si / q2;
    const double slope = carry * NCdf(d1) * (1 - 1 / q2) + (1 - carry * NormalPdf(d1) / sd) / q2;
    converged = std::abs(si - k - rhs) <= 1e-13 * k;
    if (!converged) si = (k + rhs - slope * si) / (1 - slope);
    if (!(std::isfinite(si) && si > 0)) break;
  }
  if (!converged || !(si > 0)) {
    return Status::OutOfRange(
        "Barone-Adesi-Whaley: the critical price did not converge "
        "for these inputs; use --model binomial");
  }
  if (s >= si) return s - k;
  const double d1 = (std::log(si / k) + (b + 0.5 * v2) * t) / sd;
  const double a2 = si / q2 * (1 - carry * NCdf(d1));
  return BsmPriceCarry(OptionType::kCall, s, k, t, r, b, vol) + a2 * std::pow(s / si, q2);
}

// Barone-Adesi-Whaley put; r <= 0 never exercises early (European), T > 0.
Result<double> BawPut(double s, double k, double t, double r, double b, double vol) {
  if (r <= 0) return BsmPriceCarry(OptionType::kPut, s, k, t, r, b, vol);
  const double v2 = vol * vol, sd = vol * std::sqrt(t);
  const double m = 2 * r / v2, n = 2 * b / v2;
  const double m_over_k = m / -std::expm1(-r * t);
  const double q1 = 0.5 * (-(n - 1) - std::sqrt((n - 1) * (n - 1) + 4 * m_over_k));
  const double carry = std::exp((b - r) * t);
  const double q1_inf = 0.5 * (-(n - 1) - std::sqrt((n - 1) * (n - 1) + 4 * m));
  const double s_inf = k / (1 - 1 / q1_inf);
  const double h1 = (b * t - 2 * sd) * k / (k - s_inf);
  double si = s_inf + (k - s_inf) * std::exp(h1);
  bool converged = false;
  for (int iter = 0; iter < 200 && !converged; ++iter) {
    const double d1 = (std::log(si / k) + (b + 0.5 * v2) * t) / sd;
    const double rhs =
        BsmPriceCarry(OptionType::kPut, si, k, t, r, b, vol) - (1 - carry * NCdf(-d1)) * si / q1;
    const double slope = -carry * NCdf(-d1) * (1 - 1 / q1) - (1 + carry * NormalPdf(-d1) / sd) / q1;
    converged = std::abs(k - si - rhs) <= 1e-13 * k;
    if (!converged) si = (k - rhs + slope * si) / (1 + slope);
    if (!(std::isfinite(si) && si > 0)) break;
  }
  if (!converged || !(si > 0)) {
    return Status::OutOfRange(
        "Barone-Adesi-Whaley: the critical price did not converge "
        "for these inputs; use --model binomial");
  }
  if (s <= si) return k - s;
  const double d1 = (std::log(si / k) + (b + 0.5 * v2) * t) / sd;
  const double a1 = -si / q1 * (1 - carry * NCdf(-d1));
  return BsmPriceCarry(OptionType::kPut, s, k, t, r, b, vol) + a1 * std::pow(s / si, q1);
}

// Bjerksund-Stensland 1993 call with carry b < r (else European), T > 0.
Result<double> Bs93Call(double s, double k, double t, double r, double b, double vol) {
  if (b >= r) return BsmPriceCarry(OptionType::kCall, s, k, t, r, b, vol);
  const double v2 = vol * vol, sd = vol * std::sqrt(t);
  const double disc = (b / v2 - 0.5) * (b / v2 - 0.5) + 2 * r / v2;
  if (!(disc >= 0)) {
    return Status::OutOfRange("Bjerksund-Stensland: undefined for rate " + std::to_string(r) +
                              " and carry " + std::to_string(b) + "; use --model binomial");
  }
  const double beta = (0.5 - b / v2) + std::sqrt(disc);
  const double b_inf = beta / (beta - 1) * k;
  const double b0 = std::max(k, r / (r - b) * k);
  // The trigger interpolates from B0 (at expiry) towards B_inf (perpetual); with high
  // rates and a small yield (r = 2, q = 1e-4) B0 lies beyond B_inf and the formula's
  // exponentials overflow into NaN: refused rather than returned.
  if (!(b_inf > b0)) {
    return Status::OutOfRange("Bjerksund-Stensland: undefined for rate " + std::to_string(r) +
                              " and carry " + std::to_string(b) +
                              " (the boundary at expiry lies beyond the perpetual one); use "
                              "--model binomial");
  }
  const double ht = -(b * t + 2 * sd) * b0 / (b_inf - b0);
  const double trigger = b0 + (b_inf - b0) * (1 - std::exp(ht));  // I
  if (s >= trigger) return s - k;
  // phi(S, T, gamma, H, I) / S^gamma.
  auto phi = [&](double gamma, double h) {
    const double lambda = (-r + gamma * b + 0.5 * gamma * (gamma - 1) * v2) * t;
    const double d = -(std::log(s / h) + (b + (gamma - 0.5) * v2) * t) / sd;
    const double kappa = 2 * b / v2 + (2 * gamma - 1);
    return std::exp(lambda) *
           (NCdf(d) - std::pow(trigger / s, kappa) * NCdf(d - 2 * std::log(trigger / s) / sd));
  };
  const double alpha_s_beta = (trigger - k) * std::pow(s / trigger, beta);  // alpha S^beta
  const double v = alpha_s_beta - alpha_s_beta * phi(beta, trigger) + s * phi(1, trigger) -
                   s * phi(1, k) - k * phi(0, trigger) + k * phi(0, k);
  if (!std::isfinite(v)) {
    return Status::OutOfRange("Bjerksund-Stensland: the closed form overflows for rate " +
                              std::to_string(r) + " and carry " + std::to_string(b) +
                              "; use --model binomial");
  }
  return v;
}

}  // namespace

Result<double> BinomialPrice(const OptionInputs& in, int steps, bool american) {
  RLT_RETURN_IF_ERROR(ValidateInputs(in));
  if (steps < 1 || steps > kMaxBinomialSteps) {
    return Status::InvalidArgument("steps = " + std::to_string(steps) + ": expected 1.." +
                                   std::to_string(kMaxBinomialSteps));
  }
  if (Expired(in)) return Intrinsic(in);
  RLT_ASSIGN_OR_RETURN(TreeResult r, Tree(in, steps, american));
  return r.price;
}

Result<double> BaroneAdesiWhaleyPrice(const OptionInputs& in) {
  RLT_RETURN_IF_ERROR(ValidateInputs(in));
  if (Expired(in)) return Intrinsic(in);
  const double b = in.rate - in.dividend;
  return in.type == OptionType::kCall ? BawCall(in.spot, in.strike, in.time, in.rate, b, in.vol)
                                      : BawPut(in.spot, in.strike, in.time, in.rate, b, in.vol);
}

Result<double> BjerksundStenslandPrice(const OptionInputs& in) {
  RLT_RETURN_IF_ERROR(ValidateInputs(in));
  if (Expired(in)) return Intrinsic(in);
  const double b = in.rate - in.dividend;
  // Put-call transformation for puts: P(S, K, T, r, b) = C(K, S, T, r - b, -b).
  Result<double> flat_boundary =
      in.type == OptionType::kCall ? Bs93Call(in.spot, in.strike, in.time, in.rate, b, in.vol)
                                   : Bs93Call(in.strike, in.spot, in.time, in.rate - b, -b, in.vol);
  if (!flat_boundary.ok()) return flat_boundary;
  // Exercising at the flat boundary is one admissible strategy, never exercising is
  // another: both values are lower bounds of the American price, so take the larger.
  return std::max(*flat_boundary,
                  BsmPriceCarry(in.type, in.spot, in.strike, in.time, in.rate, b, in.vol));
}

const char* ModelName(Model model) {
  switch (model) {
    case Model::kBsm:
      return "bsm";
    case Model::kBinomial:
      return "binomial";
    case Model::kBaroneAdesiWhaley:
      return "baw";
    case Model::kBjerksundStensland:
      return "bjerksund";
  }
  return "?";
}

Result<Model> ParseModel(std::string_view name) {
  for (Model m :
       {Model::kBsm, Model::kBinomial, Model::kBaroneAdesiWhaley, Model::kBjerksundStensland}) {
    if (name == ModelName(m)) return m;
  }
  return Status::InvalidArgument("model '" + std::string(name) +
                                 "': expected one of bsm, binomial, baw, bjerksund");
}

Result<double> Price(Model model, const OptionInputs& in, const ModelOptions& options) {
  switch (model) {
    case Model::kBsm:
      return BsmPrice(in);
    case Model::kBinomial:
      return BinomialPrice(in, options.binomial_steps, /*american=*/true);
    case Model::kBaroneAdesiWhaley:
      return BaroneAdesiWhaleyPrice(in);
    case Model::kBjerksundStensland:
      return BjerksundStenslandPrice(in);
  }
  return Status::InvalidArgument("unknown model");
}

Result<Greeks> ModelGreeks(Model model, const OptionInputs& in, const ModelOptions& options) {
  if (model == Model::kBsm) return BsmGreeks(in);
  RLT_ASSIGN_OR_RETURN(const double price, Price(model, in, options));
  if (Expired(in)) return internal::ExpiredGreeks(in);
  // The price at `field` moved by `h`. The stencils below stay inside the documented
  // domain, so a bumped input is never refused there; a model that cannot price a bumped
  // input (a tree whose up probability leaves (0, 1), BAW without a critical price) says
  // which Greek needed it, so the bump is never mistaken for the user's input.
  auto bumped = [&](const char* greek, const char* name, double OptionInputs::*field,
                    double h) -> Result<double> {
    OptionInputs b = in;
    b.*field += h;
    Result<double> v = Price(model, b, options);
    if (v.ok()) return v;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%s by finite differences needs the price at %s = %.10g (the given %s = "
                  "%.10g moved by the difference step; the price itself is %.10g), which "
                  "failed: ",
                  greek, name, b.*field, name, in.*field, price);
    return Status::FromCode(static_cast<int>(v.status().code()), buf + v.status().message());
  };
  // First and second derivative in `field` with step h: central where [x - 2h, x + 2h]
  // stays in [lo, hi], else one-sided (second order for the first derivative).
  struct Derivatives {
    double first = 0, second = 0;
  };
  enum class Side { kCentral, kForward, kBackward };
  auto stencil = [&](const char* greek, const char* name, double OptionInputs::*field, double h,
                     Side side) -> Result<Derivatives> {
    Derivatives d;
    if (side == Side::kCentral) {
      RLT_ASSIGN_OR_RETURN(const double up, bumped(greek, name, field, h));
      RLT_ASSIGN_OR_RETURN(const double down, bumped(greek, name, field, -h));
      d.first = (up - down) / (2 * h);
      d.second = (up - 2 * price + down) / (h * h);
    } else {
      const double sign = side == Side::kForward ? 1.0 : -1.0;
      RLT_ASSIGN_OR_RETURN(const double f1, bumped(greek, name, field, sign * h));
      RLT_ASSIGN_OR_RETURN(const double f2, bumped(greek, name, field, sign * 2 * h));
      d.first = sign * (-3 * price + 4 * f1 - f2) / (2 * h);
      d.second = (price - 2 * f1 + f2) / (h * h);
    }
    return d;
  };
  // Central where [x - h, x + h] stays in [lo, hi], else one-sided inward (second order
  // for the first derivative). A model that cannot price a bumped input (a tree at a tiny
  // vol, where r moved by 1e-4 takes the up probability out of (0, 1); a closed form that
  // is undefined on one side of the input) gets the other feasible stencils, then smaller
  // steps down to h / 2^20; the error is reported only when none works.
  auto derivatives = [&](const char* greek, const char* name, double OptionInputs::*field, double h,
                         double lo, double hi) -> Result<Derivatives> {
    const double x = in.*field;
    Result<Derivatives> first_error = Status::OutOfRange("");
    for (int halvings = 0; halvings <= 20; ++halvings, h *= 0.5) {
      for (Side side : {Side::kCentral, Side::kForward, Side::kBackward}) {
        const bool inside = side == Side::kCentral   ? x - h >= lo && x + h <= hi
                            : side == Side::kForward ? x + 2 * h <= hi
                                                     : x - 2 * h >= lo;
        if (!inside) continue;
        Result<Derivatives> d = stencil(greek, name, field, h, side);
        if (d.ok()) return d;
        if (halvings == 0 && first_error.status().message().empty()) first_error = d;
      }
    }
    return first_error;
  };
  Greeks g;
  g.price = price;
  TreeResult tr;
  tr.node_greeks = false;
  if (model == Model::kBinomial && options.binomial_steps >= 2) {
    RLT_ASSIGN_OR_RETURN(tr, Tree(in, options.binomial_steps, /*american=*/true));
  }
  if (tr.node_greeks) {
    g.delta = tr.delta;
    g.gamma = tr.gamma;
    g.theta = tr.theta;
  } else {
    RLT_ASSIGN_OR_RETURN(const Derivatives ds,
                         derivatives("delta and gamma", "spot", &OptionInputs::spot, 1e-3 * in.spot,
                                     kMinPrice, kMaxPrice));
    g.delta = ds.first;
    g.gamma = ds.second;
    // theta = -dV/dT: central in T, one-sided when T is too short to step back or at the
    // longest time the domain allows.
    const double ht = std::min(1e-4, 0.5 * in.time);
    RLT_ASSIGN_OR_RETURN(const Derivatives dt,
                         derivatives("theta", "time", &OptionInputs::time, ht, 0.0, kMaxTime));
    g.theta = -dt.first;
  }
  const double hv = std::min(1e-4 * std::max(in.vol, 0.01), 0.5 * in.vol);
  RLT_ASSIGN_OR_RETURN(const Derivatives dv,
                       derivatives("vega", "vol", &OptionInputs::vol, hv, kMinVol, kMaxVol));
  g.vega = dv.first;
  RLT_ASSIGN_OR_RETURN(const Derivatives dr,
                       derivatives("rho", "rate", &OptionInputs::rate, 1e-4, -kMaxRate, kMaxRate));
  g.rho = dr.first;
  RLT_ASSIGN_OR_RETURN(
      const Derivatives dq,
      derivatives("dividend rho", "dividend", &OptionInputs::dividend, 1e-4, -kMaxRate, kMaxRate));
  g.dividend_rho = dq.first;
  g.theta_per_day = g.theta / 365.0;
  g.elasticity = g.price > 1e-300 ? g.delta * in.spot / g.price : 0.0;
  return g;
}

}  // namespace rlt::pricing
