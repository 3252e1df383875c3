// rltrade core: whole-file reading (see file_io.h).
#include "core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rlt {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

Status StatError(const std::string& path, const std::string& what, int err) {
  if (err == ENOENT || err == ENOTDIR) {
    return Status::NotFound(what + " '" + path + "' does not exist");
  }
  return Status::IoError("cannot open " + what + " '" + path + "': " + std::strerror(err));
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Status Annotate(const Status& status, const std::string& prefix, const std::string& suffix) {
  std::string m = prefix + status.message() + suffix;
  switch (status.code()) {
    case Status::Code::kOk:
      return status;
    case Status::Code::kInvalidArgument:
      return Status::InvalidArgument(std::move(m));
    case Status::Code::kNotFound:
      return Status::NotFound(std::move(m));
    case Status::Code::kIoError:
      return Status::IoError(std::move(m));
    case Status::Code::kDataError:
      return Status::DataError(std::move(m));
    case Status::Code::kOutOfRange:
      return Status::OutOfRange(std::move(m));
    case Status::Code::kRefused:
      return Status::Refused(std::move(m));
  }
  return Status::IoError(std::move(m));
}

Status CheckRegularFile(const std::string& path, const std::string& what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return StatError(path, what, errno);
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(what + " '" + path + "' is " + KindOf(st.st_mode) +
                                   ", expected a regular file");
  }
  return Status::Ok();
}

Result<std::string> ReadFile(const std::string& path, int64_t max_bytes) {
  RLT_CHECK(max_bytes >= 0);
  // Open first, then check what was opened (no window between the check and the read).
  // O_NONBLOCK: opening a FIFO without a writer must not hang; regular files ignore it.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return StatError(path, "file", errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return StatError(path, "file", errno);
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument("'" + path + "' is " + KindOf(st.st_mode) +
                                   ", expected a regular file");
  }
  auto too_large = [&](int64_t size) {
    return Status::OutOfRange("'" + path + "' is larger than " + std::to_string(max_bytes) +
                              " bytes (" + std::to_string(size) +
                              "): is this the right file?");
  };
  if (st.st_size > max_bytes) return too_large(st.st_size);
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IoError("cannot read '" + path + "': " + std::strerror(errno));
    }
    if (n == 0) break;
    if (static_cast<int64_t>(out.size()) + n > max_bytes) {
      return too_large(static_cast<int64_t>(out.size()) + n);
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace rlt
