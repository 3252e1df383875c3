// rltrade env: preparing a MarketDataset (features once, normaliser fitted on train).
#include "env/market_dataset.h"

#include <algorithm>

#include "features/presets.h"

namespace rlt::env {

Result<std::shared_ptr<const MarketDataset>> PrepareMarketDataset(market::Bars bars,
                                                                  const DatasetOptions& options,
                                                                  const DateRange& train) {
  RLT_ASSIGN_OR_RETURN(features::FeatureMatrix fm, features::ComputeFeatures(bars, options.preset));
  // Training rows: bars of sessions inside `train`, from the first valid feature row on.
  int64_t begin = -1, end = -1;
  for (const auto& s : bars.sessions) {
    if (!train.Contains(s.date)) continue;
    if (begin < 0) begin = s.begin;
    end = s.end;
  }
  begin = std::max<int64_t>(begin, fm.first_valid);
  if (begin < 0 || end <= begin) {
    return Status::InvalidArgument("no bars with defined features inside the training range " +
                                   train.ToString() + " of symbol '" + bars.symbol +
                                   "'; widen [split] train or supply more data");
  }
  RLT_ASSIGN_OR_RETURN(features::Normalizer norm,
                       features::Normalizer::Fit(fm, begin, end, options.normalizer));
  norm.Apply(fm);
  auto ds = std::make_shared<MarketDataset>();
  ds->bars = std::move(bars);
  ds->features = std::move(fm);
  ds->normalizer = std::move(norm);
  ds->fit_range = train;
  return std::shared_ptr<const MarketDataset>(std::move(ds));
}

Result<std::shared_ptr<const MarketDataset>> PrepareMarketDataset(
    market::Bars bars, const std::string& preset, const features::Normalizer& stored,
    const DateRange& fit_range) {
  RLT_ASSIGN_OR_RETURN(features::FeatureMatrix fm, features::ComputeFeatures(bars, preset));
  Status compatible = stored.CheckCompatible(fm.names);
  if (!compatible.ok()) {
    return Status::DataError("the stored normaliser does not fit preset '" + preset +
                             "': " + compatible.message());
  }
  stored.Apply(fm);
  auto ds = std::make_shared<MarketDataset>();
  ds->bars = std::move(bars);
  ds->features = std::move(fm);
  ds->normalizer = stored;
  ds->fit_range = fit_range;
  return std::shared_ptr<const MarketDataset>(std::move(ds));
}

}  // namespace rlt::env
