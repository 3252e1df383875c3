// End-to-end tests of the performance and stability commands: `rltrade bench train`,
// `rltrade status`, the sys/* metrics, --device auto, the thread warning, and crash safety
// (kill -9 at random points, divergence, absurd buffer sizes, a full disk). They run the
// `rltrade` binary as a user would.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_test_util.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;

using rlt::cli::testing_util::Binary;
using rlt::cli::testing_util::CmdResult;
using rlt::cli::testing_util::ReadFile;
using rlt::cli::testing_util::RunCli;

constexpr const char* kTinyCartPole = R"([run]
total_steps = 4096
seed = 1
threads = 1
checkpoint_every = 512
[env]
id = "cartpole"
num_envs = 4
[algo]
n_steps = 64
batch_size = 64
n_epochs = 2
)";

class PerfCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = rlt::testing::NewScratchDir("rlt_perfcli_");
    config_ = (dir_ / "tiny.toml").string();
    std::ofstream(config_) << kTinyCartPole;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string config_;
};

TEST_F(PerfCli, BenchTrainMeasuresBothBackendsSideBySide) {
  const std::string both =
      "bench train --config " + config_ + " --steps 256 --threads 1 --backends native,torch --json";
#ifndef RLT_TEST_WITH_TORCH
  // A build without LibTorch has the native backend only, and says how to get the other.
  const CmdResult refused = RunCli(both);
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.out.find("-DRLT_WITH_TORCH=ON"), std::string::npos) << refused.out;
  return;
#endif
  CmdResult r = RunCli(both, "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["backend"], "native");
  EXPECT_EQ(j[1]["backend"], "torch");
  for (const auto& o : j) EXPECT_GT(o["env_steps_per_sec"].get<double>(), 0);
  CmdResult bad = RunCli("bench train --config " + config_ + " --backends cuda-native");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("expected native or torch"), std::string::npos) << bad.out;
}

TEST_F(PerfCli, BenchTrainJsonHasTheKeysAndABreakdownThatSumsToOne) {
  CmdResult r = RunCli("bench train --config " + config_ + " --steps 1024 --threads 1,2 --json", "",
                       "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  for (size_t k = 0; k < j.size(); ++k) {
    const nlohmann::json& o = j[k];
    for (const char* key : {"env_steps_per_sec", "breakdown", "update_gflops", "peak_gflops",
                            "end_to_end_gflops", "end_to_end_fraction", "peak_rss_bytes",
                            "projected_seconds", "device", "threads", "backend"}) {
      EXPECT_TRUE(o.contains(key)) << key;
    }
    EXPECT_EQ(o["device"], "cpu");
    EXPECT_EQ(o["threads"], static_cast<int>(k) + 1);
    EXPECT_GT(o["env_steps_per_sec"].get<double>(), 0);
    EXPECT_GT(o["update_gflops"].get<double>(), 0);
    EXPECT_GT(o["peak_gflops"].get<double>(), 0);
    EXPECT_GT(o["peak_rss_bytes"].get<int64_t>(), 10 << 20);  // LibTorch alone is more
    // total_steps / rate, recomputed here (relative: minutes on a slow or sanitized build).
    const double projected = 4096.0 / o["env_steps_per_sec"].get<double>();
    EXPECT_NEAR(o["projected_seconds"].get<double>(), projected, 1e-12 * projected);
    double sum = 0;
    for (const char* phase : {"env_step", "inference", "advantage", "update_forward", "backward",
                              "optimizer", "logging", "other"}) {
      ASSERT_TRUE(o["breakdown"].contains(phase)) << phase;
      const double f = o["breakdown"][phase].get<double>();
      EXPECT_GE(f, 0) << phase;
      sum += f;
    }
    EXPECT_NEAR(sum, 1.0, 0.02);
    // The update phases are measured, not estimated: PPO spends time in each.
    EXPECT_GT(o["breakdown"]["backward"].get<double>(), 0);
    EXPECT_GT(o["breakdown"]["env_step"].get<double>(), 0);
  }
}

