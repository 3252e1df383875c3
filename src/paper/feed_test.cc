// Tests of the feed specs and the CSV line feed of `rltrade paper --feed stdin`
// (paper/feed.h): bars and ticks from a pipe, bad and out-of-order lines skipped and
// reported with their line number, ticks aggregated into bars (checked by hand).
#include "paper/feed.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "core/status_test_util.h"
#include "testing/testing.h"

namespace rlt::paper {
namespace {

// Runs a LineFeed over `text` written into a pipe; returns every event up to the end.
std::vector<LineFeed::Event> Drain(const std::string& text, int64_t bar_seconds,
                                   LineFeedStats* stats = nullptr, Status* error = nullptr) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fds[1]);
  });
  LineFeed feed(fds[0], "stdin", market::CsvReadOptions{}, bar_seconds);
  std::vector<LineFeed::Event> out;
  for (int guard = 0; guard < 10000; ++guard) {
    Result<LineFeed::Event> e = feed.Next(1000);
    if (!e.ok()) {
      if (error != nullptr) *error = e.status();
      break;
    }
    if (e->kind == LineFeed::Event::Kind::kIdle) continue;
    out.push_back(*e);
    if (e->kind == LineFeed::Event::Kind::kEnd) break;
  }
  writer.join();
  ::close(fds[0]);
  if (stats != nullptr) *stats = feed.stats();
  return out;
}

TEST(FeedSpec, NamesEachFeedAndRefusesOthersWithTheFormsExpected) {
  Result<FeedSpec> replay = ParseFeedSpec("replay:data/bars.csv@60");
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->kind, FeedSpec::Kind::kReplay);
  EXPECT_EQ(replay->file, "data/bars.csv");
  EXPECT_EQ(replay->speed, 60);
  EXPECT_EQ(ParseFeedSpec("stdin")->kind, FeedSpec::Kind::kStdin);
  Result<FeedSpec> tcp = ParseFeedSpec("tcp:127.0.0.1:7001");
  ASSERT_TRUE(tcp.ok());
  EXPECT_EQ(tcp->kind, FeedSpec::Kind::kTcp);
  EXPECT_EQ(tcp->host, "127.0.0.1");
  EXPECT_EQ(tcp->port, 7001);
  for (const char* bad : {"replay:", "replay:x.csv@0", "tcp:host", "tcp:h:99999", "kafka:x"}) {
    Result<FeedSpec> f = ParseFeedSpec(bad);
    ASSERT_TRUE(IsError(f, Status::Code::kInvalidArgument, bad)) << bad;
    EXPECT_NE(f.status().message().find("--feed"), std::string::npos) << f.status().message();
  }
  EXPECT_NE(ParseFeedSpec("kafka:x").status().message().find("stdin or tcp:HOST:PORT"),
            std::string::npos);
}

TEST(FeedSpec, ReplaySpeedsAreBoundedAndOnlyATrailingNumberIsASpeed) {
  for (const char* bad : {"replay:x.csv@1e-300", "replay:x.csv@inf", "replay:x.csv@nan",
                          "replay:x.csv@-1", "replay:x.csv@2e6"}) {
    Result<FeedSpec> f = ParseFeedSpec(bad);
    ASSERT_TRUE(IsError(f, Status::Code::kInvalidArgument, "between 0.001 and 1e+06")) << bad;
  }
  Result<FeedSpec> named = ParseFeedSpec("replay:data/bars@2023.csv");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->file, "data/bars@2023.csv");
  EXPECT_EQ(named->speed, 0);
  // A file that exists under the whole name is that file, even when it ends like a speed.
  testing::ScratchDir dir("rlt_feed_spec_");
  const std::string like = dir.path() + "/bars@5";
  testing::WriteFile(like, "timestamp,close\n");
  Result<FeedSpec> existing = ParseFeedSpec("replay:" + like);
  ASSERT_TRUE(existing.ok());
  EXPECT_EQ(existing->file, like);
  EXPECT_EQ(existing->speed, 0);
  Result<FeedSpec> paced = ParseFeedSpec("replay:" + dir.path() + "/bars@5@0.5");
  ASSERT_TRUE(paced.ok());
  EXPECT_EQ(paced->file, dir.path() + "/bars@5");
  EXPECT_EQ(paced->speed, 0.5);
}

