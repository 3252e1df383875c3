#include "core/options.h"

#include <gtest/gtest.h>

#include "core/status_test_util.h"

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
  ASSERT_TRUE(
      SetOptions(o, {{"window", "8"}, {"cost", "1e-3"}, {"shorting", "false"}, {"mode", "shaped"}})
          .ok());
  EXPECT_EQ(o.window, 8);
  EXPECT_DOUBLE_EQ(o.cost, 1e-3);
  EXPECT_FALSE(o.shorting);
  EXPECT_EQ(o.mode, "shaped");
}

TEST(Options, UnknownKeyNamesTheNearestValidKey) {
  DemoOptions o;
  Status s = SetOption(o, "windw", "3", "[env]");
  ASSERT_TRUE(IsError(s, Status::Code::kInvalidArgument,
                      "[env]: unknown key 'windw'; did you mean 'window'?"));
}

TEST(Options, BadValuesAreRejectedWithTheExpectedType) {
  DemoOptions o;
  EXPECT_NE(SetOption(o, "window", "5.5").message().find("expected an integer"), std::string::npos);
  EXPECT_NE(SetOption(o, "mode", "sharpe").message().find("expected one of: pnl, shaped"),
            std::string::npos);
  EXPECT_NE(SetOption(o, "shorting", "yes").message().find("expected true or false"),
            std::string::npos);
  EXPECT_EQ(o.window, 5);
}

