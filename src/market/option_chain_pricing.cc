#include "market/option_chain_pricing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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
  std::vector<double> spot(n), rate(n, options.rate), dividend(n, options.dividend);
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
      in.rate = options.rate;
      in.dividend = options.dividend;
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
        in.rate = options.rate;
        in.dividend = options.dividend;
        in.time = out.time[i];
        const double phi = in.type == OptionType::kCall ? 1.0 : -1.0;
        const double s_disc = in.spot * std::exp(-in.dividend * in.time);
        const double k_disc = in.strike * std::exp(-in.rate * in.time);
        out.lower_bound[i] = std::max(phi * (s_disc - k_disc), 0.0);
        out.upper_bound[i] = in.type == OptionType::kCall ? s_disc : k_disc;
        Result<double> v = pricing::ImpliedVol(pricing::Model::kBsm, in, out.mid[i]);
        if (!v.ok()) {
          out.iv_gap[i] = !(in.time > pricing::kExpiredTime) ? IvGap::kExpired
                          : out.mid[i] <= out.lower_bound[i] ? IvGap::kBelowLowerBound
                          : out.mid[i] >= out.upper_bound[i] ? IvGap::kAboveUpperBound
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
