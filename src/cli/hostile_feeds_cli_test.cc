// End-to-end tests of what feeds, brokers, bar files and JSON lines may send rltrade:
// each runs the command a hostile tester ran and asserts the exit code, a message
// fragment, and that nothing is left behind.
//  - Limits: a price below the floor (1e-300) or above the ceiling is refused on every
//    path bars enter (bar file, replay, stdin, exchange-sim); exchange-sim refuses a
//    quantity of 1e308 and never sends null for a number.
//  - Nesting: a line of 400,000 brackets is an error, not a SIGSEGV, for exchange-sim,
//    `rltrade paper` on a tcp feed and `rltrade status`.
//  - Memory: a client flooding exchange-sim with rejected orders does not grow it.
//  - Messages: an over-long line from a server names the limit; `--speed 0` prints sane
//    bounds; `--bars /etc/shadow` does not echo the file.
//  - Secrets: no error path prints the broker token, whether the input is
//    /proc/self/environ, a copy of it, or a failed authentication.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "cli/cli_test_util.h"
#include "paper/line_socket.h"
#include "paper/protocol.h"
#include "testing/exchange_sim_process.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;
using rlt::cli::testing_util::CmdResult;
using rlt::cli::testing_util::RunCli;
using rlt::paper::LineConnection;
using rlt::paper::LineListener;
using rlt::paper::MonotonicMs;
using rlt::testing::SimProcess;

constexpr int kWaitMs = 20000;
constexpr const char* kToken = "hostile-feeds-t0ken-5e1f9a";
const std::string kWithToken = std::string("RLTRADE_BROKER_TOKEN=") + kToken;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `n` one-minute bars of SYN0 on 2023-03-06 (a day of the test range below).
std::string BarsCsv(int n, const std::string& first_open = "100") {
  std::string csv = "timestamp,symbol,open,high,low,close,volume\n";
  for (int i = 0; i < n; ++i) {
    char row[200];
    std::snprintf(row, sizeof row, "2023-03-06T14:%02d:00Z,SYN0,%s,%d.5,%d.25,%d.25,100\n", 30 + i,
                  i == 0 ? first_open.c_str() : std::to_string(100 + i).c_str(), 101 + i, 99 + i,
                  100 + i);
    csv += row;
  }
  return csv;
}

// VmHWM (the peak resident set) of a process, in kB; 0 when unknown.
int64_t PeakKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return 0;
}

// A broker in this process that accepts one connection, reads its hello and answers with
// `reply` (lines, sent as they are: they may be anything).
class FakeBroker {
 public:
  explicit FakeBroker(std::vector<std::string> reply) {
    auto listener = LineListener::Listen(0);
    EXPECT_TRUE(listener.ok());
    listener_ = std::move(listener).value();
    thread_ = std::thread([this, reply = std::move(reply)] {
      for (int64_t until = MonotonicMs() + kWaitMs; MonotonicMs() < until && !stop_;) {
        auto conn = listener_.Accept();
        if (!conn.ok() || !conn->open()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          continue;
        }
        std::string hello;
        if (conn->ReceiveLine(5000, &hello) != LineConnection::Receive::kLine) return;
        got_hello_ = hello;
        for (const std::string& line : reply) {
          if (!conn->SendNow(line, 5000).ok()) return;
        }
        // Hold the connection until the client goes.
        std::string rest;
        while (!stop_ && conn->ReceiveLine(100, &rest) != LineConnection::Receive::kClosed) {
        }
        return;
      }
    });
  }
  ~FakeBroker() {
    stop_ = true;
    thread_.join();
  }
  int port() const { return listener_.port(); }
  const std::string& got_hello() const { return got_hello_; }

 private:
  LineListener listener_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::string got_hello_;
};

std::string ServerHelloLine() {
  return rlt::paper::ToLine(rlt::paper::ServerMessage{
      rlt::paper::ServerHello{"fake", 1, "s1", "default", {"SYN0"}, 10, 0, 1000, false}});
}

