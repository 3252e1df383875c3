// End-to-end tests of `rltrade paper` (paper/paper.h): no train/serve skew — a replay of
// the run's whole data file through the in-process broker, trading from the first day of
// the test range, writes the same daily returns, trades and equity as `rltrade eval
// --range test`, byte for byte, and the same metrics; the journal holds every bar and no
// decision before --start; killed with SIGKILL 20 times and restarted, the session fills
// every order once and ends as an uninterrupted one; bad arguments are clear errors that
// leave no journal; bench paper reports its latency figures.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "testing/exchange_sim_process.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;
using rlt::testing::ReadFile;
using rlt::testing::RunRltrade;

class PaperCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new rlt::testing::ScratchDir("rlt_paper_cli_");
    const std::string d = dir_->path();
    // 60 sessions: train to 2023-02-17, validation to 2023-03-03, test after.
    ASSERT_EQ(RunRltrade("data synth --days 60 --out " + d + "/bars.csv").exit_code, 0);
    const auto trained = RunRltrade(
        "train " + std::string(RLT_SOURCE_DIR) + "/configs/intraday_ppo.toml" +
        " --set data.source=file --set data.file=" + d + "/bars.csv" +
        " --set split.train=start:2023-02-17 --set split.validation=2023-02-20:2023-03-03"
        " --set split.test=2023-03-06:end --set run.total_steps=8192 --set run.threads=1"
        " --set env.num_envs=16 --set algo.n_steps=64 --set algo.batch_size=256"
        " --quiet --run-dir " +
        d + "/run");
    ASSERT_EQ(trained.exit_code, 0) << trained.out;
    ASSERT_EQ(RunRltrade("eval " + d + "/run --range test").exit_code, 0);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string D() { return dir_->path(); }
  static rlt::testing::ScratchDir* dir_;
};

rlt::testing::ScratchDir* PaperCli::dir_ = nullptr;

std::vector<nlohmann::json> JournalLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

// A run whose accounts are stopped out in the test range (3% costs, stop at 90% of
// capital): the policy and buy-and-hold stop trading, their later sessions count as flat,
// and the replay still writes what eval writes, byte for byte.
TEST_F(PaperCli, AStoppedOutReplayIsTheStoppedOutEvaluation) {
  const std::string d = D() + "/stopped";
  const auto trained =
      RunRltrade("train " + std::string(RLT_SOURCE_DIR) + "/configs/intraday_ppo.toml" +
                 " --set data.source=file --set data.file=" + D() + "/bars.csv" +
                 " --set split.train=start:2023-02-17 --set split.test=2023-03-06:end"
                 " --set run.total_steps=1024 --set run.threads=1 --set env.num_envs=4"
                 " --set algo.n_steps=64 --set algo.batch_size=128 --set env.cost_rate=0.03"
                 " --set env.stop_fraction=0.9 --quiet --run-dir " +
                 d);
  ASSERT_EQ(trained.exit_code, 0) << trained.out;
  const auto eval = RunRltrade("eval " + d + " --range test");
  ASSERT_EQ(eval.exit_code, 0) << eval.out;
  EXPECT_NE(eval.out.find("stopped out on"), std::string::npos) << eval.out;
  const auto r = RunRltrade("paper " + d + " --feed replay:" + D() +
                            "/bars.csv --start 2023-03-06 --quiet --journal " + d + "/journal");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* f : {"daily_returns.csv", "trades.csv", "equity.csv"}) {
    EXPECT_EQ(ReadFile(d + "/eval/test/" + f), ReadFile(d + "/journal/" + f)) << f;
  }
}