// Bars entering through stdin keep the floor and ceiling of a bar file (market/limits.h):
// 1e-300 and 1e300 are skipped with the reader's message.
TEST(LineFeed, PricesOutsideTheLimitsAreSkippedWithTheirLine) {
  const std::string text =
      "timestamp,open,high,low,close,volume\n"
      "2024-01-02T14:30:00Z,1e-300,1e-300,1e-300,1e-300,1\n"
      "2024-01-02T14:31:00Z,1e300,1e308,1,1,1\n"
      "2024-01-02T14:32:00Z,10,11,9,10.5,100\n";
  LineFeedStats stats;
  const std::vector<LineFeed::Event> ev = Drain(text, 60, &stats);
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].kind, LineFeed::Event::Kind::kBadLine);
  EXPECT_NE(ev[0].problem.find("stdin:2: column 'open': absurd value: open=1e-300 is below the "
                               "floor of 1e-08"),
            std::string::npos)
      << ev[0].problem;
  EXPECT_EQ(ev[1].kind, LineFeed::Event::Kind::kBadLine);
  EXPECT_NE(ev[1].problem.find("stdin:3: column 'open': absurd value: open=1e+300 is above"),
            std::string::npos)
      << ev[1].problem;
  EXPECT_EQ(ev[2].kind, LineFeed::Event::Kind::kBar);
  EXPECT_EQ(ev[2].bar.close, 10.5);
  EXPECT_EQ(stats.bad_lines, 2);
}

// Ticks within the limits can add up to a volume beyond them: that bar is skipped.
TEST(LineFeed, ABarOfTicksBeyondTheVolumeLimitIsSkipped) {
  const std::string text =
      "time,price,size\n"
      "2024-01-02T14:30:00Z,10,9e17\n"
      "2024-01-02T14:30:10Z,10.5,9e17\n"  // the bar's volume: 1.8e18
      "2024-01-02T14:31:00Z,11,5\n";      // closes it
  LineFeedStats stats;
  const std::vector<LineFeed::Event> ev = Drain(text, 60, &stats);
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, LineFeed::Event::Kind::kBadLine);
  EXPECT_NE(ev[0].problem.find("stdin: the bar of 2024-01-02T14:30:00Z aggregated from ticks: "
                               "volume must be a volume in [0, 1e+18]"),
            std::string::npos)
      << ev[0].problem;
  EXPECT_EQ(ev[1].kind, LineFeed::Event::Kind::kBar);
  EXPECT_EQ(ev[1].bar.close, 11);
}

TEST(LineFeed, BarsComeInOrderAndBadOrRepeatedLinesAreSkippedWithTheirLine) {
  const std::string text =
      "timestamp,open,high,low,close,volume\n"
      "2024-01-02T14:30:00Z,10,11,9,10.5,100\n"
      "2024-01-02T14:31:00Z,10.5,11.5,10,11,200\n"
      "2024-01-02T14:32:00Z,11,10,12,11,300\n"  // high < low: refused
      "\n"
      "2024-01-02T14:31:00Z,10.5,11.5,10,11,200\n"  // again: out of order
      "2024-01-02T14:33:00Z,11,12,10.5,11.5,400";   // no final newline
  LineFeedStats stats;
  const std::vector<LineFeed::Event> ev = Drain(text, 60, &stats);
  ASSERT_EQ(ev.size(), 5u);
  using K = LineFeed::Event::Kind;
  EXPECT_EQ(ev[0].kind, K::kBar);
  EXPECT_EQ(ev[0].bar.time, 1704205800);
  EXPECT_EQ(ev[0].bar.open, 10);
  EXPECT_EQ(ev[0].bar.close, 10.5);
  EXPECT_EQ(ev[0].bar.volume, 100);
  EXPECT_EQ(ev[1].kind, K::kBar);
  EXPECT_EQ(ev[1].bar.time, 1704205860);
  ASSERT_EQ(ev[2].kind, K::kBadLine);
  EXPECT_NE(ev[2].problem.find("stdin:4:"), std::string::npos) << ev[2].problem;
  EXPECT_NE(ev[2].problem.find("high"), std::string::npos) << ev[2].problem;
  EXPECT_EQ(ev[3].kind, K::kBar);
  EXPECT_EQ(ev[3].bar.time, 1704205980);
  EXPECT_EQ(ev[4].kind, K::kEnd);
  EXPECT_EQ(stats.lines, 5);
  EXPECT_EQ(stats.bad_lines, 1);
  EXPECT_EQ(stats.out_of_order, 1);
  EXPECT_EQ(stats.bars, 3);
}

