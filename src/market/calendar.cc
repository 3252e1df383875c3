// rltrade market: exchange calendars (see calendar.h).
#include "market/calendar.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/civil_time.h"
#include "core/file_io.h"
#include "core/printable.h"

namespace rlt::market {
namespace calendar_data {
extern const char kXnys[];
extern const char kXnse[];
}  // namespace calendar_data

namespace {

constexpr int64_t kMaxCalendarBytes = 16 << 20;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

int64_t DaysOf(int32_t key) { return DaysFromCivil(key / 10000, key / 100 % 100, key % 100); }

int32_t KeyOf(int64_t days) { return DateKey(CivilFromDays(days)); }

// "HH:MM" (00:00..24:00) into minutes after midnight, or -1.
int ParseMinute(std::string_view s) {
  if (s.size() != 5 || s[2] != ':') return -1;
  for (size_t i : {0, 1, 3, 4}) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return -1;
  }
  const int h = (s[0] - '0') * 10 + (s[1] - '0');
  const int m = (s[3] - '0') * 10 + (s[4] - '0');
  if (h > 24 || m > 59 || (h == 24 && m > 0)) return -1;
  return h * 60 + m;
}

// "Mon-Fri", "Mon-Thu,Sat", "Sun,Mon": bit w = weekday w (0 = Sunday), or -1.
int ParseWeekdays(std::string_view s) {
  static constexpr const char* kNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
  auto day = [](std::string_view n) {
    std::string lower(n);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (int w = 0; w < 7; ++w) {
      if (lower == kNames[w]) return w;
    }
    return -1;
  };
  int mask = 0;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    const std::string_view part = Trim(s.substr(0, comma));
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    const size_t dash = part.find('-');
    const int a = day(Trim(part.substr(0, dash)));
    const int b = dash == std::string_view::npos ? a : day(Trim(part.substr(dash + 1)));
    if (a < 0 || b < 0) return -1;
    for (int w = a;; w = (w + 1) % 7) {
      mask |= 1 << w;
      if (w == b) break;
    }
  }
  return mask == 0 ? -1 : mask;
}

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    out.push_back(Trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> ExchangeCalendar::BuiltinNames() { return {"XNSE", "XNYS"}; }

bool ExchangeCalendar::IsBuiltinName(const std::string& spec) {
  const std::string up = Upper(spec);
  return up == "XNYS" || up == "XNSE";
}

Result<ExchangeCalendar> ExchangeCalendar::Builtin(const std::string& name) {
  const std::string up = Upper(name);
  if (up == "XNYS") return Parse(calendar_data::kXnys, "built-in calendar XNYS");
  if (up == "XNSE") return Parse(calendar_data::kXnse, "built-in calendar XNSE");
  return Status::NotFound("no built-in calendar '" + PrintableText(name) +
                          "': built in are XNYS (NYSE) and XNSE (NSE India); or give the path "
                          "of a calendar CSV (date,open,close)");
}

Result<ExchangeCalendar> ExchangeCalendar::Load(const std::string& spec, const std::string& place) {
  if (IsBuiltinName(spec)) return Builtin(spec);
  const bool looks_like_path =
      spec.find('/') != std::string::npos || spec.find('.') != std::string::npos;
  Result<std::string> text = ReadFile(spec, kMaxCalendarBytes);
  if (!text.ok()) {
    return Status::InvalidArgument(
        place + " = \"" + PrintableText(spec) + "\": " +
        (looks_like_path ? text.status().message()
                         : std::string("not a built-in calendar (XNYS, XNSE) nor a file")) +
        ". Fix: name a built-in calendar (XNYS, XNSE), \"none\", or the path of a calendar "
        "CSV (date,open,close)");
  }
  return Parse(*text, spec);
}

// One `# key = value` setting of a calendar file (see calendar.h); `error` makes the
// file:line message.
Status ExchangeCalendar::ApplySetting(ExchangeCalendar& cal, const std::string& key,
                                      const std::string& value, SettingsSeen& seen,
                                      const ErrorFn& error) {
  bool& have_base = seen.base;
  bool& have_regular = seen.regular;
  bool& have_weekdays = seen.weekdays;
  bool& have_covers = seen.covers;
  if (key == "base") {
    if (have_base || have_regular || !cal.days_.empty()) {
      return error("base", "base must come first and only once",
                   "start the file with `# base = XNYS` (or XNSE)");
    }
    Result<ExchangeCalendar> base = Builtin(value);
    if (!base.ok()) return error("base", base.status().message(), "use XNYS or XNSE");
    const std::string name = cal.name_;
    cal = std::move(*base);
    cal.name_ = name;
    have_base = have_regular = have_weekdays = true;
  } else if (key == "timezone") {
    cal.timezone_ = value;
  } else if (key == "regular") {
    Result<SessionHours> h = ParseSessionHours(value, "regular");
    if (!h.ok()) return error("regular", h.status().message(), "e.g. `# regular = 09:30-16:00`");
    cal.regular_ = *h;
    have_regular = true;
  } else if (key == "weekdays") {
    const int mask = ParseWeekdays(value);
    if (mask < 0) {
      return error("weekdays", fmt::format("'{}' is not a list of days", PrintableText(value)),
                   "e.g. `# weekdays = Mon-Fri` or `# weekdays = Sun-Thu`");
    }
    cal.weekdays_ = static_cast<uint8_t>(mask);
    have_weekdays = true;
  } else if (key == "covers") {
    Result<DateRange> r = DateRange::Parse(value);
    if (!r.ok() || r->first == 0 || r->last == 0) {
      return error("covers", fmt::format("'{}' is not FIRST:LAST", PrintableText(value)),
                   "e.g. `# covers = 2010-01-01:2026-12-31`");
    }
    cal.coverage_ = *r;
    have_covers = true;
  } else if (key == "name") {
    if (!have_base) cal.name_ = value;
  }  // other keys (source, ...) are documentation
  return Status::Ok();
}

Result<ExchangeCalendar> ExchangeCalendar::Parse(std::string_view text, const std::string& source) {
  ExchangeCalendar cal;
  cal.name_ = source;
  SettingsSeen seen;
  const bool& have_base = seen.base;
  const bool& have_regular = seen.regular;
  const bool& have_weekdays = seen.weekdays;
  const bool& have_covers = seen.covers;
  int64_t line_no = 0;
  size_t pos = 0;
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") pos = 3;
  const ErrorFn error = [&](const std::string& field, const std::string& what,
                            const std::string& fix) {
    return Status::DataError(fmt::format("{}:{}: {}{}. Fix: {}", source, line_no,
                                         field.empty() ? "" : "field '" + field + "': ", what,
                                         fix));
  };
  bool header_seen = false;
  size_t note_col = std::string::npos;
  std::map<int32_t, int64_t> line_of;  // date -> the line that listed it
  int32_t first_listed = 0, last_listed = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    if (line.front() == '#') {
      if (header_seen) {
        return error("", "a comment after the header line",
                     "put '#' lines (comments and `# key = value` settings) before the "
                     "date,open,close header");
      }
      const std::string_view body = Trim(line.substr(1));
      const size_t eq = body.find('=');
      if (eq == std::string_view::npos) continue;  // a plain comment
      const std::string key(Trim(body.substr(0, eq)));
      const std::string value(Trim(body.substr(eq + 1)));
      RLT_RETURN_IF_ERROR(ApplySetting(cal, key, value, seen, error));
      continue;
    }
    const std::vector<std::string_view> f = SplitFields(line);
    if (!header_seen) {
      if (f.size() < 3 || f[0] != "date" || f[1] != "open" || f[2] != "close") {
        return error("", "expected the header date,open,close[,note]",
                     "start the data with the line `date,open,close`");
      }
      if (f.size() > 3 && f[3] == "note") note_col = 3;
      header_seen = true;
      continue;
    }
    if (f.size() < 3) {
      return error("", fmt::format("{} fields, expected date,open,close", f.size()),
                   "write date,open,close (open and close empty for a day without a session)");
    }
    Result<int32_t> date = ParseDateKey(std::string(f[0]));
    if (!date.ok()) return error("date", date.status().message(), "write dates as YYYY-MM-DD");
    Day day;
    if (note_col != std::string::npos && f.size() > note_col) day.note = std::string(f[note_col]);
    if (!f[1].empty() || !f[2].empty()) {
      day.open_minute = ParseMinute(f[1]);
      day.close_minute = ParseMinute(f[2]);
      if (day.open_minute < 0) {
        return error("open", fmt::format("'{}' is not HH:MM", PrintableText(std::string(f[1]))),
                     "write local times as HH:MM (00:00..24:00), or leave open and close "
                     "empty for a day without a session");
      }
      if (day.close_minute < 0) {
        return error("close", fmt::format("'{}' is not HH:MM", PrintableText(std::string(f[2]))),
                     "write local times as HH:MM (00:00..24:00), or leave open and close "
                     "empty for a day without a session");
      }
      if (day.open_minute >= day.close_minute) {
        return error(
            "close",
            fmt::format("the session is reversed: close {} is not after open {}", f[2], f[1]),
            "a session opens before it closes on its date (a session past "
            "midnight is two days' rows)");
      }
    }
    const auto [it, fresh] = line_of.emplace(*date, line_no);
    if (!fresh) {
      return error("date",
                   fmt::format("{} is listed twice (line {} lists it too): two sessions of "
                               "one day overlap",
                               f[0], it->second),
                   "list each date once");
    }
    if (first_listed == 0 || *date < first_listed) first_listed = *date;
    last_listed = std::max(last_listed, *date);
    cal.days_[*date] = std::move(day);
  }
  if (!header_seen) {
    return Status::DataError(source +
                             ": no date,open,close header. Fix: a calendar file is a CSV "
                             "date,open,close (see docs/data.md, Exchange calendars)");
  }
  if (have_regular && !have_weekdays) cal.weekdays_ = 0x3E;  // Mon-Fri
  cal.listed_only_ = !have_regular;
  if (!have_covers) {
    if (have_base) {
      if (first_listed != 0) {
        cal.coverage_.first = std::min(cal.coverage_.first, first_listed);
        cal.coverage_.last = std::max(cal.coverage_.last, last_listed);
      }
    } else {
      if (first_listed == 0) {
        return Status::DataError(source +
                                 ": lists no day and has no `# covers = FIRST:LAST`. Fix: list "
                                 "the sessions (date,open,close), or give `# regular` and "
                                 "`# covers`");
      }
      cal.coverage_ = DateRange{first_listed, last_listed};
    }
  }
  if (!cal.timezone_.empty() && cal.timezone_.find_first_of(" ,\"") != std::string::npos) {
    return Status::DataError(source + ": timezone '" + PrintableText(cal.timezone_) +
                             "' is not an IANA zone name. Fix: e.g. `# timezone = "
                             "America/New_York`");
  }
  return cal;
}

