// Tests of ParseJson (nesting limit, errors instead of exceptions, short excerpts) and
// JsonSummary (no recursive dump of a value in a message).
#include "core/json_parse.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/status_test_util.h"

namespace rlt {
namespace {

using Json = nlohmann::json;

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ParseJson, AcceptsNestingUpToTheLimit) {
  const Result<Json> j = ParseJson<Json>(Nested(kMaxJsonDepth), "t.json");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_TRUE(j->is_array());
}

TEST(ParseJson, RefusesOneLevelMoreNamingTheSourceAndTheByte) {
  const Result<Json> j = ParseJson<Json>(Nested(kMaxJsonDepth + 1), "t.json");
  ASSERT_TRUE(
      IsError(j, Status::Code::kInvalidArgument, "t.json: JSON nested more than 128 levels deep"));
  // The 129th '[' is byte 129 (1-based).
  EXPECT_TRUE(Has(j.status().message(), "at byte 129")) << j.status().message();
}

TEST(ParseJson, RefusesFourHundredThousandBracketsWithoutBuildingThem) {
  const std::string deep = "{\"a\":" + std::string(400000, '[') + std::string(400000, ']') + "}";
  const Result<Json> j = ParseJson<Json>(deep, "line 3 of journal.jsonl");
  ASSERT_TRUE(IsError(j, Status::Code::kInvalidArgument, "line 3 of journal.jsonl: JSON nested"));
  EXPECT_LT(j.status().message().size(), 300u);
}

TEST(ParseJson, BracketsInsideStringsDoNotCount) {
  const std::string text =
      "{\"a\": \"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\", \"b\": [[1]]}";
  const Result<Json> j = ParseJson<Json>(text, "s");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["a"].get<std::string>().size(), 2001u);
  EXPECT_EQ((*j)["b"][0][0], 1);
}

TEST(ParseJson, InvalidTextIsAnErrorWithAShortExcerptNotAnException) {
  const std::string text = "{\"k\": \"" + std::string(10000, 'x') + "\\q\"}";
  const Result<Json> j = ParseJson<Json>(text, "status.json");
  ASSERT_TRUE(IsError(j, Status::Code::kInvalidArgument,
                      "status.json: not valid JSON: parse error at line 1"));
  const std::string& m = j.status().message();
  EXPECT_FALSE(Has(m, "[json.exception")) << m;
  EXPECT_LT(m.size(), 400u) << m;
}

TEST(ParseJson, NumberOverflowIsAnErrorNotAnException) {
  const Result<Json> j = ParseJson<Json>("{\"x\": 1e999}", "n.json");
  ASSERT_TRUE(IsError(j, Status::Code::kInvalidArgument, "n.json: not valid JSON"));
}

TEST(ParseJson, EmptyAndTrailingTextAreErrors) {
  EXPECT_TRUE(IsError(ParseJson<Json>("", "e"), Status::Code::kInvalidArgument,
                      "e: not valid JSON: parse error at line 1, column 1"));
  EXPECT_TRUE(IsError(ParseJson<Json>("{} {}", "e"), Status::Code::kInvalidArgument,
                      "e: not valid JSON: parse error at line 1, column 4"));
  EXPECT_TRUE(ParseJson<Json>("  {\"a\": 1}\n", "e").ok());
}

TEST(JsonSummary, ShowsScalarsCutAndContainersBySizeOnly) {
  EXPECT_EQ(JsonSummary(Json(1.5)), "1.5");
  EXPECT_EQ(JsonSummary(Json("abc")), "\"abc\"");
  EXPECT_EQ(JsonSummary(Json::array({1, 2, 3})), "an array of 3 values");
  EXPECT_EQ(JsonSummary(Json::object({{"a", 1}})), "an object of 1 key");
  const std::string s = JsonSummary(Json(std::string(5000, 'y')), 40);
  EXPECT_LT(s.size(), 100u);
  EXPECT_TRUE(Has(s, "more bytes not shown"));
}

}  // namespace
}  // namespace rlt
