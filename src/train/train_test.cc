// Tests of a training run from a config: the run directory's contents, errors that leave
// nothing behind, and resuming from the newest checkpoint.
#include "train/train.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/status_test_util.h"
#include "core/thread_pool.h"
#include "testing/testing.h"

namespace rlt::train {
namespace {

namespace fs = std::filesystem;

class TrainRun : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = rlt::testing::NewScratchDir("rlt_train_"); }
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

// metrics.csv without the time/fps column (wall-clock speed is the one value that may
// differ between runs), as lines.
// The CSV without the columns that measure the machine, not the training: time/fps and
// the process's sys/cpu_percent and sys/rss_bytes.
std::vector<std::string> CsvWithoutFps(const std::string& csv) {
  std::vector<std::string> lines;
  std::stringstream in(csv);
  std::string line;
  std::vector<int> dropped;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    std::string cell;
    while (std::getline(row, cell, ',')) cells.push_back(cell);
    if (lines.empty()) {
      for (const char* key : {"time/fps", "sys/cpu_percent", "sys/rss_bytes"}) {
        const auto it = std::find(cells.begin(), cells.end(), key);
        EXPECT_NE(it, cells.end()) << key << " in " << line;
        dropped.push_back(static_cast<int>(it - cells.begin()));
      }
    }
    std::string kept;
    for (int c = 0; c < static_cast<int>(cells.size()); ++c) {
      if (std::find(dropped.begin(), dropped.end(), c) == dropped.end()) kept += cells[c] + ",";
    }
    lines.push_back(kept);
  }
  return lines;
}

// An uninterrupted run and a run stopped at half way (a separate RunTraining call: every
// piece of state goes through the checkpoint on disk, as across a process restart) then
// resumed must produce the same metrics (all but time/fps) and the same final checkpoint,
// byte for byte. The schedules are constant: a run stopped early with total_steps = half
// is another run for progress-dependent schedules (progress_remaining uses total_steps).
void ExpectResumeIsBitIdentical(const fs::path& dir, const std::string& config, int64_t half,
                                int64_t total) {
  const std::string config_path = (dir / "cfg.toml").string();
  std::ofstream(config_path) << config;
  const auto read = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  TrainRequest first;
  first.config_path = config_path;
  first.run_dir = (dir / "split").string();
  first.quiet = true;
  first.overrides = {"run.total_steps=" + std::to_string(half)};
  auto b1 = RunTraining(first);
  ASSERT_TRUE(b1.ok()) << b1.status().ToString();
  ASSERT_EQ(b1->total_steps, half);
  TrainRequest rest;
  rest.resume_dir = first.run_dir;
  rest.overrides = {"run.total_steps=" + std::to_string(total)};
  rest.quiet = true;
  auto b2 = RunTraining(rest);
  ASSERT_TRUE(b2.ok()) << b2.status().ToString();
  ASSERT_EQ(b2->total_steps, total);

  // The uninterrupted run uses the thread count the split run recorded (threads = 0 is
  // resolved by a timed trial, and the update's float summation order depends on the
  // count): the resume must keep that count for the two to agree.
  std::string threads;
  {
    std::istringstream in(read(dir / "split" / "config.toml"));
    std::string line, section;
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] == '[') section = line;
      if (section == "[run]" && line.rfind("threads = ", 0) == 0) threads = line.substr(10);
    }
  }
  ASSERT_FALSE(threads.empty());
  TrainRequest whole = first;
  whole.run_dir = (dir / "whole").string();
  whole.overrides = {"run.total_steps=" + std::to_string(total), "run.threads=" + threads};
  auto a = RunTraining(whole);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->total_steps, total);

  const std::vector<std::string> rows_a = CsvWithoutFps(read(dir / "whole" / "metrics.csv"));
  const std::vector<std::string> rows_b = CsvWithoutFps(read(dir / "split" / "metrics.csv"));
  ASSERT_EQ(rows_a.size(), rows_b.size());
  int64_t after_half = 0;
  for (size_t r = 0; r < rows_a.size(); ++r) {
    EXPECT_EQ(rows_a[r], rows_b[r]) << "metrics.csv line " << r + 1;
    after_half += r > 0 && std::stoll(rows_a[r]) > half;
  }
  EXPECT_EQ(after_half, (total - half) / 256);  // 4 envs x 64 steps per update
  // The checkpoint's tensor files are deterministic: equal state, equal bytes (the
  // step_<half> pair checks that on two runs that never resumed).
  for (const char* file :
       {"policy.rlt", "optimizer.rlt", "normalizer.rlt", "state.rlt", "envs.bin"}) {
    const std::string half_a =
        read(dir / "whole" / "checkpoints" / ("step_" + std::to_string(half)) / file);
    const std::string half_b =
        read(dir / "split" / "checkpoints" / ("step_" + std::to_string(half)) / file);
    ASSERT_FALSE(half_a.empty()) << file;
    EXPECT_TRUE(half_a == half_b) << "step_" << half << "/" << file;
    const std::string final_a = read(dir / "whole" / "final" / file);
    const std::string final_b = read(dir / "split" / "final" / file);
    ASSERT_FALSE(final_a.empty()) << file;
    EXPECT_TRUE(final_a == final_b) << "final/" << file;
    EXPECT_FALSE(final_a == half_a) << file << " did not change after step " << half;
  }
}