// One central rule, so that no section can take a NaN or an infinity.
TEST(Options, NonFiniteNumbersAreRejectedAndTheFieldKeepsItsValue) {
  DemoOptions o;
  for (const char* text : {"nan", "-nan", "inf", "-inf", "infinity", "1e400"}) {
    const Status s = SetOption(o, "cost", text);
    EXPECT_TRUE(IsError(s, Status::Code::kInvalidArgument, "'cost' = '" + std::string(text) + "'"))
        << text;
  }
  EXPECT_NE(SetOption(o, "cost", "inf").message().find("'inf' is not a finite number"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(o.cost, 0.0005);
  float f = 0;
  EXPECT_TRUE(IsError(internal::ParseValue("1e39", &f), Status::Code::kInvalidArgument,
                      "'1e39' is outside the range of a float"));  // finite double, no float
  EXPECT_TRUE(internal::ParseValue("3e38", &f).ok());
}

TEST(Options, IsArithmeticOptionTellsNumberAndBoolFieldsFromStrings) {
  DemoOptions o;
  EXPECT_TRUE(IsArithmeticOption(o, "window"));
  EXPECT_TRUE(IsArithmeticOption(o, "cost"));
  EXPECT_TRUE(IsArithmeticOption(o, "shorting"));
  EXPECT_FALSE(IsArithmeticOption(o, "mode"));
  EXPECT_FALSE(IsArithmeticOption(o, "absent"));
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
  EXPECT_TRUE(IsError(SplitAssignment("novalue"), Status::Code::kInvalidArgument,
                      "'novalue': expected KEY=VALUE"));
}

// An adjacent swap is one typo, and a tie goes to the longer common prefix.
TEST(Options, NearestNameCountsSwapsAsOneTypoAndPrefersTheSamePrefix) {
  const std::vector<std::string> env_keys = {"nlags", "cost_rate", "fixed_cost", "initial_capital",
                                             "range", "id",        "num_envs"};
  EXPECT_EQ(NearestName("num_env", env_keys), "num_envs");
  EXPECT_EQ(NearestName("cost_rat", env_keys), "cost_rate");
  EXPECT_EQ(NearestName("intial_capital", env_keys), "initial_capital");
  EXPECT_EQ(NearestName("nmu_envs", env_keys), "num_envs");  // Levenshtein: 2, OSA: 1
  // "ab" is 1 edit from both "abc" and "xb"; the shared prefix decides.
  EXPECT_EQ(NearestName("ab", {"xb", "abc"}), "abc");
  EXPECT_EQ(NearestName("x", {}), "");
}

struct NetOptions {
  std::vector<int> hidden = {64, 64};
  std::vector<double> weights;
  int seed = 1;
  template <typename V>
  void VisitFields(V& v) {
    v("hidden", &hidden, "hidden layer sizes");
    v("weights", &weights, "loss weights");
    v("seed", &seed, "seed");
  }
};

TEST(Options, ListFieldsAcceptBracketedAndBareForms) {
  NetOptions o;
  ASSERT_TRUE(SetOption(o, "hidden", "[128, 32, 8]").ok());
  EXPECT_EQ(o.hidden, (std::vector<int>{128, 32, 8}));
  ASSERT_TRUE(SetOption(o, "hidden", "16,4").ok());
  EXPECT_EQ(o.hidden, (std::vector<int>{16, 4}));
  ASSERT_TRUE(SetOption(o, "hidden", " [ 7 ] ").ok());
  EXPECT_EQ(o.hidden, (std::vector<int>{7}));
  ASSERT_TRUE(SetOption(o, "weights", "[0.5, 1e-3, -2]").ok());
  EXPECT_EQ(o.weights, (std::vector<double>{0.5, 1e-3, -2.0}));
}

TEST(Options, EmptyTextAndEmptyBracketsAreTheEmptyList) {
  NetOptions o;
  ASSERT_TRUE(SetOption(o, "hidden", "").ok());
  EXPECT_TRUE(o.hidden.empty());
  o.hidden = {1};
  ASSERT_TRUE(SetOption(o, "hidden", "[]").ok());
  EXPECT_TRUE(o.hidden.empty());
  o.hidden = {1};
  ASSERT_TRUE(SetOption(o, "hidden", "[ ]").ok());
  EXPECT_TRUE(o.hidden.empty());
}

TEST(Options, BadListsNameTheElementAndLeaveTheFieldUnchanged) {
  NetOptions o;
  Status s = SetOption(o, "hidden", "[64, 6.5]");
  ASSERT_TRUE(IsError(s, Status::Code::kInvalidArgument,
                      "'hidden' = '[64, 6.5]': element 2 ('6.5'): expected a list of integers"));
  EXPECT_EQ(o.hidden, (std::vector<int>{64, 64}));
  EXPECT_NE(SetOption(o, "hidden", "[64, 64").message().find("unbalanced brackets"),
            std::string::npos);
  EXPECT_NE(SetOption(o, "hidden", "64,,64").message().find("empty element"), std::string::npos);
  EXPECT_NE(SetOption(o, "weights", "[a]").message().find("expected a list of numbers"),
            std::string::npos);
  EXPECT_EQ(o.hidden, (std::vector<int>{64, 64}));
}

TEST(Options, ListsFormatWithBracketsAndRoundTrip) {
  NetOptions o;
  o.weights = {0.1, 2.5};
  auto rows = DescribeOptions(o);
  EXPECT_EQ(rows[0].value, "[64, 64]");
  EXPECT_EQ(rows[1].value, "[0.1, 2.5]");
  NetOptions p;
  ASSERT_TRUE(SetOption(p, "weights", rows[1].value).ok());
  EXPECT_EQ(p.weights, o.weights);
  EXPECT_EQ(internal::FormatValue(std::vector<int>{}), "[]");
}

TEST(Options, AFailedScalarParseLeavesTheFieldUnchanged) {
  DemoOptions o;
  EXPECT_TRUE(IsError(SetOption(o, "window", "8x"), Status::Code::kInvalidArgument,
                      "'window' = '8x': expected an integer"));
  EXPECT_EQ(o.window, 5);
  EXPECT_TRUE(IsError(SetOption(o, "cost", "0.1x"), Status::Code::kInvalidArgument,
                      "'cost' = '0.1x': expected a number"));
  EXPECT_DOUBLE_EQ(o.cost, 0.0005);
}

}  // namespace
}  // namespace rlt
