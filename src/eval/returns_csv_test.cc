// Tests for eval/returns_csv: small files written here, each checked against what the
// format in returns_csv.h says they contain.
#include "eval/returns_csv.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/status_test_util.h"

namespace rlt::eval {
namespace {

TEST(ReturnsCsv, ReadsNumbersAndTreatsEmptyAndNanCellsAsMissing) {
  const auto r =
      ParseReturnsCsv("# my strategy\r\nreturn\r\n0.01\r\n\r\nNaN\r\n-2.5e-3\r\n+0.1\r\n", "r.csv");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ((*r)[0], 0.01);
  EXPECT_TRUE(std::isnan((*r)[1]));
  EXPECT_TRUE(std::isnan((*r)[2]));
  EXPECT_EQ((*r)[3], -0.0025);
  EXPECT_EQ((*r)[4], 0.1);
}

TEST(ReturnsCsv, ABadCellNamesFileLineColumnAndAFix) {
  const auto r = ParseReturnsCsv("return\n0.01\nabc\n", "data/r.csv");
  ASSERT_TRUE(IsError(r, Status::Code::kDataError, "data/r.csv:3"));
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("column 1 'return'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'abc'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Fix:"), std::string::npos) << msg;

  const auto percent = ParseReturnsCsv("return\n1%\n", "p.csv");
  ASSERT_TRUE(IsError(percent, Status::Code::kDataError, "1% is 0.01"));
  EXPECT_TRUE(IsError(ParseReturnsCsv("return\ninf\n", "i.csv"), Status::Code::kDataError,
                      "i.csv:2: column 1 'return': expected a finite number, found 'inf'"));
}

TEST(ReturnsCsv, RejectsAWrongHeaderASecondColumnAndAMissingFile) {
  const auto header = ParseReturnsCsv("ret\n0.01\n", "h.csv");
  ASSERT_TRUE(IsError(header, Status::Code::kDataError, "h.csv:1: expected the header 'return'"));
  const auto two = ParseReturnsCsv("return\n0.01,0.02\n", "t.csv");
  ASSERT_TRUE(IsError(two, Status::Code::kDataError, "t.csv:2: column 2"));
  EXPECT_TRUE(
      IsError(ParseReturnsCsv("", "e.csv"), Status::Code::kDataError, "e.csv: no header line"));
  // An evaluation's daily_returns.csv: the `return` column is read, the others are not.
  const auto daily = ParseReturnsCsv(
      "date,return,buy_and_hold,flat\n2024-01-02,0.01,nan,0\n2024-01-03,nan,0.5,0\n", "d.csv");
  ASSERT_TRUE(daily.ok()) << daily.status().message();
  ASSERT_EQ(daily->size(), 2u);
  EXPECT_EQ((*daily)[0], 0.01);
  EXPECT_TRUE(std::isnan((*daily)[1]));
  const auto ragged = ParseReturnsCsv("date,return\n2024-01-02,0.01,7\n", "r.csv");
  ASSERT_TRUE(IsError(ragged, Status::Code::kDataError, "r.csv:2: found 3 columns"));
  EXPECT_TRUE(IsError(ParseReturnsCsv("date,ret\n2024-01-02,0.01\n", "n.csv"),
                      Status::Code::kDataError,
                      "n.csv:1: expected the header 'return', found columns: date, ret"));
  const auto missing = ReadReturnsCsv("/nonexistent/returns.csv");
  ASSERT_TRUE(IsError(missing, Status::Code::kNotFound, "/nonexistent/returns.csv"));
}

// A return below -1 gave max_drawdown -1.52 next to annual_return -1.0,
// 1e308 gave max_drawdown 0, and a BOM was refused here but accepted by the bar reader.
TEST(ReturnsCsv, ReturnsOutsideMinusOneToAMillionAreErrorsAndABomIsSkipped) {
  const auto below = ParseReturnsCsv("return\n0.1\n-1.5\n", "b.csv");
  ASSERT_TRUE(IsError(below, Status::Code::kDataError, "b.csv:3"));
  EXPECT_NE(below.status().message().find("[-1, 1e6]"), std::string::npos);
  EXPECT_TRUE(IsError(ParseReturnsCsv("return\n1e308\n", "h.csv"), Status::Code::kDataError,
                      "h.csv:2: column 1 'return': expected a simple return in [-1, 1e6]"));
  const auto edges = ParseReturnsCsv("return\n-1\n1e6\n", "e.csv");
  ASSERT_TRUE(edges.ok()) << edges.status().ToString();
  EXPECT_EQ(*edges, (std::vector<double>{-1.0, 1e6}));
  const auto bom = ParseReturnsCsv("\xEF\xBB\xBFreturn\n0.01\n", "bom.csv");
  ASSERT_TRUE(bom.ok()) << bom.status().ToString();
  EXPECT_EQ(*bom, std::vector<double>{0.01});
}

}  // namespace
}  // namespace rlt::eval