class HostileFeeds : public ::testing::Test {
 protected:
  // One tiny trained run (synthetic bars of SYN0 from a file) for paper and eval.
  static void SetUpTestSuite() {
    dir_ = new rlt::testing::ScratchDir("rlt_hostile_feeds_");
    const std::string d = dir_->path();
    ASSERT_EQ(RunCli("data synth --days 30 --out " + d + "/bars.csv").exit_code, 0);
    const CmdResult trained =
        RunCli("train " + std::string(RLT_SOURCE_DIR) + "/configs/intraday_ppo.toml" +
               " --set data.source=file --set data.file=" + d + "/bars.csv" +
               " --set split.train=start:2023-01-27 --set split.validation=2023-01-30:2023-02-03"
               " --set split.test=2023-02-06:end --set run.total_steps=256 --set run.threads=1"
               " --set env.num_envs=2 --set algo.n_steps=64 --set algo.batch_size=64"
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
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (fs::path(scratch_.path()) / name).string();
    rlt::testing::WriteFile(path, text);
    return path;
  }
  std::string Path(const std::string& name) const {
    return (fs::path(scratch_.path()) / name).string();
  }
  // The journal directory a paper command was given: it must not exist afterwards.
  std::string Journal() const { return Path("journal"); }

  rlt::testing::ScratchDir scratch_{"rlt_hostile_feeds_case_"};
  static rlt::testing::ScratchDir* dir_;
};

rlt::testing::ScratchDir* HostileFeeds::dir_ = nullptr;

// ---- limits ----

TEST_F(HostileFeeds, APriceBelowTheFloorIsRefusedOnEveryFeed) {
  const std::string tiny = Write("tiny.csv", BarsCsv(5, "1e-300"));
  const CmdResult check = RunCli("data check " + tiny);
  EXPECT_EQ(check.exit_code, 1) << check.out;
  EXPECT_TRUE(Has(check.out, "open=1e-300 is below the floor of 1e-08")) << check.out;

  const CmdResult sim = RunCli("exchange-sim --port 0 --bars " + tiny);
  EXPECT_EQ(sim.exit_code, 1) << sim.out;
  EXPECT_TRUE(Has(sim.out, "below the floor of 1e-08")) << sim.out;
  EXPECT_FALSE(Has(sim.out, "listening on")) << sim.out;

  const CmdResult replay =
      RunCli("paper " + Run() + " --feed replay:" + tiny + " --journal " + Journal());
  EXPECT_EQ(replay.exit_code, 1) << replay.out;
  EXPECT_TRUE(Has(replay.out, "below the floor of 1e-08")) << replay.out;
  EXPECT_FALSE(fs::exists(Journal()));

  // stdin: the line is skipped and reported with its line number; the session goes on.
  const std::string lines = Write("lines.csv", BarsCsv(3, "1e-300"));
  const CmdResult in =
      RunCli("paper " + Run() + " --feed stdin --journal " + Journal(), "<" + lines);
  EXPECT_TRUE(Has(in.out, "stdin:2: column 'open': absurd value: open=1e-300 is below the floor"))
      << in.out;
  EXPECT_NE(in.exit_code, -1) << in.out;
  EXPECT_LT(in.exit_code, 128) << in.out;
}

TEST_F(HostileFeeds, ABarOutsideTheLimitsFromATcpFeedIsNotTraded) {
  const std::string bad_bar =
      R"({"type":"bar","seq":0,"symbol":"SYN0","time":"2023-03-06T14:30:00Z",)"
      R"("epoch":1678113000,"open":1e300,"high":1e308,"low":1e-300,"close":1,"volume":1})";
  FakeBroker broker(
      {ServerHelloLine(), bad_bar, R"({"type":"end","reason":"end_of_data","bars":1})"});
  const CmdResult r =
      RunCli("paper " + Run() + " --feed tcp:127.0.0.1:" + std::to_string(broker.port()) +
             " --journal " + Journal());
  EXPECT_LT(r.exit_code, 128) << r.out;
  EXPECT_NE(r.exit_code, -1) << r.out;
  EXPECT_TRUE(Has(r.out, "bar: field 'open' must be a price in [1e-08, 1e+12], got 1e+300"))
      << r.out;
}

TEST_F(HostileFeeds, ExchangeSimRefusesAQuantityOf1e308AndNeverSendsNull) {
  const std::string bars = Write("bars.csv", BarsCsv(5));
  SimProcess sim("--port 0 --lockstep --bars " + bars, "X=1", Path("sim.err"));
  ASSERT_GT(sim.port(), 0);
  auto conn = LineConnection::Connect("127.0.0.1", sim.port(), 2000);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  ASSERT_TRUE(
      conn->SendNow(R"({"type":"hello","client":"h","protocol":1,"account":"a"})", 2000).ok());
  for (const char* q : {"1e308", "1e-300"}) {
    ASSERT_TRUE(conn->SendNow(std::string(R"({"type":"new_order","client_order_id":"q)") + q +
                                  R"(","symbol":"SYN0","side":"buy","quantity":)" + q +
                                  R"(,"order_type":"market"})",
                              2000)
                    .ok());
  }
  ASSERT_TRUE(conn->SendNow(R"({"type":"positions"})", 2000).ok());
  std::string all, line;
  int errors = 0;
  for (int64_t until = MonotonicMs() + kWaitMs; MonotonicMs() < until;) {
    if (conn->ReceiveLine(100, &line) != LineConnection::Receive::kLine) continue;
    all += line + "\n";
    if (Has(line, "\"type\":\"error\"")) ++errors;
    if (Has(line, "\"type\":\"positions\"")) break;
  }
  EXPECT_EQ(errors, 2) << all;
  EXPECT_TRUE(Has(all, "field 'quantity' must be a quantity in [1e-08, 1e+12], got 1e+308")) << all;
  EXPECT_FALSE(Has(all, "null")) << all;
  EXPECT_FALSE(Has(all, "\"type\":\"fill\"")) << all;
  ASSERT_EQ(kill(sim.pid(), SIGTERM), 0);
  EXPECT_EQ(sim.Finish(), 0);
}

