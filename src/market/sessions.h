// rltrade market: grouping bars into trading sessions.
//
// A session is one exchange-local calendar date. AssignSessions() derives each bar's
// session date from bars.time + bars.utc_offset (and bars.day_boundary) and fills the session
// arrays of Bars (session, bar_in_session, last_in_session, sessions). It does not know exchange
// calendars or trading hours: a 24-hour market simply gets one session per local date,
// and a date without bars has no session.
#ifndef RLT_MARKET_SESSIONS_H_
#define RLT_MARKET_SESSIONS_H_

#include <cstdint>
#include <vector>

#include "market/bars.h"

namespace rlt::market {

// REQUIRES: bars.time and bars.utc_offset have equal length and time is increasing.
void AssignSessions(Bars& bars);

// The local calendar date (yyyymmdd) of a UTC instant with the given offset.
int32_t LocalDateKey(int64_t utc_seconds, int32_t utc_offset);

// The session (trading day) of a local instant, as days since 1970-01-01, when sessions
// begin `day_boundary` seconds after local midnight (Bars::day_boundary): the calendar
// day for 0, else the day on which the session ends.
int64_t SessionDay(int64_t local_seconds, int32_t day_boundary);
// The same as a yyyymmdd key, from a UTC instant and its offset.
int32_t SessionDateKey(int64_t utc_seconds, int32_t utc_offset, int32_t day_boundary);

// A market that never closes (sessions cut at bars.day_boundary): removes the file's
// first and last session when it covers only part of its day — it starts more than an
// hour after the day's boundary or ends more than an hour before the next — and
// reassigns the sessions. Returns the dates of the sessions removed.
std::vector<int32_t> DropPartialEdgeSessions(Bars& bars);

}  // namespace rlt::market

#endif  // RLT_MARKET_SESSIONS_H_
