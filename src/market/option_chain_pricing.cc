#include "market/option_chain_pricing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/civil_time.h"
#include "core/median.h"

namespace rlt::market {

Result<ChainPricing> PriceChain(const OptionChain& chain, const ChainPricingOptions& options) {
  const size_t n = chain.size();
  ChainPricing out;
  for (auto* v :
       {&out.time, &out.mid, &out.iv, &out.price, &out.delta, &out.gamma, &out.vega, &out.theta}) {
    v->assign(n, 0.0);
  }
  out.iv_source.assign(n, IvSource::kSolved);
  std::vector<double> spot(n), rate(n, options.rate), dividend(n, options.dividend);
  for (size_t d = 0; d < chain.num_days(); ++d) {
    const double s = chain.underlying_price[d];
    if (!(std::isfinite(s) && s > 0)) {
      return Status::InvalidArgument(fmt::format(
          "{}: quote date {}: no underlying price (found {}). Fix: add an underlying price "
          "column (e.g. underlying_last)",
          chain.underlying, FormatDate(DateKey(CivilFromDays(chain.dates[d]))), s));
    }
    for (int64_t i = chain.day_begin[d]; i < chain.day_begin[d + 1]; ++i) {
      spot[i] = s;
      out.time[i] = std::max(0, chain.expiry[i] - chain.dates[d]) / 365.0;
    }
  }

  if (options.mid_source == MidSource::kModel) {
    for (size_t i = 0; i < n; ++i) {
      if (!(std::isfinite(chain.implied_vol[i]) && chain.implied_vol[i] > 0)) {
        return Status::InvalidArgument(
            fmt::format("contract {} (strike {}): no model implied vol for mid_source = model", i,
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
        Result<double> v = pricing::ImpliedVol(pricing::Model::kBsm, in, out.mid[i]);
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
              "{}: line {}: no implied vol can be solved, read or filled on quote date {}. "
              "Fix: add an implied vol column or quotes inside the no-arbitrage bounds",
              chain.underlying, chain.line[i], FormatDate(DateKey(CivilFromDays(chain.dates[d])))));
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