// ---- nesting ----

TEST_F(HostileFeeds, ADeeplyNestedLineIsAnErrorForExchangeSimNotACrash) {
  const std::string bars = Write("bars.csv", BarsCsv(5));
  SimProcess sim("--port 0 --lockstep --bars " + bars, "X=1", Path("sim.err"));
  ASSERT_GT(sim.port(), 0);
  auto conn = LineConnection::Connect("127.0.0.1", sim.port(), 2000);
  ASSERT_TRUE(conn.ok());
  const std::string deep = std::string(400000, '[') + std::string(400000, ']');
  ASSERT_TRUE(conn->SendNow(deep, 5000).ok());
  ASSERT_TRUE(
      conn->SendNow(R"({"type":"hello","client":"h","protocol":1,"account":"a"})", 2000).ok());
  ASSERT_TRUE(conn->SendNow(R"({"type":"positions"})", 2000).ok());
  std::string all, line;
  for (int64_t until = MonotonicMs() + kWaitMs; MonotonicMs() < until;) {
    if (conn->ReceiveLine(100, &line) != LineConnection::Receive::kLine) continue;
    all += line + "\n";
    if (Has(line, "\"type\":\"positions\"")) break;
  }
  EXPECT_TRUE(Has(all, "nested more than 128 levels")) << all.substr(0, 2000);
  EXPECT_TRUE(Has(all, "\"type\":\"positions\"")) << all.substr(0, 2000);
  ASSERT_EQ(kill(sim.pid(), SIGTERM), 0);
  EXPECT_EQ(sim.Finish(), 0);
}

TEST_F(HostileFeeds, ADeeplyNestedLineFromTheBrokerIsAnErrorForPaperNotACrash) {
  const std::string deep = "{\"type\":\"error\",\"message\":" + std::string(400000, '[') +
                           std::string(400000, ']') + "}";
  FakeBroker broker({ServerHelloLine(), deep, R"({"type":"end","reason":"end_of_data","bars":0})"});
  const CmdResult r =
      RunCli("paper " + Run() + " --feed tcp:127.0.0.1:" + std::to_string(broker.port()) +
             " --journal " + Journal());
  EXPECT_LT(r.exit_code, 128) << r.out.substr(0, 2000);
  EXPECT_NE(r.exit_code, -1);
  EXPECT_TRUE(Has(r.out, "nested more than 128 levels")) << r.out.substr(0, 2000);
  EXPECT_LT(r.out.size(), 20000u);
}

