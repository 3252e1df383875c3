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

TEST(Journal, ACorruptLineAnywhereElseIsAnErrorNamingItAndNothingIsCut) {
  testing::ScratchDir dir("rlt_journal_");
  const std::string path = dir.path() + "/journal.jsonl";
  const std::string text = "{\"type\":\"start\"}\n{\"type\":\"bar\",\"ba\n{\"type\":\"end\"}\n";
  testing::WriteFile(path, text);
  Result<Journal> corrupt = Journal::Open(path);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.status().message().find(path + ":2:"), std::string::npos)
      << corrupt.status().message();
  EXPECT_EQ(testing::ReadFile(path), text);
  // A text file: not a journal (refused), left as it is.
  testing::WriteFile(path, "my notes\n");
  Result<Journal> notes = Journal::Open(path);
  ASSERT_FALSE(notes.ok());
  EXPECT_EQ(notes.status().code(), Status::Code::kRefused);
  EXPECT_NE(notes.status().message().find(path + ":1:"), std::string::npos)
      << notes.status().message();
  EXPECT_EQ(testing::ReadFile(path), "my notes\n");
  // A last line without its newline that does not start as journal lines do: not cut.
  testing::WriteFile(path, "{\"type\":\"start\"}\nnotes");
  Result<Journal> tail = Journal::Open(path);
  ASSERT_FALSE(tail.ok());
  EXPECT_NE(tail.status().message().find(path + ":2:"), std::string::npos)
      << tail.status().message();
}

TEST(Journal, AFieldARestartReadsWithAnotherTypeIsAnErrorNamingLineAndField) {
  for (const char* line : {R"({"type":"order","client_order_id":7})", R"({"type":"bar","bar":"x"})",
                           R"({"type":"fill","client_order_id":"b1","quantity":"10"})"}) {
    const std::string text = std::string("{\"type\":\"start\"}\n") + line + "\n";
    Result<JournalText> parsed = ParseJournal(text, "j.jsonl");
    ASSERT_FALSE(parsed.ok()) << line;
    EXPECT_NE(parsed.status().message().find("j.jsonl:2: corrupt journal line"), std::string::npos)
        << parsed.status().message();
  }
}

TEST(Journal, ParseJournalKeepsTheFinishedLinesAndCountsTheirBytes) {
  const std::string text = "{\"type\":\"start\"}\n{\"type\":\"bar\",\"bar\":0}\n{\"ty";
  Result<JournalText> parsed = ParseJournal(text, "j");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->lines.size(), 2u);
  EXPECT_EQ(parsed->lines[1]["bar"], 0);
  EXPECT_EQ(parsed->complete, text.size() - 4);
  EXPECT_TRUE(ParseJournal("", "j")->lines.empty());
}

}  // namespace
}  // namespace rlt::paper
