// rltrade features: normalisers (see normalizer.h).
#include "features/normalizer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/file_io.h"
#include "core/json_parse.h"
#include "core/json_text.h"
#include "features/library.h"

namespace rlt::features {
namespace {

constexpr int kJsonVersion = 1;

bool RowComplete(const FeatureMatrix& m, int64_t t) {
  const float* row = m.row(t);
  for (int64_t j = 0; j < m.cols; ++j) {
    if (!std::isfinite(row[j])) return false;
  }
  return true;
}

// Edge j = the empirical quantile at probability j / (count - 1) of sorted values
// (linear interpolation between order statistics).
std::vector<double> QuantileEdges(std::vector<double> values, int count) {
  std::sort(values.begin(), values.end());
  std::vector<double> edges(count);
  const double last = static_cast<double>(values.size() - 1);
  for (int j = 0; j < count; ++j) {
    const double pos = last * j / (count - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, values.size() - 1);
    edges[j] = values[lo] + (pos - lo) * (values[hi] - values[lo]);
  }
  return edges;
}

Status CheckOptions(const NormalizerOptions& o) {
  if (o.kind == NormalizerKind::kQuantile && o.quantiles < 2) {
    return Status::InvalidArgument("normalizer: quantiles must be >= 2, got " +
                                   std::to_string(o.quantiles));
  }
  if (o.kind == NormalizerKind::kQuantile && o.quantiles_binary != 0 && o.quantiles_binary < 2) {
    return Status::InvalidArgument(
        "normalizer: quantiles_binary must be 0 (as quantiles) or >= 2, got " +
        std::to_string(o.quantiles_binary));
  }
  if (o.kind == NormalizerKind::kRollingZScore && o.window < 2) {
    return Status::InvalidArgument("normalizer: window must be >= 2, got " +
                                   std::to_string(o.window));
  }
  return Status::Ok();
}

// json[key] as an integer of type Int. nlohmann converts a float such as 1e30 to an int
// with undefined behaviour (found by fuzz/normalizer_json_fuzz): type and range are
// checked here first.
template <typename Int>
Status ReadInteger(const nlohmann::json& json, const char* key, Int* out) {
  const nlohmann::json& v = json.at(key);
  bool fits = false;
  if (v.is_number_unsigned()) {
    fits = v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<Int>::max());
  } else if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    fits = i >= std::numeric_limits<Int>::min() && i <= std::numeric_limits<Int>::max();
  }
  if (!fits) {
    return Status::DataError("malformed normalizer JSON: \"" + std::string(key) +
                             "\" must be an integer within range, found " +
                             JsonText(v).substr(0, 40));
  }
  *out = v.get<Int>();
  return Status::Ok();
}

}  // namespace

std::string NormalizerKindName(NormalizerKind kind) {
  switch (kind) {
    case NormalizerKind::kNone:
      return "none";
    case NormalizerKind::kZScore:
      return "zscore";
    case NormalizerKind::kQuantile:
      return "quantile";
    case NormalizerKind::kRollingZScore:
      return "rolling_zscore";
  }
  return "none";
}

Result<NormalizerKind> ParseNormalizerKind(const std::string& name) {
  for (NormalizerKind k : {NormalizerKind::kNone, NormalizerKind::kZScore,
                           NormalizerKind::kQuantile, NormalizerKind::kRollingZScore}) {
    if (NormalizerKindName(k) == name) return k;
  }
  return Status::InvalidArgument("unknown normalizer kind '" + name +
                                 "'; valid kinds: none, zscore, quantile, rolling_zscore");
}

double QuantileMap(const std::vector<double>& edges, double x) {
  if (std::isnan(x)) return x;
  const size_t m = edges.size();
  if (x < edges.front()) return -1.0;
  if (x > edges.back()) return 1.0;
  const size_t lo = std::lower_bound(edges.begin(), edges.end(), x) - edges.begin();
  const size_t hi = std::upper_bound(edges.begin(), edges.end(), x) - edges.begin();
  double position;  // fractional edge index
  if (lo < hi) {    // x equals edges[lo..hi-1]: the middle of the tied edges
    position = 0.5 * static_cast<double>(lo + hi - 1);
  } else {  // edges[lo-1] < x < edges[lo]
    position = (lo - 1) + (x - edges[lo - 1]) / (edges[lo] - edges[lo - 1]);
  }
  return 2.0 * position / static_cast<double>(m - 1) - 1.0;
}

