// Tests of exchange calendars (market/calendar.h), the bar reader with a calendar and the
// trading-day boundary of markets that never close. Expected days are the exchanges'
// published holidays and early closes (NYSE holiday notices, NSE circulars), not our
// own output.
#include "market/calendar.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "core/civil_time.h"
#include "market/csv.h"
#include "market/sessions.h"

namespace rlt::market {
namespace {

SessionHours Hours(int oh, int om, int ch, int cm) { return {oh * 60 + om, ch * 60 + cm}; }

bool Same(const std::optional<SessionHours>& a, const SessionHours& b) {
  return a.has_value() && a->open_minute == b.open_minute && a->close_minute == b.close_minute;
}

TEST(Calendar, NyseHolidaysAndEarlyClosesAsPublished) {
  Result<ExchangeCalendar> cal = ExchangeCalendar::Builtin("xnys");
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  EXPECT_EQ(cal->timezone(), "America/New_York");
  EXPECT_EQ(cal->coverage().first, 20100101);
  EXPECT_EQ(cal->coverage().last, 20261231);
  // Early closes at 13:00 (NYSE 2025 holiday notice).
  for (int32_t d : {20250703, 20251128, 20251224, 20241129, 20241224, 20230703}) {
    EXPECT_TRUE(Same(cal->HoursOn(d), Hours(9, 30, 13, 0))) << d;
    EXPECT_TRUE(cal->IsEarlyClose(d)) << d;
  }
  // Full holidays, including the one-off closures.
  for (int32_t d : {20250704, 20251127, 20250109, 20250120, 20250418, 20250619, 20240115, 20121029,
                    20121030, 20181205, 20260703}) {
    EXPECT_FALSE(cal->HoursOn(d).has_value()) << d;
    EXPECT_TRUE(cal->IsHoliday(d)) << d;
  }
  // Ordinary days and a weekend.
  EXPECT_TRUE(Same(cal->HoursOn(20250702), Hours(9, 30, 16, 0)));
  EXPECT_FALSE(cal->IsEarlyClose(20250702));
  EXPECT_FALSE(cal->HoursOn(20250705).has_value());
  EXPECT_FALSE(cal->IsHoliday(20250705));  // a Saturday is no holiday
  // New Year's Day 2022 fell on a Saturday: moved neither to Friday 2021-12-31 nor to
  // Monday 2022-01-03.
  EXPECT_TRUE(Same(cal->HoursOn(20220103), Hours(9, 30, 16, 0)));
  EXPECT_TRUE(Same(cal->HoursOn(20211231), Hours(9, 30, 16, 0)));
  // Trading days per year as the NYSE published them: 250 in 2023, 252 in 2024.
  EXPECT_EQ(cal->SessionsIn(20230101, 20231231).size(), 250u);
  EXPECT_EQ(cal->SessionsIn(20240101, 20241231).size(), 252u);
}

TEST(Calendar, NseHolidaysAndSpecialSessions) {
  Result<ExchangeCalendar> cal = ExchangeCalendar::Builtin("XNSE");
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  EXPECT_EQ(cal->timezone(), "Asia/Kolkata");
  EXPECT_TRUE(Same(cal->HoursOn(20240102), Hours(9, 15, 15, 30)));
  // Muhurat trading on Diwali 2023, a Sunday: 18:15-19:15.
  EXPECT_TRUE(Same(cal->HoursOn(20231112), Hours(18, 15, 19, 15)));
  EXPECT_FALSE(cal->IsEarlyClose(20231112));
  // The Saturday session of 2024-01-20 and the holiday of Monday 2024-01-22.
  EXPECT_TRUE(Same(cal->HoursOn(20240120), Hours(9, 15, 15, 30)));
  EXPECT_FALSE(cal->HoursOn(20240122).has_value());
  // Disaster-recovery drills on Saturdays 2024-03-02 and 2024-05-18 (09:15-12:30 span).
  EXPECT_TRUE(Same(cal->HoursOn(20240518), Hours(9, 15, 12, 30)));
  // Republic Day, Independence Day, Gandhi Jayanti on weekdays.
  for (int32_t d : {20240126, 20230815, 20231002, 20251002}) {
    EXPECT_FALSE(cal->HoursOn(d).has_value()) << d;
  }
}

TEST(Calendar, FileWithBaseOverridesDays) {
  const std::string text =
      "# my desk's calendar\n"
      "# base = XNYS\n"
      "date,open,close,note\n"
      "2025-07-03,09:30,16:00,treat as a full day\n"
      "2025-07-07,,,desk closed\n"
      "2027-01-04,09:30,16:00,\n";
  Result<ExchangeCalendar> cal = ExchangeCalendar::Parse(text, "desk.csv");
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  EXPECT_EQ(cal->timezone(), "America/New_York");
  EXPECT_TRUE(Same(cal->HoursOn(20250703), Hours(9, 30, 16, 0)));
  EXPECT_FALSE(cal->HoursOn(20250707).has_value());
  EXPECT_EQ(cal->NoteOn(20250707), "desk closed");
  EXPECT_TRUE(Same(cal->HoursOn(20251128), Hours(9, 30, 13, 0)));  // the base's early close
  EXPECT_EQ(cal->coverage().last, 20270104);                       // widened to the listed day
}

TEST(Calendar, FileListingEverySession) {
  const std::string text =
      "date,open,close\n"
      "2025-03-01,10:00,14:00\n"
      "2025-03-03,10:00,12:00\n";
  Result<ExchangeCalendar> cal = ExchangeCalendar::Parse(text, "list.csv");
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  EXPECT_EQ(cal->timezone(), "");
  EXPECT_TRUE(Same(cal->HoursOn(20250301), Hours(10, 0, 14, 0)));
  EXPECT_FALSE(cal->HoursOn(20250302).has_value());
  EXPECT_EQ(cal->SessionsIn(20250301, 20250303).size(), 2u);
  EXPECT_EQ(cal->coverage().first, 20250301);
}

TEST(Calendar, BadFilesNameFileLineAndField) {
  struct Case {
    std::string text, expect;
  };
  const Case cases[] = {
      {"date,open,close\n2025-03-03,10:00,09:00\n",
       "bad.csv:2: field 'close': the session is "
       "reversed"},
      {"date,open,close\n2025-03-03,09:00,12:00\n2025-03-04,09:00,12:00\n2025-03-03,13:00,"
       "15:00\n",
       "bad.csv:4: field 'date': 2025-03-03 is listed twice (line 2"},
      {"date,open,close\n2025-3-3,09:00,12:00\n", "bad.csv:2: field 'date'"},
      {"date,open,close\n2025-03-03,9am,12:00\n", "bad.csv:2: field 'open'"},
      {"# base = XLON\ndate,open,close\n", "bad.csv:1: field 'base'"},
      {"day,start,end\n", "bad.csv:1: expected the header date,open,close"},
  };
  for (const Case& c : cases) {
    Result<ExchangeCalendar> cal = ExchangeCalendar::Parse(c.text, "bad.csv");
    ASSERT_FALSE(cal.ok()) << c.text;
    EXPECT_NE(cal.status().message().find(c.expect), std::string::npos) << cal.status().message();
    EXPECT_NE(cal.status().message().find("Fix:"), std::string::npos) << cal.status().message();
  }
}

// 1-minute bars 04:00-19:59 New York time on the given dates (naive local timestamps, as
// the SPY extended-hours file has them).
std::string MinuteBars(std::initializer_list<const char*> dates) {
  std::string s = "date,open,high,low,close,volume\n";
  for (const char* d : dates) {
    for (int m = 4 * 60; m < 20 * 60; ++m) {
      s += fmt::format("{} {:02}:{:02}:00,100,101,99,100.5,10\n", d, m / 60, m % 60);
    }
  }
  return s;
}

TEST(CalendarReader, NyseEarlyCloseHolidayAndMissingSession) {
  auto cal = std::make_shared<ExchangeCalendar>(*ExchangeCalendar::Builtin("XNYS"));
  CsvReadOptions o;
  o.timezone = "America/New_York";
  o.calendar = cal;
  DataReport report;
  // 2025-07-02 is a session without bars here; 07-03 closes at 13:00; 07-04 is a holiday
  // with (after-hours-style) bars; 07-05/06 a weekend; 07-07 an ordinary day. Also the
  // day after Thanksgiving 2025-11-28 (13:00) beside the ordinary 2025-12-01.
  Result<MarketData> md = ParseBarsCsv(
      MinuteBars({"2025-07-01", "2025-07-03", "2025-07-04", "2025-07-07"}), "spy.csv", o, &report);
  ASSERT_TRUE(md.ok()) << md.status().message();
  const Bars& b = md->symbols.front();
  ASSERT_EQ(b.sessions.size(), 3u);
  EXPECT_EQ(b.sessions[0].date, 20250701);
  EXPECT_EQ(b.sessions[0].size(), 390);  // 09:30..15:59
  EXPECT_EQ(b.sessions[1].date, 20250703);
  EXPECT_EQ(b.sessions[1].size(), 210);  // 09:30..12:59: the session of its real length
  EXPECT_EQ(b.sessions[2].size(), 390);
  ASSERT_EQ(report.closed_days_with_bars.size(), 1u);
  EXPECT_EQ(report.closed_days_with_bars[0].first, 20250704);
  EXPECT_EQ(report.closed_days_with_bars[0].second, 16 * 60);
  EXPECT_EQ(report.rows_on_closed_days, 16 * 60);
  ASSERT_EQ(report.missing_sessions.size(), 1u);
  EXPECT_EQ(report.missing_sessions[0], 20250702);
  ASSERT_EQ(report.early_closes.size(), 1u);
  EXPECT_EQ(report.early_closes[0].first, 20250703);
  EXPECT_EQ(report.early_closes[0].second, 180);  // 13:00..15:59 dropped
  // Every skipped row is counted once: 4 days x 960 rows read, 3 sessions kept.
  EXPECT_EQ(report.rows_outside_session + 390 + 210 + 390, 4 * 960);

  Result<MarketData> thanks =
      ParseBarsCsv(MinuteBars({"2025-11-28", "2025-12-01"}), "spy.csv", o, &report);
  ASSERT_TRUE(thanks.ok()) << thanks.status().message();
  EXPECT_EQ(thanks->symbols.front().sessions[0].size(), 210);
  EXPECT_EQ(thanks->symbols.front().sessions[1].size(), 390);
}

TEST(CalendarReader, MuhuratSessionKeptOutsideRegularHours) {
  auto cal = std::make_shared<ExchangeCalendar>(*ExchangeCalendar::Builtin("XNSE"));
  CsvReadOptions o;
  o.timezone = "Asia/Kolkata";
  o.calendar = cal;
  std::string text = "timestamp,open,high,low,close,volume\n";
  auto day = [&](const char* d, int from, int to) {
    for (int m = from; m < to; m += 5) {
      text += fmt::format("{} {:02}:{:02}:00+05:30,10,11,9,10,5\n", d, m / 60, m % 60);
    }
  };
  day("2023-11-10", 9 * 60 + 15, 15 * 60 + 30);   // Friday: 75 bars
  day("2023-11-12", 18 * 60 + 15, 19 * 60 + 15);  // Sunday, Muhurat: 12 bars
  day("2023-11-14", 9 * 60 + 15, 15 * 60 + 30);   // a holiday (Diwali Balipratipada)
  day("2023-11-15", 9 * 60 + 15, 15 * 60 + 30);
  DataReport report;
  Result<MarketData> md = ParseBarsCsv(text, "nse.csv", o, &report);
  ASSERT_TRUE(md.ok()) << md.status().message();
  const Bars& b = md->symbols.front();
  ASSERT_EQ(b.sessions.size(), 3u);
  EXPECT_EQ(b.sessions[1].date, 20231112);
  EXPECT_EQ(b.sessions[1].size(), 12);
  ASSERT_EQ(report.closed_days_with_bars.size(), 1u);
  EXPECT_EQ(report.closed_days_with_bars[0].first, 20231114);
  // 2023-11-13 (Monday) is a session of the calendar without bars here.
  ASSERT_EQ(report.missing_sessions.size(), 1u);
  EXPECT_EQ(report.missing_sessions[0], 20231113);
}

TEST(CalendarReader, RefusesDatesOutsideTheCalendarAndAMismatchedZone) {
  auto cal = std::make_shared<ExchangeCalendar>(*ExchangeCalendar::Builtin("XNYS"));
  CsvReadOptions o;
  o.timezone = "America/New_York";
  o.calendar = cal;
  Result<MarketData> md = ParseBarsCsv(MinuteBars({"2027-01-05"}), "late.csv", o);
  ASSERT_FALSE(md.ok());
  EXPECT_NE(md.status().message().find("late.csv:2: the bar's date 2027-01-05 lies outside"),
            std::string::npos)
      << md.status().message();
  o.timezone = "UTC";
  md = ParseBarsCsv(MinuteBars({"2025-07-01"}), "utc.csv", o);
  ASSERT_FALSE(md.ok());
  EXPECT_NE(md.status().message().find("America/New_York"), std::string::npos);
}

// Bars every 60 minutes around the clock from 2025-05-30 22:00 UTC to 2025-06-02 03:00.
std::string HourlyBars() {
  std::string s = "timestamp,open,high,low,close,volume\n";
  const int64_t start = DaysFromCivil(2025, 5, 30) * 86400 + 22 * 3600;
  for (int64_t t = start; t <= DaysFromCivil(2025, 6, 2) * 86400 + 3 * 3600; t += 3600) {
    const CivilDate d = CivilFromDays(DaysFromSeconds(t));
    s += fmt::format("{:04}-{:02}-{:02} {:02}:00:00+00:00,1,1,1,1,1\n", d.year, d.month, d.day,
                     (t % 86400) / 3600);
  }
  return s;
}

TEST(DayBoundary, MidnightCutsCalendarDaysAcrossAMonthEnd) {
  CsvReadOptions o;
  Result<MarketData> md = ParseBarsCsv(HourlyBars(), "btc.csv", o);
  ASSERT_TRUE(md.ok()) << md.status().message();
  const Bars& b = md->symbols.front();
  ASSERT_EQ(b.sessions.size(), 4u);
  EXPECT_EQ(b.sessions[0].date, 20250530);
  EXPECT_EQ(b.sessions[0].size(), 2);  // 22:00, 23:00
  EXPECT_EQ(b.sessions[1].date, 20250531);
  EXPECT_EQ(b.sessions[1].size(), 24);
  EXPECT_EQ(b.sessions[2].date, 20250601);
  EXPECT_EQ(b.sessions[3].size(), 4);  // 00:00..03:00
}

TEST(DayBoundary, AnEveningBoundaryDatesTheSessionByItsEnd) {
  CsvReadOptions o;
  o.day_boundary_minute = 17 * 60;  // 17:00 UTC
  Result<MarketData> md = ParseBarsCsv(HourlyBars(), "btc.csv", o);
  ASSERT_TRUE(md.ok()) << md.status().message();
  const Bars& b = md->symbols.front();
  // 05-30 22:00..05-31 16:00 is the session ending 05-31; 05-31 17:00..06-01 16:00 ends
  // 06-01; 06-01 17:00..06-02 03:00 ends 06-02.
  ASSERT_EQ(b.sessions.size(), 3u);
  EXPECT_EQ(b.sessions[0].date, 20250531);
  EXPECT_EQ(b.sessions[0].size(), 19);
  EXPECT_EQ(b.sessions[1].date, 20250601);
  EXPECT_EQ(b.sessions[1].size(), 24);
  EXPECT_EQ(b.sessions[2].date, 20250602);
  EXPECT_EQ(b.sessions[2].size(), 11);
  EXPECT_EQ(SessionDateKey(DaysFromCivil(2025, 6, 1) * 86400 + 17 * 3600, 0, 17 * 3600), 20250602);
  EXPECT_EQ(SessionDateKey(DaysFromCivil(2025, 6, 1) * 86400 + 17 * 3600 - 1, 0, 17 * 3600),
            20250601);
}

}  // namespace
}  // namespace rlt::market
