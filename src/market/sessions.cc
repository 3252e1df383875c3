// rltrade market: session assignment (local calendar dates).
#include "market/sessions.h"

#include "core/civil_time.h"
#include "core/status.h"

namespace rlt::market {

int32_t LocalDateKey(int64_t utc_seconds, int32_t utc_offset) {
  return DateKey(CivilFromDays(DaysFromSeconds(utc_seconds + utc_offset)));
}

void AssignSessions(Bars& bars) {
  const size_t n = bars.size();
  RLT_CHECK(bars.utc_offset.size() == n);
  bars.session.assign(n, 0);
  bars.bar_in_session.assign(n, 0);
  bars.last_in_session.assign(n, 0);
  bars.sessions.clear();
  int64_t current_day = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t day = DaysFromSeconds(bars.time[i] + bars.utc_offset[i]);
    if (bars.sessions.empty() || day != current_day) {
      if (!bars.sessions.empty()) bars.sessions.back().end = static_cast<int32_t>(i);
      Session s;
      s.date = DateKey(CivilFromDays(day));
      s.begin = static_cast<int32_t>(i);
      bars.sessions.push_back(s);
      current_day = day;
    }
    const Session& s = bars.sessions.back();
    bars.session[i] = static_cast<int32_t>(bars.sessions.size() - 1);
    bars.bar_in_session[i] = static_cast<int32_t>(i) - s.begin;
  }
  if (!bars.sessions.empty()) bars.sessions.back().end = static_cast<int32_t>(n);
  for (const Session& s : bars.sessions) bars.last_in_session[s.end - 1] = 1;
}

}  // namespace rlt::market