TEST_F(TrainRun, ResumedCartPoleRunIsBitIdenticalToAnUninterruptedOne) {
  ExpectResumeIsBitIdentical(dir_, R"(
[run]
seed = 3
threads = 2
checkpoint_every = 512
[env]
id = "cartpole"
num_envs = 4
max_episode_steps = 60
[algo]
n_steps = 64
batch_size = 64
n_epochs = 2
norm_obs = true
norm_reward = true
)",
                             512, 1024);
}

TEST_F(TrainRun, ResumedIntradayRunIsBitIdenticalToAnUninterruptedOne) {
  ExpectResumeIsBitIdentical(dir_, R"(
[run]
seed = 4
threads = 1
checkpoint_every = 512
[data]
source = "synthetic"
days = 20
[split]
train = "2023-01-02:2023-01-20"
test = "2023-01-23:2023-01-31"
[env]
id = "intraday"
num_envs = 4
reward = "shaped"
[algo]
n_steps = 64
batch_size = 128
n_epochs = 2
norm_obs = true
)",
                             512, 1024);
}

// threads = 0 resolves to 1 or the cores this process may use (a measured trial picks); the
// resolved count is what a resume must reuse, so the resumed run is the same computation.
// (The uninterrupted run makes its own pick; on this config's 64-wide products OpenBLAS
// uses one thread either way, so the two runs compute the same whichever they pick.)
TEST_F(TrainRun, ResumedRunWithThreadsZeroIsBitIdenticalToAnUninterruptedOne) {
  ExpectResumeIsBitIdentical(dir_, R"(
[run]
seed = 5
threads = 0
checkpoint_every = 512
[env]
id = "cartpole"
num_envs = 4
[algo]
n_steps = 64
batch_size = 64
n_epochs = 2
norm_obs = true
)",
                             512, 1024);
}

// The value written for [run] threads in a run's config.toml.
std::string RecordedThreads(const std::string& toml) {
  std::istringstream in(toml);
  std::string line, section;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '[') section = line;
    if (section == "[run]" && line.rfind("threads = ", 0) == 0) return line.substr(10);
  }
  return "";
}

TEST_F(TrainRun, ThreadsZeroIsRecordedAsTheResolvedCountAndKeptOnResume) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  const std::string config = WriteConfig(kCartPole);
  TrainRequest first;
  first.config_path = config;
  first.run_dir = (dir_ / "run").string();
  first.quiet = true;
  first.overrides = {"run.threads=0", "run.total_steps=256"};
  auto a = RunTraining(first);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  // 1 or the affinity mask's CPU count, whichever a short trial measured faster.
  const std::string expected = RecordedThreads(Read(dir_ / "run" / "config.toml"));
  EXPECT_TRUE(expected == "1" || expected == std::to_string(ResolveThreads(0))) << expected;

  // Resume while this process is given one CPU: the recorded count is reused, not
  // re-resolved (sched_getaffinity(0) is this thread's mask, which RunTraining runs on).
  int first_cpu = 0;
  while (!CPU_ISSET(first_cpu, &saved)) ++first_cpu;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first_cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  TrainRequest rest;
  rest.resume_dir = first.run_dir;
  rest.overrides = {"run.total_steps=512"};
  rest.quiet = true;
  ::testing::internal::CaptureStderr();
  auto b = RunTraining(rest);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  if (expected != "1") {  // the resumed run used the recorded count, more than it was given
    EXPECT_NE(err.find("threads = " + expected + " exceeds the 1 cores"), std::string::npos) << err;
  }
  EXPECT_EQ(b->total_steps, 512);
  EXPECT_EQ(RecordedThreads(Read(dir_ / "run" / "config.toml")), expected);
}

