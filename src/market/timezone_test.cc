// Tests for market/timezone: offsets checked against published civil-time facts
// (US DST: second Sunday of March to first Sunday of November, 02:00 local; EU summer
// time: last Sunday of March to last Sunday of October, 01:00 UTC; India +05:30).
#include "market/timezone.h"

#include <gtest/gtest.h>

#include "core/civil_time.h"
#include "core/status_test_util.h"

namespace rlt::market {
namespace {

int64_t Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
}

TimeZone MustLoad(const std::string& name) {
  Result<TimeZone> tz = TimeZone::Load(name);
  EXPECT_TRUE(tz.ok()) << tz.status().ToString();
  return tz.ok() ? *tz : TimeZone::Utc();
}

TEST(TimeZone, NewYorkSwitchesToDaylightTimeAt2amOnMarch9th2025) {
  const TimeZone ny = MustLoad("America/New_York");
  EXPECT_EQ(ny.OffsetAt(Utc(2025, 3, 9, 6, 59, 59)), -5 * 3600);
  EXPECT_EQ(ny.OffsetAt(Utc(2025, 3, 9, 7, 0, 0)), -4 * 3600);
}

TEST(TimeZone, NewYorkReturnsToStandardTimeOnNovember2nd2025) {
  const TimeZone ny = MustLoad("America/New_York");
  EXPECT_EQ(ny.OffsetAt(Utc(2025, 11, 2, 5, 59, 59)), -4 * 3600);
  EXPECT_EQ(ny.OffsetAt(Utc(2025, 11, 2, 6, 0, 0)), -5 * 3600);
}

TEST(TimeZone, LocalTimeInTheSpringGapIsAnError) {
  const TimeZone ny = MustLoad("America/New_York");
  Result<int64_t> r = ny.LocalToUtc(Utc(2025, 3, 9, 2, 30));
  ASSERT_TRUE(IsError(r, Status::Code::kInvalidArgument, "does not exist"));
}

TEST(TimeZone, AmbiguousAutumnLocalTimeResolvesToTheEarlierInstant) {
  const TimeZone ny = MustLoad("America/New_York");
  // 01:30 happens twice on 2025-11-02: first at EDT (05:30Z), then at EST (06:30Z).
  Result<int64_t> r = ny.LocalToUtc(Utc(2025, 11, 2, 1, 30));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, Utc(2025, 11, 2, 5, 30));
}

TEST(TimeZone, OrdinaryLocalTimesConvertBothWays) {
  const TimeZone ny = MustLoad("America/New_York");
  EXPECT_EQ(*ny.LocalToUtc(Utc(2025, 7, 1, 9, 30)), Utc(2025, 7, 1, 13, 30));
  EXPECT_EQ(*ny.LocalToUtc(Utc(2025, 1, 15, 9, 30)), Utc(2025, 1, 15, 14, 30));
}

TEST(TimeZone, KolkataIsFiveAndAHalfHoursAhead) {
  const TimeZone ist = MustLoad("Asia/Kolkata");
  EXPECT_EQ(ist.OffsetAt(Utc(2023, 7, 3, 3, 45)), 19800);
  EXPECT_EQ(ist.OffsetAt(Utc(2050, 1, 1)), 19800);
  EXPECT_EQ(*ist.LocalToUtc(Utc(2023, 7, 3, 9, 15)), Utc(2023, 7, 3, 3, 45));
}

TEST(TimeZone, LondonSummerTimeStartsAndEndsAt1amUtc) {
  const TimeZone london = MustLoad("Europe/London");
  EXPECT_EQ(london.OffsetAt(Utc(2025, 3, 30, 0, 59, 59)), 0);
  EXPECT_EQ(london.OffsetAt(Utc(2025, 3, 30, 1, 0, 0)), 3600);
  EXPECT_EQ(london.OffsetAt(Utc(2025, 10, 26, 0, 59, 59)), 3600);
  EXPECT_EQ(london.OffsetAt(Utc(2025, 10, 26, 1, 0, 0)), 0);
}