TEST_F(PerfCli, BenchTrainWritesAMarkdownReportWithARecommendation) {
  const std::string report = (dir_ / "report.md").string();
  CmdResult r = RunCli("bench train --config " + config_ + " --steps 512 --report " + report);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("env steps/s"), std::string::npos) << r.out;
  const std::string md = ReadFile(report);
  EXPECT_NE(md.find("| device |"), std::string::npos) << md;
  EXPECT_NE(md.find("## Recommendation"), std::string::npos) << md;
  EXPECT_NE(md.find("Use **backend native, device cpu, threads 1**"), std::string::npos) << md;
}

TEST_F(PerfCli, BenchTrainRefusesADeviceThisBuildDoesNotHave) {
  CmdResult r = RunCli("bench train --config " + config_ + " --devices cpu,tpu");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("--devices tpu: not available in this build (available: cpu"),
            std::string::npos)
      << r.out;
}

TEST_F(PerfCli, TrainRecordsSysColumnsAndStatusReportsTheFinishedRun) {
  const std::string run = (dir_ / "run").string();
  CmdResult t = RunCli("train " + config_ + " --run-dir " + run + " --quiet");
  ASSERT_EQ(t.exit_code, 0) << t.out;
  std::ifstream csv(fs::path(run) / "metrics.csv");
  std::string header, row;
  std::getline(csv, header);
  EXPECT_NE(header.find("sys/cpu_percent"), std::string::npos) << header;
  EXPECT_NE(header.find("sys/rss_bytes"), std::string::npos) << header;
  // CPU use is sampled per update from clock ticks (10 ms), so a single short update on a
  // loaded machine can read 0; over the whole run some update must show CPU use.
  int cpu_column = 0;
  for (size_t p = 0; p < header.find("sys/cpu_percent"); ++p) cpu_column += header[p] == ',';
  double max_cpu = 0;
  while (std::getline(csv, row)) {
    std::stringstream cells(row);
    std::string cell;
    for (int c = 0; c <= cpu_column; ++c) std::getline(cells, cell, ',');
    if (!cell.empty()) max_cpu = std::max(max_cpu, std::stod(cell));
  }
  EXPECT_GT(max_cpu, 0.0);
  CmdResult s = RunCli("status " + run + " --json", "", "/dev/null");
  ASSERT_EQ(s.exit_code, 0) << s.out;
  const nlohmann::json j = nlohmann::json::parse(s.out);
  EXPECT_EQ(j["state"], "finished");
  EXPECT_EQ(j["alive"], false);
  EXPECT_EQ(j["steps"], 4096);
  EXPECT_EQ(j["total_steps"], 4096);
  EXPECT_EQ(j["last_checkpoint"], (fs::path(run) / "final").string());
  EXPECT_EQ(j["metrics"]["time/total_timesteps"], 4096.0);
  EXPECT_GT(j["metrics"]["sys/rss_bytes"].get<double>(), 10 << 20);
  EXPECT_GE(j["metrics"]["sys/cpu_percent"].get<double>(), 0);
}