TEST_F(TrainRun, UnknownKeyIsAnErrorWithLineAndNearestKeyAndLeavesNoRunDirectory) {
  TrainRequest req;
  req.config_path = WriteConfig(
      "[run]\ntotal_steps = 10\n[env]\nid = \"cartpole\"\n"
      "[algo]\nn_step = 32\n");
  req.run_dir = (dir_ / "run").string();
  auto out = RunTraining(req);
  ASSERT_TRUE(
      IsError(out, Status::Code::kInvalidArgument, "cfg.toml:6: [algo] unknown key 'n_step'"));
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
  ASSERT_TRUE(IsError(out, Status::Code::kInvalidArgument,
                      "[split] train 2023-01-02:2023-06-30 overlaps test"));
  EXPECT_FALSE(fs::exists(dir_ / "run"));
}

// A capital that cannot buy one lot (BTC at 100,000+ with 100,000 and whole
// shares) made training silently meaningless (reward 0 throughout). The synthetic market
// starts at 100 per share: a capital of 50 cannot buy one share, but can buy lots of 0.1.
TEST_F(TrainRun, CapitalThatCannotBuyOneLotIsRefusedNamingCapitalAndLotSize) {
  TrainRequest req;
  req.config_path = WriteConfig(R"(
[run]
total_steps = 512
threads = 1
[data]
source = "synthetic"
days = 20
[split]
train = "2023-01-02:2023-01-20"
test = "2023-01-23:2023-01-27"
[env]
id = "intraday"
num_envs = 4
initial_capital = 50
[algo]
n_steps = 128
batch_size = 256
n_epochs = 1
)");
  req.run_dir = (dir_ / "run").string();
  req.quiet = true;
  auto out = RunTraining(req);
  ASSERT_TRUE(IsError(out, Status::Code::kRefused, "env.initial_capital"));
  EXPECT_NE(out.status().message().find("env.lot_size"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "run"));
  req.overrides = {"env.lot_size=0.1"};
  out = RunTraining(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_NE(Read(dir_ / "run" / "config.toml").find("lot_size = 0.1"), std::string::npos);
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

// metrics.csv as a header and rows of cells.
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int Column(const std::string& key) const {
    const auto it = std::find(header.begin(), header.end(), key);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  }
};
Csv ParseCsv(const std::string& text) {
  Csv csv;
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    std::string cell;
    while (std::getline(row, cell, ',')) cells.push_back(cell);
    if (csv.header.empty()) {
      csv.header = cells;
    } else {
      csv.rows.push_back(cells);
    }
  }
  return csv;
}

TEST_F(TrainRun, EvalEveryAddsEvalColumnsFromTheFirstRowWithNanBetweenEvaluations) {
  TrainRequest req;
  req.config_path = WriteConfig(kCartPole);
  req.run_dir = (dir_ / "run").string();
  req.quiet = true;
  req.overrides = {"run.eval_every=512", "run.eval_episodes=3"};
  auto out = RunTraining(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Csv csv = ParseCsv(Read(dir_ / "run" / "metrics.csv"));
  ASSERT_EQ(csv.rows.size(), 3u);                     // steps 256, 512, 768
  EXPECT_EQ(csv.Column("eval/final_net_worth"), -1);  // not a market env
  for (const char* key : {"eval/mean_reward", "eval/std_reward", "eval/mean_ep_length"}) {
    const int c = csv.Column(key);
    ASSERT_GE(c, 0) << key;
    EXPECT_EQ(csv.rows[0][c], "nan") << key;
    EXPECT_EQ(csv.rows[2][c], "nan") << key;
    const double v = std::stod(csv.rows[1][c]);
    EXPECT_TRUE(std::isfinite(v)) << key;
  }
  // CartPole pays +1 per step, so the mean reward is the mean episode length.
  EXPECT_EQ(std::stod(csv.rows[1][csv.Column("eval/mean_reward")]),
            std::stod(csv.rows[1][csv.Column("eval/mean_ep_length")]));
  EXPECT_NE(Read(dir_ / "run" / "config.toml").find("eval_episodes = 3"), std::string::npos);
}

// Evaluation uses its own envs and draws nothing from training's generators, so training
// with and without it gives the same training metrics, value for value.
TEST_F(TrainRun, EvaluationDoesNotChangeTraining) {
  const std::string config = std::string(kCartPole) + "norm_obs = true\n";
  Csv runs[2];
  for (int k = 0; k < 2; ++k) {
    TrainRequest req;
    req.config_path = WriteConfig(config);
    req.run_dir = (dir_ / ("run" + std::to_string(k))).string();
    req.quiet = true;
    req.overrides = {k == 0 ? "run.eval_every=0" : "run.eval_every=256"};
    auto out = RunTraining(req);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    runs[k] = ParseCsv(Read(fs::path(req.run_dir) / "metrics.csv"));
  }
  EXPECT_EQ(runs[0].Column("eval/mean_reward"), -1);
  ASSERT_GE(runs[1].Column("eval/mean_reward"), 0);
  ASSERT_EQ(runs[0].rows.size(), 3u);
  ASSERT_EQ(runs[1].rows.size(), 3u);
  int compared = 0;
  for (size_t c = 0; c < runs[0].header.size(); ++c) {
    const std::string& key = runs[0].header[c];
    if (key == "time/fps" || key.rfind("sys/", 0) == 0) continue;  // machine, not training
    const int c1 = runs[1].Column(key);
    ASSERT_GE(c1, 0) << key;
    for (size_t r = 0; r < 3; ++r) {
      EXPECT_EQ(runs[0].rows[r][c], runs[1].rows[r][c1]) << key << " row " << r;
    }
    compared += key.rfind("train/", 0) == 0;
  }
  EXPECT_GE(compared, 8);
  EXPECT_TRUE(Read(dir_ / "run0" / "final" / "policy.rlt") ==
              Read(dir_ / "run1" / "final" / "policy.rlt"));
}

constexpr const char* kIntradayEval = R"(
[run]
total_steps = 512
threads = 1
eval_every = 256
[data]
source = "synthetic"
days = 30
[split]
train = "2023-01-02:2023-01-25"
test = "2023-02-02:2023-02-10"
[env]
id = "intraday"
num_envs = 4
[algo]
n_steps = 64
batch_size = 128
n_epochs = 2
norm_obs = true
)";

