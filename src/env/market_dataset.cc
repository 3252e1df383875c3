// rltrade env: preparing a MarketDataset (features once, normaliser fitted on train).
#include "env/market_dataset.h"

#include <algorithm>

#include "features/presets.h"

namespace rlt::env {
namespace {

// Rows [begin, end) of `bars` that lie in sessions inside `train`, from `first_valid` on;
// {-1, -1} when none.
std::pair<int64_t, int64_t> TrainingRows(const market::Bars& bars, const DateRange& train,
                                         int64_t first_valid) {
  int64_t begin = -1, end = -1;
  for (const auto& s : bars.sessions) {
    if (!train.Contains(s.date)) continue;
    if (begin < 0) begin = s.begin;
    end = s.end;
  }
  begin = std::max<int64_t>(begin, first_valid);
  if (begin < 0 || end <= begin) return {-1, -1};
  return {begin, end};
}

Status NoTrainingRows(const DateRange& train, const std::string& symbol) {
  return Status::InvalidArgument("no bars with defined features inside the training range " +
                                 train.ToString() + " of symbol '" + symbol +
                                 "'; widen [split] train or supply more data");
}

// Appends one-hot columns ("symbol=<name>") to `fm`: 1 in column `index`, 0 elsewhere.
void AppendOneHot(features::FeatureMatrix& fm, const std::vector<std::string>& symbols,
                  size_t index) {
  const int64_t old_cols = fm.cols, extra = static_cast<int64_t>(symbols.size());
  std::vector<float> values(static_cast<size_t>(fm.rows * (old_cols + extra)), 0.0f);
  for (int64_t r = 0; r < fm.rows; ++r) {
    std::copy(fm.values.begin() + r * old_cols, fm.values.begin() + (r + 1) * old_cols,
              values.begin() + r * (old_cols + extra));
    values[r * (old_cols + extra) + old_cols + static_cast<int64_t>(index)] = 1.0f;
  }
  fm.values = std::move(values);
  fm.cols = old_cols + extra;
  for (const std::string& s : symbols) fm.names.push_back("symbol=" + s);
}

}  // namespace

int32_t MarketDataset::PartOfSession(int32_t s) const {
  for (size_t p = 0; p < parts.size(); ++p) {
    if (s >= parts[p].first_session && s < parts[p].end_session) return static_cast<int32_t>(p);
  }
  return 0;
}

int64_t MarketDataset::FirstValidOfSession(int32_t s) const {
  return parts.empty() ? features.first_valid : parts[PartOfSession(s)].first_valid;
}

const std::string& MarketDataset::SymbolOfSession(int32_t s) const {
  return parts.empty() ? bars.symbol : parts[PartOfSession(s)].symbol;
}

nlohmann::json MarketDataset::NormalizerJson() const {
  if (parts.empty()) return normalizer.ToJson();
  std::vector<std::string> symbols;
  for (const SymbolPart& p : parts) symbols.push_back(p.symbol);
  return features::SymbolNormalizersJson(normalize_by, symbols, normalizers);
}

Result<std::shared_ptr<const MarketDataset>> PrepareSymbolsDataset(
    std::vector<market::Bars> symbols, const DatasetOptions& options, const DateRange& train,
    bool by_symbol, bool symbol_id) {
  if (symbols.size() < 2) {
    return Status::InvalidArgument("several symbols, one policy: needs two or more symbols");
  }
  std::vector<std::string> names;
  for (const market::Bars& b : symbols) names.push_back(b.symbol);
  std::vector<features::FeatureMatrix> matrices;
  for (const market::Bars& b : symbols) {
    RLT_ASSIGN_OR_RETURN(features::FeatureMatrix fm, features::ComputeFeatures(b, options.preset));
    if (TrainingRows(b, train, fm.first_valid).first < 0) return NoTrainingRows(train, b.symbol);
    matrices.push_back(std::move(fm));
  }
  auto ds = std::make_shared<MarketDataset>();
  ds->normalize_by = by_symbol ? "symbol" : "pooled";
  if (by_symbol) {
    for (size_t i = 0; i < symbols.size(); ++i) {
      const auto [begin, end] = TrainingRows(symbols[i], train, matrices[i].first_valid);
      RLT_ASSIGN_OR_RETURN(features::Normalizer norm,
                           features::Normalizer::Fit(matrices[i], begin, end, options.normalizer));
      ds->normalizers.push_back(std::move(norm));
    }
  } else {
    // One matrix of every symbol's training rows, fitted as one.
    features::FeatureMatrix pooled;
    pooled.names = matrices.front().names;
    pooled.cols = matrices.front().cols;
    for (size_t i = 0; i < symbols.size(); ++i) {
      const auto [begin, end] = TrainingRows(symbols[i], train, matrices[i].first_valid);
      pooled.values.insert(pooled.values.end(), matrices[i].values.begin() + begin * pooled.cols,
                           matrices[i].values.begin() + end * pooled.cols);
      pooled.rows += end - begin;
    }
    RLT_ASSIGN_OR_RETURN(features::Normalizer norm,
                         features::Normalizer::Fit(pooled, 0, pooled.rows, options.normalizer));
    ds->normalizers.push_back(std::move(norm));
  }
  ds->normalizer = ds->normalizers.front();
  ds->fit_range = train;
  // Concatenate: bars, sessions (indices shifted) and the normalised feature rows.
  market::Bars& all = ds->bars;
  features::FeatureMatrix& fm = ds->features;
  all.timezone = symbols.front().timezone;
  for (size_t i = 0; i < symbols.size(); ++i) {
    market::Bars& b = symbols[i];
    features::FeatureMatrix& m = matrices[i];
    ds->normalizers[by_symbol ? i : 0].Apply(m);
    if (symbol_id) AppendOneHot(m, names, i);
    SymbolPart part;
    part.symbol = b.symbol;
    part.first_bar = static_cast<int64_t>(all.size());
    part.end_bar = part.first_bar + static_cast<int64_t>(b.size());
    part.first_session = static_cast<int32_t>(all.sessions.size());
    part.end_session = part.first_session + static_cast<int32_t>(b.sessions.size());
    part.first_valid = part.first_bar + m.first_valid;
    const auto bar0 = static_cast<int32_t>(part.first_bar);
    all.symbol += (i == 0 ? "" : ",") + b.symbol;
    all.time.insert(all.time.end(), b.time.begin(), b.time.end());
    all.utc_offset.insert(all.utc_offset.end(), b.utc_offset.begin(), b.utc_offset.end());
    all.open.insert(all.open.end(), b.open.begin(), b.open.end());
    all.high.insert(all.high.end(), b.high.begin(), b.high.end());
    all.low.insert(all.low.end(), b.low.begin(), b.low.end());
    all.close.insert(all.close.end(), b.close.begin(), b.close.end());
    all.volume.insert(all.volume.end(), b.volume.begin(), b.volume.end());
    for (int32_t s : b.session) all.session.push_back(s + part.first_session);
    all.bar_in_session.insert(all.bar_in_session.end(), b.bar_in_session.begin(),
                              b.bar_in_session.end());
    all.last_in_session.insert(all.last_in_session.end(), b.last_in_session.begin(),
                               b.last_in_session.end());
    for (market::Session s : b.sessions) {
      s.begin += bar0;
      s.end += bar0;
      all.sessions.push_back(s);
    }
    if (i == 0) {
      fm.names = m.names;
      fm.cols = m.cols;
      fm.first_valid = m.first_valid;
    }
    fm.values.insert(fm.values.end(), m.values.begin(), m.values.end());
    fm.rows += m.rows;
    ds->parts.push_back(std::move(part));
    b = market::Bars();  // release as we go
    m = features::FeatureMatrix();
  }
  return std::shared_ptr<const MarketDataset>(std::move(ds));
}

std::shared_ptr<const MarketDataset> WithSymbolId(std::shared_ptr<const MarketDataset> data,
                                                  const std::vector<std::string>& symbols,
                                                  size_t index) {
  auto ds = std::make_shared<MarketDataset>(*data);
  AppendOneHot(ds->features, symbols, index);
  return ds;
}

Result<std::shared_ptr<const MarketDataset>> PrepareMarketDataset(market::Bars bars,
                                                                  const DatasetOptions& options,
                                                                  const DateRange& train) {
  RLT_ASSIGN_OR_RETURN(features::FeatureMatrix fm, features::ComputeFeatures(bars, options.preset));
  // Training rows: bars of sessions inside `train`, from the first valid feature row on.
  const auto [begin, end] = TrainingRows(bars, train, fm.first_valid);
  if (begin < 0) return NoTrainingRows(train, bars.symbol);
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
