// rltrade env: rule-based intraday policies — fixed, causal decision rules used as
// baselines by `rltrade demo` and `rltrade eval --policy rule:NAME`.
//
// A rule maps bar t (the bar the decision is made after) to a target exposure in
// [-1, 1], reading bars <= t only. It is not a learner and holds no state.
//   momentum5   sign of the 5-bar return within the session (close[t] vs close[t-5]);
//               0 during the first 5 bars of a session and when the closes are equal.
#ifndef RLT_ENV_ENVS_INTRADAY_RULES_H_
#define RLT_ENV_ENVS_INTRADAY_RULES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "market/bars.h"

namespace rlt::env {

using IntradayRule = float (*)(const market::Bars& bars, int64_t t);

float Momentum5Exposure(const market::Bars& bars, int64_t t);

// The rule called `name`; an error lists the known names.
Result<IntradayRule> FindIntradayRule(const std::string& name);
const std::vector<std::string>& IntradayRuleNames();

}  // namespace rlt::env

#endif  // RLT_ENV_ENVS_INTRADAY_RULES_H_
