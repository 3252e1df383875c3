#include "core/options.h"

#include <gtest/gtest.h>

namespace rlt {
namespace {

struct DemoOptions {
  int window = 5;
  double cost = 0.0005;
  bool shorting = true;
  std::string mode = "pnl";
  template <typename V>
  void VisitFields(V& v) {
    v("window", &window, "bars in the window");
    v("cost", &cost, "proportional cost");
    v("shorting", &shorting, "allow short positions");
    v("mode", &mode, "reward mode", {"pnl", "shaped"});
  }
};

TEST(Options, SetsTypedFieldsByKey) {
  DemoOptions o;
  ASSERT_TRUE(SetOptions(o, {{"window", "8"}, {"cost", "1e-3"}, {"shorting", "false"},
                             {"mode", "shaped"}})
                  .ok());
  EXPECT_EQ(o.window, 8);
  EXPECT_DOUBLE_EQ(o.cost, 1e-3);
  EXPECT_FALSE(o.shorting);
  EXPECT_EQ(o.mode, "shaped");
}

TEST(Options, UnknownKeyNamesTheNearestValidKey) {
  DemoOptions o;
  Status s = SetOption(o, "windw", "3", "[env]");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("[env]: unknown key 'windw'; did you mean 'window'?"),
            std::string::npos)
      << s.message();
}

TEST(Options, BadValuesAreRejectedWithTheExpectedType) {
  DemoOptions o;
  EXPECT_NE(SetOption(o, "window", "5.5").message().find("expected an integer"),
            std::string::npos);
  EXPECT_NE(SetOption(o, "mode", "sharpe").message().find("expected one of: pnl, shaped"),
            std::string::npos);
  EXPECT_NE(SetOption(o, "shorting", "yes").message().find("expected true or false"),
            std::string::npos);
  EXPECT_EQ(o.window, 5);
}

TEST(Options, DescribeListsKeysValuesAndDocs) {
  DemoOptions o;
  auto rows = DescribeOptions(o);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1].key, "cost");
  EXPECT_EQ(rows[1].value, "0.0005");
  EXPECT_NE(rows[3].doc.find("one of: pnl shaped"), std::string::npos);
}

TEST(Options, EditDistanceIsLevenshtein) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
  EXPECT_EQ(EditDistance("", "abc"), 3);
  EXPECT_EQ(SplitAssignment("a=b=c")->second, "b=c");
  EXPECT_FALSE(SplitAssignment("novalue").ok());
}

}  // namespace
}  // namespace rlt