Result<Normalizer> Normalizer::Fit(const FeatureMatrix& features, int64_t begin_row,
                                   int64_t end_row, const NormalizerOptions& options) {
  RLT_RETURN_IF_ERROR(CheckOptions(options));
  if (begin_row < 0 || begin_row >= end_row || end_row > features.rows) {
    return Status::OutOfRange("normalizer fit range [" + std::to_string(begin_row) + ", " +
                              std::to_string(end_row) + ") is empty or outside the " +
                              std::to_string(features.rows) + " feature rows");
  }
  Normalizer n;
  n.options_ = options;
  n.names_ = features.names;
  if (options.kind != NormalizerKind::kZScore && options.kind != NormalizerKind::kQuantile) {
    return n;
  }
  std::vector<int64_t> rows;
  for (int64_t t = begin_row; t < end_row; ++t) {
    if (RowComplete(features, t)) rows.push_back(t);
  }
  if (rows.empty()) {
    return Status::InvalidArgument("normalizer fit range [" + std::to_string(begin_row) + ", " +
                                   std::to_string(end_row) +
                                   ") has no row without NaN (all warm-up?)");
  }
  for (int64_t j = 0; j < features.cols; ++j) {
    std::vector<double> values;
    values.reserve(rows.size());
    for (int64_t t : rows) values.push_back(features.at(t, j));
    if (options.kind == NormalizerKind::kQuantile) {
      const bool flag = options.quantiles_binary != 0 && IsRegimeSignal(features.names[j]);
      n.edges_.push_back(
          QuantileEdges(std::move(values), flag ? options.quantiles_binary : options.quantiles));
      continue;
    }
    double mean = 0.0;
    for (double v : values) mean += v;
    mean /= static_cast<double>(values.size());
    double ss = 0.0;
    for (double v : values) ss += (v - mean) * (v - mean);
    const double sd = std::sqrt(ss / static_cast<double>(values.size()));
    n.mean_.push_back(mean);
    n.std_.push_back(sd > 0.0 ? sd : 1.0);
  }
  return n;
}

double Normalizer::Clip(double v) const {
  if (options_.clip <= 0.0 || std::isnan(v)) return v;
  return std::clamp(v, -options_.clip, options_.clip);
}

Status Normalizer::CheckCompatible(const std::vector<std::string>& names) const {
  const size_t common = std::min(names.size(), names_.size());
  for (size_t i = 0; i < common; ++i) {
    if (names[i] != names_[i]) {
      return Status::InvalidArgument("normalizer feature " + std::to_string(i) + " is '" +
                                     names_[i] + "' but the data's is '" + names[i] + "'");
    }
  }
  if (names.size() != names_.size()) {
    return Status::InvalidArgument("normalizer has " + std::to_string(names_.size()) +
                                   " features, the data " + std::to_string(names.size()) +
                                   "; first unmatched: '" +
                                   (names.size() > common ? names[common] : names_[common]) + "'");
  }
  return Status::Ok();
}

double Normalizer::MapValue(size_t col, double v) const {
  if (std::isnan(v)) return v;
  if (options_.kind == NormalizerKind::kZScore) return Clip((v - mean_[col]) / std_[col]);
  if (options_.kind == NormalizerKind::kQuantile) return QuantileMap(edges_[col], v);
  RLT_CHECK(options_.kind == NormalizerKind::kNone);
  return Clip(v);
}

void Normalizer::Apply(FeatureMatrix& features) const {
  const Status compatible = CheckCompatible(features.names);
  RLT_CHECK_MSG(compatible.ok(), compatible.message());
  if (options_.kind == NormalizerKind::kRollingZScore) return ApplyRolling(features);
  for (int64_t t = 0; t < features.rows; ++t) {
    float* row = features.values.data() + t * features.cols;
    for (int64_t j = 0; j < features.cols; ++j) {
      const double v = row[j];
      if (std::isnan(v)) continue;
      row[j] = static_cast<float>(MapValue(static_cast<size_t>(j), v));
    }
  }
}

