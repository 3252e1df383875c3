// rltrade paper: TCP line connections and the loopback listener (line_socket.h).
//
// Key decisions: non-blocking sockets with poll() for every wait; MSG_NOSIGNAL on every
// send; TCP_NODELAY, since protocol lines are small and latency matters more than
// packet count; SO_REUSEADDR on the listener so a restarted simulator can take its port
// again at once.
#include "paper/line_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "paper/protocol.h"

namespace rlt::paper {
namespace {

void MakeNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  if (flags >= 0) (void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  const int one = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// poll() one descriptor for `events`, at most timeout_ms; retries EINTR with what is left.
int PollOne(int fd, short events, int timeout_ms) {
  const int64_t deadline = MonotonicMs() + std::max(timeout_ms, 0);
  while (true) {
    pollfd p{fd, events, 0};
    const int left = static_cast<int>(std::max<int64_t>(deadline - MonotonicMs(), 0));
    const int n = poll(&p, 1, left);
    if (n >= 0) return n;
    if (errno != EINTR) return -1;
  }
}

std::string Endpoint(const std::string& host, int port) {
  return host + ":" + std::to_string(port);
}

// One connect attempt to `ai`, waiting at most timeout_ms. Returns the socket or -1 with
// errno set.
int ConnectOne(const addrinfo* ai, int timeout_ms) {
  const int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) return -1;
  MakeNonBlocking(fd);
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) return fd;
  if (errno != EINPROGRESS) {
    const int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  if (PollOne(fd, POLLOUT, timeout_ms) <= 0) {
    close(fd);
    errno = ETIMEDOUT;
    return -1;
  }
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    close(fd);
    errno = err != 0 ? err : EIO;
    return -1;
  }
  return fd;
}

}  // namespace

int64_t MonotonicMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

LineConnection::LineConnection(posix_io::Fd fd, std::string peer)
    : fd_(std::move(fd)), peer_(std::move(peer)) {
  RLT_CHECK(fd_.valid());
  MakeNonBlocking(fd_.get());
}

