// Tests for runlog/manifest (checksums, the run lock, stale temporaries) and for
// WriteFileAtomic refusing to replace anything but a regular file.
#include "runlog/manifest.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "core/status_test_util.h"
#include "runlog/atomic_dir.h"
#include "runlog/test_util.h"

namespace rlt::runlog {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::ScratchDir;
using testing_util::WriteFile;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Manifest, ListsEveryFileWithTheStandardCrc32c) {
  ScratchDir dir;
  WriteFile(dir / "a.txt", "123456789");  // CRC-32C check value (RFC 3720): e3069283
  fs::create_directories(dir / "sub");
  WriteFile(dir / "sub/b.bin", "");
  ASSERT_TRUE(WriteDirManifest(dir.path()).ok());
  EXPECT_EQ(ReadFile(dir / "MANIFEST"),
            "rltrade-manifest 1 crc32c\ne3069283 9 a.txt\n00000000 0 sub/b.bin\n");
  EXPECT_TRUE(VerifyManifest(dir.path(), /*complete=*/true).ok());
}

TEST(Manifest, AFlippedByteIsAnErrorNamingTheFile) {
  ScratchDir dir;
  WriteFile(dir / "optimizer.pt", std::string(1000, 'x'));
  WriteFile(dir / "envs.bin", std::string(500, 'y'));
  ASSERT_TRUE(WriteDirManifest(dir.path()).ok());
  std::string bytes = ReadFile(dir / "envs.bin");
  bytes[250] ^= 0x01;
  WriteFile(dir / "envs.bin", bytes);
  const Status st = VerifyManifest(dir.path(), true);
  ASSERT_TRUE(IsError(st, Status::Code::kDataError, "checksum mismatch"));
  EXPECT_TRUE(Contains(st.message(), dir / "envs.bin")) << st.message();
}

TEST(Manifest, MissingManifestMissingFileAndAddedFileAreErrors) {
  ScratchDir dir;
  WriteFile(dir / "policy.pt", "weights");
  EXPECT_TRUE(Contains(VerifyManifest(dir.path(), true).message(), "MANIFEST is missing"));
  ASSERT_TRUE(WriteDirManifest(dir.path()).ok());
  WriteFile(dir / "extra.pt", "injected");
  Status st = VerifyManifest(dir.path(), true);
  EXPECT_TRUE(Contains(st.message(), "extra.pt is not listed")) << st.message();
  EXPECT_TRUE(VerifyManifest(dir.path(), /*complete=*/false).ok());
  fs::remove(dir / "policy.pt");
  st = VerifyManifest(dir.path(), false);
  EXPECT_TRUE(Contains(st.message(), "policy.pt is missing")) << st.message();
}

TEST(Manifest, OfNamedFilesVerifiesOnlyThoseAndRefusesUnlistedOnes) {
  ScratchDir dir;
  WriteFile(dir / "config.toml", "[run]\n");
  WriteFile(dir / "metrics.csv", "step\n");
  ASSERT_TRUE(WriteManifestOf(dir.path(), {"config.toml"}).ok());
  WriteFile(dir / "metrics.csv", "step\n1\n");  // grows while training: not listed
  EXPECT_TRUE(VerifyManifestFiles(dir.path(), {"config.toml", "normalizer.json"}).ok());
  WriteFile(dir / "normalizer.json", "{}");
  EXPECT_TRUE(IsError(VerifyManifestFiles(dir.path(), {"config.toml", "normalizer.json"}),
                      Status::Code::kDataError, "normalizer.json is not listed in"));
  WriteFile(dir / "config.toml", "[run]\nseed = 9\n");
  const Status st = VerifyManifestFiles(dir.path(), {"config.toml"});
  EXPECT_TRUE(Contains(st.message(), "config.toml: checksum mismatch")) << st.message();
}

TEST(Manifest, ASymlinkInsideIsRefused) {
  ScratchDir dir;
  WriteFile(dir / "a", "x");
  fs::create_symlink(dir / "a", dir / "link");
  // The message names the symlink, not the file it points to.
  EXPECT_TRUE(IsError(WriteDirManifest(dir.path()), Status::Code::kDataError,
                      "/link is not a regular file (a symlink, FIFO or device)"));
  EXPECT_TRUE(IsError(WriteDirManifest(dir.path() + "/"), Status::Code::kDataError,
                      "/link is not a regular file (a symlink, FIFO or device)"));
}

