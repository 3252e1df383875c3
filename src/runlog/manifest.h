// runlog/manifest: checksums of what a run wrote, and one writer per run directory.
//
// What it is:
//  - MANIFEST: a text file listing files of a directory with their size and CRC-32C
//    (tensorboard.h's Crc32c), so that a flipped byte, a truncated file or a patched
//    value in a checkpoint or run file is found before it is used. Format:
//        rltrade-manifest 1 crc32c
//        <crc32c, 8 hex digits> <size in bytes> <path relative to the directory>
//        ...                                   (sorted by path)
//    A checkpoint directory lists every regular file under it (WriteDirManifest, written
//    last inside the staging directory, so the atomic rename publishes files and
//    manifest together); any file a future backend adds is covered without a list here.
//    A run directory lists its setup files (config.toml, normalizer.json,
//    training_ranges.json; WriteManifestOf), which change only when a run starts or
//    resumes; metrics.csv and status.json grow while training and are not listed.
//  - RunLock: an exclusive flock(2) on RUN_DIR/.lock held for the life of a writer
//    (train, eval). A second writer is refused with the pid (and command) holding it. The
//    kernel releases a flock when its process dies, so the lock of a killed process is
//    simply taken over (its stale pid in the file is overwritten).
//  - RemoveStaleTemps: removes the hidden `.<name>.tmp-*` / `.<name>.old-*` entries that
//    StagingDir and WriteFileAtomic leave behind when a process is killed. Only call it
//    while holding the directory's RunLock (otherwise it could delete a live writer's
//    staging directory).
// What it is not: protection against deliberate tampering (CRC-32C is not a cryptographic
// hash; someone who rewrites MANIFEST too is not detected).
// Errors name the file: "<dir>/policy.pt: checksum mismatch (MANIFEST says crc32c
// 1a2b3c4d, 9000 bytes; the file has crc32c ..., 9000 bytes): the file was changed or
// corrupted after it was written; ...".
#ifndef RLT_RUNLOG_MANIFEST_H_
#define RLT_RUNLOG_MANIFEST_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace rlt::runlog {

inline constexpr const char* kManifestFile = "MANIFEST";
inline constexpr const char* kLockFile = ".lock";

// Writes `dir`/MANIFEST listing every regular file under `dir` (recursively, MANIFEST
// itself excluded). A symlink, FIFO or device under `dir` is an error. Plain write (use it
// inside a StagingDir before Commit).
Status WriteDirManifest(const std::string& dir);

// Writes `dir`/MANIFEST atomically (WriteFileAtomic) listing exactly `files` (paths
// relative to `dir`; each must be a regular file).
Status WriteManifestOf(const std::string& dir, const std::vector<std::string>& files);

// Checks every file listed in `dir`/MANIFEST (present, same size, same CRC-32C). With
// `complete`, every regular file under `dir` must also be listed (and nothing else may be
// there). Errors: missing or malformed MANIFEST, a missing, changed or unlisted file.
Status VerifyManifest(const std::string& dir, bool complete);

// Checks that each of `files` (relative to `dir`) is listed in `dir`/MANIFEST and
// matches. Files that do not exist are skipped only if they are also not listed.
Status VerifyManifestFiles(const std::string& dir, const std::vector<std::string>& files);

// Owns RUN_DIR/.lock (flock LOCK_EX) until destroyed. Move-only.
class RunLock {
 public:
  // Takes the lock without waiting. `what` (e.g. "rltrade train") is written into the
  // lock file with the pid. Errors: held by another process (naming its pid and `what`),
  // the directory does not exist or is not writable.
  static Result<RunLock> Acquire(const std::string& dir, std::string_view what);

  RunLock(RunLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();

 private:
  explicit RunLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Removes `dir`/.<name>.tmp-* and `dir`/.<name>.old-* (files or directories). Returns
// how many were removed. REQUIRES: the caller holds the run's RunLock.
int RemoveStaleTemps(const std::string& dir);

}  // namespace rlt::runlog

#endif  // RLT_RUNLOG_MANIFEST_H_