RollingZScore::RollingZScore(int64_t window) : window_(window), ring_(window) {
  RLT_CHECK(window >= 1);
}

double RollingZScore::Update(double x) {
  const int64_t i = count_++;
  if (i == 0) anchor_ = x;
  const int64_t k = std::min(i + 1, window_);
  double& slot = ring_[i % window_];  // holds x_{i - window} once the ring is full
  if (i % window_ == 0) {             // exact restart over the current window
    slot = x;
    s1_ = s2_ = 0.0;
    for (int64_t r = i + 1 - k; r <= i; ++r) {
      const double v = ring_[r % window_];
      s1_ += v - anchor_;
      s2_ += (v - anchor_) * (v - anchor_);
    }
  } else {
    const double d = x - anchor_;
    s1_ += d;
    s2_ += d * d;
    if (i >= window_) {
      const double out = slot - anchor_;
      s1_ -= out;
      s2_ -= out * out;
    }
    slot = x;
  }
  const double mean = s1_ / k;
  const double var = s2_ / k - mean * mean;
  const bool flat = k < 2 || var <= 1e-12 * (s2_ / k);
  return flat ? 0.0 : (x - anchor_ - mean) / std::sqrt(var);
}

// Causal rolling z-score per column over rows [first_valid, t], at most `window` of them.
void Normalizer::ApplyRolling(FeatureMatrix& m) const {
  for (int64_t j = 0; j < m.cols; ++j) {
    RollingZScore zscore(options_.window);
    for (int64_t t = m.first_valid; t < m.rows; ++t) {
      float& value = m.values[t * m.cols + j];
      const double x = value;
      const double z = zscore.Update(x);
      if (!std::isnan(x)) value = static_cast<float>(Clip(z));
    }
  }
}

nlohmann::json Normalizer::ToJson() const {
  nlohmann::json j;
  j["format"] = "rltrade.normalizer";
  j["version"] = kJsonVersion;
  j["kind"] = NormalizerKindName(options_.kind);
  j["clip"] = options_.clip;
  j["quantiles"] = options_.quantiles;
  if (options_.quantiles_binary != 0) j["quantiles_binary"] = options_.quantiles_binary;
  j["window"] = options_.window;
  j["names"] = names_;
  j["mean"] = mean_;
  j["std"] = std_;
  j["edges"] = edges_;
  return j;
}

Result<Normalizer> Normalizer::LoadFile(const std::string& path) {
  RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  Result<nlohmann::json> json = ParseJson<nlohmann::json>(text, path);
  if (!json.ok()) return Status::DataError(json.status().message());
  Result<Normalizer> n = FromJson(*json);
  if (!n.ok()) return Annotate(n.status(), path + ": ");
  return n;
}

Result<Normalizer> Normalizer::LoadFile(const std::string& path, const std::string& symbol) {
  RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  Result<nlohmann::json> json = ParseJson<nlohmann::json>(text, path);
  if (!json.ok()) return Status::DataError(json.status().message());
  if (!json->is_object() || json->value("format", "") != "rltrade.symbol_normalizers") {
    Result<Normalizer> n = FromJson(*json);
    if (!n.ok()) return Annotate(n.status(), path + ": ");
    return n;
  }
  std::string by, names;
  const nlohmann::json* entry = nullptr;
  try {
    if (json->at("version") != kJsonVersion) {
      return Status::DataError(path + ": not a version " + std::to_string(kJsonVersion) +
                               " rltrade.symbol_normalizers document");
    }
    by = json->at("normalize_by").get<std::string>();
    const auto symbols = json->at("symbols").get<std::vector<std::string>>();
    for (const std::string& s : symbols) names += (names.empty() ? "" : ", ") + s;
    const nlohmann::json& all = json->at("normalizers");
    if (symbol.empty()) {
      return Status::InvalidArgument(path + ": the run was trained on several symbols (" + names +
                                     ") and is used one symbol at a time: choose one with "
                                     "--symbol SYMBOL");
    }
    if (std::find(symbols.begin(), symbols.end(), symbol) == symbols.end()) {
      return Status::InvalidArgument(path + ": the run was trained on " + names + ", not on '" +
                                     symbol + "'; choose one of them");
    }
    const std::string key = by == "pooled" ? std::string("pooled") : symbol;
    if (!all.is_object() || !all.contains(key)) {
      return Status::DataError(path + ": \"normalizers\" has no entry \"" + key + "\"");
    }
    entry = &all.at(key);
  } catch (const nlohmann::json::exception& e) {
    return Status::DataError(path + ": malformed symbol normalizers JSON: " + e.what());
  }
  Result<Normalizer> n = FromJson(*entry);
  if (!n.ok()) return Annotate(n.status(), path + ": normalizers." + symbol + ": ");
  return n;
}