// Spawns `rltrade train` in the background and returns its pid.
pid_t Spawn(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    static std::string bin;
    bin = Binary();
    argv.push_back(bin.data());
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

TEST_F(PerfCli, StatusShowsARunningRunAsAliveAndAKilledOneAsDied) {
  const std::string run = (dir_ / "run").string();
  const pid_t pid = Spawn({"train", config_, "--run-dir", run, "--quiet", "--set",
                           "run.total_steps=100000000", "--set", "run.checkpoint_every=0"});
  const fs::path status = fs::path(run) / "status.json";
  for (int i = 0; i < 300 && !fs::exists(status); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(fs::exists(status));
  CmdResult s = RunCli("status " + run + " --json", "", "/dev/null");
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  const nlohmann::json j = nlohmann::json::parse(s.out);
  EXPECT_EQ(j["alive"], true);
  EXPECT_EQ(j["pid"], pid);
  EXPECT_EQ(j["state"], "running");
  EXPECT_EQ(j["total_steps"], 100000000);
  CmdResult after = RunCli("status " + run);
  EXPECT_NE(after.out.find("died"), std::string::npos) << after.out;
}

// kill -9 at random moments, checkpoint writes included (a checkpoint every update), must
// never leave a checkpoint that --resume picks but cannot load.
TEST_F(PerfCli, KillNineAtRandomPointsNeverLeavesACheckpointResumeCannotLoad) {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> delay_ms(400, 1600);
  int resumed = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const std::string run = (dir_ / ("run" + std::to_string(trial))).string();
    const pid_t pid = Spawn({"train", config_, "--run-dir", run, "--quiet", "--set",
                             "run.checkpoint_every=256", "--set", "run.total_steps=1000000"});
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    bool has_checkpoint = false;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(run) / "checkpoints", ec)) {
      // A hidden .step_N.tmp-* staging directory is not a checkpoint (resume removes it).
      if (e.path().filename().string()[0] == '.') continue;
      if (fs::exists(e.path() / "FORMAT")) has_checkpoint = true;
    }
    // Resume loads the newest complete checkpoint (then stops: the target is already met).
    CmdResult r = RunCli("train --resume " + run + " --quiet --set run.total_steps=1");
    if (!has_checkpoint) {  // killed before the first checkpoint (or the run dir)
      EXPECT_TRUE(r.out.find("no complete checkpoint") != std::string::npos ||
                  r.out.find("cannot read config") != std::string::npos)
          << r.out;
      continue;
    }
    EXPECT_EQ(r.exit_code, 0) << "trial " << trial << ": " << r.out;
    ++resumed;
  }
  EXPECT_GE(resumed, 10);  // most kills land after the first checkpoint
}

// Signals: SIGINT/SIGTERM finish the current update, write
// checkpoints/step_<N> and exit with 128 + signal; --resume from there continues as if
// the run had never stopped. ~3 s of training at ~20k env steps/s on one thread.
constexpr int64_t kSignalTotalSteps = 65536;

std::vector<std::string> SignalRunArgs(const std::string& config, const std::string& run) {
  return {"train",
          config,
          "--run-dir",
          run,
          "--quiet",
          "--set",
          "run.total_steps=" + std::to_string(kSignalTotalSteps),
          "--set",
          "run.checkpoint_every=0"};
}

// The complete lines of metrics.csv (header first); a partly written last line is dropped.
std::vector<std::string> CsvLines(const fs::path& csv) {
  const std::string text = ReadFile(csv);
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// Lines as cells, without the columns that measure the machine rather than the training
// (time/fps, sys/*), as in train_test.cc's resume comparison.
std::vector<std::string> CsvWithoutMachineColumns(const fs::path& csv) {
  std::vector<std::string> out;
  std::vector<bool> keep;
  for (const std::string& line : CsvLines(csv)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    std::string cell;
    while (std::getline(row, cell, ',')) cells.push_back(cell);
    if (keep.empty()) {
      for (const std::string& key : cells) {
        keep.push_back(key != "time/fps" && key.rfind("sys/", 0) != 0);
      }
      EXPECT_LT(std::count(keep.begin(), keep.end(), true), static_cast<long>(keep.size())) << line;
    }
    std::string kept;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c >= keep.size() || keep[c]) kept += cells[c] + ",";
    }
    out.push_back(kept);
  }
  return out;
}

