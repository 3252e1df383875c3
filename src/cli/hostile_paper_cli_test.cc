// End-to-end regression tests of `rltrade paper` against hostile input: each runs the
// command as a hostile tester would and asserts the exit code, a message fragment and
// what is (not) left on disk.
//  - bars: a tiny positive price on a live feed, extended-hours bars, a far-future
//    timestamp, a feed that is mostly bad;
//  - the journal: two processes on one journal, a corrupt line in its middle, a bad bar
//    journaled by an older process, a directory that is not a journal of the run;
//  - the run: --start inside the training range (eval's in-sample rule), an edited
//    normalizer.json (MANIFEST), --start after the last bar;
//  - the replay's pace: signals during a paced replay, out-of-range speeds, '@' in names;
//  - risk: stale_feed_seconds out of its range.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;
using rlt::testing::ReadFile;
using rlt::testing::RunRltrade;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class HostilePaperCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new rlt::testing::ScratchDir("rlt_hostile_paper_");
    const std::string d = dir_->path();
    // 60 sessions of 5-minute bars: train to 2023-02-17, test from 2023-03-06.
    ASSERT_EQ(RunRltrade("data synth --days 60 --out " + d + "/bars.csv").exit_code, 0);
    const auto trained = RunRltrade(
        "train " + std::string(RLT_SOURCE_DIR) + "/configs/intraday_ppo.toml" +
        " --set data.source=file --set data.file=" + d + "/bars.csv" +
        " --set split.train=start:2023-02-17 --set split.validation=2023-02-20:2023-03-03"
        " --set split.test=2023-03-06:end --set run.total_steps=1024 --set run.threads=1"
        " --set env.num_envs=8 --set algo.n_steps=64 --set algo.batch_size=256"
        " --set algo.n_epochs=1 --quiet --run-dir " +
        d + "/run");
    ASSERT_EQ(trained.exit_code, 0) << trained.out;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string D() { return dir_->path(); }
  static std::string Run() { return D() + "/run"; }
  static std::string Bars() { return D() + "/bars.csv"; }
  static std::vector<std::string> BarLines() {
    return rlt::testing::Lines(ReadFile(Bars()));  // [0]: the header
  }
  // Writes `lines` (a header first) as a bar file; returns its path.
  static std::string WriteLines(const std::string& name, const std::vector<std::string>& lines) {
    const std::string path = D() + "/" + name;
    std::ofstream out(path);
    for (const std::string& l : lines) out << l << "\n";
    return path;
  }
  static nlohmann::json Json(const std::string& path) {
    return nlohmann::json::parse(ReadFile(path));
  }
  static std::vector<nlohmann::json> Journal(const std::string& dir) {
    std::vector<nlohmann::json> out;
    std::ifstream in(dir + "/journal.jsonl");
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  // The run's bars piped as they are, once: the session the hostile feeds are compared to.
  static std::string PlainSession() {
    const std::string plain = D() + "/plain";
    if (!fs::exists(plain + "/summary.json")) {
      const auto r = RunRltrade("paper " + Run() + " --feed stdin --start 2023-03-06" +
                                " --fsync session --journal " + plain + " < " + Bars());
      EXPECT_EQ(r.exit_code, 0) << r.out;
    }
    return plain;
  }
  static void ExpectThePlainSessionsOutputs(const std::string& j) {
    const std::string plain = PlainSession();
    for (const char* f : {"daily_returns.csv", "trades.csv", "equity.csv"}) {
      EXPECT_EQ(ReadFile(j + "/" + f), ReadFile(plain + "/" + f)) << j << ": " << f;
    }
  }
  static rlt::testing::ScratchDir* dir_;
};

rlt::testing::ScratchDir* HostilePaperCli::dir_ = nullptr;

// A bar line with every price replaced by `price`.
std::string WithPrice(const std::string& line, const std::string& price) {
  std::vector<std::string> cells = rlt::testing::Cells(line);
  for (size_t i = 2; i <= 5 && i < cells.size(); ++i) cells[i] = price;
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
  return out;
}

