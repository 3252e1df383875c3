#include "core/options.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

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

// Every field type the binder supports, for the type names of the reference.
struct EveryTypeOptions {
  double d = 0.5;
  float f = 1.5f;
  int i = -3;
  int64_t i64 = 1LL << 40;
  uint64_t u64 = 18446744073709551615ULL;
  bool b = false;
  std::string s;
  std::vector<int> vi = {64, 64};
  std::vector<double> vd;
  template <typename V>
  void VisitFields(V& v) {
    v("d", &d, "a double");
    v("f", &f, "a float");
    v("i", &i, "an int");
    v("i64", &i64, "an int64_t");
    v("u64", &u64, "a uint64_t");
    v("b", &b, "a bool");
    v("s", &s, "a string", {"", "x"});
    v("vi", &vi, "a list of int");
    v("vd", &vd, "a list of double");
  }
};

TEST(Options, DocumentNamesEveryTypeAndKeepsDocAndAllowedValuesApart) {
  const std::vector<OptionDoc> rows = DocumentOptions(EveryTypeOptions());
  ASSERT_EQ(rows.size(), 9u);
  const std::vector<std::vector<std::string>> expected = {
      {"d", "float", "0.5"},
      {"f", "float", "1.5"},
      {"i", "int", "-3"},
      {"i64", "int", "1099511627776"},
      {"u64", "int >= 0", "18446744073709551615"},
      {"b", "bool", "false"},
      {"s", "string", ""},
      {"vi", "list of int", "[64, 64]"},
      {"vd", "list of float", "[]"}};
  for (size_t k = 0; k < rows.size(); ++k) {
    EXPECT_EQ(rows[k].key, expected[k][0]);
    EXPECT_EQ(rows[k].type, expected[k][1]) << rows[k].key;
    EXPECT_EQ(rows[k].value, expected[k][2]) << rows[k].key;
  }
  EXPECT_EQ(rows[6].doc, "a string");  // DescribeOptions appends "(one of: ...)"; this does not
  EXPECT_EQ(rows[6].allowed, (std::vector<std::string>{"", "x"}));
  EXPECT_TRUE(rows[0].allowed.empty());
}

TEST(Options, DocumentReadsTheCurrentValuesAndChangesNothing) {
  DemoOptions o;
  o.window = 9;
  const std::vector<OptionDoc> rows = DocumentOptions(o);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].value, "9");
  EXPECT_EQ(rows[3].allowed, (std::vector<std::string>{"pnl", "shaped"}));
  EXPECT_EQ(o.window, 9);
  EXPECT_EQ(o.mode, "pnl");
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