TEST(TimeZone, DatesAfter2037FollowTheFooterRule) {
  // 2040: DST from Sunday March 11 to Sunday November 4 (2nd / 1st Sundays).
  const TimeZone ny = MustLoad("America/New_York");
  EXPECT_EQ(ny.OffsetAt(Utc(2040, 3, 11, 6, 59, 59)), -5 * 3600);
  EXPECT_EQ(ny.OffsetAt(Utc(2040, 3, 11, 7, 0, 0)), -4 * 3600);
  EXPECT_EQ(ny.OffsetAt(Utc(2040, 11, 4, 5, 59, 59)), -4 * 3600);
  EXPECT_EQ(ny.OffsetAt(Utc(2040, 11, 4, 6, 0, 0)), -5 * 3600);
  // Southern hemisphere: Sydney is on daylight time (+11) in January.
  const TimeZone sydney = MustLoad("Australia/Sydney");
  EXPECT_EQ(sydney.OffsetAt(Utc(2040, 1, 15)), 11 * 3600);
  EXPECT_EQ(sydney.OffsetAt(Utc(2040, 7, 1)), 10 * 3600);
}

TEST(TimeZone, UtcWorksWithoutTheDatabase) {
  setenv("TZDIR", "/nonexistent", 1);
  Result<TimeZone> utc = TimeZone::Load("UTC");
  unsetenv("TZDIR");
  ASSERT_TRUE(utc.ok());
  EXPECT_EQ(utc->OffsetAt(Utc(2025, 6, 1)), 0);
  EXPECT_EQ(*utc->LocalToUtc(1234567), 1234567);
}

TEST(TimeZone, UnknownNameSuggestsAValidOne) {
  Result<TimeZone> tz = TimeZone::Load("Mars/Olympus_Mons");
  ASSERT_TRUE(IsError(tz, Status::Code::kNotFound, "'Mars/Olympus_Mons'"));
  EXPECT_NE(tz.status().message().find("America/New_York"), std::string::npos);
  EXPECT_TRUE(IsError(TimeZone::Load("../../etc/passwd"), Status::Code::kNotFound,
                      "invalid time zone name '../../etc/passwd'"));
}

TEST(PosixTzRule, ParsesUsRuleAndAppliesIt) {
  Result<PosixTzRule> rule = PosixTzRule::Parse("EST5EDT,M3.2.0,M11.1.0");
  ASSERT_TRUE(rule.ok()) << rule.status().ToString();
  EXPECT_EQ(rule->std_offset, -18000);
  EXPECT_EQ(rule->dst_offset, -14400);
  EXPECT_EQ(rule->OffsetAt(Utc(2025, 3, 9, 7)), -14400);
  EXPECT_EQ(rule->OffsetAt(Utc(2025, 3, 9, 6, 59, 59)), -18000);
}

TEST(PosixTzRule, ParsesFractionalAndQuotedOffsets) {
  EXPECT_EQ(PosixTzRule::Parse("IST-5:30")->OffsetAt(0), 19800);
  EXPECT_EQ(PosixTzRule::Parse("<+0545>-5:45")->OffsetAt(0), 20700);
  EXPECT_EQ(PosixTzRule::Parse("<-03>3")->OffsetAt(0), -10800);
  EXPECT_TRUE(IsError(PosixTzRule::Parse("EST5EDT,M13.2.0,M11.1.0"), Status::Code::kInvalidArgument,
                      "'EST5EDT,M13.2.0,M11.1.0': expected a DST start date"));
  EXPECT_TRUE(IsError(PosixTzRule::Parse("5"), Status::Code::kInvalidArgument,
                      "'5': expected a zone abbreviation at position 0"));
}

}  // namespace
}  // namespace rlt::market