size_t FirstLineOn(const std::vector<std::string>& lines, const std::string& date) {
  size_t i = 1;
  while (i < lines.size() && lines[i].rfind(date, 0) != 0) ++i;
  EXPECT_LT(i, lines.size()) << date;
  return i;
}

TEST_F(HostilePaperCli, ATinyPriceOnALiveFeedIsNeitherSizedNorFatal) {
  // A tiny price inside a session and at a session's first bar. 1e-300 is below the bar
  // limits' price floor (market/limits.h): the stdin reader skips those lines. 1e-6 passes
  // the reader but is a price jump no market makes: the session drops those bars. Either
  // way no order is sized at it and the session ends with a sane net worth.
  struct Case {
    const char* price;
    int reader_bad_lines, session_bad_bars;
  };
  for (const Case& c : {Case{"1e-300", 2, 0}, Case{"1e-6", 0, 2}}) {
    SCOPED_TRACE(c.price);
    std::vector<std::string> lines = BarLines();
    const size_t first = FirstLineOn(lines, "2023-03-07");
    lines[first] = WithPrice(lines[first], c.price);
    lines[first + 20] = WithPrice(lines[first + 20], c.price);
    const std::string feed = WriteLines(std::string("tiny") + c.price + ".csv", lines);
    const std::string j = D() + "/tiny" + c.price;
    const auto r = RunRltrade("paper " + Run() +
                              " --feed stdin --start 2023-03-06 --fsync session --json --journal " +
                              j + " < " + feed);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto summary = Json(j + "/summary.json");
    EXPECT_EQ(summary["feed_stats"]["bad_lines"], c.reader_bad_lines) << summary.dump();
    EXPECT_EQ(summary["dropped_bars"]["bad"], c.session_bad_bars) << summary.dump();
    const double worth = summary["final_net_worth"];
    EXPECT_GT(worth, 0.5 * 100000.0);
    EXPECT_LT(worth, 2.0 * 100000.0);
    for (const auto& l : Journal(j)) {
      if (l["type"] == "fill") {  // every order within what the account can pay for
        EXPECT_LT(l["quantity"].get<double>() * l["price"].get<double>(), 2.5 * 100000.0)
            << l.dump();
      }
      if (l["type"] == "bar") {
        EXPECT_GT(l["close"].get<double>(), 1.0) << l.dump();
      }
    }
    EXPECT_EQ(Json(j + "/status.json")["state"], "finished");
  }
}

