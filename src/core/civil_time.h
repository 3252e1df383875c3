// rltrade core: calendar arithmetic on the proleptic Gregorian calendar, UTC only.
//
// Timestamps in rltrade are int64 seconds since 1970-01-01T00:00:00Z. Time zones (local
// exchange time) live in market/timezone.h; this file knows nothing of them.
// Algorithms: H. Hinnant, "chrono-Compatible Low-Level Date Algorithms".
#ifndef RLT_CORE_CIVIL_TIME_H_
#define RLT_CORE_CIVIL_TIME_H_

#include <cstdint>
#include <string>

namespace rlt {

struct CivilDate {
  int year = 1970;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
};

// Days since 1970-01-01 of a civil date (may be negative).
int64_t DaysFromCivil(int year, int month, int day);
CivilDate CivilFromDays(int64_t days);
// Floor division of seconds into days (correct for negative times).
inline int64_t DaysFromSeconds(int64_t seconds) {
  return seconds >= 0 ? seconds / 86400 : -((-seconds + 86399) / 86400);
}
// yyyymmdd as an integer, e.g. 20240131.
inline int32_t DateKey(const CivilDate& d) { return d.year * 10000 + d.month * 100 + d.day; }
inline int DaysInMonth(int year, int month) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}
// 0 = Sunday .. 6 = Saturday.
inline int Weekday(int64_t days) { return static_cast<int>(((days + 4) % 7 + 7) % 7); }

// "YYYY-MM-DD HH:MM:SS" for seconds + offset (the offset is added before formatting).
std::string FormatTime(int64_t seconds_utc, int32_t offset_seconds = 0);
// "YYYY-MM-DDTHH:MM:SS+HH:MM" (ISO 8601 with the given UTC offset, "Z" when 0 and utc_z).
std::string FormatIso8601(int64_t seconds_utc, int32_t offset_seconds, bool utc_z = true);
// "YYYY-MM-DD".
std::string FormatDate(int32_t date_key);
// "YYYY-MM-DD-HH.MM.SS" (UTC): a timestamp safe in file names, e.g. default run dirs.
std::string FormatPathStamp(int64_t seconds_utc);

}  // namespace rlt

#endif  // RLT_CORE_CIVIL_TIME_H_