TEST(RunLock, ASecondWriterIsRefusedNamingThePidAndTheFirstIsReleased) {
  ScratchDir dir;
  Result<RunLock> first = RunLock::Acquire(dir.path(), "rltrade train");
  ASSERT_TRUE(first.ok()) << first.status().message();
  Result<RunLock> second = RunLock::Acquire(dir.path(), "rltrade eval");
  ASSERT_TRUE(IsError(second, Status::Code::kInvalidArgument, "pid " + std::to_string(::getpid())));
  EXPECT_TRUE(Contains(second.status().message(), "rltrade train")) << second.status().message();
  { RunLock released = std::move(*first); }
  EXPECT_TRUE(RunLock::Acquire(dir.path(), "rltrade eval").ok());
}

TEST(RunLock, IsHeldAcrossProcessesAndTakenOverWhenTheHolderDies) {
  ScratchDir dir;
  int to_child[2], to_parent[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(to_parent), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Result<RunLock> lock = RunLock::Acquire(dir.path(), "child writer");
    const char ok = lock.ok() ? '1' : '0';
    (void)!::write(to_parent[1], &ok, 1);
    char c;
    (void)!::read(to_child[0], &c, 1);  // hold until told; then die without releasing
    ::_exit(0);
  }
  char ok = 0;
  ASSERT_EQ(::read(to_parent[0], &ok, 1), 1);
  ASSERT_EQ(ok, '1');
  Result<RunLock> refused = RunLock::Acquire(dir.path(), "parent");
  ASSERT_TRUE(IsError(refused, Status::Code::kInvalidArgument, "pid " + std::to_string(child)));
  EXPECT_TRUE(Contains(refused.status().message(), "child writer"));
  ASSERT_EQ(::write(to_child[1], "x", 1), 1);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  // The lock file still names the dead child; the lock itself died with it.
  EXPECT_TRUE(Contains(ReadFile(dir / ".lock"), std::to_string(child)));
  Result<RunLock> taken = RunLock::Acquire(dir.path(), "parent");
  ASSERT_TRUE(taken.ok()) << taken.status().message();
  EXPECT_TRUE(Contains(ReadFile(dir / ".lock"), std::to_string(::getpid()) + " parent"));
}

TEST(RemoveStaleTemps, RemovesOnlyHiddenTemporaries) {
  ScratchDir dir;
  fs::create_directories(dir / ".step_100.tmp-123-abcdef01");
  WriteFile(dir / ".step_100.tmp-123-abcdef01/policy.pt", "half");
  WriteFile(dir / ".status.json.tmp-9-00ff00ff", "{");
  fs::create_directories(dir / ".final.old-5-12345678");
  fs::create_directories(dir / "step_100");
  WriteFile(dir / ".lock", "1 x\n");
  EXPECT_EQ(RemoveStaleTemps(dir.path()), 3);
  EXPECT_TRUE(fs::exists(dir / "step_100"));
  EXPECT_TRUE(fs::exists(dir / ".lock"));
  EXPECT_FALSE(fs::exists(dir / ".step_100.tmp-123-abcdef01"));
}

TEST(WriteFileAtomic, RefusesSymlinksFifosDevicesAndDirectories) {
  ScratchDir dir;
  WriteFile(dir / "target", "keep");
  fs::create_symlink(dir / "target", dir / "link");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  fs::create_directories(dir / "subdir");
  // Devices: only the read-only check (a failing fix must not replace /dev/full).
  for (const char* device : {"/dev/full", "/dev/null"}) {
    EXPECT_TRUE(Contains(CheckReplaceableFile(device).message(), "a character device"));
  }
  for (const std::string& path : {dir / "link", dir / "fifo", dir / "subdir"}) {
    const Status st = WriteFileAtomic(path, "new");
    ASSERT_TRUE(IsError(st, Status::Code::kInvalidArgument, "refusing to write '" + path + "'"))
        << path;
  }
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_EQ(ReadFile(dir / "target"), "keep");
  EXPECT_TRUE(fs::is_fifo(dir / "fifo"));
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  EXPECT_TRUE(WriteFileAtomic(dir / "target", "new").ok());  // a regular file is replaced
  EXPECT_TRUE(WriteFileAtomic(dir / "fresh", "new").ok());   // a missing path is created
  EXPECT_EQ(ReadFile(dir / "fresh"), "new");
}

}  // namespace
}  // namespace rlt::runlog