TEST_F(HostilePaperCli, ABadBarJournaledByAnOlderProcessIsSkippedOnRestart) {
  // A journal killed after it had journaled a bar of price 1e-300 (as older versions did):
  // the restart skips that bar with a note instead of failing on it every time.
  const std::vector<std::string> lines = BarLines();
  const std::string j = D() + "/bad_journaled";
  const size_t first = FirstLineOn(lines, "2023-03-06");
  std::vector<std::string> head(lines.begin(), lines.begin() + static_cast<long>(first) + 10);
  const std::string part = WriteLines("head.csv", head);
  ASSERT_EQ(RunRltrade("paper " + Run() + " --feed stdin --start 2023-03-06 --fsync session" +
                       " --journal " + j + " < " + part)
                .exit_code,
            0);
  // Cut the end off and journal a bad bar as the last one.
  std::vector<nlohmann::json> journal = Journal(j);
  while (!journal.empty() && journal.back()["type"] != "bar") journal.pop_back();
  nlohmann::json bad = journal.back();
  bad["bar"] = bad["bar"].get<int>() + 1;
  bad["epoch"] = bad["epoch"].get<int64_t>() + 300;
  for (const char* k : {"open", "high", "low", "close"}) bad[k] = 1e-300;
  journal.push_back(bad);
  {
    std::ofstream out(j + "/journal.jsonl", std::ios::trunc);
    for (const auto& l : journal) out << l.dump() << "\n";
  }
  const auto r = RunRltrade("paper " + Run() + " --feed stdin --start 2023-03-06 --fsync session" +
                            " --journal " + j + " < " + Bars());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  bool noted = false;
  for (const auto& l : Journal(j)) {
    noted = noted || (l["type"] == "feed" && l.value("event", "") == "journal_bad_bar");
  }
  EXPECT_TRUE(noted);
  EXPECT_EQ(Json(j + "/status.json")["state"], "finished");
  // `rltrade status JOURNAL` reads the file through paper/status_file.h, as written.
  const auto shown = RunRltrade("status " + j);
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  const auto status = Json(j + "/status.json");
  char worth[64];
  std::snprintf(worth, sizeof worth, "net worth %.2f", status["net_worth"].get<double>());
  EXPECT_NE(shown.out.find("paper session " + j), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("state         finished"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find(worth), std::string::npos) << shown.out;
}

TEST_F(HostilePaperCli, ExtendedHoursBarsAreDroppedAndCounted) {
  // Four bars after the run's usual last bar on every date: one session per date still.
  const std::vector<std::string> lines = BarLines();
  std::vector<std::string> out = {lines[0]};
  int64_t extra = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    out.push_back(lines[i]);
    const bool last_of_day =
        i + 1 == lines.size() || lines[i + 1].substr(0, 10) != lines[i].substr(0, 10);
    if (!last_of_day) continue;
    // lines[i] ends the day at 15:25 or 15:30 local: 16:00, 16:05, 16:10, 16:15 after it.
    const std::string date = lines[i].substr(0, 10);
    for (int m = 0; m < 4; ++m) {
      std::string late = lines[i];
      late.replace(0, 19, date + "T16:" + (m < 2 ? "0" : "1") + (m % 2 ? "5" : "0") + ":00");
      out.push_back(late);
      ++extra;
    }
  }
  const std::string feed = WriteLines("extended.csv", out);
  const std::string j = D() + "/extended";
  const auto r = RunRltrade("paper " + Run() + " --feed stdin --start 2023-03-06 --fsync session" +
                            " --journal " + j + " < " + feed);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto summary = Json(j + "/summary.json");
  EXPECT_EQ(summary["dropped_bars"]["outside_session"], extra) << summary.dump();
  // One row per traded date in daily_returns.csv (dates unique), and the session is the
  // one the same feed without the extended hours trades.
  const auto rows = rlt::testing::Lines(ReadFile(j + "/daily_returns.csv"));
  ASSERT_GT(rows.size(), 10u);
  std::set<std::string> dates;
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_TRUE(dates.insert(rows[i].substr(0, 10)).second) << rows[i];
  }
  ExpectThePlainSessionsOutputs(j);
}

TEST_F(HostilePaperCli, AFarFutureBarIsABadLineNotTheEndOfTheSession) {
  std::vector<std::string> lines = BarLines();
  const size_t at = FirstLineOn(lines, "2023-03-08") + 5;
  lines.insert(lines.begin() + static_cast<long>(at),
               "2099-01-05T10:00:00+05:30" + lines[at].substr(25));
  const std::string feed = WriteLines("future.csv", lines);
  const std::string j = D() + "/future";
  const auto r = RunRltrade("paper " + Run() + " --feed stdin --start 2023-03-06 --fsync session" +
                            " --journal " + j + " < " + feed);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto summary = Json(j + "/summary.json");
  EXPECT_EQ(summary["dropped_bars"]["bad"], 1) << summary.dump();
  EXPECT_EQ(summary["range"]["last"], lines.back().substr(0, 10));  // traded to the end
  ExpectThePlainSessionsOutputs(j);
  // A feed whose bars are mostly unusable ends with an error and the count.
  std::vector<std::string> worse = {lines[0]};
  const size_t start = FirstLineOn(lines, "2023-03-06");
  for (size_t i = start; i < start + 300; ++i) {
    worse.push_back(i % 4 == 0 ? lines[i] : WithPrice(lines[i], "1e-300"));
  }
  const std::string bad_feed = WriteLines("mostly_bad.csv", worse);
  const std::string j2 = D() + "/mostly_bad";
  const auto bad = RunRltrade("paper " + Run() + " --feed stdin --start 2023-03-06" +
                              " --journal " + j2 + " < " + bad_feed);
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_TRUE(Has(bad.out, "dropped")) << bad.out;
  EXPECT_EQ(Json(j2 + "/status.json")["state"], "failed");
}

