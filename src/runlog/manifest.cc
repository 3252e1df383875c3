// runlog/manifest: MANIFEST files, the run lock and stale temporary entries (see
// manifest.h).
#include "runlog/manifest.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/file_io.h"
#include "core/posix_io.h"
#include "fmt/format.h"
#include "runlog/atomic_dir.h"
#include "runlog/tensorboard.h"

namespace rlt::runlog {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHeader = "rltrade-manifest 1 crc32c";

struct Entry {
  uint32_t crc = 0;
  uint64_t size = 0;
};

Result<Entry> Measure(const std::string& path) {
  RLT_ASSIGN_OR_RETURN(const std::string bytes, ReadFile(path));
  return Entry{Crc32c(bytes.data(), bytes.size()), bytes.size()};
}

// Every regular file under `dir` (relative paths), MANIFEST and the lock file excluded.
Result<std::vector<std::string>> RegularFiles(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  // Lexically: fs::relative would resolve a symlink and name its target instead of it.
  fs::path base(dir);
  if (!base.has_filename()) base = base.parent_path();  // "run/" -> "run"
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_type type = it->symlink_status(ec).type();
    if (ec) break;
    const std::string rel = it->path().lexically_relative(base).generic_string();
    if (type == fs::file_type::directory) continue;
    if (type != fs::file_type::regular) {
      return Status::DataError(fmt::format(
          "{}/{} is not a regular file (a symlink, FIFO or device); a checkpoint holds only "
          "regular files",
          dir, rel));
    }
    if (rel == kManifestFile || rel == kLockFile) continue;
    if (rel.find('\n') != std::string::npos) {
      return Status::DataError(dir + ": a file name contains a newline");
    }
    names.push_back(rel);
  }
  if (ec) return posix_io::ErrnoStatus("list the files of", dir, ec.value());
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> ManifestText(const std::string& dir, std::vector<std::string> files) {
  std::sort(files.begin(), files.end());
  std::string text = std::string(kHeader) + "\n";
  for (const std::string& name : files) {
    struct stat st;
    const std::string path = dir + "/" + name;
    if (::lstat(path.c_str(), &st) != 0) return posix_io::ErrnoStatus("stat", path, errno);
    if (!S_ISREG(st.st_mode)) return Status::DataError(path + " is not a regular file");
    RLT_ASSIGN_OR_RETURN(const Entry e, Measure(path));
    text += fmt::format("{:08x} {} {}\n", e.crc, e.size, name);
  }
  return text;
}

Result<std::map<std::string, Entry>> ReadManifest(const std::string& dir) {
  const std::string path = dir + "/" + kManifestFile;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return Status::DataError(
        path +
        " is missing: the directory has no checksums (written by an older rltrade, or not "
        "written by rltrade); its files cannot be trusted — use a complete checkpoint or "
        "retrain");
  }
  RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kHeader) {
    return Status::DataError(path + ":1: expected '" + kHeader + "'");
  }
  std::map<std::string, Entry> entries;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    unsigned int crc = 0;
    unsigned long long size = 0;
    int consumed = 0;
    if (std::sscanf(line.c_str(), "%8x %llu %n", &crc, &size, &consumed) != 2 || consumed <= 0 ||
        static_cast<size_t>(consumed) >= line.size()) {
      return Status::DataError(
          fmt::format("{}:{}: expected '<crc32c> <size> <file>'", path, line_no));
    }
    entries[line.substr(consumed)] = Entry{crc, size};
  }
  return entries;
}

Status CheckEntry(const std::string& dir, const std::string& name, const Entry& want) {
  const std::string path = dir + "/" + name;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return Status::NotFound(path + " is missing (listed in " + kManifestFile +
                            "); the directory is incomplete");
  }
  if (!S_ISREG(st.st_mode)) return Status::DataError(path + " is not a regular file");
  RLT_ASSIGN_OR_RETURN(const Entry got, Measure(path));
  if (got.crc != want.crc || got.size != want.size) {
    return Status::DataError(fmt::format(
        "{}: checksum mismatch ({} says crc32c {:08x}, {} bytes; the file has crc32c {:08x}, {} "
        "bytes): the file was changed or corrupted after rltrade wrote it; do not use it "
        "(restore it, use another checkpoint or retrain)",
        path, kManifestFile, want.crc, want.size, got.crc, got.size));
  }
  return Status::Ok();
}

}  // namespace