TEST_F(HostileFeeds, ADeeplyNestedStatusJsonIsAnErrorForStatusNotACrash) {
  fs::create_directories(Path("run"));
  Write("run/status.json",
        "{\"state\":" + std::string(400000, '[') + std::string(400000, ']') + "}");
  for (const std::string flags : {"", " --json"}) {
    const CmdResult r = RunCli("status " + Path("run") + flags);
    EXPECT_EQ(r.exit_code, 1) << r.out.substr(0, 2000);
    EXPECT_TRUE(Has(r.out, "status.json: JSON nested more than 128 levels deep"))
        << r.out.substr(0, 2000);
  }
}

// ---- memory ----

// One client once grew exchange-sim from 163 MB to 830 MB in 15 s with rejected orders.
TEST_F(HostileFeeds, AFloodOfRejectedOrdersDoesNotGrowExchangeSim) {
  const std::string bars = Write("bars.csv", BarsCsv(5));
  // Under AddressSanitizer (make test-sanitize) freed memory waits in a quarantine of
  // 256 MB before it is reused, which reads as growth: the simulator runs without one.
  std::string env = "X=1";
#if defined(__SANITIZE_ADDRESS__)
  const char* asan = std::getenv("ASAN_OPTIONS");
  env = std::string("ASAN_OPTIONS=") + (asan != nullptr ? asan : "") + ":quarantine_size_mb=0";
#endif
  SimProcess sim("--port 0 --lockstep --reject-rate 1 --quiet --bars " + bars, env,
                 Path("sim.err"));
  ASSERT_GT(sim.port(), 0);
  auto conn = LineConnection::Connect("127.0.0.1", sim.port(), 2000);
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE(
      conn->SendNow(R"({"type":"hello","client":"h","protocol":1,"account":"a"})", 2000).ok());
  std::string line;
  auto read_rejects = [&](int n) {
    int got = 0;
    for (int64_t until = MonotonicMs() + kWaitMs; got < n && MonotonicMs() < until;) {
      if (conn->ReceiveLine(100, &line) == LineConnection::Receive::kLine &&
          Has(line, "\"type\":\"reject\"")) {
        ++got;
      }
    }
    return got;
  };
  auto flood = [&](int from, int n) {
    for (int i = from; i < from + n; i += 1000) {
      for (int k = i; k < i + 1000; ++k) {
        std::string order = R"({"type":"new_order","client_order_id":"flood-order-)";
        order += std::to_string(k);
        order += R"(","symbol":"SYN0","side":"buy","quantity":1,"order_type":"market"})";
        ASSERT_TRUE(conn->Send(order).ok());
      }
      ASSERT_TRUE(conn->Flush(5000).ok());
      ASSERT_EQ(read_rejects(1000), 1000);
    }
  };
  flood(0, 20000);  // past the window of rejected orders
  const int64_t after_window = PeakKb(sim.pid());
  flood(20000, 100000);
  const int64_t after_flood = PeakKb(sim.pid());
  ASSERT_GT(after_window, 0);
  // 100,000 more rejected orders kept would take ~50 MB; the window keeps 10,000.
  EXPECT_LT(after_flood - after_window, 8 * 1024)
      << "peak RSS " << after_window << " kB -> " << after_flood << " kB";
  ASSERT_EQ(kill(sim.pid(), SIGTERM), 0);
  std::string rest;
  EXPECT_EQ(sim.Finish(&rest), 0);
  EXPECT_TRUE(Has(rest, "120000 orders")) << rest;
}

// ---- messages ----

TEST_F(HostileFeeds, AThreeMegabyteLineIsReportedWithTheLimitNotAsARefusedConnection) {
  FakeBroker broker({std::string(3 << 20, 'x')});
  const CmdResult r =
      RunCli("paper " + Run() + " --feed tcp:127.0.0.1:" + std::to_string(broker.port()) +
             " --journal " + Journal());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "longer than the protocol's limit of 1048576 bytes")) << r.out;
  EXPECT_FALSE(Has(r.out, "refused")) << r.out;
  EXPECT_FALSE(fs::exists(Journal()));
}

TEST_F(HostileFeeds, ExchangeSimDoesNotEchoAFileThatIsNoBarFile) {
  const CmdResult shadow = RunCli("exchange-sim --port 0 --bars /etc/shadow");
  EXPECT_EQ(shadow.exit_code, 1) << shadow.out;
  EXPECT_FALSE(Has(shadow.out, "root:")) << shadow.out;
  const std::string secret = Write("secret.txt", "root:$6$s4lt$h4sh:19000:0:99999:7:::\n");
  const CmdResult r = RunCli("exchange-sim --port 0 --bars " + secret);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "does not look like a CSV header and is not shown")) << r.out;
  EXPECT_FALSE(Has(r.out, "h4sh")) << r.out;
}

