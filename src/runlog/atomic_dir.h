// runlog/atomic_dir: "write under a temporary name, then rename", for files and directories.
//
// What it is: the crash-safety primitive behind checkpoints and other run outputs
// (docs/ARCHITECTURE.md, "The invariants": crash-safe outputs). A reader of the final
// path sees either nothing, the complete old version or the complete new version — never
// a half-written one:
//  - StagingDir: create a hidden sibling directory `<parent>/.<name>.tmp-<pid>-<random>`,
//    write files into path(), then Commit() fsyncs every file and directory in it, renames
//    it to the final path and fsyncs the parent. An uncommitted StagingDir is removed by
//    its destructor, so an error path leaves nothing behind.
//  - for one file, WriteFileAtomic(path, bytes) in core/file_io.h (included here).
// What it is not: a lock. Two processes committing the same final path race; one wins
// (or, with replace, the last one wins).
//
// Replacing (Commit(/*replace=*/true)) swaps the new directory and the old one with
// renameat2(RENAME_EXCHANGE), an atomic exchange, and then removes the old one. On file
// systems without RENAME_EXCHANGE the old one is first renamed away to
// `.<name>.old-<pid>-<random>`, then the new one is renamed in; a crash between those two
// renames leaves the final path absent and the old version under that hidden name.
// Without replace, an existing final path is an error (renameat2(RENAME_NOREPLACE), with a
// check-then-rename fallback), never silently overwritten — rename(2) alone would replace
// an empty directory.
//
// Errors (ENOSPC, EACCES, EROFS, ...) are IoError Status values naming the path, the
// strerror text and a hint ("disk full? free space or choose another --run-dir").
// Thread safety: a StagingDir is used by one thread; distinct objects are independent.
#ifndef RLT_RUNLOG_ATOMIC_DIR_H_
#define RLT_RUNLOG_ATOMIC_DIR_H_

#include <string>
#include <string_view>

#include "core/file_io.h"
#include "core/status.h"

namespace rlt::runlog {

// Owns a staging directory until Commit(). Move-only.
class StagingDir {
 public:
  // Creates the staging directory beside `final_path`. The parent of `final_path` must
  // exist; `final_path` itself may or may not.
  static Result<StagingDir> Create(const std::string& final_path);

  StagingDir(StagingDir&& other) noexcept;
  StagingDir& operator=(StagingDir&& other) noexcept;
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;
  // Removes the staging directory and everything in it unless committed.
  ~StagingDir();

  // Where to write: the staging directory.
  const std::string& path() const { return path_; }
  const std::string& final_path() const { return final_path_; }
  bool committed() const { return committed_; }

  // Makes the staged contents durable and moves them to final_path(). Without `replace`,
  // an existing final_path() is an error (the staging directory stays, to be removed by the
  // destructor). REQUIRES: not committed yet.
  Status Commit(bool replace = false);

 private:
  StagingDir(std::string path, std::string final_path)
      : path_(std::move(path)), final_path_(std::move(final_path)) {}
  void Abandon();

  std::string path_;
  std::string final_path_;
  bool committed_ = false;
};

}  // namespace rlt::runlog

#endif  // RLT_RUNLOG_ATOMIC_DIR_H_
