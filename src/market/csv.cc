// rltrade market: the CSV bar reader and writer (contract in csv.h).
//
// One pass over the file held in memory: lines are split into string_views, numbers are
// parsed with std::from_chars and timestamps by hand, so a row costs no allocation.
// Rows are appended to their symbol's Bars as they pass validation; problems are
// collected for every row (the read never stops at the first one).
//
// Tolerance: the OHLC consistency rules allow a relative slack of 1e-9, because adjusted
// prices written by float arithmetic (e.g. yfinance) differ by ~1e-16 where they should
// be equal. Anything larger is a real defect.
#include "market/csv.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/civil_time.h"
#include "core/csv_line.h"
#include "core/file_io.h"
#include "core/printable.h"
#include "market/calendar.h"
#include "market/sessions.h"
#include "market/timezone.h"

namespace rlt::market {
namespace {

// Values quoted in messages are cut to this many bytes: enough to recognise a value,
// never a whole line of a file that is not what it was taken for.
constexpr size_t kQuotedBytes = 40;

std::string Quoted(std::string_view value) { return PrintableText(value, kQuotedBytes); }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '"')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '"' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

enum class NumberStatus { kOk, kEmpty, kNonNumeric, kNotFinite };

NumberStatus ParseNumber(std::string_view s, double* out) {
  s = Trim(s);
  if (s.empty()) return NumberStatus::kEmpty;
  if (s.front() == '+') s.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (ec != std::errc() || ptr != s.data() + s.size()) return NumberStatus::kNonNumeric;
  if (!std::isfinite(*out)) return NumberStatus::kNotFinite;
  return NumberStatus::kOk;
}

bool Digits(std::string_view s, size_t pos, int n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

struct ParsedTime {
  int64_t local = 0;  // wall-clock seconds as if UTC
  bool has_offset = false;
  int32_t offset = 0;
};

// Offset suffix: Z | +HH[:MM] | -HH[:MM] | +HHMM. Returns the position after it, or npos.
size_t ParseOffset(std::string_view s, size_t p, ParsedTime* t) {
  if (p >= s.size()) return p;
  if (s[p] == 'Z' || s[p] == 'z') {
    t->has_offset = true;
    return p + 1;
  }
  if (s[p] != '+' && s[p] != '-') return std::string_view::npos;
  const int sign = s[p] == '-' ? -1 : 1;
  int hh = 0, mm = 0;
  if (!Digits(s, p + 1, 2, &hh)) return std::string_view::npos;
  p += 3;
  if (p < s.size() && s[p] == ':') ++p;
  if (p < s.size()) {
    if (!Digits(s, p, 2, &mm)) return std::string_view::npos;
    p += 2;
  }
  if (hh > 23 || mm > 59) return std::string_view::npos;
  t->has_offset = true;
  t->offset = sign * (hh * 3600 + mm * 60);
  return p;
}

// YYYY-MM-DD | YYYYMMDD, then optionally [ T]HH:MM[:SS[.fff]] and an offset.
bool ParseTimestamp(std::string_view s, ParsedTime* t) {
  s = Trim(s);
  int y = 0, mo = 0, d = 0, hh = 0, mi = 0, ss = 0;
  size_t p = 0;
  if (s.size() >= 10 && s[4] == '-' && s[7] == '-') {
    if (!Digits(s, 0, 4, &y) || !Digits(s, 5, 2, &mo) || !Digits(s, 8, 2, &d)) return false;
    p = 10;
  } else if (Digits(s, 0, 4, &y) && Digits(s, 4, 2, &mo) && Digits(s, 6, 2, &d)) {
    p = 8;
  } else {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo)) return false;
  if (p < s.size() && (s[p] == ' ' || s[p] == 'T')) {
    if (!Digits(s, p + 1, 2, &hh) || p + 3 >= s.size() || s[p + 3] != ':' ||
        !Digits(s, p + 4, 2, &mi)) {
      return false;
    }
    p += 6;
    if (p < s.size() && s[p] == ':') {
      if (!Digits(s, p + 1, 2, &ss)) return false;
      p += 3;
      if (p < s.size() && s[p] == '.') {
        ++p;
        while (p < s.size() && s[p] >= '0' && s[p] <= '9') ++p;
      }
    }
    if (hh > 23 || mi > 59 || ss > 59) return false;
  }
  p = ParseOffset(s, p, t);
  if (p != s.size()) return false;
  t->local = DaysFromCivil(y, mo, d) * 86400 + hh * 3600 + mi * 60 + ss;
  return true;
}

// Heterogeneous lookup so that a string_view finds a std::string key without a copy.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

enum Field { kOpen, kHigh, kLow, kClose, kVolume, kNumFields };
constexpr const char* kFieldNames[kNumFields] = {"open", "high", "low", "close", "volume"};

struct Columns {
  int time = -1, symbol = -1;
  int field[kNumFields] = {-1, -1, -1, -1, -1};
  int max_index = 0;               // largest column index a row must have
  std::vector<std::string> names;  // as written in the header
};

int FindColumn(const std::vector<std::string>& lower, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    for (size_t i = 0; i < lower.size(); ++i) {
      if (lower[i] == name) return static_cast<int>(i);
    }
  }
  return -1;
}

