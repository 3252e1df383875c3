// Tests of the session journal (paper/journal.h): keyed events are written once across
// restarts, notes every time, and a line cut by a kill is cut off on reopening.
#include "paper/journal.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "testing/testing.h"

namespace rlt::paper {
namespace {

using Json = Journal::Json;

int CountLines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(Journal, KeyedEventsAreWrittenOnceAcrossReopeningAndNotesEveryTime) {
  testing::ScratchDir dir("rlt_journal_");
  const std::string path = dir.path() + "/journal.jsonl";
  {
    Result<Journal> j = Journal::Open(path);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    EXPECT_TRUE(j->previous().empty());
    ASSERT_TRUE(j->Emit({{"type", "bar"}, {"bar", 0}}).ok());
    ASSERT_TRUE(j->Emit({{"type", "order"}, {"client_order_id", "b1"}}).ok());
    ASSERT_TRUE(j->Emit({{"type", "order"}, {"client_order_id", "b1"}}).ok());  // again
    ASSERT_TRUE(j->Emit({{"type", "broker"}, {"event", "connected"}}).ok());
    ASSERT_TRUE(j->Sync().ok());
  }
  EXPECT_EQ(CountLines(path), 3);
  Result<Journal> j = Journal::Open(path);
  ASSERT_TRUE(j.ok());
  ASSERT_EQ(j->previous().size(), 3u);
  EXPECT_TRUE(j->Has("order:b1"));
  EXPECT_TRUE(j->Has("bar:0"));
  EXPECT_FALSE(j->Has("fill:b1"));
  ASSERT_TRUE(j->Emit({{"type", "bar"}, {"bar", 0}}).ok());
  ASSERT_TRUE(j->Emit({{"type", "fill"}, {"client_order_id", "b1"}}).ok());
  ASSERT_TRUE(j->Emit({{"type", "broker"}, {"event", "connected"}}).ok());
  EXPECT_EQ(CountLines(path), 5);
}

TEST(Journal, ALineCutByAKillIsCutOffWhenReopened) {
  testing::ScratchDir dir("rlt_journal_");
  const std::string path = dir.path() + "/journal.jsonl";
  {
    std::ofstream out(path);
    out << R"({"type":"bar","bar":0})"
        << "\n"
        << R"({"type":"bar","bar")";
  }
  Result<Journal> j = Journal::Open(path);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->previous().size(), 1u);
  ASSERT_TRUE(j->Emit({{"type", "bar"}, {"bar", 1}}).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "{\"type\":\"bar\",\"bar\":0}\n{\"type\":\"bar\",\"bar\":1}\n");
}

}  // namespace
}  // namespace rlt::paper
