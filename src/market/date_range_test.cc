// Tests of market/date_range.h.
#include "market/date_range.h"

#include <gtest/gtest.h>

#include <utility>

#include "core/status_test_util.h"

namespace rlt::market {
namespace {

TEST(DateRange, ParsesAndRoundTripsBoundedAndOpenRanges) {
  for (const char* text : {"2023-01-02:2023-06-30", "start:2023-06-30", "2023-01-02:end"}) {
    Result<DateRange> r = DateRange::Parse(text);
    ASSERT_TRUE(r.ok()) << text << ": " << r.status().message();
    EXPECT_EQ(r->ToString(), text);
  }
  EXPECT_EQ(DateRange::Parse(":")->ToString(), "start:end");
}

// Found by fuzz/config_fuzz: sscanf read "-123" as a year, so the range parsed but did not
// print back as itself.
TEST(DateRange, RefusesSignedShortAndImpossibleDates) {
  // Each range and the part of the message that names what is wrong with it.
  const std::pair<const char*, const char*> cases[] = {
      {"-123-01-02:2023-01-05", "'-123-01-02': expected a date YYYY-MM-DD"},
      {"+123-01-02:2023-01-05", "'+123-01-02': expected a date YYYY-MM-DD"},
      {"2023-1-02:end", "'2023-1-02': expected a date YYYY-MM-DD"},
      {"0000-01-01:end", "'0000-01-01': expected a date YYYY-MM-DD"},
      {"2023-02-30:end", "'2023-02-30': expected a date YYYY-MM-DD"},
      {"2023-01-02x:end", "'2023-01-02x': expected a date YYYY-MM-DD"},
      {"2023-06-30:2023-01-02", "'2023-06-30:2023-01-02': start is after end"},
      {"2023-01-02", "'2023-01-02': expected START:END"}};
  for (const auto& [text, fragment] : cases) {
    EXPECT_TRUE(IsError(DateRange::Parse(text), Status::Code::kInvalidArgument, fragment)) << text;
  }
}

}  // namespace
}  // namespace rlt::market
