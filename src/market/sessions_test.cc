// Tests for market/sessions: sessions are local calendar dates.
#include "market/sessions.h"

#include <gtest/gtest.h>

#include "core/civil_time.h"

namespace rlt::market {
namespace {

void AddBar(Bars& b, int64_t utc, int32_t offset) {
  b.time.push_back(utc);
  b.utc_offset.push_back(offset);
}

TEST(Sessions, GroupsBarsByLocalDateNotUtcDate) {
  Bars b;
  const int64_t day = DaysFromCivil(2024, 1, 2) * 86400;
  // Tokyo (+9): 23:00Z on Jan 1 is 08:00 on Jan 2 local, same session as 01:00Z Jan 2.
  AddBar(b, day - 3600, 9 * 3600);
  AddBar(b, day + 3600, 9 * 3600);
  AddBar(b, day + 16 * 3600, 9 * 3600);  // 01:00 Jan 3 local: next session
  AssignSessions(b);
  ASSERT_EQ(b.sessions.size(), 2u);
  EXPECT_EQ(b.sessions[0].date, 20240102);
  EXPECT_EQ(b.sessions[0].size(), 2);
  EXPECT_EQ(b.sessions[1].date, 20240103);
  EXPECT_EQ(b.session, (std::vector<int32_t>{0, 0, 1}));
  EXPECT_EQ(b.bar_in_session, (std::vector<int32_t>{0, 1, 0}));
  EXPECT_EQ(b.last_in_session, (std::vector<uint8_t>{0, 1, 1}));
}

TEST(Sessions, NegativeOffsetsMoveEveningBarsToThePreviousDate) {
  Bars b;
  const int64_t day = DaysFromCivil(2025, 7, 2) * 86400;
  AddBar(b, day + 3600, -4 * 3600);  // 21:00 on Jul 1 in New York
  AddBar(b, day + 14 * 3600, -4 * 3600);
  AssignSessions(b);
  ASSERT_EQ(b.sessions.size(), 2u);
  EXPECT_EQ(b.sessions[0].date, 20250701);
  EXPECT_EQ(b.sessions[1].date, 20250702);
  EXPECT_EQ(LocalDateKey(day + 3600, -4 * 3600), 20250701);
}

TEST(Sessions, EmptyBarsHaveNoSessions) {
  Bars b;
  AssignSessions(b);
  EXPECT_TRUE(b.sessions.empty());
}

}  // namespace
}  // namespace rlt::market
