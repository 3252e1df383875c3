// rltrade core: POSIX file helpers shared by the writers of files (core/file_io.cc's
// atomic writes, runlog's staging directories, metrics and TensorBoard appenders,
// manifests). A building block, not an interface for commands: they use file_io.h and
// runlog/atomic_dir.h.
//
// Every failure becomes a Status naming the action, the path, strerror(errno) and a hint
// the user can act on ("disk full? free space or choose another --run-dir").
#ifndef RLT_CORE_POSIX_IO_H_
#define RLT_CORE_POSIX_IO_H_

#include <string>
#include <string_view>

#include "core/status.h"

namespace rlt::posix_io {

// A hint for an errno value, e.g. ENOSPC → "disk full? free space or choose another
// --run-dir". Empty when we have nothing useful to say.
std::string ErrnoHint(int err);

// IoError "cannot <action> '<path>': <strerror(err)> (<hint>)".
Status ErrnoStatus(std::string_view action, std::string_view path, int err);

// `status` as an IoError "<what> '<path>': <message>" (Ok stays Ok), e.g. ("writing", path).
Status WithContext(const Status& status, std::string_view what, const std::string& path);

// Owns a POSIX file descriptor; closes it on destruction. Move-only.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Closes now and reports a failed close (which can carry a delayed write error).
  Status Close(std::string_view path);

 private:
  int fd_ = -1;
};

// Opens `path` for appending, creating it (mode 0644) when absent.
Result<Fd> OpenForAppend(const std::string& path);

// Writes all of `bytes` (retrying short writes and EINTR).
Status WriteAll(int fd, std::string_view bytes, std::string_view path);

// fsync(2) of an open descriptor / of a path (file or directory).
Status FsyncFd(int fd, std::string_view path);
Status FsyncPath(const std::string& path);

// `n` random lowercase hex digits (from std::random_device), for temporary names.
std::string RandomHex(int n);

// The directory holding `path` ("." when it has none) and its last component, with
// trailing slashes ignored: "a/b/" → ("a", "b").
std::string ParentDir(const std::string& path);
std::string BaseName(const std::string& path);

// A hidden sibling of `final_path` for temporary files: "<parent>/.<name>.<kind>-<pid>-<hex>".
std::string HiddenSibling(const std::string& final_path, std::string_view kind);

}  // namespace rlt::posix_io

#endif  // RLT_CORE_POSIX_IO_H_
