// End-to-end tests of `rltrade exchange-sim` (paper/exchange_sim.h): started on port 0 it
// prints the port it got first, streams the file to a TcpBroker client, fills an order
// at the next bar's open, says why it stopped and exits 0 at the end of the file and on
// SIGTERM; it never prints the credential; bad flags and a taken port are refused.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "paper/line_socket.h"
#include "paper/tcp_broker.h"
#include "testing/exchange_sim_process.h"
#include "testing/testing.h"

namespace {

using rlt::cli::testing_util::RunCli;
using rlt::paper::BrokerEvent;
using rlt::paper::TcpBroker;
using rlt::testing::SimProcess;

constexpr int kWaitMs = 20000;

std::string WriteBars(const rlt::testing::ScratchDir& dir, int n) {
  std::string csv = "timestamp,symbol,open,high,low,close,volume\n";
  for (int i = 0; i < n; ++i) {
    char row[160];
    std::snprintf(row, sizeof row, "2024-01-02T14:%02d:00Z,SPY,%d.5,%d.75,%d.25,%d.5,100\n", 30 + i,
                  470 + i, 470 + i, 470 + i, 470 + i);
    csv += row;
  }
  rlt::testing::WriteFile(dir / "bars.csv", csv);
  return dir / "bars.csv";
}

template <typename T>
T Next(TcpBroker& broker) {
  for (int64_t until = rlt::paper::MonotonicMs() + kWaitMs; rlt::paper::MonotonicMs() < until;) {
    auto event = broker.Poll(100);
    EXPECT_TRUE(event.ok()) << event.status().ToString();
    if (!event.ok()) break;
    if (event->has_value() && (*event)->kind == BrokerEvent::Kind::kMessage) {
      if (const T* m = std::get_if<T>(&(*event)->message)) return *m;
    }
  }
  ADD_FAILURE() << "no message of the expected type";
  return T{};
}

TEST(ExchangeSimCli, OnPortZeroItPrintsThePortStreamsTheFileFillsAndExitsAtTheEnd) {
  rlt::testing::ScratchDir dir;
  const std::string bars = WriteBars(dir, 5);
  SimProcess sim("--port 0 --lockstep --fee-rate 0.001 --bars " + bars,
                 "RLTRADE_BROKER_TOKEN=tok-xyz-123", dir / "err.txt");
  ASSERT_GT(sim.port(), 0);
  rlt::paper::TcpBrokerOptions o;
  o.port = sim.port();
  ASSERT_EQ(setenv(rlt::paper::kBrokerTokenVariable, "tok-xyz-123", 1), 0);
  TcpBroker broker(o);
  const rlt::Status connected = broker.Connect();
  ASSERT_EQ(unsetenv(rlt::paper::kBrokerTokenVariable), 0);
  ASSERT_TRUE(connected.ok()) << connected.ToString();
  EXPECT_EQ(broker.hello().bars_total, 5);
  EXPECT_EQ(Next<rlt::paper::BarMessage>(broker).seq, 0);
  ASSERT_TRUE(broker.SendOrder({"c1", "SPY", rlt::paper::Side::kBuy, 2}).ok());
  ASSERT_TRUE(broker.Ready(0).ok());
  const rlt::paper::Fill fill = Next<rlt::paper::Fill>(broker);
  EXPECT_EQ(fill.price, 471.5);  // bar 1's open in the file
  EXPECT_DOUBLE_EQ(fill.fee, 0.001 * 2 * 471.5);
  for (int64_t t = 1; t < 5; ++t) {
    EXPECT_EQ(Next<rlt::paper::BarMessage>(broker).seq, t);
    ASSERT_TRUE(broker.Ready(t).ok());
  }
  EXPECT_EQ(Next<rlt::paper::End>(broker).reason, "end_of_data");
  ASSERT_TRUE(broker.RequestPositions().ok());
  const rlt::paper::Positions p = Next<rlt::paper::Positions>(broker);
  EXPECT_DOUBLE_EQ(p.cash, -2 * 471.5 - 0.001 * 2 * 471.5);
  broker.Close();
  std::string rest;
  EXPECT_EQ(sim.Finish(&rest), 0);
  EXPECT_NE(rest.find("end of " + bars + ": 5 bars sent"), std::string::npos) << rest;
  EXPECT_NE(rest.find("1 fills"), std::string::npos) << rest;
  const std::string err = rlt::testing::ReadFile(dir / "err.txt");
  EXPECT_NE(err.find("connected"), std::string::npos) << err;
  EXPECT_EQ((rest + err).find("tok-xyz"), std::string::npos);
}

TEST(ExchangeSimCli, SigtermStopsItCleanlyAndTheClientHearsWhy) {
  rlt::testing::ScratchDir dir;
  SimProcess sim("--port 0 --lockstep --quiet --bars " + WriteBars(dir, 5), "", dir / "err.txt");
  ASSERT_GT(sim.port(), 0);
  rlt::paper::TcpBrokerOptions o;
  o.port = sim.port();
  TcpBroker broker(o);
  ASSERT_TRUE(broker.Connect().ok());
  EXPECT_EQ(Next<rlt::paper::BarMessage>(broker).seq, 0);
  ASSERT_EQ(kill(sim.pid(), SIGTERM), 0);
  EXPECT_EQ(Next<rlt::paper::End>(broker).reason, "shutdown");
  broker.Close();
  std::string rest;
  EXPECT_EQ(sim.Finish(&rest), 0);
  EXPECT_NE(rest.find("stopped by signal 15: 1 bars sent"), std::string::npos) << rest;
}

TEST(ExchangeSimCli, BadFlagsABadFileAndATakenPortAreRefused) {
  rlt::testing::ScratchDir dir;
  const std::string bars = WriteBars(dir, 3);
  auto r = RunCli("exchange-sim --port 0 --reject-rate 2 --bars " + bars);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--reject-rate"), std::string::npos) << r.out;
  r = RunCli("exchange-sim --port 70000 --bars " + bars);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  rlt::testing::WriteFile(dir / "broken.csv",
                          "timestamp,open,high,low,close,volume\nx,1,1,1,1,1\n");
  r = RunCli("exchange-sim --port 0 --bars " + (dir / "broken.csv"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("broken.csv:2"), std::string::npos) << r.out;
  // A port another program holds (here: a listener of this test on a port the kernel chose).
  auto taken = rlt::paper::LineListener::Listen(0);
  ASSERT_TRUE(taken.ok());
  r = RunCli("exchange-sim --bars " + bars + " --port " + std::to_string(taken->port()));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("another program has the port"), std::string::npos) << r.out;
}

}  // namespace