bool ExchangeCalendar::RegularDay(int32_t date) const {
  if (listed_only_) return false;
  return (weekdays_ >> Weekday(DaysOf(date)) & 1) != 0;
}

std::optional<SessionHours> ExchangeCalendar::HoursOn(int32_t date) const {
  const auto it = days_.find(date);
  if (it != days_.end()) {
    if (it->second.open_minute < 0) return std::nullopt;
    return SessionHours{it->second.open_minute, it->second.close_minute};
  }
  if (!RegularDay(date)) return std::nullopt;
  return regular_;
}

bool ExchangeCalendar::IsEarlyClose(int32_t date) const {
  const std::optional<SessionHours> h = HoursOn(date);
  return h.has_value() && !listed_only_ && RegularDay(date) &&
         h->open_minute == regular_.open_minute && h->close_minute < regular_.close_minute;
}

bool ExchangeCalendar::IsHoliday(int32_t date) const {
  if (listed_only_) return false;
  return RegularDay(date) && !HoursOn(date).has_value();
}

std::string ExchangeCalendar::NoteOn(int32_t date) const {
  const auto it = days_.find(date);
  return it == days_.end() ? std::string() : it->second.note;
}

std::vector<int32_t> ExchangeCalendar::SessionsIn(int32_t first, int32_t last) const {
  std::vector<int32_t> out;
  for (int64_t d = DaysOf(first), e = DaysOf(last); d <= e; ++d) {
    const int32_t key = KeyOf(d);
    if (HoursOn(key).has_value()) out.push_back(key);
  }
  return out;
}