nlohmann::json SymbolNormalizersJson(const std::string& normalize_by,
                                     const std::vector<std::string>& symbols,
                                     const std::vector<Normalizer>& normalizers) {
  const bool pooled = normalize_by == "pooled";
  RLT_CHECK(normalizers.size() == (pooled ? 1 : symbols.size()));
  nlohmann::json j;
  j["format"] = "rltrade.symbol_normalizers";
  j["version"] = kJsonVersion;
  j["normalize_by"] = normalize_by;
  j["symbols"] = symbols;
  nlohmann::json all = nlohmann::json::object();
  for (size_t i = 0; i < normalizers.size(); ++i) {
    all[pooled ? std::string("pooled") : symbols[i]] = normalizers[i].ToJson();
  }
  j["normalizers"] = std::move(all);
  return j;
}

Result<Normalizer> Normalizer::FromJson(const nlohmann::json& json,
                                        const std::vector<std::string>& expected_names) {
  Normalizer n;
  try {  // nlohmann reports type errors by exception: convert them here, at the edge
    if (json.value("format", "") != "rltrade.normalizer" || json.at("version") != kJsonVersion) {
      return Status::DataError("not an rltrade normalizer (version " +
                               std::to_string(kJsonVersion) + ") JSON document");
    }
    RLT_ASSIGN_OR_RETURN(n.options_.kind, ParseNormalizerKind(json.at("kind").get<std::string>()));
    n.options_.clip = json.at("clip");
    RLT_RETURN_IF_ERROR(ReadInteger(json, "quantiles", &n.options_.quantiles));
    RLT_RETURN_IF_ERROR(ReadInteger(json, "window", &n.options_.window));
    if (json.contains("quantiles_binary")) {
      RLT_RETURN_IF_ERROR(ReadInteger(json, "quantiles_binary", &n.options_.quantiles_binary));
    }
    n.names_ = json.at("names").get<std::vector<std::string>>();
    n.mean_ = json.at("mean").get<std::vector<double>>();
    n.std_ = json.at("std").get<std::vector<double>>();
    n.edges_ = json.at("edges").get<std::vector<std::vector<double>>>();
  } catch (const nlohmann::json::exception& e) {
    return Status::DataError(std::string("malformed normalizer JSON: ") + e.what());
  }
  RLT_RETURN_IF_ERROR(CheckOptions(n.options_));
  const size_t cols = n.names_.size();
  const bool zscore_ok = n.options_.kind != NormalizerKind::kZScore ||
                         (n.mean_.size() == cols && n.std_.size() == cols);
  bool quantile_ok = n.options_.kind != NormalizerKind::kQuantile || n.edges_.size() == cols;
  for (const auto& e : n.edges_) {
    quantile_ok = quantile_ok && e.size() >= 2 && std::is_sorted(e.begin(), e.end());
  }
  if (!zscore_ok || !quantile_ok) {
    return Status::DataError("normalizer JSON statistics do not match its " + std::to_string(cols) +
                             " feature names");
  }
  if (!expected_names.empty()) RLT_RETURN_IF_ERROR(n.CheckCompatible(expected_names));
  return n;
}

}  // namespace rlt::features
