#include "core/civil_time.h"

#include <gtest/gtest.h>

namespace rlt {
namespace {

// Reference day numbers: 2000-03-01 is day 11017 and 2024-02-29 is day 19782 since the
// Unix epoch (both also given by `date -d ... +%s` / 86400).
TEST(CivilTime, DaysFromCivilMatchesKnownDates) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
  EXPECT_EQ(DaysFromCivil(2024, 2, 29), 19782);
  EXPECT_EQ(DaysFromCivil(1969, 12, 31), -1);
}

TEST(CivilTime, CivilFromDaysInvertsDaysFromCivil) {
  for (int64_t d = -800000; d <= 800000; d += 37) {
    const CivilDate c = CivilFromDays(d);
    ASSERT_EQ(DaysFromCivil(c.year, c.month, c.day), d);
  }
}

TEST(CivilTime, WeekdayOfKnownDates) {
  EXPECT_EQ(Weekday(0), 4);                            // 1970-01-01 Thursday
  EXPECT_EQ(Weekday(DaysFromCivil(2024, 1, 1)), 1);    // Monday
  EXPECT_EQ(Weekday(DaysFromCivil(1969, 12, 28)), 0);  // Sunday
}

TEST(CivilTime, FormatsWithOffset) {
  // 1700000000 = 2023-11-14T22:13:20Z.
  EXPECT_EQ(FormatTime(1700000000), "2023-11-14 22:13:20");
  EXPECT_EQ(FormatIso8601(1700000000, 0), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatIso8601(1700000000, 19800), "2023-11-15T03:43:20+05:30");
  EXPECT_EQ(FormatIso8601(1700000000, -18000), "2023-11-14T17:13:20-05:00");
  EXPECT_EQ(FormatDate(20240131), "2024-01-31");
  EXPECT_EQ(FormatPathStamp(1700000000), "2023-11-14-22.13.20");
  EXPECT_EQ(DaysFromSeconds(-1), -1);
}

}  // namespace
}  // namespace rlt
