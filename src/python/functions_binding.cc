// rltrade python: pricing, indicators and metrics on NumPy arrays (the Python package's
// rltrade.pricing, rltrade.indicators and rltrade.metrics broadcast and name the
// arguments; these take equal-length float64 arrays).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "eval/metrics.h"
#include "features/registry.h"
#include "market/bars.h"
#include "pricing/pricing.h"
#include "python/bindings.h"

namespace py = pybind11;

namespace rlt::python {
namespace {

using Doubles = py::array_t<double, py::array::c_style | py::array::forcecast>;
using Types = py::array_t<int8_t, py::array::c_style | py::array::forcecast>;

std::span<const double> Span(const Doubles& a) { return {a.data(), static_cast<size_t>(a.size())}; }

// A series of returns, positions or PnLs: NaN marks a missing row (skipped, as empyrical
// skips it), an infinity is an error naming the element.
std::span<const double> Series(const Doubles& a, const char* name) {
  for (py::ssize_t i = 0; i < a.size(); ++i) {
    if (std::isinf(a.data()[i])) {
      throw py::value_error(std::string(name) + "[" + std::to_string(i) + "] is " +
                            (a.data()[i] > 0 ? "inf" : "-inf") +
                            ": expected a finite number (or NaN for a missing row)");
    }
  }
  return Span(a);
}

// A scalar argument: finite and within [low, high], else a ValueError naming it.
double Checked(double v, const char* name, double low, double high) {
  if (!std::isfinite(v) || v < low || v > high) {
    throw py::value_error(std::string(name) + " = " + py::str(py::float_(v)).cast<std::string>() +
                          ": expected a finite number in [" +
                          py::str(py::float_(low)).cast<std::string>() + ", " +
                          py::str(py::float_(high)).cast<std::string>() + "]");
  }
  return v;
}

// The option inputs of element i.
struct Inputs {
  Types type;
  Doubles spot, strike, rate, dividend, vol, time;
  size_t size() const { return static_cast<size_t>(spot.size()); }
  void Check() const {
    for (const Doubles* a : {&strike, &rate, &dividend, &vol, &time}) {
      if (a->size() != spot.size()) throw py::value_error("the option inputs differ in length");
    }
    if (type.size() != spot.size()) throw py::value_error("the option inputs differ in length");
    for (py::ssize_t i = 0; i < type.size(); ++i) {
      if (type.data()[i] != 1 && type.data()[i] != -1) {
        throw py::value_error("element " + std::to_string(i) +
                              ": option type must be 'call' or 'put'");
      }
    }
  }
  pricing::OptionInputs At(size_t i) const {
    pricing::OptionInputs in;
    in.type = static_cast<pricing::OptionType>(type.data()[i]);
    in.spot = spot.data()[i];
    in.strike = strike.data()[i];
    in.rate = rate.data()[i];
    in.dividend = dividend.data()[i];
    in.vol = vol.data()[i];
    in.time = time.data()[i];
    return in;
  }
  pricing::OptionBatch<double> Batch() const {
    pricing::OptionBatch<double> b;
    b.size = size();
    b.type = reinterpret_cast<const pricing::OptionType*>(type.data());
    b.spot = spot.data();
    b.strike = strike.data();
    b.rate = rate.data();
    b.dividend = dividend.data();
    b.vol = vol.data();
    b.time = time.data();
    return b;
  }
};

pricing::Model ModelOf(const std::string& name) {
  Result<pricing::Model> m = pricing::ParseModel(name);
  if (!m.ok()) Raise(m.status());
  return *m;
}

std::string ElementPrefix(size_t i) { return "element " + std::to_string(i); }

Doubles Price(const std::string& model_name, const Inputs& in, int steps) {
  in.Check();
  const pricing::Model model = ModelOf(model_name);
  Doubles out(static_cast<py::ssize_t>(in.size()));
  if (model == pricing::Model::kBsm) {
    const Status st = pricing::BsmPriceBatch(in.Batch(), out.mutable_data());
    if (!st.ok()) Raise(st);
    return out;
  }
  pricing::ModelOptions options;
  options.binomial_steps = steps;
  for (size_t i = 0; i < in.size(); ++i) {
    Result<double> p = pricing::Price(model, in.At(i), options);
    if (!p.ok()) Raise(p.status(), ElementPrefix(i).c_str());
    out.mutable_data()[i] = *p;
  }
  return out;
}

py::dict Greeks(const std::string& model_name, const Inputs& in, int steps) {
  in.Check();
  const pricing::Model model = ModelOf(model_name);
  const py::ssize_t n = static_cast<py::ssize_t>(in.size());
  const char* names[] = {"price",         "delta", "gamma",        "vega",      "theta",
                         "theta_per_day", "rho",   "dividend_rho", "elasticity"};
  std::vector<Doubles> cols;
  for (size_t k = 0; k < std::size(names); ++k) cols.emplace_back(n);
  auto col = [&](int k) { return cols[k].mutable_data(); };
  if (model == pricing::Model::kBsm) {
    pricing::GreeksBatch<double> out{col(0), col(1), col(2), col(3),
                                     col(4), col(6), col(7), col(8)};
    const Status st = pricing::BsmGreeksBatch(in.Batch(), out);
    if (!st.ok()) Raise(st);
    for (py::ssize_t i = 0; i < n; ++i) col(5)[i] = col(4)[i] / 365.0;
  } else {
    pricing::ModelOptions options;
    options.binomial_steps = steps;
    for (size_t i = 0; i < in.size(); ++i) {
      Result<pricing::Greeks> g = pricing::ModelGreeks(model, in.At(i), options);
      if (!g.ok()) Raise(g.status(), ElementPrefix(i).c_str());
      const double v[] = {g->price,         g->delta, g->gamma,        g->vega,      g->theta,
                          g->theta_per_day, g->rho,   g->dividend_rho, g->elasticity};
      for (size_t k = 0; k < std::size(names); ++k) col(static_cast<int>(k))[i] = v[k];
    }
  }
  py::dict d;
  for (size_t k = 0; k < std::size(names); ++k) d[names[k]] = cols[k];
  return d;
}

Doubles ImpliedVol(const std::string& model_name, const Doubles& price, const Inputs& in,
                   int steps) {
  in.Check();
  if (price.size() != in.spot.size()) throw py::value_error("the option inputs differ in length");
  const pricing::Model model = ModelOf(model_name);
  pricing::ImpliedVolOptions options;
  options.model.binomial_steps = steps;
  Doubles out(static_cast<py::ssize_t>(in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    Result<double> v = pricing::ImpliedVol(model, in.At(i), price.data()[i], options);
    if (!v.ok()) Raise(v.status(), ElementPrefix(i).c_str());
    out.mutable_data()[i] = *v;
  }
  return out;
}

// An indicator over high/low/close arrays (empty ones when the indicator reads close
// only): (output names, outputs).
py::tuple Indicator(const std::string& name, const Doubles& high, const Doubles& low,
                    const Doubles& close, const std::map<std::string, std::string>& params) {
  Result<const features::IndicatorSpec*> spec = features::FindIndicator(name);
  if (!spec.ok()) Raise(spec.status());
  const py::ssize_t n = close.size();
  const bool hlc = (*spec)->inputs != "close";
  if (hlc && (high.size() != n || low.size() != n)) {
    throw py::value_error(name + ": high, low and close must have the same length (got " +
                          std::to_string(high.size()) + ", " + std::to_string(low.size()) + ", " +
                          std::to_string(n) + ")");
  }
  market::Bars bars;
  bars.close.assign(close.data(), close.data() + n);
  bars.high = hlc ? std::vector<double>(high.data(), high.data() + n) : bars.close;
  bars.low = hlc ? std::vector<double>(low.data(), low.data() + n) : bars.close;
  bars.open = bars.close;
  bars.volume.assign(n, 0.0);
  bars.time.resize(n);
  for (py::ssize_t i = 0; i < n; ++i) bars.time[i] = i * 60;
  bars.utc_offset.assign(n, 0);
  Result<features::IndicatorResult> r = features::ComputeIndicator(bars, name, params);
  if (!r.ok()) Raise(r.status());
  py::list outs;
  for (const std::vector<double>& o : r->outputs) {
    Doubles a(static_cast<py::ssize_t>(o.size()));
    std::copy(o.begin(), o.end(), a.mutable_data());
    outs.append(a);
  }
  return py::make_tuple(r->output_names, outs);
}

// A rate per period: above -100% (a loss of everything) and at most +100%.
void CheckRiskFree(double risk_free) { Checked(risk_free, "risk_free", -0.999999, 1.0); }

// Periods a year: from yearly (1) to one a second (366 days of 86,400 s).
constexpr int kMaxPeriodsPerYear = 366 * 86400;

eval::MetricsOptions Options(int periods_per_year, double risk_free) {
  if (periods_per_year < 1 || periods_per_year > kMaxPeriodsPerYear) {
    throw py::value_error("periods_per_year = " + std::to_string(periods_per_year) +
                          ": expected an integer in [1, " + std::to_string(kMaxPeriodsPerYear) +
                          "] (252 for daily returns)");
  }
  CheckRiskFree(risk_free);
  eval::MetricsOptions o;
  o.periods_per_year = periods_per_year;
  o.risk_free = risk_free;
  return o;
}

// The number of strategies tried and the variance of their Sharpe ratios.
void CheckTrials(double trials, double sharpe_variance) {
  Checked(trials, "trials", 1.0, 1e12);
  Checked(sharpe_variance, "sharpe_variance", 0.0, 1e12);
}

}  // namespace

// Registers `name`(model, type, spot, strike, rate, dividend, vol, time, steps) -> fn(...).
template <typename Fn>
void DefOptionFunction(py::module_& m, const char* name, Fn fn) {
  m.def(
      name,
      [fn](const std::string& model, Types type, Doubles spot, Doubles strike, Doubles rate,
           Doubles dividend, Doubles vol, Doubles time, int steps) {
        return fn(model,
                  Inputs{std::move(type), std::move(spot), std::move(strike), std::move(rate),
                         std::move(dividend), std::move(vol), std::move(time)},
                  steps);
      },
      py::arg("model"), py::arg("type"), py::arg("spot"), py::arg("strike"), py::arg("rate"),
      py::arg("dividend"), py::arg("vol"), py::arg("time"), py::arg("steps"));
}

void BindPricing(py::module_& m) {
  m.attr("MAX_BINOMIAL_STEPS") = pricing::kMaxBinomialSteps;
  DefOptionFunction(m, "price", &Price);
  DefOptionFunction(m, "greeks", &Greeks);
  m.def(
      "implied_vol",
      [](const std::string& model, Doubles price, Types type, Doubles spot, Doubles strike,
         Doubles rate, Doubles dividend, Doubles time, int steps) {
        Doubles vol(spot.size());  // not read by the solver
        std::fill(vol.mutable_data(), vol.mutable_data() + vol.size(), 0.2);
        return ImpliedVol(
            model, price,
            Inputs{std::move(type), std::move(spot), std::move(strike), std::move(rate),
                   std::move(dividend), std::move(vol), std::move(time)},
            steps);
      },
      py::arg("model"), py::arg("price"), py::arg("type"), py::arg("spot"), py::arg("strike"),
      py::arg("rate"), py::arg("dividend"), py::arg("time"), py::arg("steps"));
}

void BindIndicators(py::module_& m) {
  m.def("indicator", &Indicator, py::arg("name"), py::arg("high"), py::arg("low"), py::arg("close"),
        py::arg("params"));
  m.def("indicator_specs", [] {
    py::list out;
    for (const features::IndicatorSpec& s : features::IndicatorSpecs()) {
      py::list params;
      for (const features::ParamSpec& p : s.params) {
        params.append(py::make_tuple(p.name, p.default_value, p.min_value, p.max_value, p.integer));
      }
      py::dict d;
      d["name"] = s.name;
      d["description"] = s.description;
      d["inputs"] = s.inputs;
      d["params"] = params;
      d["outputs"] = s.outputs;
      out.append(d);
    }
    return out;
  });
}

void BindMetrics(py::module_& m) {
  using Fn = double (*)(std::span<const double>, const eval::MetricsOptions&);
  const std::pair<const char*, Fn> with_options[] = {
      {"sharpe_ratio", &eval::SharpeRatio},           {"sortino_ratio", &eval::SortinoRatio},
      {"downside_risk", &eval::DownsideRisk},         {"annual_return", &eval::AnnualReturn},
      {"annual_volatility", &eval::AnnualVolatility}, {"calmar_ratio", &eval::CalmarRatio}};
  for (const auto& [name, fn] : with_options) {
    m.def(
        name,
        [fn = fn](const Doubles& r, int periods_per_year, double risk_free) {
          return fn(Series(r, "returns"), Options(periods_per_year, risk_free));
        },
        py::arg("returns"), py::arg("periods_per_year") = 252, py::arg("risk_free") = 0.0);
  }
  using Plain = double (*)(std::span<const double>);
  const std::pair<const char*, Plain> plain[] = {{"max_drawdown", &eval::MaxDrawdown},
                                                 {"cum_returns_final", &eval::CumReturnsFinal},
                                                 {"win_rate", &eval::WinRate},
                                                 {"exposure", &eval::Exposure},
                                                 {"turnover", &eval::Turnover}};
  for (const auto& [name, fn] : plain) {
    m.def(
        name, [fn = fn](const Doubles& r) { return fn(Series(r, "values")); }, py::arg("values"));
  }
  m.def(
      "max_drawdown_duration",
      [](const Doubles& r) { return eval::MaxDrawdownDuration(Series(r, "returns")); },
      py::arg("returns"));
  m.def(
      "observations", [](const Doubles& r) { return eval::Observations(Series(r, "returns")); },
      py::arg("returns"));
  m.def(
      "return_metrics",
      [](const Doubles& r, int periods_per_year, double risk_free) {
        const eval::ReturnMetrics x =
            eval::ComputeReturnMetrics(Series(r, "returns"), Options(periods_per_year, risk_free));
        py::dict d;
        d["sharpe_ratio"] = x.sharpe_ratio;
        d["sortino_ratio"] = x.sortino_ratio;
        d["downside_risk"] = x.downside_risk;
        d["annual_return"] = x.annual_return;
        d["annual_volatility"] = x.annual_volatility;
        d["max_drawdown"] = x.max_drawdown;
        d["calmar_ratio"] = x.calmar_ratio;
        d["cum_returns_final"] = x.cum_returns_final;
        d["win_rate"] = x.win_rate;
        d["observations"] = x.observations;
        d["max_drawdown_duration"] = x.max_drawdown_duration;
        d["psr"] = x.psr;
        d["psr_observations"] = x.psr_observations;
        d["few_observations"] = x.few_observations;
        return d;
      },
      py::arg("returns"), py::arg("periods_per_year") = 252, py::arg("risk_free") = 0.0);
  m.def(
      "probabilistic_sharpe_ratio",
      [](const Doubles& r, double benchmark, double risk_free) {
        Checked(benchmark, "benchmark_sharpe_per_period", -1e6, 1e6);
        CheckRiskFree(risk_free);
        const eval::PsrResult p =
            eval::ProbabilisticSharpeRatio(Series(r, "returns"), benchmark, risk_free);
        py::dict d;
        d["psr"] = p.psr;
        d["observations"] = p.observations;
        d["sharpe_per_period"] = p.sharpe_per_period;
        d["skewness"] = p.skewness;
        d["kurtosis"] = p.kurtosis;
        return d;
      },
      py::arg("returns"), py::arg("benchmark_sharpe_per_period") = 0.0, py::arg("risk_free") = 0.0);
  auto dsr_dict = [](const eval::DeflatedSharpeResult& r) {
    py::dict d;
    d["dsr"] = r.dsr;
    d["sr0"] = r.sr0;
    d["sharpe_per_period"] = r.sharpe_per_period;
    d["observations"] = r.observations;
    d["trials"] = r.trials;
    d["skewness"] = r.skewness;
    d["kurtosis"] = r.kurtosis;
    return d;
  };
  m.def(
      "deflated_sharpe_ratio",
      [dsr_dict](const Doubles& r, double trials, double sharpe_variance) {
        CheckTrials(trials, sharpe_variance);
        return dsr_dict(eval::DeflatedSharpeRatio(Series(r, "returns"), trials, sharpe_variance));
      },
      py::arg("returns"), py::arg("trials"), py::arg("sharpe_variance"));
  m.def(
      "deflated_sharpe_from_moments",
      [dsr_dict](double sharpe, int64_t observations, double skewness, double kurtosis,
                 double trials, double sharpe_variance) {
        CheckTrials(trials, sharpe_variance);
        Checked(sharpe, "sharpe_per_period", -1e6, 1e6);
        if (observations < 2) {
          throw py::value_error("observations = " + std::to_string(observations) +
                                ": expected at least 2 returns");
        }
        Checked(skewness, "skewness", -1e6, 1e6);
        Checked(kurtosis, "kurtosis", 0.0, 1e12);  // non-excess: 3 for a normal
        return dsr_dict(eval::DeflatedSharpeFromMoments(sharpe, observations, skewness, kurtosis,
                                                        trials, sharpe_variance));
      },
      py::arg("sharpe_per_period"), py::arg("observations"), py::arg("skewness"),
      py::arg("kurtosis"), py::arg("trials"), py::arg("sharpe_variance"));
  m.def(
      "trade_metrics",
      [](const Doubles& pnls) {
        const eval::TradeMetrics t = eval::ComputeTradeMetrics(Series(pnls, "trade_pnls"));
        py::dict d;
        d["num_trades"] = t.num_trades;
        d["gross_profit"] = t.gross_profit;
        d["gross_loss"] = t.gross_loss;
        d["profit_factor"] = t.profit_factor;
        d["average_trade_pnl"] = t.average_trade_pnl;
        d["win_rate"] = t.win_rate;
        return d;
      },
      py::arg("trade_pnls"));
}

}  // namespace rlt::python