namespace {

// "[data] session = \"x\"" for a key, "--session x" for a flag.
std::string Given(const ReadHoursSetting& s) {
  const std::string v = PrintableText(s.value);
  return s.place + (s.name.rfind("--", 0) == 0 ? " " + v : " = \"" + v + "\"");
}

// "set [data] session = \"24h\"" or "pass --session 24h".
std::string SetTo(const ReadHoursSetting& s, const std::string& value) {
  return s.name.rfind("--", 0) == 0 ? "pass " + s.name + " " + value
                                    : "set " + s.name + " = \"" + value + "\"";
}

}  // namespace

Result<ReadHours> ResolveReadHours(const ReadHoursSettings& s) {
  ReadHours r;
  r.timezone = s.timezone.value;
  if (s.session.value == "24h") {
    r.around_the_clock = true;
  } else {
    RLT_ASSIGN_OR_RETURN(r.hours, ParseSessionHours(s.session.value, s.session.place));
  }
  const std::string& boundary = s.day_boundary.value;
  if (!boundary.empty() && boundary != "00:00") {
    Result<SessionHours> b = ParseSessionHours(boundary + "-24:00", s.day_boundary.place);
    if (!b.ok() || boundary.size() != 5) {
      return Status::InvalidArgument(Given(s.day_boundary) +
                                     ": expected a local time HH:MM from 00:00 to 23:59, e.g. "
                                     "17:00");
    }
    if (!r.around_the_clock) {
      return Status::InvalidArgument(Given(s.day_boundary) +
                                     " cuts the trading days of a market that never closes: " +
                                     SetTo(s.session, "24h") + " (or drop the day boundary)");
    }
    r.day_boundary_minute = b->open_minute;
  }
  const std::string& spec = s.calendar.value;
  if (spec.empty() || spec == "none") {
    r.calendar_spec = "none";
    return r;
  }
  if (!s.session.value.empty()) {
    return Status::InvalidArgument(Given(s.calendar) + " and " + Given(s.session) +
                                   " are both set: a calendar gives each day's own hours "
                                   "(early closes, special sessions); remove session");
  }
  r.calendar_spec =
      ExchangeCalendar::IsBuiltinName(spec) || s.calendar_file.empty() ? spec : s.calendar_file;
  RLT_ASSIGN_OR_RETURN(ExchangeCalendar cal,
                       ExchangeCalendar::Load(r.calendar_spec, s.calendar.place));
  if (!cal.timezone().empty()) {
    if (s.timezone.given && s.timezone.value != cal.timezone()) {
      return Status::InvalidArgument(
          Given(s.timezone) + " but " + Given(s.calendar) + " keeps the hours of " +
          cal.timezone() + ": " + SetTo(s.timezone, cal.timezone()) +
          " (or remove it: the calendar's zone is then used), and write timestamps in another "
          "zone with their UTC offset");
    }
    r.timezone = cal.timezone();
  }
  r.calendar = std::make_shared<const ExchangeCalendar>(std::move(cal));
  return r;
}

}  // namespace rlt::market