Status DetectColumns(const std::string& path, std::string_view header, Columns* c,
                     std::vector<std::string>* notes) {
  std::vector<std::string_view> fields;
  SplitCsvFields(header, &fields);  // an open quote: the field runs to the end, as read
  std::vector<std::string> lower;
  for (std::string_view f : fields) {
    c->names.emplace_back(Trim(f));
    lower.push_back(Lower(c->names.back()));
  }
  c->time = FindColumn(lower, {"datetime", "timestamp", "date", "datadate", "time"});
  c->symbol = FindColumn(lower, {"symbol", "tic"});
  c->field[kOpen] = FindColumn(lower, {"open", "prcod"});
  c->field[kHigh] = FindColumn(lower, {"high", "prchd"});
  c->field[kLow] = FindColumn(lower, {"low", "prcld"});
  c->field[kClose] = FindColumn(lower, {"close", "prccd"});
  c->field[kVolume] = FindColumn(lower, {"volume", "cshtrd"});
  // The first line of a file that is no bar file is described, not echoed (core/printable.h).
  const bool shown = LooksLikeColumnNames(c->names);
  std::string listed;
  if (shown) {
    listed = "columns: ";
    for (size_t i = 0; i < c->names.size(); ++i) listed += (i ? ", " : "") + c->names[i];
  } else {
    listed = fmt::format(
        "the first line, {} bytes in {} comma-separated field(s), does not look like a CSV "
        "header and is not shown",
        header.size(), c->names.size());
  }
  for (size_t i = 0; i < lower.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (!lower[i].empty() && lower[i] == lower[j]) {
        return Status::DataError(fmt::format(
            "{}:1: the header names {} twice (columns {} and {}); rename or remove one of them",
            path, shown ? "column '" + c->names[i] + "'" : std::string("a column"), j + 1, i + 1));
      }
    }
  }
  if (c->time < 0) {
    return Status::DataError(path + ":1: no time column in the header (" + listed +
                             "); expected one of date, datetime, timestamp, time, datadate. "
                             "Is this a file of price bars?");
  }
  if (c->field[kClose] < 0) {
    return Status::DataError(path + ":1: no close column in the header (" + listed +
                             "); expected close (or prccd)");
  }
  const int ohl = (c->field[kOpen] >= 0) + (c->field[kHigh] >= 0) + (c->field[kLow] >= 0);
  if (ohl == 0) {
    notes->push_back("open/high/low absent: set to close");
  } else if (ohl != 3) {
    return Status::DataError(path + ":1: the header has some but not all of open, high, low (" +
                             listed + "); give all three or none");
  }
  if (c->field[kVolume] < 0) notes->push_back("volume absent: set to 0");
  c->max_index = std::max(c->time, c->symbol);
  for (int f : c->field) c->max_index = std::max(c->max_index, f);
  return Status::Ok();
}

struct SymbolState {
  Bars bars;
  int64_t last_time = 0;
  bool has_last = false;
};

class CsvReader {
 public:
  CsvReader(std::string path, const CsvReadOptions& options, const TimeZone& tz, DataReport* report)
      : path_(std::move(path)), options_(options), tz_(tz), report_(report) {
    default_symbol_ = path_.substr(path_.find_last_of('/') + 1);
    default_symbol_ = default_symbol_.substr(0, default_symbol_.find_last_of('.'));
  }

  Status Run(std::string_view text);
  MarketData TakeData();
  int64_t bad_rows() const { return bad_rows_; }

