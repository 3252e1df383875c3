// Tests of the session journal (paper/journal.h): keyed events are written once across
// restarts, notes every time, and a line cut by a kill is cut off on reopening.
#include "paper/journal.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/status_test_util.h"
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
  ASSERT_TRUE(IsError(corrupt, Status::Code::kDataError, path + ":2:"));
  EXPECT_EQ(testing::ReadFile(path), text);
  // A text file: not a journal (refused), left as it is.
  testing::WriteFile(path, "my notes\n");
  Result<Journal> notes = Journal::Open(path);
  ASSERT_TRUE(IsError(notes, Status::Code::kRefused, path + ":1:"));
  EXPECT_EQ(testing::ReadFile(path), "my notes\n");
  // A last line without its newline that does not start as journal lines do: not cut.
  testing::WriteFile(path, "{\"type\":\"start\"}\nnotes");
  Result<Journal> tail = Journal::Open(path);
  ASSERT_TRUE(IsError(tail, Status::Code::kDataError, path + ":2:"));
}

TEST(Journal, AFieldARestartReadsWithAnotherTypeIsAnErrorNamingLineAndField) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"type":"order","client_order_id":7})", "client_order_id"},
      {R"({"type":"bar","bar":"x"})", "bar"},
      {R"({"type":"fill","client_order_id":"b1","quantity":"10"})", "quantity"}};
  for (const auto& [line, field] : cases) {
    const std::string text = std::string("{\"type\":\"start\"}\n") + line + "\n";
    Result<JournalText> parsed = ParseJournal(text, "j.jsonl");
    ASSERT_TRUE(IsError(parsed, Status::Code::kDataError,
                        std::string("j.jsonl:2: corrupt journal line: \"") + field + "\" is "))
        << line;
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
