// Tests for runlog/atomic_dir: commit, abandon, replace, and failures that return a Status
// naming the path, the system's reason and a hint. Failures are produced in ways that work
// as root too (a missing parent, a file where a directory is expected, an existing target,
// and RLIMIT_FSIZE for a write error in the middle of a file).
#include "runlog/atomic_dir.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>

#include "core/status_test_util.h"
#include "runlog/test_util.h"

namespace rlt::runlog {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::ScratchDir;
using testing_util::WriteFile;

// Names in `dir`, sorted.
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(StagingDir, IsAHiddenSiblingOfTheFinalPath) {
  ScratchDir dir;
  Result<StagingDir> staging = StagingDir::Create(dir / "ckpt_100");
  ASSERT_TRUE(staging.ok()) << staging.status().ToString();
  const std::string name = fs::path(staging->path()).filename().string();
  EXPECT_EQ(name.rfind(".ckpt_100.tmp-" + std::to_string(::getpid()) + "-", 0), 0u) << name;
  EXPECT_EQ(fs::path(staging->path()).parent_path(), fs::path(dir.path()));
  EXPECT_TRUE(fs::is_directory(staging->path()));
  EXPECT_FALSE(fs::exists(dir / "ckpt_100"));
}

TEST(StagingDir, CommitMovesTheFilesToTheFinalPath) {
  ScratchDir dir;
  Result<StagingDir> staging = StagingDir::Create(dir / "ckpt_100");
  ASSERT_TRUE(staging.ok());
  WriteFile(staging->path() + "/model.bin", "weights");
  fs::create_directory(staging->path() + "/sub");
  WriteFile(staging->path() + "/sub/config.toml", "seed = 1\n");
  ASSERT_TRUE(staging->Commit().ok());
  EXPECT_TRUE(staging->committed());
  EXPECT_EQ(Entries(dir.path()), (std::vector<std::string>{"ckpt_100"}));
  EXPECT_EQ(ReadFile(dir / "ckpt_100/model.bin"), "weights");
  EXPECT_EQ(ReadFile(dir / "ckpt_100/sub/config.toml"), "seed = 1\n");
}

TEST(StagingDir, CommitSurvivesTheDestructor) {
  ScratchDir dir;
  {
    Result<StagingDir> staging = StagingDir::Create(dir / "out/");  // trailing slash is fine
    ASSERT_TRUE(staging.ok());
    WriteFile(staging->path() + "/a", "1");
    ASSERT_TRUE(staging->Commit().ok());
  }
  EXPECT_EQ(ReadFile(dir / "out/a"), "1");
}

TEST(StagingDir, AnAbandonedStagingDirLeavesNothing) {
  ScratchDir dir;
  {
    Result<StagingDir> staging = StagingDir::Create(dir / "ckpt_100");
    ASSERT_TRUE(staging.ok());
    fs::create_directory(staging->path() + "/sub");
    WriteFile(staging->path() + "/sub/model.bin", "half written");
  }
  EXPECT_TRUE(Entries(dir.path()).empty());
}

TEST(StagingDir, MovedStagingDirIsRemovedOnceByItsNewOwner) {
  ScratchDir dir;
  {
    Result<StagingDir> staging = StagingDir::Create(dir / "x");
    ASSERT_TRUE(staging.ok());
    StagingDir moved = std::move(staging).value();
    EXPECT_TRUE(fs::is_directory(moved.path()));
  }
  EXPECT_TRUE(Entries(dir.path()).empty());
}

TEST(StagingDir, CommitRefusesAnExistingFinalPath) {
  ScratchDir dir;
  fs::create_directory(dir / "ckpt_100");  // empty: plain rename(2) would replace it
  {
    Result<StagingDir> staging = StagingDir::Create(dir / "ckpt_100");
    ASSERT_TRUE(staging.ok());
    WriteFile(staging->path() + "/model.bin", "new");
    const Status status = staging->Commit();
    ASSERT_TRUE(IsError(status, Status::Code::kIoError, dir / "ckpt_100"));
    EXPECT_TRUE(Contains(status.message(), "File exists")) << status.message();
    EXPECT_FALSE(staging->committed());
  }
  EXPECT_EQ(Entries(dir.path()), (std::vector<std::string>{"ckpt_100"}));
  EXPECT_TRUE(fs::is_empty(dir / "ckpt_100"));
}

TEST(StagingDir, CommitWithReplaceSwapsInTheNewVersionAndRemovesTheOld) {
  ScratchDir dir;
  fs::create_directory(dir / "latest");
  WriteFile(dir / "latest/model.bin", "old");
  WriteFile(dir / "latest/only_in_old", "x");
  Result<StagingDir> staging = StagingDir::Create(dir / "latest");
  ASSERT_TRUE(staging.ok());
  WriteFile(staging->path() + "/model.bin", "new");
  ASSERT_TRUE(staging->Commit(/*replace=*/true).ok());
  EXPECT_EQ(Entries(dir.path()), (std::vector<std::string>{"latest"}));
  EXPECT_EQ(Entries(dir / "latest"), (std::vector<std::string>{"model.bin"}));
  EXPECT_EQ(ReadFile(dir / "latest/model.bin"), "new");
}

TEST(StagingDir, CommitWithReplaceWorksWhenNothingIsThereYet) {
  ScratchDir dir;
  Result<StagingDir> staging = StagingDir::Create(dir / "latest");
  ASSERT_TRUE(staging.ok());
  ASSERT_TRUE(staging->Commit(/*replace=*/true).ok());
  EXPECT_EQ(Entries(dir.path()), (std::vector<std::string>{"latest"}));
}

TEST(StagingDir, CreateReportsAMissingParentWithAHint) {
  ScratchDir dir;
  Result<StagingDir> staging = StagingDir::Create(dir / "no_such_parent/ckpt");
  ASSERT_TRUE(IsError(staging, Status::Code::kIoError, dir / "no_such_parent/ckpt"));
  const std::string& message = staging.status().message();
  EXPECT_TRUE(Contains(message, "No such file or directory")) << message;
  EXPECT_TRUE(Contains(message, "does the parent directory exist?")) << message;
}

TEST(StagingDir, CreateRejectsAPathWithoutAName) {
  EXPECT_EQ(StagingDir::Create("/").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(StagingDir::Create("..").status().code(), Status::Code::kInvalidArgument);
}

TEST(WriteFileAtomic, CreatesAndReplacesAFileLeavingNoTemporaries) {
  ScratchDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "state.json", "{\"v\":1}").ok());
  EXPECT_EQ(ReadFile(dir / "state.json"), "{\"v\":1}");
  ASSERT_TRUE(WriteFileAtomic(dir / "state.json", "{\"v\":2}").ok());
  EXPECT_EQ(ReadFile(dir / "state.json"), "{\"v\":2}");
  EXPECT_EQ(Entries(dir.path()), (std::vector<std::string>{"state.json"}));
}