 private:
  void ProcessRow(std::string_view line, int64_t line_no);
  bool ParseTime(std::string_view field, int64_t line_no, int64_t* utc);
  void ParseValues(int64_t line_no, double* v, bool* ok);
  void CheckValues(int64_t line_no, const double* v, const bool* ok);
  void CheckOrder(int64_t line_no, const SymbolState& state, int64_t utc);
  SymbolState* StateFor(std::string_view symbol);
  // Whether a bar starting at `utc` lies in options_.session (local time of day), or in
  // its day's session of options_.calendar (counting the bars it skips).
  bool InSession(int64_t utc, int64_t line_no) {
    if (options_.calendar == nullptr && options_.session.all_hours()) return true;
    const int64_t local = utc + tz_.OffsetAt(utc);
    const int64_t second = ((local % 86400) + 86400) % 86400;
    if (options_.calendar == nullptr) {
      return second >= options_.session.open_minute * 60 &&
             second < options_.session.close_minute * 60;
    }
    const ExchangeCalendar& cal = *options_.calendar;
    const int32_t date = DateKey(CivilFromDays(DaysFromSeconds(local)));
    if (!cal.Covers(date)) {
      if (outside_calendar_rows_++ == 0) {
        outside_calendar_line_ = line_no;
        outside_calendar_date_ = date;
      }
      return false;
    }
    const std::optional<SessionHours> hours = cal.HoursOn(date);
    if (!hours.has_value()) {
      ++report_->rows_on_closed_days;
      ++closed_day_rows_[date];
      return false;
    }
    if (second >= hours->open_minute * 60 && second < hours->close_minute * 60) {
      kept_dates_.insert(date);
      return true;
    }
    if (second >= hours->close_minute * 60 && second < cal.regular().close_minute * 60 &&
        cal.IsEarlyClose(date)) {
      ++early_close_rows_[date];  // a bar of the regular hours the early close removed
    }
    return false;
  }
  // The calendar's part of the report (after every row), or the whole-file error of bars
  // on dates the calendar does not cover.
  Status FinishCalendar();
  // The fix for a row problem: `repair`, plus what the bad-row policy in force does.
  std::string Fix(const std::string& repair) const {
    return options_.on_bad_rows == BadRowPolicy::kDrop
               ? repair + " (the row is dropped under --on-bad-rows drop)"
               : repair + ", or drop the row with --on-bad-rows drop";
  }
  void Problem(int64_t line, int column, const char* rule, std::string detail, std::string fix) {
    DataProblem p;
    p.file = path_;
    p.line = line;
    p.column = column >= 0 ? columns_.names[column] : "";
    p.rule = rule;
    p.detail = std::move(detail);
    p.fix = std::move(fix);
    report_->problems.push_back(std::move(p));
  }

  std::string path_;
  const CsvReadOptions& options_;
  const TimeZone& tz_;
  DataReport* report_;
  Columns columns_;
  std::string default_symbol_;
  std::vector<std::string_view> fields_;
  std::unordered_map<std::string, size_t, StringHash, std::equal_to<>> symbol_index_;
  std::vector<SymbolState> states_;
  int64_t bad_rows_ = 0;
  // Calendar bookkeeping (options_.calendar).
  std::map<int32_t, int64_t> closed_day_rows_;
  std::map<int32_t, int64_t> early_close_rows_;
  std::set<int32_t> kept_dates_;
  int64_t outside_calendar_rows_ = 0;
  int64_t outside_calendar_line_ = 0;
  int32_t outside_calendar_date_ = 0;
};

Status CsvReader::FinishCalendar() {
  if (options_.calendar == nullptr) return Status::Ok();
  const ExchangeCalendar& cal = *options_.calendar;
  if (outside_calendar_rows_ > 0) {
    return Status::DataError(fmt::format(
        "{}:{}: the bar's date {} lies outside the dates calendar {} speaks for ({}); {} "
        "row(s) do. Fix: trim the file to those dates, extend the calendar with a file "
        "(`# base = {}`, `# covers = FIRST:LAST` and rows for the new days' holidays), or set "
        "[data] calendar = \"none\"",
        path_, outside_calendar_line_, FormatDate(outside_calendar_date_), cal.name(),
        cal.coverage().ToString(), outside_calendar_rows_, cal.name()));
  }
  report_->closed_days_with_bars.assign(closed_day_rows_.begin(), closed_day_rows_.end());
  if (kept_dates_.empty()) return Status::Ok();
  const int32_t first = *kept_dates_.begin(), last = *kept_dates_.rbegin();
  for (int32_t d : cal.SessionsIn(first, last)) {
    if (kept_dates_.count(d) == 0) report_->missing_sessions.push_back(d);
    if (cal.IsEarlyClose(d)) {
      const auto it = early_close_rows_.find(d);
      report_->early_closes.emplace_back(d, it == early_close_rows_.end() ? 0 : it->second);
    }
  }
  return Status::Ok();
}

