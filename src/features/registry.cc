// rltrade features: the indicator registry (see registry.h).
#include "features/registry.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "core/options.h"
#include "features/indicators.h"
#include "features/reference.h"

namespace rlt::features {
namespace {

using Values = std::map<std::string, double>;
using Outputs = std::vector<std::vector<double>>;

// One registered indicator: its spec, how to compute it with the fast kernels or with the
// plain-loop reference (`reference` = true), and its lookback. Keeping both
// implementations in the entry lets one test check every registered indicator.
struct Entry {
  IndicatorSpec spec;
  std::function<Outputs(const market::Bars&, const Values&, bool reference)> compute;
  std::function<int(const Values&)> lookback;
};

int I(const Values& v, const char* key) { return static_cast<int>(v.at(key)); }

ParamSpec Period(double def, double min = 2) { return {"period", def, min, 100000, true}; }

// A single-output indicator of high/low/close with one period: fast kernel `f` and its
// plain reference `rf`.
template <typename Params>
Entry HlcPeriod(const char* name, const char* description,
                std::vector<double> (*f)(std::span<const double>, std::span<const double>,
                                         std::span<const double>, const Params&),
                std::vector<double> (*rf)(std::span<const double>, std::span<const double>,
                                          std::span<const double>, const Params&),
                int (*lookback)(const Params&), double min_period = 2) {
  return {{name, description, "high,low,close", {Period(14, min_period)}, {"value"}},
          [f, rf](const market::Bars& b, const Values& v, bool ref) {
            return Outputs{(ref ? rf : f)(b.high, b.low, b.close, Params{I(v, "period")})};
          },
          [lookback](const Values& v) { return lookback(Params{I(v, "period")}); }};
}

// A single-output indicator of the close with one period.
template <typename Params>
Entry ClosePeriod(const char* name, const char* description,
                  std::vector<double> (*f)(std::span<const double>, const Params&),
                  std::vector<double> (*rf)(std::span<const double>, const Params&),
                  int (*lookback)(const Params&), double default_period) {
  return {{name, description, "close", {Period(default_period)}, {"value"}},
          [f, rf](const market::Bars& b, const Values& v, bool ref) {
            return Outputs{(ref ? rf : f)(b.close, Params{I(v, "period")})};
          },
          [lookback](const Values& v) { return lookback(Params{I(v, "period")}); }};
}

std::vector<Entry> CloseEntries() {
  namespace ref = reference;
  std::vector<Entry> e;
  e.push_back(
      ClosePeriod<SmaParams>("sma", "simple moving average", Sma, ref::Sma, SmaLookback, 30));
  e.push_back(ClosePeriod<EmaParams>("ema", "exponential moving average (SMA seed)", Ema, ref::Ema,
                                     EmaLookback, 30));
  e.push_back(ClosePeriod<RsiParams>("rsi", "Wilder relative strength index", Rsi, ref::Rsi,
                                     RsiLookback, 14));
  e.push_back({{"macd",
                "moving average convergence/divergence",
                "close",
                {{"fast", 12, 2, 100000, true},
                 {"slow", 26, 2, 100000, true},
                 {"signal", 9, 1, 100000, true}},
                {"macd", "macdsignal", "macdhist"}},
               [](auto& b, auto& v, bool r) {
                 const MacdParams p{I(v, "fast"), I(v, "slow"), I(v, "signal")};
                 MacdOutput m = r ? ref::Macd(b.close, p) : Macd(b.close, p);
                 return Outputs{m.macd, m.signal, m.hist};
               },
               [](auto& v) {
                 return MacdLookback({I(v, "fast"), I(v, "slow"), I(v, "signal")});
               }});
  e.push_back({{"bbands",
                "Bollinger bands (SMA, population stddev)",
                "close",
                {Period(5), {"nbdevup", 2, -3e37, 3e37, false}, {"nbdevdn", 2, -3e37, 3e37, false}},
                {"upperband", "middleband", "lowerband"}},
               [](auto& b, auto& v, bool r) {
                 const BbandsParams p{I(v, "period"), v.at("nbdevup"), v.at("nbdevdn")};
                 BbandsOutput o = r ? ref::Bbands(b.close, p) : Bbands(b.close, p);
                 return Outputs{o.upper, o.middle, o.lower};
               },
               [](auto& v) { return BbandsLookback({I(v, "period")}); }});
  e.push_back({{"stddev",
                "population standard deviation times nbdev",
                "close",
                {Period(5), {"nbdev", 1, -3e37, 3e37, false}},
                {"value"}},
               [](auto& b, auto& v, bool r) {
                 const StddevParams p{I(v, "period"), v.at("nbdev")};
                 return Outputs{r ? ref::Stddev(b.close, p) : Stddev(b.close, p)};
               },
               [](auto& v) { return StddevLookback({I(v, "period")}); }});
  return e;
}

std::vector<Entry> BarEntries() {
  namespace ref = reference;
  std::vector<Entry> e;
  e.push_back(
      HlcPeriod<AtrParams>("atr", "Wilder average true range", Atr, ref::Atr, AtrLookback, 1));
  e.push_back(HlcPeriod<AtrParams>("natr", "100 * ATR / close", Natr, ref::Natr, AtrLookback, 1));
  e.push_back(HlcPeriod<WillrParams>("willr", "Williams %R", Willr, ref::Willr, WillrLookback));
  e.push_back(HlcPeriod<CciParams>("cci", "commodity channel index", Cci, ref::Cci, CciLookback));
  e.push_back(HlcPeriod<DmiParams>("plus_di", "plus directional indicator", PlusDi, ref::PlusDi,
                                   DiLookback, 1));
  e.push_back(HlcPeriod<DmiParams>("minus_di", "minus directional indicator", MinusDi, ref::MinusDi,
                                   DiLookback, 1));
  e.push_back(HlcPeriod<DmiParams>("dx", "directional movement index", Dx, ref::Dx, DiLookback));
  e.push_back(HlcPeriod<DmiParams>("adx", "average directional index", Adx, ref::Adx, AdxLookback));
  e.push_back(HlcPeriod<DmiParams>("adxr", "ADX rating", Adxr, ref::Adxr, AdxrLookback));
  e.push_back({{"stoch",
                "slow stochastic (SMA smoothing)",
                "high,low,close",
                {{"fastk", 5, 1, 100000, true},
                 {"slowk", 3, 1, 100000, true},
                 {"slowd", 3, 1, 100000, true}},
                {"slowk", "slowd"}},
               [](auto& b, auto& v, bool r) {
                 const StochParams p{I(v, "fastk"), I(v, "slowk"), I(v, "slowd")};
                 StochOutput s =
                     r ? ref::Stoch(b.high, b.low, b.close, p) : Stoch(b.high, b.low, b.close, p);
                 return Outputs{s.slowk, s.slowd};
               },
               [](auto& v) {
                 return StochLookback({I(v, "fastk"), I(v, "slowk"), I(v, "slowd")});
               }});
  return e;
}

const std::vector<Entry>& Entries() {
  static const std::vector<Entry>* entries = [] {
    auto* all = new std::vector<Entry>(CloseEntries());
    for (Entry& e : BarEntries()) all->push_back(std::move(e));
    std::sort(all->begin(), all->end(),
              [](const Entry& a, const Entry& b) { return a.spec.name < b.spec.name; });
    return all;
  }();
  return *entries;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Resolves user parameters against a spec: defaults, the bbands `nbdev` shorthand,
// number parsing and range checks.
Result<Values> ResolveParams(const IndicatorSpec& spec,
                             const std::map<std::string, std::string>& given) {
  Values values;
  std::vector<std::string> names;
  for (const ParamSpec& p : spec.params) {
    values[p.name] = p.default_value;
    names.push_back(p.name);
  }
  const bool has_nbdev_alias = spec.name == "bbands";
  if (has_nbdev_alias) names.push_back("nbdev");
  auto assign = [&](const std::string& key, double value) -> Status {
    const auto p = std::find_if(spec.params.begin(), spec.params.end(),
                                [&](const ParamSpec& s) { return s.name == key; });
    if (p->integer && value != std::floor(value)) {
      return Status::InvalidArgument(spec.name + ": parameter '" + key +
                                     "' must be an integer, got " + std::to_string(value));
    }
    if (value < p->min_value || value > p->max_value) {
      return Status::InvalidArgument(
          spec.name + ": parameter '" + key + "' = " + std::to_string(value) + " is outside [" +
          std::to_string(p->min_value) + ", " + std::to_string(p->max_value) + "]");
    }
    values[key] = value;
    return Status::Ok();
  };
  // The shorthand first, so that explicit nbdevup/nbdevdn override it.
  std::vector<std::pair<std::string, std::string>> ordered(given.begin(), given.end());
  std::stable_partition(ordered.begin(), ordered.end(),
                        [](const auto& kv) { return kv.first == "nbdev"; });
  for (const auto& [key, text] : ordered) {
    if (std::find(names.begin(), names.end(), key) == names.end()) {
      return Status::InvalidArgument("indicator '" + spec.name + "' has no parameter '" + key +
                                     "'" + NearestNameHint(key, names) +
                                     "; valid parameters: " + Join(names));
    }
    // Decimal only, as the CSV reader and the config binder read numbers (strtod took
    // 0x10 as 16).
    double value = 0;
    if (!rlt::ParseValue(text, &value).ok()) {
      return Status::InvalidArgument(spec.name + ": parameter '" + key +
                                     "' needs a finite decimal number, got '" + text + "'");
    }
    if (has_nbdev_alias && key == "nbdev") {
      RLT_RETURN_IF_ERROR(assign("nbdevup", value));
      RLT_RETURN_IF_ERROR(assign("nbdevdn", value));
    } else {
      RLT_RETURN_IF_ERROR(assign(key, value));
    }
  }
  return values;
}

}  // namespace

std::string NearestNameHint(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::string::npos;
  for (const std::string& c : candidates) {
    const size_t d = static_cast<size_t>(EditDistance(name, c));
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  if (best.empty() || best_distance > std::max<size_t>(2, name.size() / 3)) return "";
  return "; did you mean '" + best + "'?";
}

const std::vector<IndicatorSpec>& IndicatorSpecs() {
  static const std::vector<IndicatorSpec>* specs = [] {
    auto* out = new std::vector<IndicatorSpec>();
    for (const Entry& e : Entries()) out->push_back(e.spec);
    return out;
  }();
  return *specs;
}

std::vector<std::string> IndicatorNames() {
  std::vector<std::string> names;
  for (const IndicatorSpec& s : IndicatorSpecs()) names.push_back(s.name);
  return names;
}

Result<const IndicatorSpec*> FindIndicator(const std::string& name) {
  for (const IndicatorSpec& s : IndicatorSpecs()) {
    if (s.name == name) return &s;
  }
  return Status::NotFound("unknown indicator '" + name + "'" +
                          NearestNameHint(name, IndicatorNames()) +
                          "; valid indicators: " + Join(IndicatorNames()));
}

Result<IndicatorResult> ComputeIndicator(const market::Bars& bars, const std::string& name,
                                         const std::map<std::string, std::string>& params,
                                         Implementation implementation) {
  RLT_ASSIGN_OR_RETURN(const IndicatorSpec* spec, FindIndicator(name));
  const Entry& entry = Entries()[spec - IndicatorSpecs().data()];
  RLT_ASSIGN_OR_RETURN(Values values, ResolveParams(*spec, params));
  const size_t n = bars.size();
  if (bars.high.size() != n || bars.low.size() != n || bars.close.size() != n) {
    return Status::InvalidArgument("bars have high/low/close columns of unequal length");
  }
  IndicatorResult result;
  result.indicator = spec->name;
  for (const ParamSpec& p : spec->params) result.params.emplace_back(p.name, values[p.name]);
  result.lookback = entry.lookback(values);
  result.output_names = spec->outputs;
  result.outputs = entry.compute(bars, values, implementation == Implementation::kReference);
  return result;
}

Result<std::map<std::string, std::string>> ParseParams(const std::vector<std::string>& items) {
  std::map<std::string, std::string> out;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("parameter '" + item + "' is not KEY=VALUE (e.g. period=20)");
    }
    const std::string key = item.substr(0, eq);
    if (!out.emplace(key, item.substr(eq + 1)).second) {
      return Status::InvalidArgument("parameter '" + key + "' given twice");
    }
  }
  return out;
}

}  // namespace rlt::features
