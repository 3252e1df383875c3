#include "market/option_chain_pricing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/civil_time.h"
#include "core/median.h"

namespace rlt::market {

const char* IvGapName(IvGap gap) {
  switch (gap) {
    case IvGap::kNone:
      return "";
    case IvGap::kBelowLowerBound:
      return "mid<=lower-bound";
    case IvGap::kAboveUpperBound:
      return "mid>=upper-bound";
    case IvGap::kExpired:
      return "expires-today";
    case IvGap::kNoVolInRange:
      return "no-iv-in-range";
    case IvGap::kNoQuote:
      return "no-quote";
  }
  return "?";
}

Result<ChainPricing> PriceChain(const OptionChain& chain, const ChainPricingOptions& options) {
  const size_t n = chain.size();
  const std::string& source = options.source.empty() ? chain.underlying : options.source;
  // "file:line" for a contract read from a file, "source: contract i" for a generated one.
  auto where = [&](size_t i) {
    return chain.line[i] > 0 ? fmt::format("{}:{}", source, chain.line[i])
                             : fmt::format("{}: contract {}", source, i);
  };
  ChainPricing out;
  for (auto* v : {&out.time, &out.mid, &out.iv, &out.price, &out.delta, &out.gamma, &out.vega,
                  &out.theta, &out.lower_bound, &out.upper_bound}) {
    v->assign(n, 0.0);
  }
  out.iv_source.assign(n, IvSource::kSolved);
  out.iv_gap.assign(n, IvGap::kNone);
  {
    pricing::OptionInputs flags;
    flags.rate = options.rate;
    flags.dividend = options.dividend;
    RLT_RETURN_IF_ERROR(pricing::ValidateInputs(flags, /*check_vol=*/false));
  }
  std::vector<double> spot(n), rate(n), dividend(n);
  for (size_t i = 0; i < n; ++i) {
    rate[i] = !options.override_rate && std::isfinite(chain.rate[i]) ? chain.rate[i] : options.rate;
    dividend[i] = !options.override_dividend && std::isfinite(chain.dividend[i]) ? chain.dividend[i]
                                                                                 : options.dividend;
  }
  for (size_t d = 0; d < chain.num_days(); ++d) {
    const double s = chain.underlying_price[d];
    if (!(std::isfinite(s) && s > 0)) {
      return Status::InvalidArgument(fmt::format(
          "{}: quote date {}: no underlying price (found {}). Fix: add an underlying price "
          "column (e.g. underlying_last)",
          source, FormatDate(DateKey(CivilFromDays(chain.dates[d]))), s));
    }
    for (int64_t i = chain.day_begin[d]; i < chain.day_begin[d + 1]; ++i) {
      spot[i] = s;
      out.time[i] = std::max(0, chain.expiry[i] - chain.dates[d]) / 365.0;
      // Every contract in the pricing domain, or an error naming its line (one bad row
      // would otherwise fail the batch below as "option i of n").
      pricing::OptionInputs in;
      in.type = chain.right[i];
      in.spot = s;
      in.strike = chain.strike[i];
      in.rate = rate[i];
      in.dividend = dividend[i];
      in.time = out.time[i];
      if (Status st = pricing::ValidateInputs(in, /*check_vol=*/false); !st.ok()) {
        return Status::InvalidArgument(
            fmt::format("{}: {} (quote date {}, expiry {}); it cannot be priced", where(i),
                        st.message(), FormatDate(DateKey(CivilFromDays(chain.dates[d]))),
                        FormatDate(DateKey(CivilFromDays(chain.expiry[i])))));
      }
    }
  }

  if (options.mid_source == MidSource::kModel) {
    for (size_t i = 0; i < n; ++i) {
      if (!(std::isfinite(chain.implied_vol[i]) && chain.implied_vol[i] > 0)) {
        return Status::InvalidArgument(
            fmt::format("{} (strike {}): no model implied vol for mid_source = model", where(i),
                        chain.strike[i]));
      }
      out.iv[i] = chain.implied_vol[i];
      out.iv_source[i] = IvSource::kModel;
    }
  } else {
    std::vector<bool> have(n, false);
    for (size_t d = 0; d < chain.num_days(); ++d) {
      std::map<int32_t, std::vector<double>> by_expiry;
      std::vector<double> all;
      for (int64_t i = chain.day_begin[d]; i < chain.day_begin[d + 1]; ++i) {
        out.mid[i] = 0.5 * (chain.bid[i] + chain.ask[i]);
        pricing::OptionInputs in;
        in.type = chain.right[i];
        in.spot = spot[i];
        in.strike = chain.strike[i];
        in.rate = rate[i];
        in.dividend = dividend[i];
        in.time = out.time[i];
        const double phi = in.type == OptionType::kCall ? 1.0 : -1.0;
        const double s_disc = in.spot * std::exp(-in.dividend * in.time);
        const double k_disc = in.strike * std::exp(-in.rate * in.time);
        out.lower_bound[i] = std::max(phi * (s_disc - k_disc), 0.0);
        out.upper_bound[i] = in.type == OptionType::kCall ? s_disc : k_disc;
        Result<double> v = chain.HasQuote(i)
                               ? pricing::ImpliedVol(pricing::Model::kBsm, in, out.mid[i])
                               : Result<double>(Status::OutOfRange("no quote"));
        if (!v.ok()) {
          out.iv_gap[i] = !chain.HasQuote(i)                   ? IvGap::kNoQuote
                          : !(in.time > pricing::kExpiredTime) ? IvGap::kExpired
                          : out.mid[i] <= out.lower_bound[i]   ? IvGap::kBelowLowerBound
                          : out.mid[i] >= out.upper_bound[i]   ? IvGap::kAboveUpperBound
                                                               : IvGap::kNoVolInRange;
        }
        if (v.ok()) {
          out.iv[i] = *v;
          out.iv_source[i] = IvSource::kSolved;
          have[i] = true;
          ++out.solved;
          by_expiry[chain.expiry[i]].push_back(*v);
          all.push_back(*v);
        }
      }
      for (int64_t i = chain.day_begin[d]; i < chain.day_begin[d + 1]; ++i) {
        if (have[i]) continue;
        const double f = chain.implied_vol[i];
        if (std::isfinite(f) && f >= 1e-6 && f <= 100) {
          out.iv[i] = f;
          out.iv_source[i] = IvSource::kFile;
          ++out.from_file;
        } else if (auto it = by_expiry.find(chain.expiry[i]); it != by_expiry.end()) {
          out.iv[i] = Median(it->second);
          out.iv_source[i] = IvSource::kFilled;
          ++out.filled;
        } else if (!all.empty()) {
          out.iv[i] = Median(all);
          out.iv_source[i] = IvSource::kFilled;
          ++out.filled;
        } else {
          return Status::DataError(fmt::format(
              "{}: no implied vol can be solved, read or filled on quote date {} (the mid "
              "of every quote of that date is outside the no-arbitrage bounds or expires that "
              "day). Fix: add an implied vol column or quotes inside the no-arbitrage bounds",
              where(i), FormatDate(DateKey(CivilFromDays(chain.dates[d])))));
        }
      }
    }
  }

  const pricing::OptionBatch<double> in =
      ChainBatch(chain, spot.data(), rate.data(), dividend.data(), out.iv.data(), out.time.data());
  std::vector<double> rho(n), drho(n), elasticity(n);
  pricing::GreeksBatch<double> g;
  g.price = out.price.data();
  g.delta = out.delta.data();
  g.gamma = out.gamma.data();
  g.vega = out.vega.data();
  g.theta = out.theta.data();
  g.rho = rho.data();
  g.dividend_rho = drho.data();
  g.elasticity = elasticity.data();
  RLT_RETURN_IF_ERROR(pricing::BsmGreeksBatch(in, g));
  if (options.mid_source == MidSource::kModel) out.mid = out.price;
  return out;
}

}  // namespace rlt::market