Status CsvReader::Run(std::string_view text) {
  if (text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0) {
    text.remove_prefix(3);  // UTF-8 byte order mark
  }
  size_t pos = 0;
  int64_t line_no = 0;
  bool have_header = false;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (static_cast<int64_t>(line.size()) > kMaxBarLineBytes) {
      return Status::DataError(fmt::format(
          "{}:{}: the line is {} bytes long, above the limit of {} bytes for a line of bars; "
          "is this a CSV file of bars?",
          path_, line_no, line.size(), kMaxBarLineBytes));
    }
    if (Trim(line).empty()) continue;
    if (!have_header) {
      if (line_no != 1) {
        return Status::DataError(path_ + ": the header must be on line 1 (found blank lines)");
      }
      RLT_RETURN_IF_ERROR(DetectColumns(path_, line, &columns_, &report_->notes));
      report_->symbol_column = columns_.symbol >= 0;
      have_header = true;
      continue;
    }
    ProcessRow(line, line_no);
  }
  if (!have_header) return Status::DataError(path_ + ": empty file (no header line)");
  if (report_->rows_read == 0) {
    return Status::DataError(path_ + ": the file has a header but no data rows");
  }
  return FinishCalendar();
}

SymbolState* CsvReader::StateFor(std::string_view symbol) {
  auto it = symbol_index_.find(symbol);
  if (it != symbol_index_.end()) return &states_[it->second];
  symbol_index_.emplace(std::string(symbol), states_.size());
  states_.emplace_back();
  states_.back().bars.symbol = std::string(symbol);
  states_.back().bars.timezone = options_.timezone;
  return &states_.back();
}

bool CsvReader::ParseTime(std::string_view field, int64_t line_no, int64_t* utc) {
  ParsedTime t;
  if (Trim(field).empty()) {
    Problem(line_no, columns_.time, "empty field", "no timestamp", Fix("fill in the timestamp"));
    return false;
  }
  if (!ParseTimestamp(field, &t)) {
    Problem(line_no, columns_.time, "bad timestamp",
            fmt::format("cannot read '{}' as a date or time", Quoted(Trim(field))),
            Fix("write YYYY-MM-DD, YYYYMMDD or YYYY-MM-DD HH:MM[:SS] with an optional +HH:MM "
                "offset or Z"));
    return false;
  }
  if (t.has_offset) {
    std::vector<int32_t>& seen = report_->utc_offsets;
    if ((seen.empty() || seen.back() != t.offset) &&
        std::find(seen.begin(), seen.end(), t.offset) == seen.end()) {
      seen.push_back(t.offset);
    }
    *utc = t.local - t.offset;
    return true;
  }
  report_->naive_times = true;
  Result<int64_t> r = tz_.LocalToUtc(t.local);
  if (!r.ok()) {
    Problem(line_no, columns_.time, "nonexistent local time", r.status().message(),
            Fix("check --timezone or write timestamps with an explicit UTC offset"));
    return false;
  }
  *utc = *r;
  return true;
}

// Parses the price and volume fields into v; ok[f] is false for a field with a problem.
void CsvReader::ParseValues(int64_t line_no, double* v, bool* ok) {
  for (int f = 0; f < kNumFields; ++f) {
    const int col = columns_.field[f];
    v[f] = 0;
    ok[f] = true;
    if (col < 0) continue;
    const NumberStatus s = ParseNumber(fields_[col], &v[f]);
    ok[f] = s == NumberStatus::kOk;
    if (s == NumberStatus::kEmpty) {
      Problem(line_no, col, "empty field", fmt::format("no {} value", kFieldNames[f]),
              Fix("fill in the value"));
    } else if (s == NumberStatus::kNonNumeric) {
      Problem(line_no, col, "non-numeric",
              fmt::format("cannot read '{}' as a number", Quoted(Trim(fields_[col]))),
              Fix("repair the value"));
    } else if (s == NumberStatus::kNotFinite) {
      Problem(line_no, col, "NaN",
              fmt::format("{} is '{}'", kFieldNames[f], Quoted(Trim(fields_[col]))),
              Fix("repair the value"));
    }
  }
  if (columns_.field[kOpen] < 0) v[kOpen] = v[kHigh] = v[kLow] = v[kClose];
}

