// The keys the configuration reference lists by hand (files parsed without an options
// struct): each must still be accepted by the code that reads it, so a renamed key fails
// here rather than leaving docs/config.md naming a key the binary refuses.
#include "cli/reference.h"

#include <gtest/gtest.h>

#include <string>

#include "paper/risk.h"
#include "tune/space.h"

namespace {

using rlt::cli::HandParsedKey;

TEST(HandParsedKeys, EveryRiskLimitKeyParsesWithItsExample) {
  std::string all;
  for (const HandParsedKey& k : rlt::cli::RiskLimitKeys()) {
    const std::string line = std::string(k.key) + " = " + k.example + "\n";
    const auto limits = rlt::paper::ParseRiskLimits(line, "risk.toml");
    EXPECT_TRUE(limits.ok()) << line << limits.status().ToString();
    if (limits.ok()) {
      EXPECT_TRUE(limits->any) << line;
    }
    all += line;
  }
  EXPECT_TRUE(rlt::paper::ParseRiskLimits(all, "risk.toml").ok()) << all;
}

TEST(HandParsedKeys, EverySearchSpaceFormParsesWithItsExample) {
  for (const HandParsedKey& k : rlt::cli::SearchSpaceForms()) {
    const std::string text = "\"algo.x\" = " + std::string(k.example) + "\n";
    const auto space = rlt::tune::ParseSpace(text, "space.toml");
    ASSERT_TRUE(space.ok()) << text << space.status().ToString();
    EXPECT_EQ(space->dims(), 1) << text;
  }
}

TEST(HandParsedKeys, TheConfigReferenceListsThemAll) {
  const auto text = rlt::cli::ConfigReference();
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  for (const auto* keys :
       {&rlt::cli::RiskLimitKeys(), &rlt::cli::SearchSpaceForms(), &rlt::cli::SplitKeys()}) {
    for (const HandParsedKey& k : *keys) {
      EXPECT_NE(text->find("| `" + std::string(k.key) + "` |"), std::string::npos) << k.key;
    }
  }
}

}  // namespace
