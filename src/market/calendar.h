// rltrade market: exchange calendars — which days an exchange trades and its hours on each.
//
// An ExchangeCalendar answers "is DATE a session, and from when to when (local exchange
// time)?" for the dates it covers. It is a regular week (e.g. Mon-Fri 09:30-16:00) plus
// listed exceptions: holidays (a weekday without a session), early closes (a session of
// its real, shorter length) and special sessions (NSE's Muhurat evening hour, a Saturday
// session). Two calendars are built in, named by their ISO 10383 MIC as the
// exchange_calendars and pandas_market_calendars projects name them:
//   XNYS  New York Stock Exchange, America/New_York, 09:30-16:00, 2010-2026
//   XNSE  National Stock Exchange of India, Asia/Kolkata, 09:15-15:30, 2010-2026
// Their data is data/calendars/*.csv (with its sources in the file's header), compiled
// into the binary; scripts/calendars/make_calendars.py regenerates and checks it.
//
// A calendar file (the user's; the built-in ones have the same form) is a CSV
// `date,open,close[,note]` with YYYY-MM-DD dates and HH:MM local times (open inclusive,
// close exclusive, as [data] session: by bar start time); empty open and close mean no
// session that day. Lines starting with '#' before the header are comments; those of the
// form `# key = value` set:
//   base     = XNYS | XNSE   start from a built-in calendar: the rows add or override days
//   timezone = IANA zone     the zone of the hours (default: the base's, else the run's)
//   regular  = HH:MM-HH:MM   the hours of an ordinary day (with weekdays)
//   weekdays = Mon-Fri       the ordinary trading days (ranges and lists: Mon-Thu,Sat)
//   covers   = FIRST:LAST    the dates the calendar speaks for (default: the base's
//                            widened to the listed dates, else first..last listed date)
// Without `base` and `regular` the file lists every session: a date not listed is closed.
// Errors name the file, line and field: a date listed twice (two sessions of one day
// overlap), open at or after close (reversed), a malformed date or time.
// Value type; immutable after construction; safe to share between threads.
#ifndef RLT_MARKET_CALENDAR_H_
#define RLT_MARKET_CALENDAR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "market/csv.h"
#include "market/date_range.h"

namespace rlt::market {

class ExchangeCalendar {
 public:
  // "XNYS" / "XNSE" (any case) or the path of a calendar file. `place` names the setting
  // in messages (e.g. "configs/x.toml:7: [data] calendar").
  static Result<ExchangeCalendar> Load(const std::string& spec, const std::string& place);
  static Result<ExchangeCalendar> Builtin(const std::string& name);
  // Parses calendar-file text; `source` names the file in messages.
  static Result<ExchangeCalendar> Parse(std::string_view text, const std::string& source);
  static std::vector<std::string> BuiltinNames();  // {"XNSE", "XNYS"}
  // Whether `spec` names a built-in calendar (any case).
  static bool IsBuiltinName(const std::string& spec);

  const std::string& name() const { return name_; }
  // IANA zone of the hours; "" when the file gave none (the hours are in the run's zone).
  const std::string& timezone() const { return timezone_; }
  SessionHours regular() const { return regular_; }
  const DateRange& coverage() const { return coverage_; }
  bool Covers(int32_t date) const { return coverage_.Contains(date); }

  // The session hours of `date` (yyyymmdd), or nullopt when the exchange is closed.
  // REQUIRES: Covers(date).
  std::optional<SessionHours> HoursOn(int32_t date) const;
  // A session that closes before the regular close (a half-day).
  bool IsEarlyClose(int32_t date) const;
  // A weekday the regular week would trade on, without a session (a holiday).
  bool IsHoliday(int32_t date) const;
  // The note of a listed day ("Christmas Eve"), "" otherwise.
  std::string NoteOn(int32_t date) const;
  // Every session date in [first, last] (yyyymmdd, both within the coverage).
  std::vector<int32_t> SessionsIn(int32_t first, int32_t last) const;

 private:
  struct Day {
    int open_minute = -1;  // -1: closed
    int close_minute = -1;
    std::string note;
  };
  bool RegularDay(int32_t date) const;
  struct SettingsSeen {
    bool base = false, regular = false, weekdays = false, covers = false;
  };
  using ErrorFn = std::function<Status(const std::string& field, const std::string& what,
                                       const std::string& fix)>;
  static Status ApplySetting(ExchangeCalendar& cal, const std::string& key,
                             const std::string& value, SettingsSeen& seen, const ErrorFn& error);

  std::string name_;
  std::string timezone_;
  SessionHours regular_;
  uint8_t weekdays_ = 0;  // bit w set: weekday w (0 = Sunday) is an ordinary session
  bool listed_only_ = false;
  DateRange coverage_;
  std::map<int32_t, Day> days_;  // the listed exceptions, by date
};

// How a bar file's days are cut, from the settings that say so: session hours, "24h" with
// its day boundary, or a calendar, and the zone bars are read in. One reading of these
// settings for every command (a run config's [data] keys, `data check`'s flags), so their
// rules and messages cannot drift apart.
struct ReadHoursSetting {
  std::string value;
  bool given = false;  // set by the user (a config key present, a flag passed)
  // How messages name it: the place ("x.toml:4: [data] session" or "--session") and the bare
  // name a fix tells the user to set ("[data] session" or "--session"; a name starting with
  // "--" is a flag: "pass --session 24h", else "set [data] session = \"24h\"").
  std::string place, name;
};
struct ReadHoursSettings {
  ReadHoursSetting session, day_boundary, calendar, timezone;
  // What to load for a calendar that is not built in (its resolved path); "" = calendar.value.
  std::string calendar_file;
};
struct ReadHours {
  SessionHours hours;  // session = "HH:MM-HH:MM" (all hours when empty)
  bool around_the_clock = false;
  int day_boundary_minute = 0;
  std::string timezone;  // the zone bars are read in (a built-in calendar's own)
  std::shared_ptr<const ExchangeCalendar> calendar;  // null: no calendar
  std::string calendar_spec;  // "none", a built-in name or the calendar file that was loaded
};
// Errors (InvalidArgument naming the setting and the fix): bad hours; a day boundary that
// is not HH:MM, or without session "24h"; a calendar together with session hours; a
// calendar that cannot be loaded; a given time zone other than a built-in calendar's.
Result<ReadHours> ResolveReadHours(const ReadHoursSettings& settings);

}  // namespace rlt::market

#endif  // RLT_MARKET_CALENDAR_H_