// Positive prices, high >= max(open, close), low <= min(open, close), volume >= 0.
void CsvReader::CheckValues(int64_t line_no, const double* v, const bool* ok) {
  if (ok[kOpen] && ok[kHigh] && ok[kLow] && ok[kClose]) {
    bool positive = true;
    for (int f = kOpen; f <= kClose; ++f) {
      if (v[f] > 0 || columns_.field[f] < 0) continue;
      positive = false;
      Problem(line_no, columns_.field[f], "non-positive price",
              fmt::format("{}={}", kFieldNames[f], v[f]),
              Fix("repair the price (prices must be > 0)"));
    }
    for (int f = kOpen; f <= kClose && positive; ++f) {
      if (PriceInRange(v[f]) || columns_.field[f] < 0) continue;
      const bool above = v[f] > kMaxBarPrice;
      positive = false;  // skips the high/low checks below
      Problem(line_no, columns_.field[f], "absurd value",
              fmt::format("{}={} is {} the {} of {} for a price", kFieldNames[f], v[f],
                          above ? "above" : "below", above ? "limit" : "floor",
                          above ? kMaxBarPrice : kMinBarPrice),
              Fix(above ? "repair the price"
                        : "repair the price, or quote it per 1,000 or per million units"));
    }
    const double hi_ref = std::max(v[kOpen], v[kClose]);
    const double lo_ref = std::min(v[kOpen], v[kClose]);
    if (positive && v[kHigh] < hi_ref * (1 - kOhlcTolerance)) {
      Problem(line_no, columns_.field[kHigh], "high<max(open,close)",
              fmt::format("high={} < max(open={}, close={})", v[kHigh], v[kOpen], v[kClose]),
              Fix("repair high/open/close"));
    }
    if (positive && v[kLow] > lo_ref * (1 + kOhlcTolerance)) {
      Problem(line_no, columns_.field[kLow], "low>min(open,close)",
              fmt::format("low={} > min(open={}, close={})", v[kLow], v[kOpen], v[kClose]),
              Fix("repair low/open/close"));
    }
  }
  if (ok[kVolume] && v[kVolume] < 0) {
    Problem(line_no, columns_.field[kVolume], "negative volume",
            fmt::format("volume={}", v[kVolume]), Fix("repair the volume"));
  } else if (ok[kVolume] && v[kVolume] > kMaxBarVolume) {
    Problem(
        line_no, columns_.field[kVolume], "absurd value",
        fmt::format("volume={} is above the limit of {} for a volume", v[kVolume], kMaxBarVolume),
        Fix("repair the volume"));
  }
}

// Times must increase within a symbol; compared with the symbol's last kept bar.
void CsvReader::CheckOrder(int64_t line_no, const SymbolState& state, int64_t utc) {
  if (!state.has_last || utc > state.last_time) return;
  const bool dup = utc == state.last_time;
  Problem(line_no, columns_.time, dup ? "duplicate time" : "non-monotonic time",
          fmt::format("{} {} the previous bar of {} ({})", FormatIso8601(utc, 0),
                      dup ? "repeats" : "is before", state.bars.symbol,
                      FormatIso8601(state.last_time, 0)),
          dup ? "remove the duplicate row (one bar per time and symbol)"
              : "sort the file by time (within each symbol)");
}

