// runlog/atomic_dir: staging directories and atomic file writes (see atomic_dir.h).
#include "runlog/atomic_dir.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "core/posix_io.h"
#include "fmt/format.h"

namespace rlt::runlog {
namespace {

namespace fs = std::filesystem;

bool PathExists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// renameat2 is not supported by every file system (EINVAL) or kernel (ENOSYS).
bool Unsupported(int err) { return err == EINVAL || err == ENOSYS || err == ENOTSUP; }

// fsyncs every regular file and directory under `root`, then `root` itself. Symlinks are
// neither followed nor synced (their targets are not ours).
Status SyncTree(const std::string& root) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_type type = it->symlink_status(ec).type();
    if (ec) break;
    if (type == fs::file_type::regular || type == fs::file_type::directory) {
      RLT_RETURN_IF_ERROR(posix_io::FsyncPath(it->path().string()));
    }
  }
  if (ec) return posix_io::ErrnoStatus("list the files of", root, ec.value());
  return posix_io::FsyncPath(root);
}

Status RenameNoReplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
    return Status::Ok();
  }
  if (!Unsupported(errno)) return posix_io::ErrnoStatus("rename to", to, errno);
  // Fallback: check, then rename (racy, but rename(2) alone would replace an empty dir).
  if (PathExists(to)) return posix_io::ErrnoStatus("rename to", to, EEXIST);
  if (::rename(from.c_str(), to.c_str()) != 0) return posix_io::ErrnoStatus("rename to", to, errno);
  return Status::Ok();
}

// Puts `staging` at `final_path` whose old version exists; `*old` receives where the old
// version is now (to be removed).
Status RenameReplacing(const std::string& staging, const std::string& final_path,
                       std::string* old) {
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, final_path.c_str(), RENAME_EXCHANGE) == 0) {
    *old = staging;
    return Status::Ok();
  }
  if (!Unsupported(errno)) return posix_io::ErrnoStatus("exchange with", final_path, errno);
  *old = posix_io::HiddenSibling(final_path, "old");
  if (::rename(final_path.c_str(), old->c_str()) != 0) {
    return posix_io::ErrnoStatus("move the old version away from", final_path, errno);
  }
  if (::rename(staging.c_str(), final_path.c_str()) != 0) {
    const int err = errno;
    (void)::rename(old->c_str(), final_path.c_str());  // put the old version back
    return posix_io::ErrnoStatus("rename to", final_path, err);
  }
  return Status::Ok();
}

}  // namespace

Result<StagingDir> StagingDir::Create(const std::string& final_path) {
  const std::string name = posix_io::BaseName(final_path);
  if (name.empty() || name == "." || name == ".." || name == "/") {
    return Status::InvalidArgument(
        fmt::format("'{}' does not name a directory entry to create; give a path like "
                    "runs/ckpt_000100",
                    final_path));
  }
  const std::string parent = posix_io::ParentDir(final_path);
  const std::string final_clean = parent + "/" + name;
  for (int attempt = 0;; ++attempt) {
    std::string staging = posix_io::HiddenSibling(final_clean, "tmp");
    if (::mkdir(staging.c_str(), 0755) == 0) return StagingDir(std::move(staging), final_clean);
    if (errno == EEXIST && attempt < 10) continue;
    return posix_io::WithContext(posix_io::ErrnoStatus("create staging directory", staging, errno),
                                 "preparing", final_path);
  }
}

StagingDir::StagingDir(StagingDir&& other) noexcept
    : path_(std::move(other.path_)),
      final_path_(std::move(other.final_path_)),
      committed_(other.committed_) {
  other.path_.clear();
}

StagingDir& StagingDir::operator=(StagingDir&& other) noexcept {
  if (this != &other) {
    Abandon();
    path_ = std::move(other.path_);
    final_path_ = std::move(other.final_path_);
    committed_ = other.committed_;
    other.path_.clear();
  }
  return *this;
}

StagingDir::~StagingDir() { Abandon(); }

void StagingDir::Abandon() {
  if (committed_ || path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);  // best effort: a leftover hidden dir is harmless
  path_.clear();
}

Status StagingDir::Commit(bool replace) {
  RLT_CHECK_MSG(!committed_ && !path_.empty(), "StagingDir committed twice or moved from");
  RLT_RETURN_IF_ERROR(posix_io::WithContext(SyncTree(path_), "committing", final_path_));
  std::string old;
  if (replace && PathExists(final_path_)) {
    RLT_RETURN_IF_ERROR(posix_io::WithContext(RenameReplacing(path_, final_path_, &old),
                                              "committing", final_path_));
  } else {
    RLT_RETURN_IF_ERROR(
        posix_io::WithContext(RenameNoReplace(path_, final_path_), "committing", final_path_));
  }
  committed_ = true;
  const Status synced = posix_io::FsyncPath(posix_io::ParentDir(final_path_));
  if (!old.empty()) {
    // The new version is in place; failing to delete the old one leaves a hidden
    // directory behind but is not a failed commit.
    std::error_code ec;
    fs::remove_all(old, ec);
  }
  return posix_io::WithContext(synced, "committing", final_path_);
}

}  // namespace rlt::runlog
