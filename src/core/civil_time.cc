// rltrade core: civil date arithmetic and timestamp formatting.
#include "core/civil_time.h"

#include <cstdio>
#include <cstdlib>

namespace rlt {

int64_t DaysFromCivil(int year, int month, int day) {
  const int64_t y = static_cast<int64_t>(year) - (month <= 2 ? 1 : 0);
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;                                             // [0, 399]
  const int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;  // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;                     // [0, 146096]
  return era * 146097 + doe - 719468;
}

CivilDate CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t y = yoe + era * 400;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return CivilDate{static_cast<int>(y + (m <= 2 ? 1 : 0)), m, d};
}

std::string FormatTime(int64_t seconds_utc, int32_t offset_seconds) {
  const int64_t t = seconds_utc + offset_seconds;
  const int64_t days = DaysFromSeconds(t);
  const int64_t sod = t - days * 86400;
  const CivilDate d = CivilFromDays(days);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d", d.year, d.month, d.day,
                static_cast<int>(sod / 3600), static_cast<int>(sod / 60 % 60),
                static_cast<int>(sod % 60));
  return buf;
}

std::string FormatIso8601(int64_t seconds_utc, int32_t offset_seconds, bool utc_z) {
  std::string s = FormatTime(seconds_utc, offset_seconds);
  s[10] = 'T';
  if (offset_seconds == 0 && utc_z) return s + "Z";
  const int a = std::abs(offset_seconds);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%c%02d:%02d", offset_seconds < 0 ? '-' : '+', a / 3600,
                a / 60 % 60);
  return s + buf;
}

std::string FormatDate(int32_t key) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", key / 10000, key / 100 % 100, key % 100);
  return buf;
}

std::string FormatPathStamp(int64_t seconds_utc) {
  std::string stamp = FormatTime(seconds_utc);
  for (char& c : stamp) c = (c == ' ' ? '-' : (c == ':' ? '.' : c));
  return stamp;
}

}  // namespace rlt