void CsvReader::ProcessRow(std::string_view line, int64_t line_no) {
  ++report_->rows_read;
  SplitCsvFields(line, &fields_);  // an open quote: the field runs to the end, as read
  if (static_cast<int>(fields_.size()) <= columns_.max_index) {
    Problem(line_no, -1, "missing fields",
            fmt::format("{} fields, the header has {}", fields_.size(), columns_.names.size()),
            Fix("repair the row"));
    ++bad_rows_;
    return;
  }
  if (fields_.size() > columns_.names.size()) {
    Problem(line_no, -1, "extra fields",
            fmt::format("{} fields, the header has {}", fields_.size(), columns_.names.size()),
            Fix("repair the row (quote a value that holds a comma)"));
    ++bad_rows_;
    return;
  }
  // A file without a symbol column is one symbol: the one asked for, else named after it.
  std::string_view symbol = options_.symbol.empty() ? default_symbol_ : options_.symbol;
  if (columns_.symbol >= 0) {
    symbol = Trim(fields_[columns_.symbol]);
    if (symbol.empty()) {
      Problem(line_no, columns_.symbol, "empty field", "no symbol", Fix("fill in the symbol"));
      ++bad_rows_;
      return;
    }
  }
  if (!options_.symbol.empty() && symbol != options_.symbol) return;
  SymbolState* state = StateFor(symbol);
  const size_t problems_before = report_->problems.size();
  int64_t utc = 0;
  const bool time_ok = ParseTime(fields_[columns_.time], line_no, &utc);
  if (time_ok && !InSession(utc, line_no)) {
    ++report_->rows_outside_session;
    return;
  }
  double v[kNumFields];
  bool ok[kNumFields];
  ParseValues(line_no, v, ok);
  CheckValues(line_no, v, ok);
  if (time_ok) CheckOrder(line_no, *state, utc);
  if (report_->problems.size() != problems_before) {
    ++bad_rows_;
    return;
  }
  Bars& b = state->bars;
  b.time.push_back(utc);
  b.utc_offset.push_back(tz_.OffsetAt(utc));
  b.open.push_back(v[kOpen]);
  b.high.push_back(v[kHigh]);
  b.low.push_back(v[kLow]);
  b.close.push_back(v[kClose]);
  b.volume.push_back(v[kVolume]);
  state->last_time = utc;
  state->has_last = true;
}

MarketData CsvReader::TakeData() {
  MarketData data;
  for (SymbolState& s : states_) {
    if (s.bars.empty()) continue;
    s.bars.day_boundary = options_.day_boundary_minute * 60;
    s.bars.around_the_clock = options_.around_the_clock;
    AssignSessions(s.bars);
    data.symbols.push_back(std::move(s.bars));
  }
  std::sort(data.symbols.begin(), data.symbols.end(),
            [](const Bars& a, const Bars& b) { return a.symbol < b.symbol; });
  return data;
}

// "N problems in M of R rows: 25 x empty field, ..." plus the first few problems.
std::string Summarise(const std::string& path, const DataReport& report, int64_t bad_rows) {
  std::vector<std::pair<std::string, int64_t>> counts;
  for (const DataProblem& p : report.problems) {
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&](const auto& c) { return c.first == p.rule; });
    if (it == counts.end()) {
      counts.emplace_back(p.rule, 1);
    } else {
      ++it->second;
    }
  }
  std::string msg = fmt::format("{}: {} problem(s) in {} of {} data rows (", path,
                                report.problems.size(), bad_rows, report.rows_read);
  for (size_t i = 0; i < counts.size(); ++i) {
    msg += fmt::format("{}{} x {}", i ? ", " : "", counts[i].second, counts[i].first);
  }
  msg += "). First problems:";
  const size_t shown = std::min<size_t>(report.problems.size(), 5);
  for (size_t i = 0; i < shown; ++i) msg += "\n  " + report.problems[i].ToString();
  msg += fmt::format(
      "\nTo see all of them run `rltrade data check {}`; to skip these rows read with "
      "--on-bad-rows drop.",
      path);
  return msg;
}

}  // namespace

std::string DataProblem::ToString() const {
  std::string s = fmt::format("{}:{}: ", file, line);
  if (!column.empty()) s += fmt::format("column '{}': ", column);
  return s + fmt::format("{}: {}. Fix: {}", rule, detail, fix);
}

std::string SessionHours::ToString() const {
  if (all_hours()) return "";
  return fmt::format("{:02}:{:02}-{:02}:{:02}", open_minute / 60, open_minute % 60,
                     close_minute / 60, close_minute % 60);
}

