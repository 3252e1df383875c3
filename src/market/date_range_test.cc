// Tests of market/date_range.h.
#include "market/date_range.h"

#include <gtest/gtest.h>

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
  for (const char* text :
       {"-123-01-02:2023-01-05", "+123-01-02:2023-01-05", "2023-1-02:end", "0000-01-01:end",
        "2023-02-30:end", "2023-01-02x:end", "2023-06-30:2023-01-02", "2023-01-02"}) {
    EXPECT_FALSE(DateRange::Parse(text).ok()) << text;
  }
}

}  // namespace
}  // namespace rlt::market
