// rltrade cli: `rltrade data check` and `rltrade data synth`.
//
// check: reads a bar file, prints per-symbol coverage (rows, dates, sessions, bars per
//   session, gaps) and every problem the reader found, grouped by rule. It reads the whole
//   file with drop semantics so that the summary prints even for a broken file (the Fix
//   texts are those of the --on-bad-rows policy in force); the exit code
//   is 1 when problems were found under the fail policy (the default), else 0.
// synth: writes synthetic bars (market/synth.h) to a CSV file.
// This file only parses flags and formats output; the work is in market/.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/commands.h"
#include "cli/problems_output.h"
#include "core/civil_time.h"
#include "core/json_text.h"
#include "core/printable.h"
#include "market/market.h"

namespace rlt::cli {
namespace {

using market::Bars;

struct CheckFlags {
  std::string file;
  std::string timezone = "UTC";
  std::string on_bad_rows = "fail";
  std::string session;   // --session HH:MM-HH:MM ("" = all hours; "24h")
  std::string calendar;  // --calendar XNYS|XNSE|FILE
  std::string day_boundary = "00:00";
  int max_problems = 50;
  bool json = false;
  bool timezone_given = false;  // --timezone was passed
};

struct SymbolSummary {
  std::string symbol;
  size_t rows = 0, sessions = 0;
  int32_t first = 0, last = 0;
  int min_bars = 0, median_bars = 0, max_bars = 0;
  std::vector<int32_t> missing_weekdays;   // daily data: weekdays without a session
  std::vector<int32_t> missing_vs_others;  // dates other symbols have, within our range
};

SymbolSummary Summarise(const Bars& b, const std::set<int32_t>& all_dates, bool multi) {
  SymbolSummary s;
  s.symbol = b.symbol;
  s.rows = b.size();
  s.sessions = b.sessions.size();
  if (b.sessions.empty()) return s;
  s.first = b.sessions.front().date;
  s.last = b.sessions.back().date;
  std::vector<int> sizes;
  for (const auto& session : b.sessions) sizes.push_back(session.size());
  std::sort(sizes.begin(), sizes.end());
  s.min_bars = sizes.front();
  s.median_bars = sizes[sizes.size() / 2];
  s.max_bars = sizes.back();
  auto days = [](int32_t key) { return DaysFromCivil(key / 10000, key / 100 % 100, key % 100); };
  if (s.median_bars == 1) {  // daily data
    for (size_t i = 1; i < b.sessions.size(); ++i) {
      for (int64_t d = days(b.sessions[i - 1].date) + 1; d < days(b.sessions[i].date); ++d) {
        if (Weekday(d) != 0 && Weekday(d) != 6)
          s.missing_weekdays.push_back(DateKey(CivilFromDays(d)));
      }
    }
  }
  if (multi) {
    std::set<int32_t> mine;
    for (const auto& session : b.sessions) mine.insert(session.date);
    for (auto it = all_dates.lower_bound(s.first); it != all_dates.end() && *it <= s.last; ++it) {
      if (!mine.count(*it)) s.missing_vs_others.push_back(*it);
    }
  }
  return s;
}

std::string Examples(const std::vector<int32_t>& dates) {
  std::string out;
  for (size_t i = 0; i < dates.size() && i < 3; ++i) out += (i ? ", " : "") + FormatDate(dates[i]);
  return dates.size() > 3 ? out + ", ..." : out;
}

// With --calendar: the days without a session that have bars, the calendar's sessions
// without bars, and the early closes (with the bars after the early close dropped).
void PrintCalendarText(const CheckFlags& f, const market::DataReport& report) {
  fmt::print(
      "calendar {}: {} row(s) outside the day's session skipped ({} on days without a "
      "session)\n",
      PrintableText(f.calendar), report.rows_outside_session, report.rows_on_closed_days);
  const size_t limit = f.max_problems > 0 ? static_cast<size_t>(f.max_problems) : SIZE_MAX;
  fmt::print("holidays with bars: {}\n", report.closed_days_with_bars.size());
  for (size_t i = 0; i < report.closed_days_with_bars.size() && i < limit; ++i) {
    const auto& [date, rows] = report.closed_days_with_bars[i];
    fmt::print("  {}  {} bar(s)\n", FormatDate(date), rows);
  }
  fmt::print("missing sessions: {}\n", report.missing_sessions.size());
  for (size_t i = 0; i < report.missing_sessions.size() && i < limit; ++i) {
    fmt::print("  {}\n", FormatDate(report.missing_sessions[i]));
  }
  fmt::print("early closes: {}\n", report.early_closes.size());
  for (size_t i = 0; i < report.early_closes.size() && i < limit; ++i) {
    const auto& [date, rows] = report.early_closes[i];
    fmt::print("  {}  {} bar(s) after the early close skipped\n", FormatDate(date), rows);
  }
}

void PrintText(const CheckFlags& f, const market::DataReport& report,
               const std::vector<SymbolSummary>& summaries) {
  fmt::print("{}: {} data rows, {} symbol(s), timezone {}\n", PrintableText(f.file),
             report.rows_read, summaries.size(), f.timezone);
  if (!f.session.empty() && f.calendar.empty() && f.session != "24h") {
    fmt::print("session {}: {} row(s) outside it skipped\n", f.session,
               report.rows_outside_session);
  }
  if (!f.calendar.empty()) PrintCalendarText(f, report);
  for (const auto& note : report.notes) fmt::print("note: {}\n", PrintableText(note));
  size_t width = 6;
  for (const auto& s : summaries) width = std::max(width, PrintableText(s.symbol).size());
  fmt::print("{:<{}} {:>8} {:>10} {:>10} {:>8}  {:>14}  {}\n", "symbol", width, "rows", "first",
             "last", "sessions", "bars/session", "gaps");
  bool any_weekday_gap = false;
  for (const auto& s : summaries) {
    std::string gaps;
    if (!s.missing_weekdays.empty()) {
      any_weekday_gap = true;
      gaps += fmt::format("{} missing weekdays ({}) ", s.missing_weekdays.size(),
                          Examples(s.missing_weekdays));
    }
    if (!s.missing_vs_others.empty()) {
      gaps += fmt::format("{} sessions other symbols have ({})", s.missing_vs_others.size(),
                          Examples(s.missing_vs_others));
    }
    fmt::print("{:<{}} {:>8} {:>10} {:>10} {:>8}  {:>14}  {}\n", PrintableText(s.symbol), width,
               s.rows, FormatDate(s.first), FormatDate(s.last), s.sessions,
               fmt::format("{}/{}/{}", s.min_bars, s.median_bars, s.max_bars),
               gaps.empty() ? "none" : gaps);
  }
  if (any_weekday_gap && f.calendar.empty()) {
    fmt::print("(missing weekdays include exchange holidays: check with --calendar XNYS|XNSE)\n");
  }
  if (!report.problems.empty()) {
    fmt::print("(coverage is counted after dropping the rows with problems)\n");
  }
  if (report.problems.empty()) {
    fmt::print("no problems found\n");
    return;
  }
  fmt::print("{}",
             ProblemsText(
                 report, f.max_problems,
                 f.on_bad_rows == "drop" ? "dropped" : "would be dropped with --on-bad-rows drop"));
  if (f.max_problems > 0)
    fmt::print("(at most {} per rule; --max-problems 0 shows all)\n", f.max_problems);
}

void PrintJson(const CheckFlags& f, const market::DataReport& report,
               const std::vector<SymbolSummary>& summaries) {
  nlohmann::json j;
  j["file"] = f.file;
  j["timezone"] = f.timezone;
  j["rows_read"] = report.rows_read;
  j["rows_dropped"] = report.rows_dropped;
  if (!f.session.empty()) {
    j["session"] = f.session;
    j["rows_outside_session"] = report.rows_outside_session;
  }
  if (!f.calendar.empty()) {
    j["calendar"] = f.calendar;
    j["rows_outside_session"] = report.rows_outside_session;
    j["rows_on_closed_days"] = report.rows_on_closed_days;
    nlohmann::json closed = nlohmann::json::array(), early = nlohmann::json::array(),
                   missing = nlohmann::json::array();
    for (const auto& [date, rows] : report.closed_days_with_bars) {
      closed.push_back({{"date", FormatDate(date)}, {"rows", rows}});
    }
    for (const auto& [date, rows] : report.early_closes) {
      early.push_back({{"date", FormatDate(date)}, {"rows_after_close", rows}});
    }
    for (int32_t date : report.missing_sessions) missing.push_back(FormatDate(date));
    j["holidays_with_bars"] = closed;
    j["missing_sessions"] = missing;
    j["early_closes"] = early;
  }
  j["notes"] = report.notes;
  j["symbols"] = nlohmann::json::array();
  for (const auto& s : summaries) {
    // At most --max-problems dates per list (0: all); the counts are always complete.
    auto dates = [&](const std::vector<int32_t>& v) {
      std::vector<std::string> out;
      for (int32_t d : v) {
        if (f.max_problems > 0 && out.size() >= static_cast<size_t>(f.max_problems)) break;
        out.push_back(FormatDate(d));
      }
      return out;
    };
    j["symbols"].push_back({{"symbol", s.symbol},
                            {"rows", s.rows},
                            {"first", FormatDate(s.first)},
                            {"last", FormatDate(s.last)},
                            {"sessions", s.sessions},
                            {"bars_per_session",
                             {{"min", s.min_bars}, {"median", s.median_bars}, {"max", s.max_bars}}},
                            {"missing_weekdays_count", s.missing_weekdays.size()},
                            {"missing_weekdays", dates(s.missing_weekdays)},
                            {"missing_sessions_vs_other_symbols_count", s.missing_vs_others.size()},
                            {"missing_sessions_vs_other_symbols", dates(s.missing_vs_others)}});
  }
  AddProblemsJson(j, report, f.max_problems);
  j["ok"] = report.problems.empty() || f.on_bad_rows == "drop";
  fmt::print("{}\n", JsonText(j, 2));
}

int RunCheck(const CheckFlags& f) {
  if (f.on_bad_rows != "fail" && f.on_bad_rows != "drop") {
    return ReportError(Status::InvalidArgument("unknown --on-bad-rows '" + f.on_bad_rows +
                                               "'; valid values: fail, drop"));
  }
  if (f.max_problems < 0)
    return ReportError(Status::InvalidArgument("--max-problems must be >= 0"));
  market::ReadHoursSettings rs;
  rs.session = {f.session, !f.session.empty(), "--session", "--session"};
  rs.day_boundary = {f.day_boundary, f.day_boundary != "00:00", "--day-boundary", "--day-boundary"};
  rs.calendar = {f.calendar, !f.calendar.empty(), "--calendar", "--calendar"};
  rs.timezone = {f.timezone, f.timezone_given, "--timezone", "--timezone"};
  Result<market::ReadHours> hours = market::ResolveReadHours(rs);
  if (!hours.ok()) return ReportError(hours.status());
  market::CsvReadOptions options;
  options.timezone = hours->timezone;
  options.session = hours->hours;
  options.day_boundary_minute = hours->day_boundary_minute;
  options.calendar = hours->calendar;
  // Drop semantics so that the summary prints even for a broken file, but the Fix texts
  // are those of the policy in force.
  options.on_bad_rows =
      f.on_bad_rows == "drop" ? market::BadRowPolicy::kDrop : market::BadRowPolicy::kFail;
  market::DataReport report;
  Result<market::MarketData> data = market::ReadBarsCsv(f.file, options, &report);
  if (!data.ok() && options.on_bad_rows == market::BadRowPolicy::kFail &&
      !report.problems.empty()) {
    options.on_bad_rows = market::BadRowPolicy::kDrop;
    std::vector<market::DataProblem> problems = std::move(report.problems);
    data = market::ReadBarsCsv(f.file, options, &report);
    report.problems = std::move(problems);
  }
  if (!data.ok()) return ReportError(data.status());
  if (report.naive_times && !f.timezone_given && options.calendar == nullptr) {
    fmt::print(stderr, "{}\n", PrintableText(market::NaiveTimesNote(f.file, f.timezone)));
  }
  std::set<int32_t> all_dates;
  for (const Bars& b : data->symbols) {
    for (const auto& s : b.sessions) all_dates.insert(s.date);
  }
  std::vector<SymbolSummary> summaries;
  for (const Bars& b : data->symbols) {
    summaries.push_back(Summarise(b, all_dates, data->symbols.size() > 1));
  }
  CheckFlags shown = f;  // the zone the bars were read in (a calendar's)
  shown.timezone = options.timezone;
  if (f.json) {
    PrintJson(shown, report, summaries);
  } else {
    PrintText(shown, report, summaries);
  }
  return !report.problems.empty() && f.on_bad_rows == "fail" ? 1 : 0;
}

struct SynthFlags {
  std::string kind = "intraday", model = "gbm", out, timezone = "Asia/Kolkata";
  std::string start = "2023-01-02", session = "09:15-15:30";
  int symbols = 1, days = 20, bar_minutes = 5;
  uint64_t seed = 1;
  double signal_to_noise = 0.0;
};

bool TwoDigits(const std::string& s, size_t pos, int* out) {
  if (pos + 2 > s.size() || !isdigit(s[pos]) || !isdigit(s[pos + 1])) return false;
  *out = (s[pos] - '0') * 10 + (s[pos + 1] - '0');
  return true;
}

Status ParseSynthFlags(const SynthFlags& f, market::SynthOptions* o) {
  RLT_ASSIGN_OR_RETURN(o->kind, market::ParseSynthKind(f.kind));
  RLT_ASSIGN_OR_RETURN(o->model, market::ParseSynthModel(f.model));
  int y1 = 0, y2 = 0, m = 0, d = 0;
  if (f.start.size() != 10 || f.start[4] != '-' || f.start[7] != '-' ||
      !TwoDigits(f.start, 0, &y1) || !TwoDigits(f.start, 2, &y2) || !TwoDigits(f.start, 5, &m) ||
      !TwoDigits(f.start, 8, &d)) {
    return Status::InvalidArgument("--start '" + f.start + "': expected YYYY-MM-DD");
  }
  const int year = y1 * 100 + y2;
  // Bars run for days sessions after --start: keep every timestamp within years the bar
  // reader accepts (and a real market could have).
  if (year < 1900 || year > 2999 || m < 1 || m > 12 || d < 1 || d > DaysInMonth(year, m)) {
    return Status::InvalidArgument("--start '" + f.start +
                                   "': expected a valid date YYYY-MM-DD in the years 1900..2999");
  }
  if (!std::isfinite(f.signal_to_noise)) {
    return Status::InvalidArgument(fmt::format(
        "--signal-to-noise {}: expected a finite number (>0 momentum, <0 mean reversion, 0 none)",
        f.signal_to_noise));
  }
  o->start_date = (y1 * 100 + y2) * 10000 + m * 100 + d;
  int h1 = 0, m1 = 0, h2 = 0, m2 = 0;
  const std::string& s = f.session;
  if (s.size() != 11 || s[2] != ':' || s[5] != '-' || s[8] != ':' || !TwoDigits(s, 0, &h1) ||
      !TwoDigits(s, 3, &m1) || !TwoDigits(s, 6, &h2) || !TwoDigits(s, 9, &m2)) {
    return Status::InvalidArgument("--session '" + s + "': expected HH:MM-HH:MM, e.g. 09:15-15:30");
  }
  o->session_open_minute = h1 * 60 + m1;
  o->session_close_minute = h2 * 60 + m2;
  o->num_symbols = f.symbols;
  o->num_days = f.days;
  o->bar_minutes = f.bar_minutes;
  o->seed = f.seed;
  o->timezone = f.timezone;
  o->signal_to_noise = f.signal_to_noise;
  return Status::Ok();
}

int RunSynth(const SynthFlags& f) {
  market::SynthOptions options;
  Status st = ParseSynthFlags(f, &options);
  if (!st.ok()) return ReportError(st);
  Result<market::MarketData> data = market::GenerateSynthetic(options);
  if (!data.ok()) return ReportError(data.status());
  st = market::WriteBarsCsv(f.out, *data);
  if (!st.ok()) return ReportError(st);
  const Bars& b = data->symbols.front();
  fmt::print(
      "wrote {}: {} {} symbol(s) x {} bars ({} sessions {}..{}, {} bars/session, {}), seed {}\n",
      f.out, f.kind, data->symbols.size(), b.size(), b.sessions.size(),
      FormatDate(b.sessions.front().date), FormatDate(b.sessions.back().date),
      b.sessions.front().size(), options.timezone, options.seed);
  return 0;
}

void AddCheck(CLI::App* data, Action* action) {
  auto flags = std::make_shared<CheckFlags>();
  CLI::App* check = data->add_subcommand("check", "Validate a bar file and summarise its coverage");
  check->add_option("file", flags->file, "CSV file of bars")->required();
  CLI::Option* tz =
      check
          ->add_option("--timezone", flags->timezone,
                       "IANA zone for naive times and sessions (e.g. America/New_York)")
          ->capture_default_str();
  check->add_option("--session", flags->session,
                    "keep bars starting in these local hours HH:MM-HH:MM, open inclusive, close "
                    "exclusive (e.g. 09:30-16:00 for the NYSE regular session); 24h: a market "
                    "that never closes, one session per day cut at --day-boundary");
  check->add_option("--calendar", flags->calendar,
                    "exchange calendar XNYS, XNSE or a calendar CSV (date,open,close): keep each "
                    "day's session and report holidays with bars, missing sessions and early "
                    "closes (replaces --session; its zone replaces --timezone)");
  check
      ->add_option("--day-boundary", flags->day_boundary,
                   "with --session 24h: local time HH:MM at which a trading day begins")
      ->capture_default_str();
  check
      ->add_option("--on-bad-rows", flags->on_bad_rows,
                   "fail: exit 1 when problems are found; drop: report them, exit 0")
      ->capture_default_str();
  check->add_option("--max-problems", flags->max_problems, "problems listed per rule (0 = all)")
      ->capture_default_str();
  check->add_flag("--json", flags->json, "print the summary as JSON");
  check->callback([flags, tz, action] {
    flags->timezone_given = tz->count() > 0;
    *action = [flags] { return RunCheck(*flags); };
  });
}

void AddSynth(CLI::App* data, Action* action) {
  auto f = std::make_shared<SynthFlags>();
  CLI::App* synth = data->add_subcommand("synth", "Write synthetic bars to a CSV file");
  synth->add_option("--kind", f->kind, "intraday or daily")->capture_default_str();
  synth->add_option("--symbols", f->symbols, "number of symbols (SYN0, SYN1, ...)")
      ->capture_default_str();
  synth->add_option("--days", f->days, "number of weekday sessions")->capture_default_str();
  synth->add_option("--bar-minutes", f->bar_minutes, "intraday bar length")->capture_default_str();
  synth->add_option("--seed", f->seed, "random seed (symbol i uses seed + i)")
      ->capture_default_str();
  synth->add_option("--out", f->out, "output CSV file")->required();
  synth->add_option("--timezone", f->timezone, "IANA time zone of the sessions")
      ->capture_default_str();
  synth->add_option("--start", f->start, "first date, YYYY-MM-DD")->capture_default_str();
  synth->add_option("--session", f->session, "local trading hours HH:MM-HH:MM")
      ->capture_default_str();
  synth
      ->add_option("--signal-to-noise", f->signal_to_noise,
                   "predictable share: >0 momentum, <0 mean reversion, 0 none")
      ->capture_default_str();
  synth->add_option("--model", f->model, "daily model: gbm or garch")->capture_default_str();
  synth->callback([f, action] { *action = [f] { return RunSynth(*f); }; });
}

}  // namespace

void RegisterDataCommands(CLI::App& app, Action* action) {
  CLI::App* data =
      app.add_subcommand("data", "Market data: validate files, generate synthetic bars");
  data->require_subcommand(1);
  AddCheck(data, action);
  AddSynth(data, action);
}

}  // namespace rlt::cli
