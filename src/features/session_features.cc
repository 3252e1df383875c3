// rltrade features: per-session features (see session_features.h).
#include "features/session_features.h"

#include <cstddef>

#include "core/status.h"

namespace rlt::features {

SessionFeatures ComputeSessionFeatures(const market::Bars& bars) {
  const size_t n = bars.size();
  RLT_CHECK_MSG(bars.bar_in_session.size() == n, "sessions not assigned (AssignSessions)");
  SessionFeatures out{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)};
  double session_open = 0.0, pv = 0.0, volume = 0.0, tp_sum = 0.0;
  double count = 0.0;
  for (size_t t = 0; t < n; ++t) {
    if (t == 0 || bars.bar_in_session[t] == 0) {  // a new session restarts every sum
      session_open = bars.open[t];
      pv = volume = tp_sum = count = 0.0;
    }
    const double tp = (bars.high[t] + bars.low[t] + bars.close[t]) / 3.0;
    pv += tp * bars.volume[t];
    volume += bars.volume[t];
    tp_sum += tp;
    count += 1.0;
    const double vwap = volume > 0.0 ? pv / volume : tp_sum / count;
    out.return_since_open[t] = bars.close[t] / session_open - 1.0;
    out.bars_since_open[t] = bars.bar_in_session[t];
    out.vwap_distance[t] = bars.close[t] / vwap - 1.0;
  }
  return out;
}

namespace reference {

SessionFeatures ComputeSessionFeatures(const market::Bars& bars) {
  const size_t n = bars.size();
  SessionFeatures out{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)};
  for (size_t t = 0; t < n; ++t) {
    size_t first = t;  // walk back to the session's first bar
    while (first > 0 && bars.bar_in_session[first] != 0) --first;
    double pv = 0.0, volume = 0.0, tp_sum = 0.0;
    for (size_t i = first; i <= t; ++i) {
      const double tp = (bars.high[i] + bars.low[i] + bars.close[i]) / 3.0;
      pv += tp * bars.volume[i];
      volume += bars.volume[i];
      tp_sum += tp;
    }
    const double vwap = volume > 0.0 ? pv / volume : tp_sum / static_cast<double>(t - first + 1);
    out.return_since_open[t] = bars.close[t] / bars.open[first] - 1.0;
    out.bars_since_open[t] = static_cast<double>(t - first);
    out.vwap_distance[t] = bars.close[t] / vwap - 1.0;
  }
  return out;
}

}  // namespace reference
}  // namespace rlt::features
