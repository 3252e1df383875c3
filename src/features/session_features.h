// rltrade features: per-session features, restarting at each session's first bar.
//
// A session is one exchange-local trading day (market/bars.h); bar t starts a session when
// bars.bar_in_session[t] == 0. All three features are causal and defined from a session's
// first bar on (no warm-up):
//   return_since_open: close_t / open_{session's first bar} - 1
//   bars_since_open:   bars.bar_in_session[t] (0 on the first bar)
//   vwap_distance:     close_t / VWAP_t - 1, VWAP_t = sum(tp_i v_i) / sum(v_i) over the
//                      session's bars i <= t, tp = (h + l + c) / 3; while the session's
//                      cumulative volume is 0, VWAP_t is the mean of tp instead.
// The fast version keeps running sums; the reference re-scans the session for every bar.
#ifndef RLT_FEATURES_SESSION_FEATURES_H_
#define RLT_FEATURES_SESSION_FEATURES_H_

#include <vector>

#include "market/bars.h"

namespace rlt::features {

struct SessionFeatures {
  std::vector<double> return_since_open;  // (bars)
  std::vector<double> bars_since_open;    // (bars)
  std::vector<double> vwap_distance;      // (bars)
};

// REQUIRES: bars.bar_in_session has one entry per bar (sessions assigned).
SessionFeatures ComputeSessionFeatures(const market::Bars& bars);

namespace reference {
SessionFeatures ComputeSessionFeatures(const market::Bars& bars);
}  // namespace reference

}  // namespace rlt::features

#endif  // RLT_FEATURES_SESSION_FEATURES_H_
