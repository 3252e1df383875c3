// Tests of a training run from a config: the run directory's contents, errors that leave
// nothing behind, and resuming from the newest checkpoint.
#include "train/train.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace rlt::train {
namespace {

namespace fs = std::filesystem;

class TrainRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("rlt_train_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string WriteConfig(const std::string& text) {
    const std::string path = (dir_ / "cfg.toml").string();
    std::ofstream(path) << text;
    return path;
  }
  static std::string Read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir_;
};

constexpr const char* kCartPole = R"(
[run]
total_steps = 768
seed = 1
threads = 1
checkpoint_every = 256
[env]
id = "cartpole"
num_envs = 4
[algo]
n_steps = 64
batch_size = 64
n_epochs = 2
)";

TEST_F(TrainRun, WritesTheRunDirectoryWithConfigMetricsTensorboardAndCheckpoints) {
  TrainRequest req;
  req.config_path = WriteConfig(kCartPole);
  req.run_dir = (dir_ / "run").string();
  req.quiet = true;
  auto out = RunTraining(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, 0);
  EXPECT_EQ(out->total_steps, 768);  // 3 iterations of 64 x 4
  const fs::path run = dir_ / "run";
  const std::string config = Read(run / "config.toml");
  // The resolved config lists defaults that the file did not set.
  EXPECT_NE(config.find("gae_lambda = 0.95"), std::string::npos) << config;
  EXPECT_NE(config.find("n_steps = 64"), std::string::npos) << config;
  const std::string csv = Read(run / "metrics.csv");
  for (const char* key :
       {"rollout/ep_rew_mean", "rollout/ep_len_mean", "train/policy_gradient_loss",
        "train/value_loss", "train/entropy_loss", "train/approx_kl", "train/clip_fraction",
        "train/explained_variance", "train/learning_rate", "time/fps", "time/total_timesteps"}) {
    EXPECT_NE(csv.find(key), std::string::npos) << key;
  }
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);  // header + 3 updates
  EXPECT_TRUE(fs::exists(run / "metrics.jsonl"));
  bool has_events = false;
  for (const auto& e : fs::directory_iterator(run)) {
    has_events |= e.path().filename().string().find("tfevents") != std::string::npos;
  }
  EXPECT_TRUE(has_events);
  for (const char* ckpt :
       {"checkpoints/step_256", "checkpoints/step_512", "checkpoints/step_768", "final"}) {
    EXPECT_TRUE(fs::exists(run / ckpt / "FORMAT")) << ckpt;
    EXPECT_TRUE(fs::exists(run / ckpt / "config.toml")) << ckpt;
  }
}

TEST_F(TrainRun, ResumeContinuesFromTheNewestCheckpointWithoutDuplicateRows) {
  TrainRequest req;
  req.config_path = WriteConfig(kCartPole);
  req.run_dir = (dir_ / "run").string();
  req.quiet = true;
  req.overrides = {"run.total_steps=512"};
  ASSERT_TRUE(RunTraining(req).ok());
  TrainRequest more;
  more.resume_dir = req.run_dir;
  more.overrides = {"run.total_steps=1024"};
  more.quiet = true;
  auto out = RunTraining(more);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->total_steps, 1024);
  const std::string csv = Read(dir_ / "run" / "metrics.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);  // header + 4 updates, no repeats
  EXPECT_NE(csv.find("\n1024,"), std::string::npos) << csv;
}

TEST_F(TrainRun, UnknownKeyIsAnErrorWithLineAndNearestKeyAndLeavesNoRunDirectory) {
  TrainRequest req;
  req.config_path = WriteConfig(
      "[run]\ntotal_steps = 10\n[env]\nid = \"cartpole\"\n"
      "[algo]\nn_step = 32\n");
  req.run_dir = (dir_ / "run").string();
  auto out = RunTraining(req);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("cfg.toml:6"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("did you mean 'n_steps'"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "run"));
}

TEST_F(TrainRun, OverlappingTrainAndTestRangesAreRefused) {
  TrainRequest req;
  req.config_path = WriteConfig(
      "[split]\ntrain = \"2023-01-02:2023-06-30\"\ntest = \"2023-06-01:2023-12-29\"\n"
      "[env]\nid = \"intraday\"\n");
  req.run_dir = (dir_ / "run").string();
  auto out = RunTraining(req);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("overlaps"), std::string::npos) << out.status().message();
  EXPECT_FALSE(fs::exists(dir_ / "run"));
}

TEST_F(TrainRun, TrainsTheIntradayEnvOnTheSyntheticMarket) {
  TrainRequest req;
  req.config_path = WriteConfig(R"(
[run]
total_steps = 2048
threads = 1
[data]
source = "synthetic"
days = 30
[split]
train = "2023-01-02:2023-01-31"
test = "2023-02-01:2023-02-10"
[env]
id = "intraday"
num_envs = 8
action_mode = "target_position"
[algo]
n_steps = 128
batch_size = 256
n_epochs = 2
)");
  req.run_dir = (dir_ / "run").string();
  req.quiet = true;
  auto out = RunTraining(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::string config = Read(dir_ / "run" / "config.toml");
  EXPECT_NE(config.find("range = \"2023-01-02:2023-01-31\""), std::string::npos) << config;
  EXPECT_NE(config.find("preset = \"scaled\""), std::string::npos) << config;
}

}  // namespace
}  // namespace rlt::train