TEST_F(PaperCli, AReplayThroughTheSimBrokerIsTheEvaluationOfTheTestRange) {
  const std::string j = D() + "/journal";
  const auto r = RunRltrade("paper " + D() + "/run --feed replay:" + D() +
                            "/bars.csv --broker sim --start 2023-03-06 --journal " + j +
                            " --fsync session --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string eval = D() + "/run/eval/test/";
  for (const char* f : {"daily_returns.csv", "trades.csv", "equity.csv"}) {
    const std::string a = ReadFile(eval + f), b = ReadFile(j + "/" + f);
    EXPECT_GT(rlt::testing::Lines(a).size(), 2u) << f;
    EXPECT_EQ(a, b) << f << " differs from the evaluation's";
  }
  const auto ev = nlohmann::json::parse(ReadFile(eval + "summary.json"));
  const auto pp = nlohmann::json::parse(ReadFile(j + "/summary.json"));
  EXPECT_EQ(pp["metrics"], ev["metrics"]);
  EXPECT_EQ(pp["benchmarks"], ev["benchmarks"]);
  EXPECT_EQ(pp["fills"], ev["fills"]);
  EXPECT_EQ(pp["range"]["first"], ev["range"]["first"]);
  // The journal: every bar of the file, decisions only from --start on, each fill with its
  // order, a snapshot per traded session, and the end.
  const auto lines = JournalLines(j + "/journal.jsonl");
  size_t bars = 0, decisions = 0, fills = 0, orders = 0, snapshots = 0;
  for (const auto& l : lines) {
    const std::string type = l["type"];
    bars += type == "bar";
    orders += type == "order";
    fills += type == "fill";
    snapshots += type == "snapshot";
    if (type == "decision") {
      ++decisions;
      EXPECT_GE(l["time"].get<std::string>(), "2023-03-06") << l.dump();
      EXPECT_GT(l["latency_us"].get<double>(), 0.0);
    }
  }
  EXPECT_EQ(bars, rlt::testing::Lines(ReadFile(D() + "/bars.csv")).size() - 1);
  EXPECT_EQ(fills, orders);
  EXPECT_EQ(fills, static_cast<size_t>(ev["fills"]["strategy"].get<int64_t>()));
  EXPECT_EQ(snapshots, rlt::testing::Lines(ReadFile(eval + "daily_returns.csv")).size() - 1);
  EXPECT_GT(decisions, 0u);
  EXPECT_EQ(lines.front()["type"], "start");
  EXPECT_EQ(lines.back()["type"], "end");
  // `rltrade metrics` reads the session's daily returns as it reads an evaluation's.
  EXPECT_EQ(RunRltrade("metrics --returns " + j + "/daily_returns.csv").exit_code, 0);
  // `rltrade status` shows the session: finished, flat after the last close.
  const auto st = RunRltrade("status " + j + " --json", "", "/dev/null");
  ASSERT_EQ(st.exit_code, 0) << st.out;
  const auto sj = nlohmann::json::parse(st.out);
  EXPECT_EQ(sj["kind"], "paper");
  EXPECT_EQ(sj["state"], "finished");
  EXPECT_EQ(sj["position"], 0.0);
  EXPECT_EQ(sj["bars"], bars);
  EXPECT_EQ(sj["net_worth"], pp["final_net_worth"]);
  const auto text = RunRltrade("status " + j);
  EXPECT_NE(text.out.find("paper session"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("PnL"), std::string::npos) << text.out;
  // ... and `rltrade report` its directory as an evaluation's.
  EXPECT_EQ(RunRltrade("report " + j).exit_code, 0);
  EXPECT_TRUE(fs::exists(j + "/report.html"));
}

TEST_F(PaperCli, BenchPaperReportsTheDecisionLatency) {
  const auto r = RunRltrade("bench paper --days 12 --json --scratch " + D() + "/bench --config " +
                                std::string(RLT_SOURCE_DIR) + "/configs/intraday_ppo.toml",
                            "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["preset"], "fast22");
  EXPECT_GT(j["decisions"].get<int64_t>(), 0);
  EXPECT_LE(j["latency_p50_us"].get<double>(), j["latency_p99_us"].get<double>());
  EXPECT_LE(j["latency_p99_us"].get<double>(), j["latency_max_us"].get<double>());
  EXPECT_TRUE(fs::is_empty(D() + "/bench"));  // the scratch run is removed
}

TEST_F(PaperCli, BadArgumentsAreClearErrorsAndLeaveNoJournal) {
  const std::string run = D() + "/run", bars = D() + "/bars.csv";
  struct Case {
    std::string args, message;
  } cases[] = {
      {"--feed replay: --broker sim", "replay needs a file"},
      {"--feed replay:" + bars + "@0 --broker sim", "must be a number > 0"},
      {"--feed kafka:x --broker sim", "expected replay:FILE"},
      {"--feed replay:" + bars + " --broker ib", "--broker ib: expected sim or tcp:HOST:PORT"},
      {"--feed stdin --broker tcp:127.0.0.1:9", "give the same server as the feed"},
      {"--feed tcp:127.0.0.1:99999 --broker sim", "the port must be 1-65535"},
      {"--feed tcp:127.0.0.1:1 --broker sim", "cannot reach the broker"},  // nobody there
      {"--feed replay:" + bars + " --broker sim --start 2023-13-40", "2023-13-40"},
  };
  int k = 0;
  for (const Case& c : cases) {
    const std::string j = D() + "/bad" + std::to_string(k++);
    const auto r = RunRltrade("paper " + run + " " + c.args + " --journal " + j);
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_FALSE(fs::exists(j)) << c.args;
  }
  // A journal of another session is not appended to.
  const std::string j = D() + "/twice";
  ASSERT_EQ(RunRltrade("paper " + run + " --feed replay:" + bars +
                       " --broker sim --start 2023-03-20 --fsync session --journal " + j)
                .exit_code,
            0);
  const auto again = RunRltrade("paper " + run + " --feed replay:" + bars +
                                " --broker sim --start 2023-03-21 --journal " + j);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.out.find("the journal of another session: its start is \"2023-03-20\""),
            std::string::npos)
      << again.out;
}

// Fills of a journal: client order id -> the line.
std::map<std::string, nlohmann::json> FillsOf(const std::string& journal) {
  std::map<std::string, nlohmann::json> fills;
  for (const auto& l : JournalLines(journal)) {
    if (l["type"] != "fill") continue;
    EXPECT_TRUE(fills.emplace(l["client_order_id"].get<std::string>(), l).second)
        << "order " << l["client_order_id"] << " filled twice";
  }
  return fills;
}

// Runs `rltrade ARGS --quiet` in the background 20 times (fewer when a run finishes), each
// killed with SIGKILL once `journal` has grown by a random 1-20% of what it has left to
// `until` bytes (so the kills land while the session trades, however fast the machine is).
// Returns the number of kills.
int KillRepeatedly(const std::string& args, const std::string& journal, uintmax_t until,
                   uint32_t seed) {
  std::mt19937 rng(seed);
  int kills = 0;
  const auto size_now = [&]() -> uintmax_t {
    std::error_code ec;
    const auto n = fs::file_size(journal, ec);
    return ec ? 0 : n;
  };
  for (int k = 0; k < 20; ++k) {
    const uintmax_t from = size_now();
    if (from >= until) break;
    const uintmax_t target =
        from + static_cast<uintmax_t>(std::uniform_real_distribution<double>(0.01, 0.2)(rng) *
                                      static_cast<double>(until - from));
    const std::string cmd =
        rlt::testing::RltradeBinary() + " " + args + " --quiet > /dev/null 2>&1 & echo $!";
    FILE* p = popen(cmd.c_str(), "r");
    EXPECT_NE(p, nullptr);
    if (p == nullptr) break;
    long pid = 0;
    EXPECT_EQ(fscanf(p, "%ld", &pid), 1);
    pclose(p);
    int status = 0;
    bool exited = false;
    for (int wait = 0; wait < 60000 && !exited; ++wait) {
      if (size_now() >= target) break;
      exited = waitpid(static_cast<pid_t>(pid), &status, WNOHANG) == pid;
      usleep(500);
    }
    if (!exited) {
      kills += kill(static_cast<pid_t>(pid), SIGKILL) == 0;
      waitpid(static_cast<pid_t>(pid), &status, 0);
    }
  }
  return kills;
}

TEST_F(PaperCli, KilledTwentyTimesAndRestartedItTradesAsAnUninterruptedSession) {
  const std::string run = D() + "/run", feed = " --feed replay:" + D() + "/bars.csv";
  const std::string args = "paper " + run + feed + " --broker sim --start 2023-03-06 --journal ";
  const std::string straight = D() + "/straight", killed = D() + "/killed";
  ASSERT_EQ(RunRltrade(args + straight).exit_code, 0);
  const int kills = KillRepeatedly(args + killed, killed + "/journal.jsonl",
                                   fs::file_size(straight + "/journal.jsonl"), 11);
  EXPECT_GE(kills, 15) << "most runs finished before their kill";
  // A killed session that wrote its status shows as died, with the way to restart it.
  if (fs::exists(killed + "/status.json")) {
    const auto st = RunRltrade("status " + killed);
    EXPECT_NE(st.out.find("died"), std::string::npos) << st.out;
  }
  const auto last = RunRltrade(args + killed + " --quiet");
  ASSERT_EQ(last.exit_code, 0) << last.out;
  for (const char* f : {"daily_returns.csv", "trades.csv", "equity.csv"}) {
    EXPECT_EQ(ReadFile(straight + "/" + f), ReadFile(killed + "/" + f)) << f;
  }
  // Every order filled once, as in the uninterrupted session: the same ids, quantities and
  // prices; the final position and the sum of fills agree.
  const auto a = FillsOf(straight + "/journal.jsonl"), b = FillsOf(killed + "/journal.jsonl");
  ASSERT_EQ(a.size(), b.size());
  double sum_a = 0, sum_b = 0;
  for (const auto& [id, fill] : a) {
    ASSERT_TRUE(b.count(id)) << id;
    EXPECT_EQ(b.at(id)["quantity"], fill["quantity"]) << id;
    EXPECT_EQ(b.at(id)["price"], fill["price"]) << id;
    const double sign = fill["side"] == "BUY" ? 1 : -1;
    sum_a += sign * fill["quantity"].get<double>();
    sum_b += sign * b.at(id)["quantity"].get<double>();
  }
  EXPECT_EQ(sum_a, sum_b);
  size_t bars = 0, restarts = 0;
  for (const auto& l : JournalLines(killed + "/journal.jsonl")) {
    bars += l["type"] == "bar";
    restarts += l["type"] == "restart";
  }
  EXPECT_EQ(bars, rlt::testing::Lines(ReadFile(D() + "/bars.csv")).size() - 1);  // each once
  EXPECT_GE(restarts, static_cast<size_t>(kills));  // every kill left a journal to restart
}

TEST_F(PaperCli, RiskLimitsRefuseOrdersFlattenAndStopWithTheRuleJournaled) {
  // The synthetic sessions run 03:45-10:00 in the run's time zone (UTC).
  const std::string risk = D() + "/risk.toml";
  // Limits small against the orders the env sizes for a 100,000 account, so each rule acts
  // whatever the trained policy prefers.
  std::ofstream(risk) << "max_order_shares = 50\n"
                         "max_position_shares = 120\n"
                         "max_daily_loss = 400.0\n"
                         "flatten_before_close = \"09:00\"\n";
  const std::string j = D() + "/risky";
  const auto r = RunRltrade("paper " + D() + "/run --feed replay:" + D() +
                                "/bars.csv --broker sim --start 2023-03-06 --fsync session "
                                "--json --risk " +
                                risk + " --journal " + j,
                            "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto summary = nlohmann::json::parse(r.out);
  std::map<std::string, int64_t> per_rule;
  std::map<std::string, bool> halted;  // session date -> a halt was journaled
  size_t opening_fills = 0;
  for (const auto& l : JournalLines(j + "/journal.jsonl")) {
    const std::string type = l["type"];
    if (type == "risk") {
      ++per_rule[l["rule"].get<std::string>()];
      const std::string rule = l["rule"];
      if (rule == "max_daily_loss" || rule == "flatten_before_close") {
        halted[l["time"].get<std::string>().substr(0, 10)] = true;
      }
      continue;
    }
    if (type != "fill") continue;
    const std::string id = l["client_order_id"], time = l["time"];
    const double after = l["position_after"], qty = l["quantity"];
    const double before = after - (l["side"] == "BUY" ? qty : -qty);
    const bool reduces =
        std::fabs(after) < std::fabs(before) && (after == 0 || (after > 0) == (before > 0));
    if (reduces) continue;
    ++opening_fills;
    EXPECT_LE(qty, 50.0) << l.dump();
    EXPECT_LE(std::fabs(after), 120.0) << l.dump();
    EXPECT_LT(time.substr(11, 5), "09:00") << "new exposure after the flatten time: " << l.dump();
    EXPECT_FALSE(halted[time.substr(0, 10)]) << "new exposure after a halt: " << l.dump();
  }
  EXPECT_GT(opening_fills, 0u);
  EXPECT_GT(per_rule["max_order_shares"], 0);
  EXPECT_GT(per_rule["flatten_before_close"], 0);
  for (const auto& [rule, n] : per_rule) EXPECT_EQ(summary["risk_refusals"][rule], n) << rule;
  // Bad limits: the file, the line, the key and the fix.
  std::ofstream(D() + "/typo.toml") << "max_order_shares = 10\nmax_daly_loss = 5.0\n";
  auto bad = RunRltrade("paper " + D() + "/run --feed replay:" + D() + "/bars.csv --risk " + D() +
                        "/typo.toml --journal " + D() + "/typo");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.out.find("typo.toml:2: 'max_daly_loss': unknown risk limit; did you mean "
                         "'max_daily_loss'?"),
            std::string::npos)
      << bad.out;
  EXPECT_FALSE(fs::exists(D() + "/typo"));
  std::ofstream(D() + "/hours.toml") << "trading_hours = \"16:00-09:30\"\n";
  bad = RunRltrade("paper " + D() + "/run --feed replay:" + D() + "/bars.csv --risk " + D() +
                   "/hours.toml --journal " + D() + "/hours");
  EXPECT_NE(bad.out.find("hours.toml:1: 'trading_hours': expected \"HH:MM-HH:MM\""),
            std::string::npos)
      << bad.out;
}

// The index of the first line of a bar file that starts with `date` (line 0: the header).
size_t FirstLineOn(const std::string& bars, const std::string& date) {
  const std::vector<std::string> lines = rlt::testing::Lines(ReadFile(bars));
  size_t first = 0;
  while (first < lines.size() && lines[first].rfind(date, 0) != 0) ++first;
  EXPECT_LT(first, lines.size()) << "no bar on " << date;
  return first;
}

// The evaluation's outputs of the test range against a paper session's.
void ExpectTheEvaluationsOutputs(const std::string& eval_dir, const std::string& journal_dir) {
  for (const char* f : {"daily_returns.csv", "trades.csv", "equity.csv"}) {
    const std::string a = ReadFile(eval_dir + f), b = ReadFile(journal_dir + "/" + f);
    EXPECT_GT(rlt::testing::Lines(a).size(), 2u) << f;
    EXPECT_EQ(a, b) << journal_dir << ": " << f << " differs from the evaluation's";
  }
}

TEST_F(PaperCli, LiveFeedsOfTheFilesBarsTradeAsTheEvaluation) {
  const std::string run = D() + "/run", bars = D() + "/bars.csv";
  const std::string eval = run + "/eval/test/";
  // stdin: the file's lines, piped.
  const std::string piped = D() + "/piped";
  const auto a = RunRltrade("paper " + run + " --feed stdin --broker sim --start 2023-03-06 " +
                            "--fsync session --journal " + piped + " < " + bars);
  ASSERT_EQ(a.exit_code, 0) << a.out;
  ExpectTheEvaluationsOutputs(eval, piped);
  // tcp: the exchange simulator streaming the file; the in-process broker fills.
  rlt::testing::SimProcess sim("--port 0 --quiet --bars " + bars, "", D() + "/sim_feed.err");
  ASSERT_GT(sim.port(), 0);
  const std::string streamed = D() + "/streamed";
  const auto b =
      RunRltrade("paper " + run + " --feed tcp:127.0.0.1:" + std::to_string(sim.port()) +
                 " --broker sim --start 2023-03-06 --fsync session --journal " + streamed);
  ASSERT_EQ(b.exit_code, 0) << b.out;
  EXPECT_EQ(sim.Finish(), 0);
  ExpectTheEvaluationsOutputs(eval, streamed);
  size_t bars_journaled = 0;
  for (const auto& l : JournalLines(streamed + "/journal.jsonl")) {
    if (l["type"] != "bar") continue;
    EXPECT_EQ(l["seq"], bars_journaled) << l.dump();  // every bar of the stream, in order
    ++bars_journaled;
  }
  EXPECT_EQ(bars_journaled, rlt::testing::Lines(ReadFile(bars)).size() - 1);
}

TEST_F(PaperCli, ARecurrentPolicyCarriesItsStateAcrossBarsAndStartsEachSessionAfresh) {
  // An LSTM policy: its state runs through the bars of a session and is reset at the next,
  // as the evaluation's episodes do, so the replay and a pipe of the file equal the eval.
  const std::string run = D() + "/lstm_run", bars = D() + "/bars.csv";
  const auto trained =
      RunRltrade("train " + std::string(RLT_SOURCE_DIR) + "/configs/intraday_ppo.toml" +
                 " --set data.source=file --set data.file=" + bars +
                 " --set split.train=start:2023-02-17 --set split.validation=2023-02-20:2023-03-03"
                 " --set split.test=2023-03-06:end --set run.total_steps=2048 --set run.threads=1"
                 " --set env.num_envs=8 --set algo.n_steps=64 --set algo.batch_size=128"
                 " --set algo.sequence_length=8 --set algo.n_epochs=1 --set policy.recurrent=lstm"
                 " --set policy.lstm_hidden_size=8 --set policy.pi=[16] --set policy.vf=[16]"
                 " --quiet --run-dir " +
                 run);
  ASSERT_EQ(trained.exit_code, 0) << trained.out;
  ASSERT_EQ(RunRltrade("eval " + run + " --range test").exit_code, 0);
  const std::string replayed = D() + "/lstm_replay", piped = D() + "/lstm_piped";
  const auto a =
      RunRltrade("paper " + run + " --feed replay:" + bars +
                 " --broker sim --start 2023-03-06 --fsync session --journal " + replayed);
  ASSERT_EQ(a.exit_code, 0) << a.out;
  ExpectTheEvaluationsOutputs(run + "/eval/test/", replayed);
  const auto b = RunRltrade("paper " + run + " --feed stdin --broker sim --start 2023-03-06 " +
                            "--fsync session --journal " + piped + " < " + bars);
  ASSERT_EQ(b.exit_code, 0) << b.out;
  ExpectTheEvaluationsOutputs(run + "/eval/test/", piped);
}

TEST_F(PaperCli, AQuietExchangeStopsNewOrdersCancelsTheWorkingOnesAndFlattens) {
  // The simulator holds its stream 3 s after a bar of the first traded session; the
  // session's stale_feed_seconds is 1.5: it journals the rule, cancels the order it sent
  // for the next bar, and with flatten_on_stale sends a flatten that fills at that bar.
  const std::string run = D() + "/run", bars = D() + "/bars.csv";
  const size_t first = FirstLineOn(bars, "2023-03-06");
  const int64_t quiet_after = static_cast<int64_t>(first) + 39;  // the seq of bar 40 (1-based)
  std::ofstream(D() + "/stale_tcp.toml") << "stale_feed_seconds = 1.5\nflatten_on_stale = true\n";
  const std::string j = D() + "/stale_tcp";
  rlt::testing::SimProcess sim("--port 0 --quiet --lockstep --fee-rate 0.0005 --pause-after " +
                                   std::to_string(quiet_after) + " --pause-ms 3000 --bars " + bars,
                               "", j + ".err");
  const std::string at = "tcp:127.0.0.1:" + std::to_string(sim.port());
  const auto r =
      RunRltrade("paper " + run + " --start 2023-03-06 --fsync session --feed " + at +
                 " --broker " + at + " --risk " + D() + "/stale_tcp.toml --journal " + j);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(sim.Finish(), 0);
  int stale = 0;
  double position = 0;  // before the quiet bar's orders fill
  std::set<std::string> cancelled, orders_for_next;
  std::vector<nlohmann::json> next_fills;
  for (const auto& l : JournalLines(j + "/journal.jsonl")) {
    const std::string type = l["type"];
    if (type == "risk" && l["rule"] == "stale_feed") {
      ++stale;
      EXPECT_EQ(l["bar"], quiet_after) << l.dump();
    }
    if (type == "cancelled") cancelled.insert(l["client_order_id"].get<std::string>());
    if (type == "order" && l["bar"] == quiet_after + 1) {
      orders_for_next.insert(l["client_order_id"].get<std::string>());
    }
    if (type != "fill") continue;
    if (l["bar"].get<int64_t>() <= quiet_after) position = l["position_after"];
    if (l["bar"] == quiet_after + 1) next_fills.push_back(l);
  }
  EXPECT_EQ(stale, 1);
  // Every order for the next bar sent before the feed went quiet was cancelled; only the
  // stale flatten fills there.
  for (const std::string& id : orders_for_next) {
    if (id.find("-stale") == std::string::npos) {
      EXPECT_TRUE(cancelled.count(id)) << id;
    }
  }
  if (position != 0) {
    ASSERT_EQ(next_fills.size(), 1u);
    EXPECT_EQ(next_fills[0]["client_order_id"], "b" + std::to_string(quiet_after + 1) + "-stale");
    EXPECT_EQ(next_fills[0]["position_after"], 0.0);
  } else {
    EXPECT_TRUE(next_fills.empty());
  }
  const auto summary = nlohmann::json::parse(ReadFile(j + "/summary.json"));
  EXPECT_EQ(summary["risk_refusals"]["stale_feed"], 1);
}

// A tcp session's fills: (bar, signed quantity, price), in journal order; and checks that
// each order has exactly one outcome and each fill is at its bar's open.
struct TcpFill {
  int64_t bar = 0;
  double quantity = 0, price = 0;
  bool operator==(const TcpFill& o) const {
    return bar == o.bar && quantity == o.quantity && price == o.price;
  }
};
std::vector<TcpFill> CheckTcpJournal(const std::string& journal, double fee_rate) {
  std::vector<TcpFill> fills;
  std::map<int64_t, double> open;  // bar -> open price
  std::map<std::string, int> outcomes;
  std::set<std::string> orders;
  double position = 0;
  const std::vector<nlohmann::json> lines = JournalLines(journal);
  for (const auto& l : lines) {  // a fill comes before the bar it filled at
    if (l["type"] == "bar") open[l["bar"].get<int64_t>()] = l["open"].get<double>();
  }
  for (const auto& l : lines) {
    const std::string type = l["type"];
    if (type == "order") {
      EXPECT_TRUE(orders.insert(l["client_order_id"]).second) << l.dump();
    }
    if (type == "fill" || type == "reject" || type == "cancelled") {
      ++outcomes[l["client_order_id"].get<std::string>()];
    }
    if (type != "fill") continue;
    const double q = l["quantity"].get<double>() * (l["side"] == "BUY" ? 1 : -1);
    const int64_t bar = l["bar"];
    position += q;
    EXPECT_EQ(l["position_after"].get<double>(), position) << l.dump();
    EXPECT_TRUE(open.count(bar)) << l.dump();
    EXPECT_EQ(l["price"].get<double>(), open[bar]) << l.dump();
    EXPECT_NEAR(l["cost"].get<double>(), fee_rate * std::fabs(q) * l["price"].get<double>(),
                1e-9 * std::fabs(q) * l["price"].get<double>())
        << l.dump();
    fills.push_back({bar, q, l["price"].get<double>()});
  }
  for (const std::string& id : orders) EXPECT_EQ(outcomes[id], 1) << id;
  EXPECT_EQ(position, 0.0) << "the session ends flat";
  return fills;
}

TEST_F(PaperCli, TheTcpBrokerTradesAtTheSimulatorsFillsThroughRejectsAndDisconnects) {
  const std::string run = D() + "/run", bars = D() + "/bars.csv";
  const std::string args = "paper " + run + " --start 2023-03-06 --fsync session --json --journal ";
  auto session = [&](const std::string& sim_flags, const std::string& journal) {
    rlt::testing::SimProcess sim(
        "--port 0 --quiet --lockstep --fee-rate 0.0005 " + sim_flags + " --bars " + bars, "",
        journal + ".err");
    const std::string at = "tcp:127.0.0.1:" + std::to_string(sim.port());
    const auto r = RunRltrade(args + journal + " --feed " + at + " --broker " + at, "",
                              journal + ".trader.err");
    EXPECT_EQ(r.exit_code, 0) << r.out << ReadFile(journal + ".trader.err");
    EXPECT_EQ(sim.Finish(), 0);
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
  };
  const std::string clean = D() + "/tcp_clean", faulty = D() + "/tcp_faulty";
  const auto s1 = session("", clean);
  const std::vector<TcpFill> a = CheckTcpJournal(clean + "/journal.jsonl", 0.0005);
  EXPECT_GT(a.size(), 10u);
  EXPECT_EQ(s1["fills"]["strategy"], a.size());
  // Rejects are retried at once under a new id, and disconnects re-send what is unsure:
  // the same fills at the same bars.
  session("--reject-rate 0.1 --seed 3 --disconnect-every 700", faulty);
  const std::vector<TcpFill> b = CheckTcpJournal(faulty + "/journal.jsonl", 0.0005);
  EXPECT_EQ(a, b);
  size_t rejects = 0, retries = 0, reconnects = 0;
  for (const auto& l : JournalLines(faulty + "/journal.jsonl")) {
    rejects += l["type"] == "reject";
    retries += l["type"] == "order" && l.contains("retry_of");
    reconnects += l["type"] == "broker" && l["event"] == "reconnected";
  }
  EXPECT_GT(rejects, 0u);
  EXPECT_EQ(retries, rejects);
  EXPECT_GE(reconnects, 5u);
  EXPECT_EQ(ReadFile(clean + "/daily_returns.csv"), ReadFile(faulty + "/daily_returns.csv"));
}

TEST_F(PaperCli, KilledTwentyTimesAgainstTheSimulatorItFillsAsAnUninterruptedSession) {
  const std::string run = D() + "/run", bars = D() + "/bars.csv";
  const std::string sim_args = "--port 0 --quiet --lockstep --fee-rate 0.0005 --bars " + bars;
  auto args_for = [&](int port) {
    const std::string at = "tcp:127.0.0.1:" + std::to_string(port);
    return "paper " + run + " --start 2023-03-06 --fsync session --feed " + at + " --broker " + at +
           " --journal ";
  };
  const std::string straight = D() + "/tcp_straight", killed = D() + "/tcp_killed";
  {
    rlt::testing::SimProcess sim(sim_args, "", straight + ".err");
    ASSERT_EQ(RunRltrade(args_for(sim.port()) + straight + " --quiet").exit_code, 0);
    EXPECT_EQ(sim.Finish(), 0);
  }
  // One simulator for all the runs of the killed session: its account and stream go on.
  rlt::testing::SimProcess sim(sim_args, "", killed + ".err");
  // Kills only in the first 90% of the session, while the simulator still streams.
  const int kills = KillRepeatedly(args_for(sim.port()) + killed, killed + "/journal.jsonl",
                                   fs::file_size(straight + "/journal.jsonl") * 9 / 10, 17);
  EXPECT_GE(kills, 15) << "most runs finished before their kill";
  const auto last = RunRltrade(args_for(sim.port()) + killed + " --quiet");
  ASSERT_EQ(last.exit_code, 0) << last.out;
  EXPECT_EQ(sim.Finish(), 0);
  const std::vector<TcpFill> a = CheckTcpJournal(straight + "/journal.jsonl", 0.0005);
  const std::vector<TcpFill> b = CheckTcpJournal(killed + "/journal.jsonl", 0.0005);
  EXPECT_EQ(a, b) << "the killed session's fills differ from the uninterrupted one's";
  for (const char* f : {"daily_returns.csv", "trades.csv", "equity.csv"}) {
    EXPECT_EQ(ReadFile(straight + "/" + f), ReadFile(killed + "/" + f)) << f;
  }
  size_t reconciles = 0;
  for (const auto& l : JournalLines(killed + "/journal.jsonl")) {
    if (l["type"] != "reconcile") continue;
    ++reconciles;
    EXPECT_TRUE(l["match"].get<bool>()) << l.dump();
  }
  EXPECT_GE(reconciles, static_cast<size_t>(kills));
}

TEST_F(PaperCli, AStaleFeedStopsNewOrdersAndFlattens) {
  const std::string run = D() + "/run", bars = D() + "/bars.csv";
  // The gap: after the bar 40 of the first traded session.
  const size_t first = FirstLineOn(bars, "2023-03-06");
  const size_t cut = first + 40;  // lines [0, cut) before the gap (line 0: the header)
  std::ofstream(D() + "/stale.toml") << "stale_feed_seconds = 1.5\nflatten_on_stale = true\n";
  const std::string j = D() + "/stale";
  const auto r =
      RunRltrade("paper " + run + " --feed stdin --broker sim --start 2023-03-06 --fsync session " +
                     "--risk " + D() + "/stale.toml --journal " + j,
                 "( head -n " + std::to_string(cut) + " " + bars + "; sleep 3; tail -n +" +
                     std::to_string(cut + 1) + " " + bars + " ) | ");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const int64_t before = static_cast<int64_t>(cut) - 2;  // the last bar before the gap
  int stale_lines = 0;
  double position = 0;
  for (const auto& l : JournalLines(j + "/journal.jsonl")) {
    if (l["type"] == "risk" && l["rule"] == "stale_feed") {
      ++stale_lines;
      EXPECT_GE(l["bar"].get<int64_t>(), before) << l.dump();
      EXPECT_LE(l["bar"].get<int64_t>(), before + 1) << l.dump();
    }
    if (l["type"] != "fill") continue;
    const double after = l["position_after"];
    if (l["bar"] == before + 1) {  // the first bar after the gap: nothing new
      EXPECT_LE(std::fabs(after), std::fabs(position)) << l.dump();
      if (position != 0) {
        EXPECT_EQ(l["client_order_id"], "b" + std::to_string(before + 1) + "-stale");
      }
    }
    if (l["bar"].get<int64_t>() <= before) position = after;
  }
  EXPECT_GE(stale_lines, 1);
  const auto summary = nlohmann::json::parse(ReadFile(j + "/summary.json"));
  EXPECT_GE(summary["risk_refusals"]["stale_feed"].get<int>(), 1);
}

}  // namespace