// Starts a run, sends `sig` once metrics.csv has at least two rows and checks the exit code
// (128 + sig) and the checkpoint: exactly one, complete, at the last metrics row's step.
// Returns that step (0 on failure).
int64_t InterruptRunAndCheckTheCheckpoint(const std::string& config, const fs::path& run, int sig) {
  const pid_t pid = Spawn(SignalRunArgs(config, run.string()));
  EXPECT_GT(pid, 0);
  if (pid <= 0) return 0;
  const fs::path csv = run / "metrics.csv";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (CsvLines(csv).size() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const size_t rows_at_signal = CsvLines(csv).size() - (CsvLines(csv).empty() ? 0 : 1);
  ::kill(pid, sig);
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_GE(rows_at_signal, 2u);
  EXPECT_TRUE(WIFEXITED(status)) << "status " << status << " (killed by signal "
                                 << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
  const std::vector<std::string> lines = CsvLines(csv);
  EXPECT_GE(lines.size(), 3u);
  if (lines.size() < 2) return 0;
  const int64_t last_step = std::stoll(lines.back());
  // The run stopped early: it was interrupted, not finished.
  EXPECT_LT(last_step, kSignalTotalSteps) << "the run finished before the signal";
  EXPECT_FALSE(fs::exists(run / "final"));
  std::vector<std::string> checkpoints;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(run / "checkpoints", ec)) {
    checkpoints.push_back(e.path().filename().string());
  }
  EXPECT_EQ(checkpoints, std::vector<std::string>{"step_" + std::to_string(last_step)});
  const fs::path dir = run / "checkpoints" / ("step_" + std::to_string(last_step));
  EXPECT_TRUE(fs::exists(dir / "FORMAT")) << dir;
  for (const char* file :
       {"policy.rlt", "normalizer.rlt", "state.rlt", "envs.bin", "optimizer.rlt", "config.toml"}) {
    EXPECT_GT(fs::exists(dir / file) ? fs::file_size(dir / file) : 0u, 0u) << file;
  }
  const nlohmann::json j = nlohmann::json::parse(ReadFile(run / "status.json"), nullptr, false);
  EXPECT_EQ(j.value("state", ""), "interrupted") << j.dump();
  return last_step;
}

TEST_F(PerfCli, SignalSigintFinishesTheUpdateCheckpointsAndExits130) {
  InterruptRunAndCheckTheCheckpoint(config_, dir_ / "run", SIGINT);
}

TEST_F(PerfCli, SignalSigtermFinishesTheUpdateCheckpointsAndExits143) {
  InterruptRunAndCheckTheCheckpoint(config_, dir_ / "run", SIGTERM);
}

