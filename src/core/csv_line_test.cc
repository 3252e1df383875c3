// The CSV line splitter (core/csv_line.h) against RFC 4180's rules worked out by hand.
#include "core/csv_line.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace rlt {
namespace {

using Fields = std::vector<std::string>;

Fields Split(std::string_view line, bool* closed = nullptr) {
  Fields fields;
  const bool ok = SplitCsvLine(line, &fields);
  if (closed != nullptr) *closed = ok;
  return fields;
}

TEST(CsvLine, PlainFieldsAndEmptyOnes) {
  EXPECT_EQ(Split("a,b,c"), (Fields{"a", "b", "c"}));
  EXPECT_EQ(Split(""), (Fields{""}));
  EXPECT_EQ(Split("a,,c,"), (Fields{"a", "", "c", ""}));
  EXPECT_EQ(Split(","), (Fields{"", ""}));
}

TEST(CsvLine, QuotedFieldsHoldCommasAndDoubledQuotes) {
  EXPECT_EQ(Split("\"x,y\",z"), (Fields{"x,y", "z"}));
  EXPECT_EQ(Split("\"say \"\"hi\"\"\",2"), (Fields{"say \"hi\"", "2"}));
  // A doubled quote followed by a comma stays inside the field.
  EXPECT_EQ(Split("\"a\"\"b,c\",d"), (Fields{"a\"b,c", "d"}));
  EXPECT_EQ(Split("\"\",1"), (Fields{"", "1"}));
}

TEST(CsvLine, AQuoteInsideAnUnquotedFieldIsAnOrdinaryCharacter) {
  EXPECT_EQ(Split("ab\"c,d"), (Fields{"ab\"c", "d"}));
  // Text after a closing quote is kept as written.
  EXPECT_EQ(Split("\"q\"tail,1"), (Fields{"qtail", "1"}));
}

TEST(CsvLine, AQuoteLeftOpenIsReportedAndRunsToTheEnd) {
  bool closed = true;
  EXPECT_EQ(Split("1,\"open,x", &closed), (Fields{"1", "open,x"}));
  EXPECT_FALSE(closed);
  Split("1,\"shut\"", &closed);
  EXPECT_TRUE(closed);
}

TEST(CsvLine, RawFieldsKeepTheirQuotesAsViewsIntoTheLine) {
  const std::string line = "\"a,b\",c,\"\"";
  std::vector<std::string_view> raw = {"stale"};
  EXPECT_TRUE(SplitCsvFields(line, &raw));
  ASSERT_EQ(raw.size(), 3u);
  EXPECT_EQ(raw[0], "\"a,b\"");
  EXPECT_EQ(raw[1], "c");
  EXPECT_EQ(raw[2], "\"\"");
  EXPECT_EQ(raw[1].data(), line.data() + 6);  // a view, not a copy
  EXPECT_EQ(UnquoteCsvField(raw[0]), "a,b");
  EXPECT_EQ(UnquoteCsvField(raw[2]), "");
}

}  // namespace
}  // namespace rlt
