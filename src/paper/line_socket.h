// rltrade paper: TCP connections that carry lines (the broker protocol's transport).
//
// What it is: LineConnection, one TCP connection read and written as "\n"-terminated lines,
// and LineListener, a listening socket on 127.0.0.1. POSIX sockets only.
// Key decisions:
//  - Sockets are non-blocking; every wait is a poll() with a timeout, so no call blocks
//    for longer than the caller allows and a server can serve its loop from one thread.
//  - Partial reads and writes are the normal case: received bytes are buffered until a
//    "\n" arrives; Send() queues the line and writes what the kernel takes (the rest goes
//    out on later Flush() calls), SendNow() waits until the line is written.
//  - A peer that disappears is reported, never signalled: writes use MSG_NOSIGNAL (no
//    SIGPIPE), and EOF, ECONNRESET and EPIPE all turn into `closed()`.
//  - A line longer than kMaxLineBytes (protocol.h) closes the connection with an error:
//    memory stays bounded whatever the peer sends.
//  - CloseGracefully() shuts down the sending side first, so everything already queued
//    reaches the peer before it sees EOF (a plain close() with unread input would reset
//    the connection and could discard data the peer has not read yet).
// What it is not: a protocol (protocol.h) or a reconnect policy (tcp_broker.h).
// Thread safety: none; one owner per object. Move-only.
#ifndef RLT_PAPER_LINE_SOCKET_H_
#define RLT_PAPER_LINE_SOCKET_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "core/posix_io.h"
#include "core/status.h"

namespace rlt::paper {

class LineConnection {
 public:
  LineConnection() = default;
  // Takes ownership of a connected socket (made non-blocking here).
  explicit LineConnection(posix_io::Fd fd, std::string peer);
  LineConnection(LineConnection&&) = default;
  LineConnection& operator=(LineConnection&&) = default;

  // Connects to host:port (a name or numeric address), waiting at most timeout_ms.
  // Errors say what failed and what to check (is the server running? the port right?).
  static Result<LineConnection> Connect(const std::string& host, int port, int timeout_ms);

  // Queues `line` + "\n" and writes what the socket takes now. An error (and closed())
  // when the peer is gone. REQUIRES: `line` holds no "\n".
  Status Send(std::string_view line);
  // Queues `line` and waits up to timeout_ms until everything queued is written.
  Status SendNow(std::string_view line, int timeout_ms);
  // Writes queued bytes; waits up to timeout_ms (0: only what fits now) for them to go.
  Status Flush(int timeout_ms);
  bool has_pending_output() const { return !out_.empty(); }
  size_t pending_output_bytes() const { return out_.size(); }

  enum class Receive { kLine, kTimeout, kClosed };
  // The next complete line (without "\n" or "\r") in *line, waiting up to timeout_ms
  // (0: only what is already here). kClosed on EOF, a reset or an over-long line;
  // closed_reason() says which. Lines received before EOF are returned first.
  Receive ReceiveLine(int timeout_ms, std::string* line);
  // Reads whatever is available without waiting (for poll()-driven loops).
  void ReadAvailable();

  // Half-closes (no more sends; the peer sees EOF after the queued bytes; waits at most
  // 1 s for queued bytes to leave), then the owner keeps reading until the peer closes
  // (closed()) and destroys the object.
  void CloseGracefully();
  void Close();  // immediately

  int fd() const { return fd_.get(); }
  bool open() const { return fd_.valid(); }
  // The peer closed or reset the connection, or it broke (no more lines will come once
  // the buffered ones are taken).
  bool closed() const { return peer_closed_; }
  const std::string& closed_reason() const { return closed_reason_; }
  // The connection was closed because the peer sent a line above kMaxLineBytes.
  bool line_too_long() const { return line_too_long_; }
  const std::string& peer() const { return peer_; }

 private:
  bool TakeLine(std::string* line);
  void MarkClosed(std::string reason);

  posix_io::Fd fd_;
  std::string peer_;
  std::string in_;      // received bytes; [start_, size) not yet returned as lines
  size_t start_ = 0;    // where the next line begins in in_
  size_t scanned_ = 0;  // in_[start_, scanned_) holds no "\n"
  std::string out_;     // queued bytes not yet written
  bool peer_closed_ = false;
  bool write_shut_ = false;
  bool line_too_long_ = false;
  std::string closed_reason_;
};

// A listening TCP socket on 127.0.0.1 (loopback only: the simulator is not a service).
class LineListener {
 public:
  // port 0: the kernel picks a free port; port() tells which.
  static Result<LineListener> Listen(int port);
  int port() const { return port_; }
  int fd() const { return fd_.get(); }
  // A pending connection, or an empty (not open()) one when none is waiting.
  Result<LineConnection> Accept();

 private:
  posix_io::Fd fd_;
  int port_ = 0;
};

// Milliseconds on a monotonic clock.
int64_t MonotonicMs();

}  // namespace rlt::paper

#endif  // RLT_PAPER_LINE_SOCKET_H_