Result<LineConnection> LineConnection::Connect(const std::string& host, int port, int timeout_ms) {
  if (port <= 0 || port > 65535) {
    return Status::InvalidArgument("port " + std::to_string(port) +
                                   " is not a TCP port: use 1-65535");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int gai = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (gai != 0) {
    return Status::IoError("cannot resolve host '" + host + "': " + gai_strerror(gai) +
                           " (check the HOST of tcp:HOST:PORT)");
  }
  int fd = -1, err = 0;
  for (const addrinfo* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ConnectOne(ai, timeout_ms);
    if (fd < 0) err = errno;
  }
  freeaddrinfo(found);
  if (fd < 0) {
    return Status::IoError("cannot connect to " + Endpoint(host, port) + ": " + std::strerror(err) +
                           " (is the broker or `rltrade exchange-sim` running on that port?)");
  }
  return LineConnection(posix_io::Fd(fd), Endpoint(host, port));
}

void LineConnection::MarkClosed(std::string reason) {
  if (!peer_closed_) closed_reason_ = std::move(reason);
  peer_closed_ = true;
}

Status LineConnection::Send(std::string_view line) {
  RLT_CHECK(line.find('\n') == std::string_view::npos);
  if (!fd_.valid() || peer_closed_ || write_shut_) {
    return Status::IoError("connection to " + peer_ + " is closed" +
                           (closed_reason_.empty() ? "" : " (" + closed_reason_ + ")"));
  }
  out_.append(line);
  out_.push_back('\n');
  return Flush(0);
}

Status LineConnection::SendNow(std::string_view line, int timeout_ms) {
  RLT_RETURN_IF_ERROR(Send(line));
  return Flush(timeout_ms);
}

Status LineConnection::Flush(int timeout_ms) {
  const int64_t deadline = MonotonicMs() + std::max(timeout_ms, 0);
  while (!out_.empty()) {
    if (!fd_.valid() || peer_closed_) {
      return Status::IoError("connection to " + peer_ + " closed with " +
                             std::to_string(out_.size()) + " bytes unsent (" + closed_reason_ +
                             ")");
    }
    const ssize_t n = send(fd_.get(), out_.data(), out_.size(), MSG_NOSIGNAL);
    if (n > 0) {
      out_.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const int64_t left = deadline - MonotonicMs();
      if (left <= 0) return Status::Ok();  // the rest goes out on a later Flush()
      if (PollOne(fd_.get(), POLLOUT, static_cast<int>(left)) < 0) {
        MarkClosed(std::string("poll failed: ") + std::strerror(errno));
      }
      continue;
    }
    MarkClosed(std::string("send failed: ") + std::strerror(errno));
  }
  return Status::Ok();
}

void LineConnection::ReadAvailable() {
  char buf[64 * 1024];
  while (fd_.valid() && !peer_closed_) {
    if (in_.size() - start_ > kMaxLineBytes) {
      // Enough is buffered: a line must end in it, and the caller takes lines first.
      if (in_.find('\n', scanned_) == std::string::npos) {
        MarkClosed("the peer sent a line longer than the protocol's limit of " +
                   std::to_string(kMaxLineBytes) + " bytes (1 MiB)");
        line_too_long_ = true;
        in_.clear();
        start_ = scanned_ = 0;
      }
      return;
    }
    const ssize_t n = recv(fd_.get(), buf, sizeof buf, 0);
    if (n > 0) {
      in_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) {
      MarkClosed("the peer closed the connection");
    } else if (errno == EINTR) {
      continue;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      MarkClosed(std::string("receive failed: ") + std::strerror(errno));
    }
    return;
  }
}

bool LineConnection::TakeLine(std::string* line) {
  const size_t nl = in_.find('\n', scanned_);
  if (nl == std::string::npos) {
    scanned_ = in_.size();
    return false;
  }
  size_t end = nl;
  if (end > start_ && in_[end - 1] == '\r') --end;
  line->assign(in_, start_, end - start_);
  start_ = scanned_ = nl + 1;
  // Taken lines are dropped from the front now and then, not once per line (a burst of
  // thousands of lines would otherwise be copied thousands of times).
  if (start_ == in_.size()) {
    in_.clear();
    start_ = scanned_ = 0;
  } else if (start_ > (size_t{64} << 10) && start_ > in_.size() / 2) {
    in_.erase(0, start_);
    scanned_ -= start_;
    start_ = 0;
  }
  return true;
}

LineConnection::Receive LineConnection::ReceiveLine(int timeout_ms, std::string* line) {
  const int64_t deadline = MonotonicMs() + std::max(timeout_ms, 0);
  while (true) {
    if (TakeLine(line)) return Receive::kLine;
    ReadAvailable();
    if (TakeLine(line)) return Receive::kLine;
    if (peer_closed_ || !fd_.valid()) return Receive::kClosed;
    const int64_t left = deadline - MonotonicMs();
    if (left <= 0) return Receive::kTimeout;
    if (PollOne(fd_.get(), POLLIN, static_cast<int>(left)) < 0) {
      MarkClosed(std::string("poll failed: ") + std::strerror(errno));
    }
  }
}

void LineConnection::CloseGracefully() {
  if (!fd_.valid() || write_shut_) return;
  (void)Flush(0);
  if (!out_.empty()) (void)Flush(1000);  // a bounded wait for a slow reader
  (void)shutdown(fd_.get(), SHUT_WR);
  write_shut_ = true;
}

void LineConnection::Close() {
  fd_ = posix_io::Fd();
  MarkClosed("closed by this side");
}

Result<LineListener> LineListener::Listen(int port) {
  if (port < 0 || port > 65535) {
    return Status::InvalidArgument("--port " + std::to_string(port) +
                                   " is not a TCP port: use 0 (any free port) or 1-65535");
  }
  posix_io::Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return posix_io::ErrnoStatus("create a socket for", "127.0.0.1", errno);
  const int one = 1;
  (void)setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    return Status::IoError("cannot listen on 127.0.0.1:" + std::to_string(port) + ": " +
                           std::strerror(err) +
                           (err == EADDRINUSE ? " (another program has the port: choose another "
                                                "--port, or 0 for any free one)"
                                              : ""));
  }
  if (listen(fd.get(), 8) != 0) return posix_io::ErrnoStatus("listen on", "127.0.0.1", errno);
  socklen_t len = sizeof addr;
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return posix_io::ErrnoStatus("read the port of", "127.0.0.1", errno);
  }
  const int flags = fcntl(fd.get(), F_GETFL, 0);
  if (flags >= 0) (void)fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK);
  LineListener listener;
  listener.fd_ = std::move(fd);
  listener.port_ = ntohs(addr.sin_port);
  return listener;
}

Result<LineConnection> LineListener::Accept() {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  while (true) {
    const int fd = accept4(fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC);
    if (fd >= 0) {
      char ip[INET_ADDRSTRLEN] = "?";
      (void)inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof ip);
      return LineConnection(posix_io::Fd(fd), Endpoint(ip, ntohs(addr.sin_port)));
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED) return LineConnection();
    return posix_io::ErrnoStatus("accept a connection on", "127.0.0.1", errno);
  }
}

}  // namespace rlt::paper
