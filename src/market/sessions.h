// rltrade market: grouping bars into trading sessions.
//
// A session is one exchange-local calendar date. AssignSessions() derives each bar's
// local date from bars.time + bars.utc_offset and fills the session arrays of Bars
// (session, bar_in_session, last_in_session, sessions). It does not know exchange
// calendars or trading hours: a 24-hour market simply gets one session per local date,
// and a date without bars has no session.
#ifndef RLT_MARKET_SESSIONS_H_
#define RLT_MARKET_SESSIONS_H_

#include <cstdint>

#include "market/bars.h"

namespace rlt::market {

// REQUIRES: bars.time and bars.utc_offset have equal length and time is increasing.
void AssignSessions(Bars& bars);

// The local calendar date (yyyymmdd) of a UTC instant with the given offset.
int32_t LocalDateKey(int64_t utc_seconds, int32_t utc_offset);

}  // namespace rlt::market

#endif  // RLT_MARKET_SESSIONS_H_