TEST_F(HostilePaperCli, TwoProcessesOnOneJournalAreRefused) {
  const std::string j = D() + "/locked";
  // A slow replay holds the journal; a second process on it is refused at once.
  const std::string cmd = "exec " + rlt::testing::RltradeBinary() + " paper " + Run() +
                          " --feed replay:" + Bars() + "@600 --start 2023-03-06 --quiet" +
                          " --journal " + j + " >/dev/null 2>&1";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 100 && !fs::exists(j + "/journal.jsonl"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto second = RunRltrade("paper " + Run() + " --feed replay:" + Bars() +
                                 " --start 2023-03-06 --journal " + j);
  EXPECT_EQ(second.exit_code, 1) << second.out;
  EXPECT_TRUE(Has(second.out, "in use by another writer")) << second.out;
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 3.0) << "a paced replay ends at a signal, not after its sleep";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  int ends = 0;
  for (const auto& l : Journal(j)) ends += l["type"] == "end";
  EXPECT_EQ(ends, 1);
  EXPECT_EQ(Json(j + "/summary.json")["end"], "signal");
}

TEST_F(HostilePaperCli, ACorruptLineInTheJournalsMiddleIsAnErrorNamingIt) {
  const std::string j = D() + "/corrupt";
  const std::vector<std::string> lines = BarLines();
  std::vector<std::string> head(
      lines.begin(), lines.begin() + static_cast<long>(FirstLineOn(lines, "2023-03-07")));
  const std::string part = WriteLines("corrupt_head.csv", head);
  ASSERT_EQ(RunRltrade("paper " + Run() + " --feed stdin --start 2023-03-06 --fsync session" +
                       " --journal " + j + " < " + part)
                .exit_code,
            0);
  std::vector<std::string> text = rlt::testing::Lines(ReadFile(j + "/journal.jsonl"));
  ASSERT_GT(text.size(), 20u);
  text[10] = text[10].substr(0, text[10].size() / 2);  // a line cut in the middle of the file
  {
    std::ofstream out(j + "/journal.jsonl", std::ios::trunc);
    for (const auto& l : text) out << l << "\n";
  }
  const uintmax_t size = fs::file_size(j + "/journal.jsonl");
  const auto r = RunRltrade("paper " + Run() + " --feed stdin --start 2023-03-06 --fsync session" +
                            " --journal " + j + " < " + Bars());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "journal.jsonl:11")) << r.out;
  EXPECT_EQ(fs::file_size(j + "/journal.jsonl"), size);  // nothing cut off
  // A last line without its newline (a kill mid-write) is still cut, and the session goes on.
  const std::string j2 = D() + "/cut_last";
  ASSERT_EQ(RunRltrade("paper " + Run() + " --feed stdin --start 2023-03-06 --fsync session" +
                       " --journal " + j2 + " < " + part)
                .exit_code,
            0);
  std::ofstream(j2 + "/journal.jsonl", std::ios::app) << "{\"type\":\"bar\",\"bar\":9";
  const auto resumed = RunRltrade("paper " + Run() + " --feed stdin --start 2023-03-06" +
                                  " --fsync session --journal " + j2 + " < " + part);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.out;
}

TEST_F(HostilePaperCli, ADirectoryThatIsNotAJournalOfThisRunIsRefused) {
  // A text journal.jsonl: refused, not truncated.
  const std::string a = D() + "/not_journal";
  fs::create_directories(a);
  std::ofstream(a + "/journal.jsonl") << "my notes\nmore notes\n";
  auto r = RunRltrade("paper " + Run() + " --feed replay:" + Bars() +
                      " --start 2023-03-06 --journal " + a);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "journal.jsonl:1")) << r.out;
  EXPECT_EQ(ReadFile(a + "/journal.jsonl"), "my notes\nmore notes\n");
  // A directory with other files (a trades.csv, no journal): refused, left as it was.
  const std::string b = D() + "/other_files";
  fs::create_directories(b);
  std::ofstream(b + "/trades.csv") << "mine\n";
  r = RunRltrade("paper " + Run() + " --feed replay:" + Bars() + " --start 2023-03-06 --journal " +
                 b);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "not a journal")) << r.out;
  EXPECT_EQ(ReadFile(b + "/trades.csv"), "mine\n");
  EXPECT_FALSE(fs::exists(b + "/journal.jsonl"));
}

