// Tests of the line transport (paper/line_socket.h): lines split across writes are
// reassembled, a burst of lines arrives whole and in order, an over-long line closes the
// connection instead of growing memory, a vanished peer is an error and not SIGPIPE, and
// connecting to a closed port says what to check.
#include "paper/line_socket.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <string>
#include <thread>

#include "core/status_test_util.h"
#include "paper/protocol.h"

namespace rlt::paper {
namespace {

constexpr int kWaitMs = 10000;

// A connected pair over loopback: (client side, server side).
struct Pair {
  LineConnection client, server;
};

Pair Connected() {
  Pair p;
  auto listener = LineListener::Listen(0);
  EXPECT_TRUE(listener.ok()) << listener.status().ToString();
  auto client = LineConnection::Connect("127.0.0.1", listener->port(), 2000);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  p.client = std::move(client).value();
  for (int64_t until = MonotonicMs() + kWaitMs; !p.server.open() && MonotonicMs() < until;) {
    auto server = listener->Accept();
    EXPECT_TRUE(server.ok());
    if (server.ok()) p.server = std::move(server).value();
  }
  EXPECT_TRUE(p.server.open());
  return p;
}

void SendRaw(int fd, const std::string& bytes) {
  ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

TEST(LineSocket, LinesSplitAcrossWritesAreReassembled) {
  Pair p = Connected();
  std::string line;
  SendRaw(p.client.fd(), "{\"type\":");
  EXPECT_EQ(p.server.ReceiveLine(20, &line), LineConnection::Receive::kTimeout);
  SendRaw(p.client.fd(), "\"heartbeat\"}\r\nsecond\nthi");
  ASSERT_EQ(p.server.ReceiveLine(kWaitMs, &line), LineConnection::Receive::kLine);
  EXPECT_EQ(line, "{\"type\":\"heartbeat\"}");
  ASSERT_EQ(p.server.ReceiveLine(kWaitMs, &line), LineConnection::Receive::kLine);
  EXPECT_EQ(line, "second");
  SendRaw(p.client.fd(), "rd\n");
  ASSERT_EQ(p.server.ReceiveLine(kWaitMs, &line), LineConnection::Receive::kLine);
  EXPECT_EQ(line, "third");
  // Lines sent before a close are delivered before the close is reported.
  ASSERT_TRUE(p.client.SendNow("last", 1000).ok());
  p.client.Close();
  ASSERT_EQ(p.server.ReceiveLine(kWaitMs, &line), LineConnection::Receive::kLine);
  EXPECT_EQ(line, "last");
  EXPECT_EQ(p.server.ReceiveLine(kWaitMs, &line), LineConnection::Receive::kClosed);
  EXPECT_NE(p.server.closed_reason().find("peer closed"), std::string::npos);
}

TEST(LineSocket, ABurstLargerThanTheSocketBuffersArrivesWholeAndInOrder) {
  Pair p = Connected();
  constexpr int kLines = 200000;  // ~6 MB: many partial writes and reads
  std::thread writer([&] {
    for (int i = 0; i < kLines; ++i) {
      ASSERT_TRUE(p.client.Send("line number " + std::to_string(i) + " of the burst").ok());
    }
    ASSERT_TRUE(p.client.Flush(kWaitMs).ok());
    EXPECT_FALSE(p.client.has_pending_output());
  });
  std::string line;
  int received = 0;
  while (received < kLines &&
         p.server.ReceiveLine(kWaitMs, &line) == LineConnection::Receive::kLine) {
    ASSERT_EQ(line, "line number " + std::to_string(received) + " of the burst");
    ++received;
  }
  writer.join();
  EXPECT_EQ(received, kLines);
}

TEST(LineSocket, AnOverLongLineClosesTheConnection) {
  Pair p = Connected();
  ASSERT_TRUE(p.client.SendNow("short", 1000).ok());
  // Then one line without an end, longer than the limit, written raw from a thread.
  std::thread raw([&] {
    const std::string chunk(64 << 10, 'y');
    for (size_t sent = 0; sent <= kMaxLineBytes + chunk.size(); sent += chunk.size()) {
      if (send(p.client.fd(), chunk.data(), chunk.size(), MSG_NOSIGNAL) < 0) break;
    }
  });
  std::string line;
  ASSERT_EQ(p.server.ReceiveLine(kWaitMs, &line), LineConnection::Receive::kLine);
  EXPECT_EQ(line, "short");
  EXPECT_EQ(p.server.ReceiveLine(kWaitMs, &line), LineConnection::Receive::kClosed);
  EXPECT_NE(p.server.closed_reason().find("longer than"), std::string::npos)
      << p.server.closed_reason();
  p.server.Close();  // the writer's next send fails (EPIPE/ECONNRESET), without SIGPIPE
  raw.join();
}

TEST(LineSocket, AVanishedPeerIsAnErrorNotSigpipe) {
  Pair p = Connected();
  p.server.Close();
  Status s = Status::Ok();
  for (int i = 0; i < 1000 && s.ok(); ++i) s = p.client.SendNow(std::string(1000, 'z'), 1000);
  EXPECT_TRUE(IsError(s, Status::Code::kIoError, "send failed"));
  EXPECT_TRUE(p.client.closed());
  std::string line;
  EXPECT_EQ(p.client.ReceiveLine(100, &line), LineConnection::Receive::kClosed);
}

TEST(LineSocket, ConnectingToAClosedPortSaysWhatToCheck) {
  int port = 0;
  {
    auto listener = LineListener::Listen(0);
    ASSERT_TRUE(listener.ok());
    port = listener->port();
  }
  auto conn = LineConnection::Connect("127.0.0.1", port, 1000);
  ASSERT_TRUE(
      IsError(conn, Status::Code::kIoError, "cannot connect to 127.0.0.1:" + std::to_string(port)));
  EXPECT_NE(conn.status().message().find("exchange-sim"), std::string::npos);
  EXPECT_TRUE(IsError(LineConnection::Connect("no-such-host.invalid", 80, 1000),
                      Status::Code::kIoError, "cannot resolve host 'no-such-host.invalid'"));
  EXPECT_TRUE(IsError(LineListener::Listen(70000), Status::Code::kInvalidArgument,
                      "--port 70000 is not a TCP port"));
}

}  // namespace
}  // namespace rlt::paper