TEST(WriteFileAtomic, ReportsAParentThatIsAFile) {
  ScratchDir dir;
  WriteFile(dir / "plain_file", "x");
  const Status status = WriteFileAtomic(dir / "plain_file/state.json", "data");
  ASSERT_TRUE(IsError(status, Status::Code::kIoError, dir / "plain_file/state.json"));
  EXPECT_TRUE(Contains(status.message(), "Not a directory")) << status.message();
}

// A write error in the middle of the data, made with RLIMIT_FSIZE (honoured for root too;
// SIGXFSZ is ignored so that write(2) fails with EFBIG instead of killing the process).
TEST(WriteFileAtomic, AFailedWriteKeepsTheOldFileAndSaysWhatToDo) {
  ScratchDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "state.json", "old").ok());

  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct sigaction ignore = {}, saved_action = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &saved_action), 0);
  struct rlimit small = saved;
  small.rlim_cur = 1000;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const Status status = WriteFileAtomic(dir / "state.json", std::string(5000, 'x'));
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  ASSERT_EQ(::sigaction(SIGXFSZ, &saved_action, nullptr), 0);

  ASSERT_TRUE(IsError(status, Status::Code::kIoError, dir / "state.json"));
  EXPECT_TRUE(Contains(status.message(), "File too large")) << status.message();
  EXPECT_TRUE(Contains(status.message(), "disk full? free space or choose another --run-dir"))
      << status.message();
  EXPECT_EQ(ReadFile(dir / "state.json"), "old");
  EXPECT_EQ(Entries(dir.path()), (std::vector<std::string>{"state.json"}));  // no temporary
}

}  // namespace
}  // namespace rlt::runlog
