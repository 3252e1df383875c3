// rltrade core: the one seam for reading whole files.
//
// What it is: ReadFile(), used by every reader of a whole file (configs, JSON files,
// checkpoint parts, time zone files, returns files), so the rules are the same everywhere:
//  - the path must name a regular file (or a symlink to one): a directory, a device such
//    as /dev/zero, a FIFO or a socket is refused before anything is read;
//  - the file may hold at most `max_bytes` (default kDefaultMaxFileBytes); a larger file
//    is refused from its size, and a file that grows past the cap while being read stops
//    the read there — memory use is bounded whatever the input;
//  - each failure kind has its own Status code, and every message names the path:
//      NotFound         the path does not exist
//      InvalidArgument  it is not a regular file (says what it is)
//      OutOfRange       it is larger than the cap (says both sizes)
//      IoError          it exists but cannot be opened or read (permissions, I/O errors)
// WriteFileAtomic() is its counterpart for writing one file: under a temporary name, fsync,
// rename, so a reader sees the old or the new file, never half of one. Directories of
// files (checkpoints, evaluation outputs) use runlog/atomic_dir.h's StagingDir.
// What it is not: a parser (callers own their formats). Thread-safe (no shared state).
#ifndef RLT_CORE_FILE_IO_H_
#define RLT_CORE_FILE_IO_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "core/status.h"

namespace rlt {

// 1 GiB: above any config, JSON or checkpoint part rltrade writes, below this machine's
// memory. Bar files use their own, larger cap (market/csv.h).
inline constexpr int64_t kDefaultMaxFileBytes = int64_t{1} << 30;

// The whole content of `path`. REQUIRES: max_bytes >= 0.
Result<std::string> ReadFile(const std::string& path, int64_t max_bytes = kDefaultMaxFileBytes);

// Writes `bytes` to `<dir>/.<name>.tmp-<pid>-<random>`, fsyncs it, renames it over `path`
// (replacing an existing regular file) and fsyncs the directory. On failure the temporary
// file is removed and `path` is left as it was. A `path` that exists and is not a regular
// file (symlink, device such as /dev/full, FIFO, directory, socket) is an InvalidArgument
// error: the rename would replace the node itself, not write through it.
Status WriteFileAtomic(const std::string& path, std::string_view bytes);

// Ok when `path` is missing or a regular file (not followed if a symlink); otherwise the
// InvalidArgument error WriteFileAtomic returns.
Status CheckReplaceableFile(const std::string& path);

// `status` with its message wrapped as prefix + message + suffix, same code (Ok stays Ok).
Status Annotate(const Status& status, const std::string& prefix, const std::string& suffix = "");

// A directory `<parent>/<prefix>XXXXXX` (parent created when missing), removed with
// everything in it when the object is destroyed: the scratch space of benchmarks that run
// real commands (bench tune, bench paper). Move-only.
class ScratchDirectory {
 public:
  static Result<ScratchDirectory> Create(const std::string& parent, const std::string& prefix);
  ScratchDirectory(ScratchDirectory&& other) noexcept;
  ScratchDirectory& operator=(ScratchDirectory&&) = delete;
  ScratchDirectory(const ScratchDirectory&) = delete;
  ~ScratchDirectory();
  const std::string& path() const { return path_; }

 private:
  explicit ScratchDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace rlt

#endif  // RLT_CORE_FILE_IO_H_