Result<SessionHours> ParseSessionHours(const std::string& text, const std::string& key) {
  SessionHours h;
  if (text.empty()) return h;
  auto bad = [&](const std::string& why) {
    const std::string given = key + (key.rfind("--", 0) == 0 ? " '" : " = '") + text + "'";
    // A market that never closes is spelled "24h" exactly (a near miss such as "24H" or
    // "24/7" gets that spelling in the message).
    const bool near_24h =
        text.find("24") != std::string::npos && text.find(':') == std::string::npos;
    return Status::InvalidArgument(given + ": " + why +
                                   "; expected local trading hours HH:MM-HH:MM by bar start "
                                   "time, open before close, e.g. 09:30-16:00" +
                                   (near_24h ? std::string(", or \"24h\" (lowercase) for a market "
                                                           "that never closes")
                                             : std::string()));
  };
  int h1 = 0, m1 = 0, h2 = 0, m2 = 0;
  if (text.size() != 11 || text[2] != ':' || text[5] != '-' || text[8] != ':' ||
      !Digits(text, 0, 2, &h1) || !Digits(text, 3, 2, &m1) || !Digits(text, 6, 2, &h2) ||
      !Digits(text, 9, 2, &m2)) {
    return bad("not of the form HH:MM-HH:MM");
  }
  if (m1 > 59 || m2 > 59 || h1 > 24 || h2 > 24 || (h1 == 24 && m1 > 0) || (h2 == 24 && m2 > 0)) {
    return bad("hours must be 00..24 and minutes 00..59");
  }
  h.open_minute = h1 * 60 + m1;
  h.close_minute = h2 * 60 + m2;
  if (h.open_minute >= h.close_minute) return bad("the open must be before the close");
  return h;
}

std::string NaiveTimesNote(const std::string& path, const std::string& zone) {
  return "note: " + path + " has no UTC offsets; timestamps read as " + zone +
         " (set [data] timezone or --timezone)";
}

const Bars* MarketData::Find(const std::string& symbol) const {
  for (const Bars& b : symbols) {
    if (b.symbol == symbol) return &b;
  }
  return nullptr;
}

namespace {

Result<MarketData> ParseWithZone(std::string_view text, const std::string& path,
                                 const CsvReadOptions& options, const TimeZone& tz,
                                 DataReport* report) {
  if (options.calendar != nullptr && !options.session.all_hours()) {
    return Status::InvalidArgument(
        "a calendar gives each day's hours: read with a calendar or "
        "with session hours, not both");
  }
  if (options.calendar != nullptr && !options.calendar->timezone().empty() &&
      options.calendar->timezone() != options.timezone) {
    return Status::InvalidArgument("calendar " + options.calendar->name() + " keeps the hours of " +
                                   options.calendar->timezone() + ", but the bars are read in " +
                                   options.timezone + "; read them in " +
                                   options.calendar->timezone());
  }
  if (options.day_boundary_minute < 0 || options.day_boundary_minute >= 24 * 60) {
    return Status::InvalidArgument("day boundary out of 00:00..23:59");
  }
  DataReport local_report;
  DataReport* rep = report ? report : &local_report;
  *rep = DataReport();
  CsvReader reader(path, options, tz, rep);
  RLT_RETURN_IF_ERROR(reader.Run(text));
  if (!rep->problems.empty() && options.on_bad_rows == BadRowPolicy::kFail) {
    return Status::DataError(Summarise(path, *rep, reader.bad_rows()));
  }
  rep->rows_dropped = reader.bad_rows();
  MarketData data = reader.TakeData();
  if (!options.symbol.empty() && data.symbols.empty() && rep->problems.empty()) {
    return Status::NotFound(path + ": no rows for symbol '" + options.symbol +
                            "' (check the name in the file's symbol/tic column)");
  }
  return data;
}

}  // namespace

Result<MarketData> ReadBarsCsv(const std::string& path, const CsvReadOptions& options,
                               DataReport* report) {
  RLT_ASSIGN_OR_RETURN(TimeZone tz, TimeZone::Load(options.timezone));
  Result<std::string> text = ReadFile(path, kMaxBarFileBytes);
  if (!text.ok()) {
    // A missing file stays an IoError, as before ReadFile was used here.
    const Status s = text.status().code() == Status::Code::kNotFound
                         ? Status::IoError(text.status().message())
                         : text.status();
    return Annotate(s, "", ". Fix: check the path and that it is a CSV file of bars.");
  }
  return ParseWithZone(*text, path, options, tz, report);
}