namespace rlt::market {

const char* QuoteReasonName(QuoteReason reason) {
  switch (reason) {
    case QuoteReason::kOk:
      return "";
    case QuoteReason::kNoQuote:
      return "no-quote";
    case QuoteReason::kNoUnderlying:
      return "no-underlying-price";
    case QuoteReason::kExpired:
      return "expires-today";
    case QuoteReason::kBelowLowerBound:
      return "mid<=lower-bound";
    case QuoteReason::kAboveUpperBound:
      return "mid>=upper-bound";
    case QuoteReason::kNoVolInRange:
      return "no-iv-in-range";
    case QuoteReason::kModelFailed:
      return "model-failed";
  }
  return "?";
}

namespace {

// The implied vol and Greeks of one quoted contract under `model` (in.vol ignored), or the
// reason there are none.
struct OneQuote {
  QuoteReason reason = QuoteReason::kOk;
  std::string detail;
  double iv = 0;
  pricing::Greeks greeks;
};

OneQuote SolveOne(pricing::Model model, pricing::OptionInputs in, double mid, double lower,
                  double upper) {
  OneQuote q;
  pricing::ImpliedVolOptions io;
  io.model.binomial_steps = kQuoteTreeSteps;
  // BAW's critical price stops converging for calls near sigma = 10 (e.g. S 720.65, K 719,
  // r 0.0371, q 0.0102, T 0.0575), which would fail the bracket's upper end: American
  // vols are searched up to kQuoteMaxAmericanVol (500% a year) instead.
  if (model != pricing::Model::kBsm) io.max_vol = kQuoteMaxAmericanVol;
  Result<double> v = pricing::ImpliedVol(model, in, mid, io);
  if (!v.ok()) {
    // The bounds are checked first by ImpliedVol with these same formulas; inside them an
    // OutOfRange "needs a volatility outside" means no vol in the bracket reproduces the
    // mid, anything else is the model failing to price.
    q.reason = mid <= lower   ? QuoteReason::kBelowLowerBound
               : mid >= upper ? QuoteReason::kAboveUpperBound
               : v.status().message().find("needs a volatility outside") != std::string::npos
                   ? QuoteReason::kNoVolInRange
                   : QuoteReason::kModelFailed;
    q.detail = v.status().message();
    return q;
  }
  q.iv = *v;
  in.vol = *v;
  pricing::ModelOptions mo;
  mo.binomial_steps = kQuoteTreeSteps;
  Result<pricing::Greeks> g = pricing::ModelGreeks(model, in, mo);
  if (!g.ok()) {
    q.reason = QuoteReason::kModelFailed;
    q.detail = g.status().message();
    return q;
  }
  q.greeks = *g;
  return q;
}

}  // namespace

Result<QuoteSolution> SolveQuotes(const OptionChain& chain, const QuoteSolveOptions& options) {
  const size_t n = chain.size();
  const std::string& source = options.source.empty() ? chain.underlying : options.source;
  {
    pricing::OptionInputs flags;
    flags.rate = options.rate;
    flags.dividend = options.dividend;
    RLT_RETURN_IF_ERROR(pricing::ValidateInputs(flags, /*check_vol=*/false));
  }
  if (options.style == ExerciseStyle::kUnknown) {
    return Status::InvalidArgument("SolveQuotes: the fallback style must be european or american");
  }
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  QuoteSolution out;
  for (auto* v :
       {&out.spot, &out.rate, &out.dividend, &out.time, &out.mid, &out.lower_bound,
        &out.upper_bound, &out.iv, &out.price, &out.delta, &out.gamma, &out.vega, &out.theta}) {
    v->assign(n, kNaN);
  }
  out.style.assign(n, options.style);
  out.model.assign(n, pricing::Model::kBsm);
  out.reason.assign(n, QuoteReason::kOk);
  out.detail.assign(n, std::string());
  for (size_t d = 0; d < chain.num_days(); ++d) {
    const double s = chain.underlying_price[d];
    for (int64_t ii = chain.day_begin[d]; ii < chain.day_begin[d + 1]; ++ii) {
      const auto i = static_cast<size_t>(ii);
      const bool file_rate = !options.override_rate && std::isfinite(chain.rate[i]);
      const bool file_div = !options.override_dividend && std::isfinite(chain.dividend[i]);
      const bool file_style = !options.override_style && chain.style[i] != ExerciseStyle::kUnknown;
      out.rate[i] = file_rate ? chain.rate[i] : options.rate;
      out.dividend[i] = file_div ? chain.dividend[i] : options.dividend;
      out.style[i] = file_style ? chain.style[i] : options.style;
      out.rate_fallback += file_rate || options.override_rate ? 0 : 1;
      out.dividend_fallback += file_div || options.override_dividend ? 0 : 1;
      out.style_fallback += file_style || options.override_style ? 0 : 1;
      out.time[i] = std::max(0, chain.expiry[i] - chain.dates[d]) / 365.0;
      out.no_bid += chain.HasBid(i) ? 0 : 1;
      out.no_ask += chain.HasAsk(i) ? 0 : 1;
      out.no_quote += chain.HasQuote(i) ? 0 : 1;
      if (!(std::isfinite(s) && s > 0)) {
        out.reason[i] = QuoteReason::kNoUnderlying;
        continue;
      }
      out.spot[i] = s;
      pricing::OptionInputs in;
      in.type = chain.right[i];
      in.spot = s;
      in.strike = chain.strike[i];
      in.rate = out.rate[i];
      in.dividend = out.dividend[i];
      in.time = out.time[i];
      if (Status st = pricing::ValidateInputs(in, /*check_vol=*/false); !st.ok()) {
        return Status::InvalidArgument(
            fmt::format("{}:{}: {}; it cannot be priced", source, chain.line[i], st.message()));
      }
      const bool american = out.style[i] == ExerciseStyle::kAmerican;
      const double phi = in.type == OptionType::kCall ? 1.0 : -1.0;
      const double s_disc = in.spot * std::exp(-in.dividend * in.time);
      const double k_disc = in.strike * std::exp(-in.rate * in.time);
      double lower = std::max(phi * (s_disc - k_disc), 0.0);
      double upper = in.type == OptionType::kCall ? s_disc : k_disc;
      if (american) {
        lower = std::max(lower, std::max(phi * (in.spot - in.strike), 0.0));
        upper = in.type == OptionType::kCall ? in.spot : in.strike;
      }
      out.lower_bound[i] = lower;
      out.upper_bound[i] = upper;
      out.model[i] = american ? pricing::Model::kBaroneAdesiWhaley : pricing::Model::kBsm;
      if (!chain.HasQuote(i)) {
        out.reason[i] = QuoteReason::kNoQuote;
        continue;
      }
      out.mid[i] = 0.5 * (chain.bid[i] + chain.ask[i]);
      if (!(in.time > pricing::kExpiredTime)) {
        out.reason[i] = QuoteReason::kExpired;
        continue;
      }
      OneQuote q = SolveOne(out.model[i], in, out.mid[i], lower, upper);
      if (american && q.reason == QuoteReason::kModelFailed) {
        // BAW's critical price did not converge: the tree instead.
        out.model[i] = pricing::Model::kBinomial;
        q = SolveOne(out.model[i], in, out.mid[i], lower, upper);
      }
      out.reason[i] = q.reason;
      out.detail[i] = std::move(q.detail);
      if (q.reason != QuoteReason::kOk) continue;
      ++out.solved;
      out.iv[i] = q.iv;
      out.price[i] = q.greeks.price;
      out.delta[i] = q.greeks.delta;
      out.gamma[i] = q.greeks.gamma;
      out.vega[i] = q.greeks.vega;
      out.theta[i] = q.greeks.theta;
    }
  }
  return out;
}

}  // namespace rlt::market