// SIGINT, then --resume to the end: the same metrics (but time/fps and sys/*) and the same
// final parameters as an uninterrupted run, byte for byte (Adam's restore also shows in the
// later updates' metrics and final policy).
TEST_F(PerfCli, SignalSigintThenResumeMatchesAnUninterruptedRun) {
  const fs::path whole = dir_ / "whole";
  const fs::path split = dir_ / "split";
  const pid_t pid = Spawn(SignalRunArgs(config_, whole.string()));
  ASSERT_GT(pid, 0);
  const int64_t step = InterruptRunAndCheckTheCheckpoint(config_, split, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_GT(step, 0);

  CmdResult r = RunCli("train --resume " + split.string() + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;

  const std::vector<std::string> rows_a = CsvWithoutMachineColumns(whole / "metrics.csv");
  const std::vector<std::string> rows_b = CsvWithoutMachineColumns(split / "metrics.csv");
  EXPECT_EQ(rows_a.size(), static_cast<size_t>(kSignalTotalSteps / 256 + 1));
  ASSERT_EQ(rows_a.size(), rows_b.size());
  for (size_t k = 0; k < rows_a.size(); ++k) {
    EXPECT_EQ(rows_a[k], rows_b[k]) << "metrics.csv line " << k + 1;
  }
  EXPECT_EQ(std::stoll(rows_b.back()), kSignalTotalSteps);
  for (const char* file : {"policy.rlt", "normalizer.rlt", "state.rlt", "envs.bin"}) {
    const std::string a = ReadFile(whole / "final" / file);
    const std::string b = ReadFile(split / "final" / file);
    ASSERT_FALSE(a.empty()) << file;
    EXPECT_TRUE(a == b) << "final/" << file << " differs";
    if (std::string(file) == "normalizer.rlt") continue;  // cartpole does not normalise
    // The resumed part changed the state: the comparison is not of the checkpoint itself.
    const std::string at_signal =
        ReadFile(split / "checkpoints" / ("step_" + std::to_string(step)) / file);
    EXPECT_FALSE(a == at_signal) << file << " did not change after step " << step;
  }
}

// A signal inside a long rollout (here ~16M env steps, ~5 s) is
// honoured within about PpoTrainer::kInterruptSeconds: the rollout is discarded, the run
// exits 128 + signal with the checkpoint written before that rollout (the state after the
// last finished update) as its last checkpoint, and --resume continues from there.
TEST_F(PerfCli, SignalInsideALongRolloutStopsWithinSecondsAndResumes) {
  const fs::path run = dir_ / "long";
  const std::string config = (dir_ / "long.toml").string();
  // A long rollout and a short update: a linear policy, one minibatch, one epoch.
  std::ofstream(config) << "[run]\ntotal_steps = 100000000\nthreads = 1\n[env]\nid = "
                           "\"cartpole\"\nnum_envs = 2000\n[algo]\nn_steps = 8192\n"
                           "batch_size = 16384000\nn_epochs = 1\n[policy]\npi = []\nvf = []\n";
  const pid_t pid = Spawn({"train", config, "--run-dir", run.string(), "--quiet"});
  ASSERT_GT(pid, 0);
  const fs::path csv = run / "metrics.csv";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (CsvLines(csv).size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(CsvLines(csv).size(), 2u) << "the first update did not finish in time";
  // The second rollout has begun: let its pace be measured, then interrupt.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 130);
  // The rollout alone takes several seconds on this machine; before the interrupt rule the run
  // finished it and the update first.
  EXPECT_LT(seconds, 2.5) << "the signal was not honoured inside the rollout";
  EXPECT_EQ(CsvLines(csv).size(), 2u) << "the discarded rollout must not add a metrics row";
  const int64_t first = 8192 * 2000;
  const fs::path checkpoint = run / "checkpoints" / ("step_" + std::to_string(first));
  EXPECT_TRUE(fs::exists(checkpoint / "MANIFEST")) << checkpoint;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(run / "status.json"), nullptr, false);
  EXPECT_EQ(j.value("state", ""), "interrupted") << j.dump();
  EXPECT_EQ(j.value("steps", int64_t{0}), first) << j.dump();
  EXPECT_EQ(j.value("last_checkpoint", ""), checkpoint.string()) << j.dump();
  EXPECT_FALSE(fs::exists(run / "final"));
  // Resume for one more update: it continues from the checkpoint and finishes.
  CmdResult r = RunCli("train --resume " + run.string() +
                       " --quiet --set run.total_steps=" + std::to_string(2 * first));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(CsvLines(csv).size(), 3u);
  EXPECT_TRUE(fs::exists(run / "final" / "MANIFEST"));
}

// A loss that is not finite at the first update (the trainer's test hook: the settings that
// used to force one, learning_rate = 1e30, are now refused when the config is read).
TEST_F(PerfCli, DivergenceRightAwayStopsWithTheLossDiagnostic) {
  const std::string run = (dir_ / "run").string();
  CmdResult r = RunCli("train " + config_ + " --run-dir " + run + " --quiet",
                       "RLT_TEST_POISON_LOSS_AT_UPDATE=1");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("PPO loss is not finite at update 1"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(fs::path(run) / "final"));
  r = RunCli("train " + config_ + " --run-dir " + run + "2 --quiet --set algo.learning_rate=1e30");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("learning_rate"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(fs::path(run + "2")));
}

// A NaN parameter after update 3 (the trainer's test hook): the diagnostic names the
// tensor and the update, training stops before checkpointing it, and the last good
// checkpoint (step 512 = update 2) is kept and loads.
TEST_F(PerfCli, NonFiniteParameterStopsTrainingNamingTheTensorAndKeepsTheLastGoodCheckpoint) {
  const std::string run = (dir_ / "run").string();
  CmdResult r =
      RunCli("train " + config_ + " --run-dir " + run + " --quiet --set run.checkpoint_every=256",
             "RLT_TEST_POISON_PARAMETER_AT_UPDATE=3");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("parameter '"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("is not finite at update 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("last good checkpoint " + run + "/checkpoints/step_512 is kept"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(fs::path(run) / "checkpoints" / "step_768"));
  EXPECT_FALSE(fs::exists(fs::path(run) / "final"));
  CmdResult s = RunCli("status " + run + " --json", "", "/dev/null");
  const nlohmann::json j = nlohmann::json::parse(s.out);
  EXPECT_EQ(j["state"], "failed");
  EXPECT_NE(j["message"].get<std::string>().find("not finite"), std::string::npos);
  CmdResult resume = RunCli("train --resume " + run + " --quiet");
  EXPECT_EQ(resume.exit_code, 0) << resume.out;
}

TEST_F(PerfCli, AbsurdBufferSizeFailsUpFrontNamingTheSettings) {
  const std::string run = (dir_ / "run").string();
  CmdResult r = RunCli("train " + config_ + " --run-dir " + run +
                       " --quiet --set algo.n_steps=2000000000 --set algo.batch_size=64");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("MemAvailable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lower env.num_envs or algo.n_steps"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(run));
}

// A full disk: the run directory on a 1 MiB tmpfs (needs mount rights; skipped without).
// Training fills it with checkpoints until one does not fit: a clear error naming the
// disk, exit code 1 (not an abort), and the newest complete checkpoint still loads.
TEST_F(PerfCli, FullDiskIsAClearErrorAndTheNewestCheckpointStillLoads) {
  const fs::path disk = dir_ / "disk";
  fs::create_directories(disk);
  if (std::system(("mount -t tmpfs -o size=1m tmpfs " + disk.string() + " 2>/dev/null").c_str()) !=
      0) {
    GTEST_SKIP() << "cannot mount a tmpfs here";
  }
  const std::string run = (disk / "run").string();
  CmdResult r = RunCli("train " + config_ + " --run-dir " + run +
                       " --quiet --set run.total_steps=100000000 --set run.checkpoint_every=256");
  fs::copy(run, dir_ / "copy", fs::copy_options::recursive);
  std::system(("umount " + disk.string()).c_str());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(r.out.find("disk full") != std::string::npos ||
              r.out.find("No space left") != std::string::npos)
      << r.out;
  CmdResult resume =
      RunCli("train --resume " + (dir_ / "copy").string() + " --quiet --set run.total_steps=1");
  EXPECT_EQ(resume.exit_code, 0) << resume.out;
}

// A write error inside a checkpoint file (RLIMIT_FSIZE via `ulimit -f`, SIGXFSZ ignored so
// write(2) fails with EFBIG). LibTorch's writer aborts the process on it (a throw from a
// destructor in learn/checkpoint.cc's torch::save), so only the durable part is asserted:
// the process fails, the previous checkpoint is intact and --resume still loads it.
TEST_F(PerfCli, WriteErrorDuringACheckpointKeepsThePreviousCheckpoint) {
  const std::string run = (dir_ / "run").string();
  ASSERT_EQ(RunCli("train " + config_ + " --run-dir " + run +
                   " --quiet --set run.total_steps=1024 --set run.checkpoint_every=512")
                .exit_code,
            0);
  const std::string before = ReadFile(fs::path(run) / "checkpoints" / "step_1024" / "FORMAT");
  ASSERT_FALSE(before.empty());
  // 64 blocks (32 KiB with sh's 512-byte blocks) is less than a checkpoint's model file.
  CmdResult r = RunCli("train --resume " + run + " --quiet --set run.total_steps=2048",
                       "trap '' XFSZ; ulimit -f 64;");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_EQ(ReadFile(fs::path(run) / "checkpoints" / "step_1024" / "FORMAT"), before);
  EXPECT_FALSE(fs::exists(fs::path(run) / "checkpoints" / "step_1536" / "FORMAT"));
  CmdResult resume = RunCli("train --resume " + run + " --quiet --set run.total_steps=2048");
  EXPECT_EQ(resume.exit_code, 0) << resume.out;
}

TEST_F(PerfCli, DeviceAutoMeasuresAndPrintsTheNumbersBehindTheChoice) {
  CmdResult r = RunCli("train " + config_ + " --run-dir " + (dir_ / "run").string() +
                       " --set run.device=auto --set run.total_steps=512");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("device auto: cpu "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("env steps/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device auto: picked cpu"), std::string::npos) << r.out;
  EXPECT_NE(ReadFile(dir_ / "run" / "config.toml").find("device = \"cpu\""), std::string::npos);
}

TEST_F(PerfCli, ThreadsAboveTheCoresWarnOnce) {
  const int too_many = static_cast<int>(std::thread::hardware_concurrency()) + 2;
  CmdResult r =
      RunCli("train " + config_ + " --run-dir " + (dir_ / "run").string() +
             " --quiet --set run.total_steps=256 --set run.threads=" + std::to_string(too_many));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const size_t first = r.out.find("exceeds the");
  EXPECT_NE(first, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("exceeds the", first + 1), std::string::npos) << r.out;
}

// The threading model needs libgomp to sleep when idle (core/process_env.h) without the
// user setting OMP_WAIT_POLICY: libgomp prints its resolved settings with
// OMP_DISPLAY_ENV=VERBOSE; PASSIVE means a spin count of 0 (the default is 300000).
TEST_F(PerfCli, LibgompSleepsWhenIdleWithoutAnEnvironmentVariableUnlessTheUserSetsOne) {
  CmdResult r =
      RunCli("--help", "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=VERBOSE");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("GOMP_SPINCOUNT = '0'"), std::string::npos) << r.out;
  r = RunCli("--help", "env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=active OMP_DISPLAY_ENV=VERBOSE");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("OMP_WAIT_POLICY = 'ACTIVE'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("GOMP_SPINCOUNT = '0'"), std::string::npos) << r.out;
}

// A status.json with fields of the wrong type (null, strings, absurd numbers), as a
// hand-edit or a corrupt disk leaves it, is read as far as it goes: no exception escapes
//, text and --json both exit 0.
TEST_F(PerfCli, StatusReadsAStatusFileWithNullsAndWrongTypesWithoutCrashing) {
  const fs::path run = dir_ / "odd_run";
  fs::create_directories(run);
  for (const char* body :
       {R"({"pid": null, "state": null, "steps": "many", "total_steps": null, "fps": null})",
        R"({"pid": 1e300, "state": 7, "steps": -1e308, "total_steps": 1e308, "fps": -5,
            "last_checkpoint": 3, "message": [1]})",
        R"({"pid": -3, "state": "running", "steps": 10, "total_steps": 20, "fps": 1e-300})"}) {
    SCOPED_TRACE(body);
    rlt::testing::WriteFile(run / "status.json", body);
    CmdResult r = RunCli("status " + run.string());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("state"), std::string::npos) << r.out;
    r = RunCli("status " + run.string() + " --json", "", "/dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_FALSE(nlohmann::json::parse(r.out, nullptr, false).is_discarded()) << r.out;
  }
}

}  // namespace
