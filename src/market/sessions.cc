// rltrade market: session assignment (local calendar dates).
#include "market/sessions.h"

#include <algorithm>

#include "core/civil_time.h"
#include "core/status.h"

namespace rlt::market {

int32_t LocalDateKey(int64_t utc_seconds, int32_t utc_offset) {
  return DateKey(CivilFromDays(DaysFromSeconds(utc_seconds + utc_offset)));
}

int64_t SessionDay(int64_t local_seconds, int32_t day_boundary) {
  if (day_boundary == 0) return DaysFromSeconds(local_seconds);
  return DaysFromSeconds(local_seconds - day_boundary) + 1;
}

int32_t SessionDateKey(int64_t utc_seconds, int32_t utc_offset, int32_t day_boundary) {
  return DateKey(CivilFromDays(SessionDay(utc_seconds + utc_offset, day_boundary)));
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
    const int64_t day = SessionDay(bars.time[i] + bars.utc_offset[i], bars.day_boundary);
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

namespace {

// Keeps bars [begin, end) of every column.
void KeepRange(Bars& b, size_t begin, size_t end) {
  auto cut = [&](auto& v) {
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(end), v.end());
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(begin));
  };
  cut(b.time);
  cut(b.utc_offset);
  cut(b.open);
  cut(b.high);
  cut(b.low);
  cut(b.close);
  cut(b.volume);
}

}  // namespace

std::vector<int32_t> DropPartialEdgeSessions(Bars& bars) {
  std::vector<int32_t> dropped;
  if (bars.sessions.empty() || bars.size() < 2) return dropped;
  // The bar length: the most common gap between consecutive bars (a median of them).
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < bars.size(); ++i) gaps.push_back(bars.time[i] - bars.time[i - 1]);
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                   gaps.end());
  const int64_t bar = gaps[gaps.size() / 2];
  constexpr int64_t kSlack = 3600;
  auto partial = [&](const Session& s) {
    const int64_t first_local = bars.time[s.begin] + bars.utc_offset[s.begin];
    const int64_t last_local = bars.time[s.end - 1] + bars.utc_offset[s.end - 1];
    const int64_t day = SessionDay(first_local, bars.day_boundary);
    const int64_t start = (day - (bars.day_boundary > 0 ? 1 : 0)) * 86400 + bars.day_boundary;
    return first_local - start > kSlack || start + 86400 - (last_local + bar) > kSlack;
  };
  size_t begin = 0, end = bars.size();
  if (partial(bars.sessions.front())) {
    dropped.push_back(bars.sessions.front().date);
    begin = static_cast<size_t>(bars.sessions.front().end);
  }
  if (bars.sessions.size() > 1 && partial(bars.sessions.back())) {
    dropped.push_back(bars.sessions.back().date);
    end = static_cast<size_t>(bars.sessions.back().begin);
  }
  if (dropped.empty()) return dropped;
  KeepRange(bars, begin, std::max(begin, end));
  AssignSessions(bars);
  return dropped;
}

}  // namespace rlt::market