TEST_F(HostileFeeds, ExchangeSimSpeedBoundsAreSane) {
  const std::string bars = Write("bars.csv", BarsCsv(3));
  for (const char* speed : {"0", "-1", "1e-300", "1e300", "x"}) {
    const CmdResult r = RunCli("exchange-sim --port 0 --bars " + bars + " --speed " + speed);
    EXPECT_EQ(r.exit_code, 2) << speed << ": " << r.out;
    EXPECT_TRUE(Has(r.out, "must be a number in [0.001, 1000000]")) << r.out;
    EXPECT_LT(r.out.size(), 600u) << r.out;
    EXPECT_FALSE(Has(r.out, "0000000000000000")) << r.out;
  }
}

// ---- secrets ----

TEST_F(HostileFeeds, NoErrorPathPrintsTheBrokerToken) {
  // A regular file holding an environment (NUL-separated, as /proc/self/environ is).
  const std::string env_copy =
      Write("env.csv", std::string("HOME=/root\0RLTRADE_BROKER_TOKEN=", 32) + kToken +
                           std::string("\0date,close\0PATH=/bin\0", 22));
  const std::string env_lines =
      Write("env_lines.csv", std::string("date,close\nRLTRADE_BROKER_TOKEN=") + kToken + ",1\n");
  const std::string commands[] = {
      "exchange-sim --port 0 --bars /proc/self/environ",
      "exchange-sim --port 0 --bars " + env_copy,
      "exchange-sim --port 0 --bars " + env_lines,
      "paper " + Run() + " --feed replay:/proc/self/environ --journal " + Journal(),
      "paper " + Run() + " --feed replay:" + env_copy + " --journal " + Journal(),
      "eval " + Run() + " --data /proc/self/environ",
      "eval " + Run() + " --data " + env_copy,
      "data check /proc/self/environ",
      "data check " + env_copy,
      "data check " + env_lines,
  };
  for (const std::string& command : commands) {
    const CmdResult r = RunCli(command, kWithToken);
    EXPECT_EQ(r.exit_code, 1) << command << "\n" << r.out;
    // Neither the token nor the start of it (a quote cut short).
    EXPECT_FALSE(Has(r.out, std::string(kToken).substr(0, 10))) << command << "\n" << r.out;
  }
  EXPECT_FALSE(fs::exists(Journal()));
  // /proc files are refused unread, whichever reader meets them.
  const CmdResult proc = RunCli("data check /proc/self/environ", kWithToken);
  EXPECT_TRUE(Has(proc.out, "kernel pseudo-file")) << proc.out;

  // The protocol's authentication failure: neither the server's token nor the client's.
  const std::string bars = Write("bars.csv", BarsCsv(3));
  SimProcess sim("--port 0 --bars " + bars, kWithToken, Path("sim.err"));
  ASSERT_GT(sim.port(), 0);
  const std::string other = "client-side-t0ken-77aa";
  const CmdResult auth =
      RunCli("paper " + Run() + " --feed tcp:127.0.0.1:" + std::to_string(sim.port()) +
                 " --journal " + Journal(),
             "RLTRADE_BROKER_TOKEN=" + other);
  EXPECT_EQ(auth.exit_code, 1) << auth.out;
  EXPECT_TRUE(Has(auth.out, "authentication failed")) << auth.out;
  EXPECT_FALSE(Has(auth.out, kToken)) << auth.out;
  EXPECT_FALSE(Has(auth.out, other)) << auth.out;
  EXPECT_FALSE(fs::exists(Journal()));
  ASSERT_EQ(kill(sim.pid(), SIGTERM), 0);
  std::string rest;
  EXPECT_EQ(sim.Finish(&rest), 0);
  const std::string log = rlt::testing::ReadFile(Path("sim.err"));
  EXPECT_TRUE(Has(log, "authentication failed")) << log;
  EXPECT_FALSE(Has(log + rest, kToken)) << log;
  EXPECT_FALSE(Has(log + rest, other)) << log;
}

}  // namespace
