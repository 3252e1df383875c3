// Tests of JsonText: valid text as dump() writes it; invalid UTF-8 replaced, never thrown.
#include "core/json_text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rlt {
namespace {

TEST(JsonText, MatchesDumpForValidText) {
  nlohmann::ordered_json j = {{"run_dir", "runs/caf\xC3\xA9"}, {"x", 1.5}};
  EXPECT_EQ(JsonText(j, 2), j.dump(2));
  EXPECT_EQ(JsonText(j), j.dump());
}

TEST(JsonText, ReplacesInvalidUtf8InsteadOfThrowing) {
  nlohmann::json j = {{"run_dir", "r\xFF"}, {"symbol", "CAF\xC9"}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);
  const std::string text = JsonText(j);
  EXPECT_EQ(text, "{\"run_dir\":\"r\xEF\xBF\xBD\",\"symbol\":\"CAF\xEF\xBF\xBD\"}");
  EXPECT_FALSE(nlohmann::json::parse(text, nullptr, false).is_discarded());  // valid JSON again
}

}  // namespace
}  // namespace rlt