TEST_F(HostilePaperCli, TheRunIsCheckedAsEvalChecksIt) {
  // In-sample: eval's rule and label.
  const std::string j = D() + "/in_sample";
  auto r = RunRltrade("paper " + Run() + " --feed replay:" + Bars() + " --start 2023-02-01" +
                      " --journal " + j);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "overlaps what the policy saw in training")) << r.out;
  EXPECT_TRUE(Has(r.out, "--allow-in-sample")) << r.out;
  EXPECT_FALSE(fs::exists(j));
  r = RunRltrade("paper " + Run() + " --feed replay:" + Bars() + " --start 2023-02-01" +
                 " --allow-in-sample --fsync session --journal " + j);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Json(j + "/summary.json")["in_sample"], true);
  // An edited normalizer.json (MANIFEST).
  const std::string copy = D() + "/edited_run";
  fs::copy(Run(), copy, fs::copy_options::recursive);
  std::string norm = ReadFile(copy + "/normalizer.json");
  const size_t digit = norm.find_first_of("123456789");
  ASSERT_NE(digit, std::string::npos);
  norm[digit] = norm[digit] == '9' ? '8' : static_cast<char>(norm[digit] + 1);
  std::ofstream(copy + "/normalizer.json", std::ios::trunc) << norm;
  const std::string j2 = D() + "/edited_journal";
  r = RunRltrade("paper " + copy + " --feed replay:" + Bars() + " --start 2023-03-06 --journal " +
                 j2);
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "normalizer.json")) << r.out;
  EXPECT_FALSE(fs::exists(j2));
  // --start after the replay's last bar.
  const std::string j3 = D() + "/late_start";
  r = RunRltrade("paper " + Run() + " --feed replay:" + Bars() + " --start 2030-01-01 --journal " +
                 j3);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, BarLines().back().substr(0, 10))) << r.out;
  EXPECT_FALSE(fs::exists(j3));
}

TEST_F(HostilePaperCli, ReplaySpeedsAreBoundedAndAtInANameIsAName) {
  for (const char* speed : {"@1e-300", "@inf", "@nan", "@0", "@1e9"}) {
    const std::string j = D() + "/speed";
    const auto r = RunRltrade("paper " + Run() + " --feed replay:" + Bars() + speed +
                              " --start 2023-03-06 --journal " + j);
    EXPECT_EQ(r.exit_code, 1) << speed << ": " << r.out;
    EXPECT_TRUE(Has(r.out, "between")) << speed << ": " << r.out;
    EXPECT_FALSE(fs::exists(j));
  }
  // A file whose name has an '@' (not followed by a number only) is that file.
  const std::string at = D() + "/bars@2023.csv";
  fs::copy_file(Bars(), at);
  const std::string j = D() + "/at_name";
  const auto r = RunRltrade("paper " + Run() + " --feed replay:" + at +
                            " --start 2023-03-06 --fsync session --journal " + j);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  // ... and so is an existing file named like a speed.
  const std::string like = D() + "/bars@5";
  fs::copy_file(Bars(), like);
  const auto t0 = std::chrono::steady_clock::now();
  const auto q = RunRltrade("paper " + Run() + " --feed replay:" + like +
                            " --start 2023-03-06 --fsync session --journal " + D() + "/at_like");
  EXPECT_EQ(q.exit_code, 0) << q.out;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60.0);
}

TEST_F(HostilePaperCli, StaleFeedSecondsOfZeroIsRefusedWithItsRange) {
  const std::string risk = D() + "/stale0.toml";
  std::ofstream(risk) << "stale_feed_seconds = 0\n";
  const std::string j = D() + "/stale0";
  const auto r = RunRltrade("paper " + Run() + " --feed replay:" + Bars() +
                            " --start 2023-03-06 --risk " + risk + " --journal " + j);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "stale_feed_seconds")) << r.out;
  EXPECT_TRUE(Has(r.out, "86400")) << r.out;
  EXPECT_FALSE(fs::exists(j));
}

}  // namespace
