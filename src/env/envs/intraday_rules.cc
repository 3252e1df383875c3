// rltrade env: rule-based intraday policies (see intraday_rules.h).
#include "env/envs/intraday_rules.h"

namespace rlt::env {

float Momentum5Exposure(const market::Bars& bars, int64_t t) {
  const int32_t begin = bars.sessions[bars.session[t]].begin;
  if (t - 5 < begin) return 0.0f;  // momentum within the session only
  return bars.close[t] > bars.close[t - 5] ? 1.0f
                                           : (bars.close[t] < bars.close[t - 5] ? -1.0f : 0.0f);
}

const std::vector<std::string>& IntradayRuleNames() {
  static const std::vector<std::string> kNames = {"momentum5"};
  return kNames;
}

Result<IntradayRule> FindIntradayRule(const std::string& name) {
  if (name == "momentum5") return &Momentum5Exposure;
  std::string known;
  for (const std::string& n : IntradayRuleNames()) known += (known.empty() ? "" : ", ") + n;
  return Status::InvalidArgument("unknown rule '" + name + "'; known rules: " + known);
}

}  // namespace rlt::env
