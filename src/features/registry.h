// rltrade features: indicators by TA-Lib-style name, with key=value parameters.
//
// The registry is how users (the `rltrade indicator` command, configs) reach indicators
// without C++: a lowercase TA-Lib name, parameters by TA-Lib name with TA-Lib defaults, and
// named outputs. Inputs are the bars' close (sma, ema, macd, rsi, bbands, stddev) or
// high/low/close (the others), as in TA-Lib.
//
//   name      params (default)                               outputs
//   sma       period (30)                                    value
//   ema       period (30)                                    value
//   macd      fast (12), slow (26), signal (9)               macd, macdsignal, macdhist
//   rsi       period (14)                                    value
//   bbands    period (5), nbdevup (2), nbdevdn (2), nbdev    upperband, middleband, lowerband
//   stddev    period (5), nbdev (1)                          value
//   atr, natr period (14)                                    value
//   stoch     fastk (5), slowk (3), slowd (3)                slowk, slowd
//   willr, cci, plus_di, minus_di, dx, adx, adxr  period (14)  value
//
// Single-output indicators name their output `value` (as TA-Lib's regression tables do).
// For bbands, `nbdev` is shorthand that sets both nbdevup and nbdevdn (an explicit
// nbdevup/nbdevdn given alongside it wins). Periods are integers within TA-Lib's ranges.
// Unknown names, unknown parameters and out-of-range values are InvalidArgument/NotFound
// errors listing the valid choices and the nearest match.
#ifndef RLT_FEATURES_REGISTRY_H_
#define RLT_FEATURES_REGISTRY_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "market/bars.h"

namespace rlt::features {

struct ParamSpec {
  std::string name;
  double default_value = 0;
  double min_value = 0;
  double max_value = 0;
  bool integer = true;
};

struct IndicatorSpec {
  std::string name;         // lowercase TA-Lib name, e.g. "bbands"
  std::string description;  // one line
  std::string inputs;       // "close" or "high,low,close"
  std::vector<ParamSpec> params;
  std::vector<std::string> outputs;
};

struct IndicatorResult {
  std::string indicator;
  std::vector<std::pair<std::string, double>> params;  // resolved, in spec order
  int lookback = 0;                                    // first defined bar
  std::vector<std::string> output_names;
  std::vector<std::vector<double>> outputs;  // (outputs, bars), NaN where undefined
};

// Every registered indicator, sorted by name.
const std::vector<IndicatorSpec>& IndicatorSpecs();
std::vector<std::string> IndicatorNames();

// The spec of `name`; NotFound listing the valid names (and the nearest) otherwise.
Result<const IndicatorSpec*> FindIndicator(const std::string& name);

// Which implementation computes an indicator: the fast O(n) kernels (indicators.h) or
// the plain-loop references (reference.h, slow: for tests).
enum class Implementation { kFast, kReference };

// Computes indicator `name` over the bars with the given parameters (unset ones take
// their defaults). Every registered indicator has both implementations, so one test
// (registry_test.cc) checks fast against reference for all of them.
Result<IndicatorResult> ComputeIndicator(const market::Bars& bars, const std::string& name,
                                         const std::map<std::string, std::string>& params,
                                         Implementation implementation = Implementation::kFast);

// Parses "key=value" items (as given on a command line) into a map; InvalidArgument for an
// item without '=' or a repeated key.
Result<std::map<std::string, std::string>> ParseParams(const std::vector<std::string>& items);

// "; did you mean 'x'?" for the candidate nearest to `name` by edit distance when it is
// close enough, "" otherwise.
std::string NearestNameHint(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace rlt::features

#endif  // RLT_FEATURES_REGISTRY_H_