Result<FundingSeries> ReadFundingCsv(const std::string& path, const std::string& timezone) {
  RLT_ASSIGN_OR_RETURN(TimeZone tz, TimeZone::Load(timezone));
  RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(path, kMaxBarFileBytes));
  auto lower = [](std::string_view v) {
    std::string out;
    for (char c : Trim(v)) {
      if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
  };
  FundingSeries out;
  std::vector<std::string_view> fields;
  int time_col = -1, rate_col = -1;
  int64_t line_no = 0;
  size_t pos = 0;
  auto error = [&](const std::string& column, const std::string& what, const std::string& fix) {
    return Status::DataError(fmt::format("{}:{}: {}{}. Fix: {}", path, line_no,
                                         column.empty() ? "" : "column '" + column + "': ", what,
                                         fix));
  };
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    std::string_view line =
        std::string_view(text).substr(pos, (nl == std::string::npos ? text.size() : nl) - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Trim(line).empty()) continue;
    SplitCsvFields(line, &fields);
    if (time_col < 0) {
      for (size_t i = 0; i < fields.size(); ++i) {
        const std::string name = lower(fields[i]);
        if (time_col < 0 && (name == "time" || name == "timestamp" || name == "date" ||
                             name == "datetime" || name == "fundingtime")) {
          time_col = static_cast<int>(i);
        }
        if (rate_col < 0 && (name == "rate" || name == "fundingrate")) {
          rate_col = static_cast<int>(i);
        }
      }
      if (time_col < 0 || rate_col < 0) {
        return error("", "expected a header with a time column (time, timestamp) and a rate column",
                     "write the header time,rate (funding_rate also matches)");
      }
      continue;
    }
    if (static_cast<int>(fields.size()) <= std::max(time_col, rate_col)) {
      return error("", fmt::format("{} fields, fewer than the header's", fields.size()),
                   "repair the row");
    }
    ParsedTime t;
    if (!ParseTimestamp(fields[time_col], &t)) {
      return error("time",
                   fmt::format("cannot read '{}' as a time", Quoted(Trim(fields[time_col]))),
                   "write YYYY-MM-DD HH:MM[:SS] with an optional offset or Z");
    }
    int64_t utc = t.local - t.offset;
    if (!t.has_offset) {
      Result<int64_t> r = tz.LocalToUtc(t.local);
      if (!r.ok()) return error("time", r.status().message(), "write the time with its offset");
      utc = *r;
    }
    double rate = 0;
    if (ParseNumber(fields[rate_col], &rate) != NumberStatus::kOk || !(std::fabs(rate) < 1)) {
      return error("rate",
                   fmt::format("'{}' is not a rate in (-1, 1)", Quoted(Trim(fields[rate_col]))),
                   "write the funding rate as a fraction of the position's value (0.0001 = "
                   "0.01 %)");
    }
    if (!out.time.empty() && utc <= out.time.back()) {
      return error("time", "the time is not after the previous row's",
                   "sort the file by time, one row per payment");
    }
    out.time.push_back(utc);
    out.rate.push_back(rate);
  }
  if (time_col < 0) return Status::DataError(path + ": empty file (no header line)");
  return out;
}

Result<MarketData> ParseBarsCsv(std::string_view text, const std::string& source,
                                const CsvReadOptions& options, DataReport* report) {
  RLT_ASSIGN_OR_RETURN(TimeZone tz, TimeZone::Load(options.timezone));
  return ParseWithZone(text, source, options, tz, report);
}

Status WriteBarsCsv(const std::string& path, const MarketData& data) {
  // Written to path.tmp, then renamed over `path`: only ever over a regular file (a rename
  // would replace a device such as /dev/full, a symlink or a FIFO with a plain file).
  struct stat target;
  if (::lstat(path.c_str(), &target) == 0 && !S_ISREG(target.st_mode)) {
    return Status::InvalidArgument("refusing to write '" + path +
                                   "': it exists and is not a regular file (a device, symlink, "
                                   "FIFO or directory); choose another --out path");
  }
  // Rows in time order, symbols in their MarketData order at equal times.
  std::vector<std::pair<size_t, size_t>> rows;  // (symbol, bar)
  for (size_t s = 0; s < data.symbols.size(); ++s) {
    for (size_t i = 0; i < data.symbols[s].size(); ++i) rows.emplace_back(s, i);
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    return data.symbols[a.first].time[a.second] < data.symbols[b.first].time[b.second];
  });
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "timestamp,symbol,open,high,low,close,volume\n");
  for (const auto& [s, i] : rows) {
    const Bars& b = data.symbols[s];
    // "{}" prints the shortest text that reads back to the same double (exact round trip).
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{}\n",
                   FormatIso8601(b.time[i], b.utc_offset[i]), b.symbol, b.open[i], b.high[i],
                   b.low[i], b.close[i], b.volume[i]);
  }
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Status::IoError("cannot write " + tmp + ": " + std::strerror(errno));
  const bool wrote = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) {
    std::remove(tmp.c_str());
    return Status::IoError("error writing " + tmp + " (disk full?)");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IoError("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace rlt::market
