// rltrade core: whole-file reading (see file_io.h).
#include "core/file_io.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/posix_io.h"

namespace rlt {
namespace {

// What a non-regular file is, for messages ("is a directory", "is a FIFO (named pipe)").
const char* KindOf(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

Status OpenError(const std::string& path, int err) {
  if (err == ENOENT || err == ENOTDIR)
    return Status::NotFound("file '" + path + "' does not exist");
  return Status::IoError("cannot open file '" + path + "': " + std::strerror(err));
}

// The name of the kernel file system `fd` lies on when it is one whose files are made up
// by the kernel (/proc, /sys, ...), else nullptr. Their files pass for regular files of
// size 0, and what they hold (a process's environment, its memory map, kernel state) is
// nothing rltrade reads as input, and nothing an error message may quote.
const char* PseudoFileSystem(int fd) {
  struct statfs fs;
  if (::fstatfs(fd, &fs) != 0) return nullptr;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC:
      return "procfs (/proc)";
    case SYSFS_MAGIC:
      return "sysfs (/sys)";
    case DEBUGFS_MAGIC:
      return "debugfs";
    case TRACEFS_MAGIC:
      return "tracefs";
    case SECURITYFS_MAGIC:
      return "securityfs";
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
      return "cgroupfs";
    case 0x62656570:  // CONFIGFS_MAGIC (not in every linux/magic.h)
      return "configfs";
    case EFIVARFS_MAGIC:
      return "efivarfs";
    case BPF_FS_MAGIC:
      return "bpffs";
    case PSTOREFS_MAGIC:
      return "pstore";
    default:
      return nullptr;
  }
}

}  // namespace

Status CheckReplaceableFile(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return posix_io::ErrnoStatus("inspect", path, errno);
  }
  if (S_ISREG(st.st_mode)) return Status::Ok();
  return Status::InvalidArgument("refusing to write '" + path + "': it is " + KindOf(st.st_mode) +
                                 ", and files are only written over a regular file or a new "
                                 "path; choose another output path");
}

Status WriteFileAtomic(const std::string& path, std::string_view bytes) {
  RLT_RETURN_IF_ERROR(CheckReplaceableFile(path));
  const std::string temp = posix_io::HiddenSibling(path, "tmp");
  posix_io::Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    return posix_io::WithContext(posix_io::ErrnoStatus("create temporary file", temp, errno),
                                 "writing", path);
  }
  Status status = posix_io::WriteAll(fd.get(), bytes, temp);
  if (status.ok()) status = posix_io::FsyncFd(fd.get(), temp);
  const Status closed = fd.Close(temp);
  if (status.ok()) status = closed;
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    status = posix_io::ErrnoStatus("rename to", path, errno);
  }
  if (!status.ok()) {
    ::unlink(temp.c_str());
    return posix_io::WithContext(status, "writing", path);
  }
  return posix_io::WithContext(posix_io::FsyncPath(posix_io::ParentDir(path)), "writing", path);
}

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

Result<std::string> ReadFile(const std::string& path, int64_t max_bytes) {
  RLT_CHECK(max_bytes >= 0);
  // Open first, then check what was opened (no window between the check and the read).
  // O_NONBLOCK: opening a FIFO without a writer must not hang; regular files ignore it.
  posix_io::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return OpenError(path, errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return OpenError(path, errno);
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument("'" + path + "' is " + KindOf(st.st_mode) +
                                   ", expected a regular file");
  }
  if (const char* fs = PseudoFileSystem(fd.get())) {
    return Status::InvalidArgument("'" + path + "' is a kernel pseudo-file of " + fs +
                                   ", not a file on disk; expected a regular file");
  }
  auto too_large = [&](int64_t size) {
    return Status::OutOfRange("'" + path + "' is larger than " + std::to_string(max_bytes) +
                              " bytes (" + std::to_string(size) + "): is this the right file?");
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

Result<ScratchDirectory> ScratchDirectory::Create(const std::string& parent,
                                                  const std::string& prefix) {
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  std::string dir = (std::filesystem::path(parent) / (prefix + "XXXXXX")).string();
  if (ec || ::mkdtemp(dir.data()) == nullptr) {
    return Status::IoError(parent + ": cannot create a scratch directory" +
                           (ec ? " (" + ec.message() + ")" : std::string()));
  }
  return ScratchDirectory(std::move(dir));
}

ScratchDirectory::ScratchDirectory(ScratchDirectory&& other) noexcept
    : path_(std::move(other.path_)) {
  other.path_.clear();
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

}  // namespace rlt