TEST_F(TrainRun, MarketEvaluationWithoutAValidationRangeIsRefusedBeforeAnythingIsWritten) {
  TrainRequest req;
  req.config_path = WriteConfig(kIntradayEval);
  req.run_dir = (dir_ / "run").string();
  req.quiet = true;
  auto out = RunTraining(req);
  ASSERT_TRUE(
      IsError(out, Status::Code::kInvalidArgument, "validation = \"YYYY-MM-DD:YYYY-MM-DD\""));
  EXPECT_FALSE(fs::exists(dir_ / "run"));
}

TEST_F(TrainRun, ValidationOverlappingTrainOrTestIsRefused) {
  for (const char* validation : {"2023-01-20:2023-01-31", "2023-01-30:2023-02-03"}) {
    TrainRequest req;
    req.config_path = WriteConfig(kIntradayEval);
    req.run_dir = (dir_ / "run").string();
    req.quiet = true;
    req.overrides = {std::string("split.validation=") + validation};
    auto out = RunTraining(req);
    ASSERT_TRUE(IsError(out, Status::Code::kInvalidArgument,
                        std::string("[split] validation ") + validation + " overlaps"))
        << validation;
    SCOPED_TRACE(out.status().message());
    EXPECT_FALSE(fs::exists(dir_ / "run"));
  }
}

TEST_F(TrainRun, MarketEvaluationWalksTheValidationRangeAndLogsTheFinalNetWorth) {
  TrainRequest req;
  req.config_path = WriteConfig(kIntradayEval);
  req.run_dir = (dir_ / "run").string();
  req.quiet = true;
  req.overrides = {"split.validation=2023-01-26:2023-02-01"};
  auto out = RunTraining(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Csv csv = ParseCsv(Read(dir_ / "run" / "metrics.csv"));
  ASSERT_EQ(csv.rows.size(), 2u);
  EXPECT_EQ(csv.Column("eval/std_reward"), -1);
  const int reward = csv.Column("eval/mean_reward");
  const int length = csv.Column("eval/mean_ep_length");
  const int worth = csv.Column("eval/final_net_worth");
  ASSERT_GE(reward, 0);
  ASSERT_GE(length, 0);
  ASSERT_GE(worth, 0);
  for (const auto& row : csv.rows) {
    EXPECT_TRUE(std::isfinite(std::stod(row[reward])));
    EXPECT_GT(std::stod(row[worth]), 0.0);
    // One episode over the 5 validation sessions (2023-01-26 to 02-01) of 5-minute bars,
    // 78 bars a session: more than four sessions' worth of steps, at most five.
    const double bars = std::stod(row[length]);
    EXPECT_GT(bars, 4 * 78);
    EXPECT_LE(bars, 5 * 78);
  }
}

}  // namespace
}  // namespace rlt::train
