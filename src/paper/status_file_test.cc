// Tests of a paper session's status.json: what the writer writes is what the reader reads,
// key for key; a hand-edited or corrupt file reads as defaults, never as a failure.
#include "paper/status_file.h"

#include <gtest/gtest.h>

#include <string>

#include "core/file_io.h"
#include "testing/testing.h"

namespace rlt::paper {
namespace {

PaperStatus Sample() {
  PaperStatus s;
  s.pid = 4242;
  s.state = "running";
  s.run_dir = "runs/x";
  s.feed = "stdin";
  s.broker = "sim";
  s.start_time = 1700000000;
  s.updated_time = 1700000100;
  s.bars = 77;
  s.has_bar = true;
  s.last_bar = 76;
  s.last_bar_time = "2023-03-06 10:55";
  s.session_date = "2023-03-06";
  s.trading = true;
  s.position = -150;
  s.cash = 123456.5;
  s.net_worth = 99876.25;
  s.pnl_today = -123.75;
  s.orders_today = 3;
  s.fills = 9;
  s.open_orders = {"b76", "b76-risk"};
  s.stale_feed = true;
  s.refusals = {{"max_orders_per_day", 2}, {"max_position", 1}};
  return s;
}

TEST(PaperStatusFile, WhatIsWrittenIsReadBack) {
  const testing::ScratchDir dir;
  const PaperStatus s = Sample();
  ASSERT_TRUE(WritePaperStatus(dir.fs_path(), s).ok());
  Result<std::string> text = ReadFile(dir / "status.json");
  ASSERT_TRUE(text.ok());
  const nlohmann::json j = nlohmann::json::parse(*text);
  EXPECT_TRUE(IsPaperStatus(j));
  EXPECT_EQ(j["kind"], "paper");
  const PaperStatus r = PaperStatusFromJson(j);
  EXPECT_EQ(r.pid, s.pid);
  EXPECT_EQ(r.state, s.state);
  EXPECT_EQ(r.run_dir, s.run_dir);
  EXPECT_EQ(r.feed, s.feed);
  EXPECT_EQ(r.broker, s.broker);
  EXPECT_EQ(r.start_time, s.start_time);
  EXPECT_EQ(r.updated_time, s.updated_time);
  EXPECT_EQ(r.bars, s.bars);
  EXPECT_TRUE(r.has_bar);
  EXPECT_EQ(r.last_bar, s.last_bar);
  EXPECT_EQ(r.last_bar_time, s.last_bar_time);
  EXPECT_EQ(r.session_date, s.session_date);
  EXPECT_EQ(r.trading, s.trading);
  EXPECT_EQ(r.position, s.position);  // exact: JSON keeps doubles to the last bit
  EXPECT_EQ(r.cash, s.cash);
  EXPECT_EQ(r.net_worth, s.net_worth);
  EXPECT_EQ(r.pnl_today, s.pnl_today);
  EXPECT_EQ(r.orders_today, s.orders_today);
  EXPECT_EQ(r.fills, s.fills);
  EXPECT_EQ(r.open_orders, s.open_orders);
  EXPECT_EQ(r.halted, s.halted);
  EXPECT_EQ(r.stopped, s.stopped);
  EXPECT_EQ(r.stale_feed, s.stale_feed);
  EXPECT_EQ(r.refusals, s.refusals);
  EXPECT_TRUE(r.error.empty());
  EXPECT_FALSE(j.contains("error"));
}

TEST(PaperStatusFile, BeforeTheFirstBarOnlyTheSessionIsWritten) {
  PaperStatus s;
  s.state = "failed";
  s.error = "cannot connect to 127.0.0.1:1";
  const nlohmann::ordered_json j = PaperStatusJson(s);
  EXPECT_FALSE(j.contains("last_bar"));
  EXPECT_FALSE(j.contains("risk"));
  EXPECT_EQ(j["error"], s.error);
  const PaperStatus r = PaperStatusFromJson(nlohmann::json::parse(j.dump()));
  EXPECT_FALSE(r.has_bar);
  EXPECT_EQ(r.error, s.error);
}

TEST(PaperStatusFile, KeysOfTheWrongTypeReadAsDefaults) {
  const nlohmann::json j = nlohmann::json::parse(
      R"({"kind": "paper", "pid": "x", "state": 3, "bars": 1.5, "last_bar": null,
          "position": "12", "open_orders": [1, "b3", null], "risk": {"halted": "yes",
          "refusals": {"max_position": "2", "max_loss": 4}}, "error": []})");
  EXPECT_TRUE(IsPaperStatus(j));
  const PaperStatus r = PaperStatusFromJson(j);
  EXPECT_EQ(r.pid, 0);
  EXPECT_EQ(r.state, "");
  EXPECT_EQ(r.bars, 0);
  EXPECT_TRUE(r.has_bar);  // the key is there, its value is not a number
  EXPECT_EQ(r.last_bar, 0);
  EXPECT_EQ(r.position, 0);
  EXPECT_EQ(r.open_orders, std::vector<std::string>{"b3"});
  EXPECT_FALSE(r.halted);
  EXPECT_EQ(r.refusals, (std::map<std::string, int64_t>{{"max_loss", 4}}));
  EXPECT_EQ(r.error, "");
  EXPECT_FALSE(IsPaperStatus(nlohmann::json::parse(R"({"kind": 1})")));
  EXPECT_FALSE(IsPaperStatus(nlohmann::json::parse("[]")));
  EXPECT_EQ(PaperStatusFromJson(nlohmann::json::parse("[1]")).pid, 0);
}

}  // namespace
}  // namespace rlt::paper
