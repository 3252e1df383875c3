// rltrade market: IANA time zones read from the system tz database.
//
// A TimeZone answers two questions for one zone: what is the UTC offset at a given UTC
// instant (OffsetAt), and which UTC instant does a local wall-clock time name
// (LocalToUtc). It reads compiled TZif files (RFC 8536, versions 1-4) from $TZDIR or
// /usr/share/zoneinfo, including the POSIX TZ footer rule (e.g. "EST5EDT,M3.2.0,M11.1.0")
// that governs instants after the file's last transition. "UTC" (also "Etc/UTC", "GMT")
// is built in and needs no file.
//
// This is not a general date library: no leap seconds (the "right/" zones are read as if
// they had none), no abbreviations, no formatting. Calendar arithmetic is in
// core/civil_time.h. A TimeZone is an immutable value: cheap to copy, safe to share
// between threads.
#ifndef RLT_MARKET_TIMEZONE_H_
#define RLT_MARKET_TIMEZONE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::market {

// A POSIX TZ rule as found in a TZif footer, e.g. "EST5EDT,M3.2.0,M11.1.0" or
// "IST-5:30". Offsets here are seconds EAST of UTC (the POSIX string counts west).
struct PosixTzRule {
  // A transition date: Mm.w.d (kind 'M'), Jn (kind 'J', 1..365 without Feb 29) or n
  // (kind 'N', 0..365 counting Feb 29), plus the local wall time of the change.
  struct Date {
    char kind = 'M';
    int month = 0, week = 0, weekday = 0;  // for 'M': week 5 = last
    int day = 0;                           // for 'J' and 'N'
    int32_t time = 7200;                   // seconds after local midnight (may be < 0)
  };
  int32_t std_offset = 0;
  int32_t dst_offset = 0;
  bool has_dst = false;
  Date start, end;  // DST starts at `start` (standard time), ends at `end` (DST time)

  // Parses a POSIX TZ string. Errors name the position that did not parse.
  static Result<PosixTzRule> Parse(const std::string& text);
  int32_t OffsetAt(int64_t utc_seconds) const;
};

class TimeZone {
 public:
  // Loads an IANA zone such as "America/New_York". Unknown names return NotFound with a
  // message that suggests valid names.
  static Result<TimeZone> Load(const std::string& iana_name);
  // The built-in UTC zone (never fails).
  static TimeZone Utc();
  // Parses TZif bytes (exposed for tests). `name` is used in messages only.
  static Result<TimeZone> FromTzif(const std::string& name, const std::string& bytes);

  const std::string& name() const { return name_; }
  // True when the offset never changes (no transitions and no DST rule), e.g. UTC.
  bool is_fixed() const { return transitions_.empty() && !rule_.has_dst; }

  // Local offset from UTC (seconds east) at the instant `utc_seconds`.
  int32_t OffsetAt(int64_t utc_seconds) const;
  // The UTC instant of a local wall-clock time (seconds since epoch as if local were
  // UTC). Ambiguous times (clocks turned back) resolve to the earlier instant;
  // nonexistent times (in a DST gap) are an InvalidArgument error.
  Result<int64_t> LocalToUtc(int64_t local_seconds) const;

 private:
  std::string name_ = "UTC";
  std::vector<int64_t> transitions_;  // UTC instants, increasing
  std::vector<int32_t> offsets_;      // offset in effect from transitions_[i]
  int32_t initial_offset_ = 0;        // before the first transition
  bool has_rule_ = false;             // footer rule applies after the last transition
  PosixTzRule rule_;
};

}  // namespace rlt::market

#endif  // RLT_MARKET_TIMEZONE_H_
