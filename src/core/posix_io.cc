// rltrade core: POSIX file helpers (see posix_io.h).
#include "core/posix_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace rlt::posix_io {

std::string ErrnoHint(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      return "disk full? free space or choose another --run-dir";
    case EFBIG:
      return "file size limit reached (ulimit -f) or disk full? free space or choose "
             "another --run-dir";
    case EACCES:
    case EPERM:
      return "no permission? check the directory's owner and mode or choose another "
             "--run-dir";
    case EROFS:
      return "read-only file system; choose another --run-dir";
    case ENOENT:
      return "does the parent directory exist? create it or choose another --run-dir";
    case EEXIST:
    case ENOTEMPTY:
      return "it already exists; remove it or choose another name";
    case EIO:
      return "hardware or network file system error; check the disk";
    default:
      return "";
  }
}

Status ErrnoStatus(std::string_view action, std::string_view path, int err) {
  const std::string hint = ErrnoHint(err);
  return Status::IoError("cannot " + std::string(action) + " '" + std::string(path) +
                         "': " + std::strerror(err) + (hint.empty() ? "" : " (" + hint + ")"));
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

Status Fd::Close(std::string_view path) {
  if (fd_ < 0) return Status::Ok();
  const int rc = ::close(fd_);
  fd_ = -1;
  // Linux releases the descriptor even when close fails; never retry.
  if (rc != 0 && errno != EINTR) return ErrnoStatus("close", path, errno);
  return Status::Ok();
}

Result<Fd> OpenForAppend(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("open for appending", path, errno);
  return Fd(fd);
}

Status WriteAll(int fd, std::string_view bytes, std::string_view path) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", path, errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status FsyncFd(int fd, std::string_view path) {
  if (::fsync(fd) != 0) return ErrnoStatus("fsync", path, errno);
  return Status::Ok();
}

Status FsyncPath(const std::string& path) {
  // O_RDONLY works for both files and directories on Linux.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus("open for fsync", path, errno);
  RLT_RETURN_IF_ERROR(FsyncFd(fd.get(), path));
  return fd.Close(path);
}

std::string RandomHex(int n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::random_device device;
  std::string out;
  out.reserve(n);
  uint32_t bits = 0;
  for (int i = 0; i < n; ++i) {
    if (i % 8 == 0) bits = device();
    out.push_back(kDigits[bits & 0xF]);
    bits >>= 4;
  }
  return out;
}

namespace {
std::string StripTrailingSlashes(const std::string& path) {
  size_t end = path.size();
  while (end > 1 && path[end - 1] == '/') --end;
  return path.substr(0, end);
}
}  // namespace

std::string ParentDir(const std::string& path) {
  const std::string p = StripTrailingSlashes(path);
  const size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const std::string p = StripTrailingSlashes(path);
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

Status WithContext(const Status& status, std::string_view what, const std::string& path) {
  if (status.ok()) return status;
  return Status::IoError(std::string(what) + " '" + path + "': " + status.message());
}

std::string HiddenSibling(const std::string& final_path, std::string_view kind) {
  return ParentDir(final_path) + "/." + BaseName(final_path) + "." + std::string(kind) + "-" +
         std::to_string(::getpid()) + "-" + RandomHex(8);
}

}  // namespace rlt::posix_io