Status WriteDirManifest(const std::string& dir) {
  RLT_ASSIGN_OR_RETURN(std::vector<std::string> files, RegularFiles(dir));
  RLT_ASSIGN_OR_RETURN(const std::string text, ManifestText(dir, std::move(files)));
  const std::string path = dir + "/" + kManifestFile;
  posix_io::Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return posix_io::ErrnoStatus("create", path, errno);
  RLT_RETURN_IF_ERROR(posix_io::WriteAll(fd.get(), text, path));
  return fd.Close(path);
}

Status WriteManifestOf(const std::string& dir, const std::vector<std::string>& files) {
  RLT_ASSIGN_OR_RETURN(const std::string text, ManifestText(dir, files));
  return WriteFileAtomic(dir + "/" + kManifestFile, text);
}

Status VerifyManifest(const std::string& dir, bool complete) {
  RLT_ASSIGN_OR_RETURN(const auto entries, ReadManifest(dir));
  for (const auto& [name, want] : entries) RLT_RETURN_IF_ERROR(CheckEntry(dir, name, want));
  if (!complete) return Status::Ok();
  RLT_ASSIGN_OR_RETURN(const std::vector<std::string> files, RegularFiles(dir));
  for (const std::string& name : files) {
    if (!entries.count(name)) {
      return Status::DataError(dir + "/" + name + " is not listed in " + dir + "/" + kManifestFile +
                               ": a file was added after the directory was written; remove it "
                               "or use another checkpoint");
    }
  }
  return Status::Ok();
}

Status VerifyManifestFiles(const std::string& dir, const std::vector<std::string>& files) {
  RLT_ASSIGN_OR_RETURN(const auto entries, ReadManifest(dir));
  for (const std::string& name : files) {
    const auto it = entries.find(name);
    if (it != entries.end()) {
      RLT_RETURN_IF_ERROR(CheckEntry(dir, name, it->second));
      continue;
    }
    struct stat st;
    if (::lstat((dir + "/" + name).c_str(), &st) == 0) {
      return Status::DataError(dir + "/" + name + " is not listed in " + dir + "/" + kManifestFile +
                               "; it was not written by rltrade train");
    }
  }
  return Status::Ok();
}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

Result<RunLock> RunLock::Acquire(const std::string& dir, std::string_view what) {
  const std::string path = dir + "/" + kLockFile;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return posix_io::ErrnoStatus("open the lock file", path, errno);
  RunLock lock(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::IoError(path + " is not a regular file; remove it");
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err != EWOULDBLOCK) return posix_io::ErrnoStatus("lock", path, err);
    char holder[256] = {0};
    const ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
    std::string text(holder, n > 0 ? static_cast<size_t>(n) : 0);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
    long long pid = 0;
    char cmd[200] = {0};
    std::sscanf(text.c_str(), "%lld %199[^\n]", &pid, cmd);
    return Status::InvalidArgument(fmt::format(
        "{} is in use by another writer: pid {} ({}) holds {}; wait for it to finish or stop "
        "it (kill {}) before writing to this run directory",
        dir, pid, cmd[0] ? cmd : "unknown command", path, pid));
  }
  const std::string holder = fmt::format("{} {}\n", ::getpid(), what);
  if (::ftruncate(fd, 0) != 0) return posix_io::ErrnoStatus("truncate", path, errno);
  RLT_RETURN_IF_ERROR(posix_io::WriteAll(fd, holder, path));
  return lock;
}

int RemoveStaleTemps(const std::string& dir) {
  int removed = 0;
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 2 || name[0] != '.') continue;
    if (name.find(".tmp-") == std::string::npos && name.find(".old-") == std::string::npos) {
      continue;
    }
    doomed.push_back(entry.path());
  }
  for (const fs::path& p : doomed) {
    std::error_code rm;
    if (fs::remove_all(p, rm) > 0 && !rm) ++removed;
  }
  return removed;
}

}  // namespace rlt::runlog
