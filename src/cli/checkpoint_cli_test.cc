// End-to-end tests of `rltrade checkpoint convert` and of the native checkpoint format
// through the binary: a trained run's checkpoints are tensor files only (no LibTorch
// archive), `convert` leaves them alone (exit 0, every file byte for byte), and a bad PATH
// is refused (exit 2, the message naming it) without writing anything. The conversion of
// a version-2 (LibTorch-archive) checkpoint and its bit-identical continuation are
// learn/legacy_checkpoint_test.cc.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "cli/cli_test_util.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;
using rlt::cli::testing_util::RunCli;
using rlt::testing::ReadFile;

class CheckpointCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = rlt::testing::NewScratchDir("rlt_checkpoint_cli_"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  // Every file below `root` with its bytes.
  static std::map<std::string, std::string> Snapshot(const fs::path& root) {
    std::map<std::string, std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (e.is_regular_file()) files[fs::relative(e.path(), root).string()] = ReadFile(e.path());
    }
    return files;
  }
  fs::path dir_;
};

TEST_F(CheckpointCli, ATrainedRunIsNativeAndConvertLeavesItAlone) {
  const std::string config = Path("small.toml");
  rlt::testing::WriteFile(config, rlt::cli::testing_util::kSmallIntradayConfig);
  const std::string run = Path("run");
  const auto trained =
      RunCli("train " + config + " --set run.checkpoint_every=1024 --run-dir " + run + " --quiet");
  ASSERT_EQ(trained.exit_code, 0) << trained.out;
  for (const char* ckpt : {"final", "checkpoints/step_1024"}) {
    for (const char* f : {"policy.rlt", "optimizer.rlt", "normalizer.rlt", "state.rlt"}) {
      EXPECT_TRUE(fs::exists(fs::path(run) / ckpt / f)) << ckpt << "/" << f;
    }
    for (const char* f : {"policy.pt", "optimizer.pt", "normalizer.pt", "state.pt"}) {
      EXPECT_FALSE(fs::exists(fs::path(run) / ckpt / f)) << ckpt << "/" << f;
    }
    EXPECT_EQ(ReadFile(fs::path(run) / ckpt / "FORMAT").rfind("rltrade-ppo-checkpoint 3\n", 0), 0u);
  }
  const auto before = Snapshot(run);
  const auto r = RunCli("checkpoint convert " + run);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("already native: " + run + "/final"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("converted"), std::string::npos) << r.out;
  EXPECT_TRUE(Snapshot(run) == before);
  // The run still evaluates.
  const auto eval = RunCli("eval " + run, "", "/dev/null");
  EXPECT_EQ(eval.exit_code, 0) << eval.out;
}

TEST_F(CheckpointCli, APathWithoutACheckpointIsRefusedAndNothingIsWritten) {
  auto r = RunCli("checkpoint convert " + Path("missing"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(Path("missing") + " is not a directory"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(Path("missing")));
  fs::create_directories(Path("empty"));
  r = RunCli("checkpoint convert " + Path("empty"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("holds no checkpoint"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(Path("empty")));
  r = RunCli("checkpoint convert");
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

}  // namespace