TEST(LineFeed, TicksBecomeBarsOfTheRunsSizeWithVolumeAndLateTicksCounted) {
  // Two-minute bars; the ticks' OHLCV worked out by hand.
  const std::string text =
      "time,price,size\n"
      "2024-01-02T14:30:05Z,10.0,5\n"
      "2024-01-02T14:31:10Z,10.4,1\n"
      "2024-01-02T14:31:59Z,9.8,2\n"
      "2024-01-02T14:32:00Z,10.1,3\n"  // the next bar: closes 14:30
      "2024-01-02T14:31:30Z,50,1\n"    // late: its bar was emitted
      "2024-01-02T14:33:00Z,10.3,0\n"
      "2024-01-02T14:30:00Z,abc,1\n";  // refused: the price is not a number
  LineFeedStats stats;
  const std::vector<LineFeed::Event> ev = Drain(text, 120, &stats);
  using K = LineFeed::Event::Kind;
  ASSERT_EQ(ev.size(), 4u);
  ASSERT_EQ(ev[0].kind, K::kBar);
  EXPECT_EQ(ev[0].bar.time, 1704205800);
  EXPECT_EQ(ev[0].bar.open, 10.0);
  EXPECT_EQ(ev[0].bar.high, 10.4);
  EXPECT_EQ(ev[0].bar.low, 9.8);
  EXPECT_EQ(ev[0].bar.close, 9.8);
  EXPECT_EQ(ev[0].bar.volume, 8);
  ASSERT_EQ(ev[1].kind, K::kBadLine);
  EXPECT_NE(ev[1].problem.find("stdin:8:"), std::string::npos) << ev[1].problem;
  EXPECT_NE(ev[1].problem.find("'price'"), std::string::npos) << ev[1].problem;
  ASSERT_EQ(ev[2].kind, K::kBar);  // flushed at the end of the input
  EXPECT_EQ(ev[2].bar.time, 1704205920);
  EXPECT_EQ(ev[2].bar.open, 10.1);
  EXPECT_EQ(ev[2].bar.high, 10.3);
  EXPECT_EQ(ev[2].bar.close, 10.3);
  EXPECT_EQ(ev[2].bar.volume, 3);
  EXPECT_EQ(ev[3].kind, K::kEnd);
  EXPECT_EQ(stats.ticks, 6);
  EXPECT_EQ(stats.late_ticks, 1);
  EXPECT_EQ(stats.bars, 2);
}

TEST(LineFeed, AHeaderOfNeitherBarsNorTicksIsAnErrorNamingTheColumns) {
  Status error;
  Drain("when,bid,ask\n2024-01-02T14:30:00Z,1,2\n", 60, nullptr, &error);
  ASSERT_TRUE(IsError(error, Status::Code::kInvalidArgument, "stdin:1:"));
  EXPECT_NE(error.message().find("when, bid, ask"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("price"), std::string::npos) << error.message();
}

}  // namespace
}  // namespace rlt::paper
