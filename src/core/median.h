// rltrade core: the median of a list of numbers — one definition for every caller
// (benchmark verdicts, tune's per-trial figures, the option chain's implied volatility
// fallback).
#ifndef RLT_CORE_MEDIAN_H_
#define RLT_CORE_MEDIAN_H_

#include <algorithm>
#include <vector>

#include "core/status.h"

namespace rlt {

// Median of a non-empty list: the middle value, or the mean of the two middle values for
// an even count. REQUIRES: !values.empty().
inline double Median(std::vector<double> values) {
  RLT_CHECK(!values.empty());
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace rlt

#endif  // RLT_CORE_MEDIAN_H_
