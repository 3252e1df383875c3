// End-to-end regression tests of hostile input and faults: each runs the
// command the hostile tester ran and asserts the exit code, a message fragment and what
// is (not) left on disk.
//  - Honesty: every path that sets a training range (config file, --set env.range,
//    --resume, walk-forward folds) is refused when it touches [split] test, and eval
//    checks the ranges recorded in training_ranges.json, not [split] train.
//  - Integrity: checksummed checkpoints and run files (a NaN in final/policy.rlt, a flipped
//    byte in optimizer.rlt or envs.bin), one writer per run directory, refused resumes
//    with changed settings, --out only over regular files, checked writes to stdout, and
//    leftover staging directories of killed runs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli/cli_test_util.h"
#include "native/tensor_file.h"
#include "runlog/manifest.h"

namespace {

namespace fs = std::filesystem;
using rlt::cli::testing_util::Binary;
using rlt::cli::testing_util::CmdResult;
using rlt::cli::testing_util::ReadFile;
using rlt::cli::testing_util::RunCli;

// `ulimit -v N;` as a command prefix: an address-space limit that makes a reader which grows
// without bound fail. Not under AddressSanitizer (make test-sanitize), which reserves
// terabytes of address space for its shadow memory and cannot start under any such limit;
// there the command runs unlimited and the same assertions hold (make test runs it limited).
std::string AddressSpaceLimit(const std::string& kilobytes) {
#if defined(__SANITIZE_ADDRESS__)
  (void)kilobytes;
  return "";
#else
  return "ulimit -v " + kilobytes + ";";
#endif
}

constexpr const char* kTrain = "2023-01-02:2023-02-15";
constexpr const char* kTest = "2023-02-16:2023-03-31";

// A tiny intraday config: 60 synthetic sessions from 2023-01-02, train then test.
std::string IntradayConfig(const std::string& extra_env = "", int64_t total_steps = 256,
                           int64_t checkpoint_every = 0) {
  return "[run]\ntotal_steps = " + std::to_string(total_steps) +
         "\nthreads = 1\nseed = 3\ncheckpoint_every = " + std::to_string(checkpoint_every) +
         "\n[data]\nsource = \"synthetic\"\ndays = 60\n[split]\ntrain = \"" + kTrain +
         "\"\ntest = \"" + kTest + "\"\n[env]\nid = \"intraday\"\nnum_envs = 2\n" + extra_env +
         "[algo]\nn_steps = 64\nbatch_size = 64\nn_epochs = 1\n";
}

constexpr const char* kCartPole = R"([run]
total_steps = 100000000
seed = 1
threads = 1
checkpoint_every = 256
[env]
id = "cartpole"
num_envs = 2
[algo]
n_steps = 64
batch_size = 64
n_epochs = 1
)";

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class HostileCli : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_ / name; }
  std::string Write(const std::string& name, const std::string& text) {
    rlt::testing::WriteFile(Path(name), text);
    return Path(name);
  }
  // Trains the tiny intraday config (plus `flags`) into RUN_DIR `name`; asserts success.
  std::string TrainIntraday(const std::string& name, const std::string& flags = "",
                            int64_t checkpoint_every = 0) {
    const std::string config =
        Write(name + ".toml", IntradayConfig("", /*total_steps=*/256, checkpoint_every));
    const CmdResult r =
        RunCli("train " + config + " --run-dir " + Path(name) + " --quiet " + flags);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return Path(name);
  }
  rlt::testing::ScratchDir dir_{"rlt_hostile_"};
};

// ---- §1 Honesty -----------------------------------------------------------------------

// `--help` after an unknown command is a request for help: the top-level help, exit 0.
TEST_F(HostileCli, AnUnknownCommandWithHelpPrintsTheTopLevelHelp) {
  const CmdResult r = RunCli("no-such-command --help");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "Subcommands:")) << r.out;
  EXPECT_TRUE(Has(r.out, "train")) << r.out;
}

TEST_F(HostileCli, SetEnvRangeOnTestDatesIsRefusedWithExit2NamingBothRanges) {
  const std::string config = Write("c.toml", IntradayConfig());
  const CmdResult r =
      RunCli("train " + config + " --set env.range=2023-02-20:2023-03-24 --run-dir " + Path("run") +
             " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "2023-02-20:2023-03-24")) << r.out;
  EXPECT_TRUE(Has(r.out, kTest)) << r.out;
  EXPECT_FALSE(fs::exists(Path("run")));
}

TEST_F(HostileCli, ConfigFileEnvRangeReachingIntoTestIsRefused) {
  const std::string config = Write("c.toml", IntradayConfig("range = \"2023-01-02:2023-02-20\"\n"));
  const CmdResult r = RunCli("train " + config + " --run-dir " + Path("run") + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "2023-01-02:2023-02-20")) << r.out;
  EXPECT_FALSE(fs::exists(Path("run")));
}

TEST_F(HostileCli, TheObservationWindowReachingBackIntoTestIsRefused) {
  // Training sessions after the test range: the first one's observation window (nlags = 5
  // bars) holds the last bars of 2023-02-28, the session before 2023-03-01, a test date.
  const std::string config =
      Write("c.toml",
            "[run]\ntotal_steps = 256\nthreads = 1\n[data]\nsource = \"synthetic\"\ndays = "
            "60\n[split]\ntrain = \"2023-01-02:2023-01-31\"\ntest = "
            "\"2023-02-01:2023-02-28\"\n[env]\nid = \"intraday\"\nnum_envs = 2\nnlags = 5\n"
            "range = \"2023-03-01:2023-03-15\"\n[algo]\nn_steps = 64\nbatch_size = 64\n");
  const CmdResult r = RunCli("train " + config + " --run-dir " + Path("run") + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "training session 2023-02-28")) << r.out;
  EXPECT_TRUE(Has(r.out, "2023-02-01:2023-02-28")) << r.out;
  EXPECT_FALSE(fs::exists(Path("run")));
}

TEST_F(HostileCli, ResumeCannotMoveTrainingOntoTestEvenWithAllowConfigChange) {
  const std::string run = TrainIntraday("run");
  const CmdResult r =
      RunCli("train --resume " + run +
             " --set env.range=2023-03-01:2023-03-31 --allow-config-change --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "2023-03-01:2023-03-31")) << r.out;
  EXPECT_TRUE(Has(r.out, kTest)) << r.out;
}

TEST_F(HostileCli, WalkforwardFoldsWithAnEnvRangeOnTheirTestWindowAreRefused) {
  const std::string config = Write("c.toml", IntradayConfig());
  const CmdResult r =
      RunCli("walkforward " + config +
             " --folds 2 --set env.range=2023-01-02:2023-03-31 --quiet --out " + Path("wf"));
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "overlaps [split] test")) << r.out;
  EXPECT_FALSE(fs::exists(Path("wf/fold_1/final")));  // folds are numbered from 1
}

TEST_F(HostileCli, EvalChecksTheRecordedTrainingRangesNotSplitTrain) {
  // Training envs on 2023-02-16:2023-02-28 (outside [split] train and test): that range
  // is what the policy saw, so evaluating it is in-sample.
  const std::string config =
      Write("c.toml",
            "[run]\ntotal_steps = 256\nthreads = 1\nseed = 3\n[data]\nsource = "
            "\"synthetic\"\ndays = 60\n[split]\ntrain = \"2023-01-02:2023-02-15\"\nvalidation "
            "= \"2023-02-16:2023-02-28\"\ntest = \"2023-03-01:2023-03-31\"\n[env]\nid = "
            "\"intraday\"\nnum_envs = 2\n[algo]\nn_steps = 64\nbatch_size = 64\nn_epochs = 1\n");
  CmdResult r = RunCli("train " + config + " --set env.range=2023-02-16:2023-02-28 --run-dir " +
                       Path("run") + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json ranges = nlohmann::json::parse(ReadFile(Path("run/training_ranges.json")));
  EXPECT_EQ(ranges["ranges"][0]["range"], "2023-02-16:2023-02-28");
  EXPECT_EQ(ranges["ranges"][1]["range"], "2023-01-02:2023-02-15");
  const auto& sessions = ranges["sessions"];
  EXPECT_EQ(sessions.front(), "2023-01-02");
  EXPECT_EQ(sessions.back(), "2023-02-28");
  r = RunCli("eval " + Path("run") + " --range validation");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "env.range (training envs) 2023-02-16:2023-02-28")) << r.out;
  r = RunCli("eval " + Path("run") + " --range 2023-02-20:2023-02-22 --allow-in-sample --json", "",
             "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["in_sample"], true);
  r = RunCli("eval " + Path("run") + " --range test --json", "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["in_sample"], false);
}

// ---- §2 Integrity ---------------------------------------------------------------------

// Rewrites a tensor file (native/tensor_file.h) with a quiet NaN as the first value of its
// first float32 tensor (a valid file: its own checksum matches, only the MANIFEST's not).
bool PatchNanIntoTensorFile(const std::string& path) {
  auto file = rlt::native::TensorFile::Read(path);
  if (!file.ok()) return false;
  rlt::native::TensorFile patched;
  bool done = false;
  for (rlt::native::NamedTensor t : file->tensors()) {
    if (!done && t.dtype == rlt::native::DType::kFloat32 && !t.f32.empty()) {
      t.f32[0] = std::numeric_limits<float>::quiet_NaN();
      done = true;
    }
    patched.AddFloat32(t.name, t.shape, t.f32.data());
  }
  rlt::testing::WriteFile(path, patched.Serialize());
  return done;
}

void FlipByte(const std::string& path, size_t at) {
  std::string bytes = ReadFile(path);
  ASSERT_GT(bytes.size(), at);
  bytes[at] ^= 0x10;
  rlt::testing::WriteFile(path, bytes);
}

TEST_F(HostileCli, NanPatchedIntoFinalPolicyIsAnErrorForEvalAndSignal) {
  const std::string run = TrainIntraday("run");
  ASSERT_EQ(RunCli("data synth --kind intraday --symbols 1 --days 20 --out " + Path("bars.csv"))
                .exit_code,
            0);
  const std::string policy = run + "/final/policy.rlt";
  ASSERT_TRUE(PatchNanIntoTensorFile(policy));
  CmdResult r = RunCli("eval " + run);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "final/policy.rlt: checksum mismatch")) << r.out;
  r = RunCli("signal " + run + " --bars " + Path("bars.csv"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "final/policy.rlt: checksum mismatch")) << r.out;
  EXPECT_FALSE(Has(r.out, "HOLD")) << r.out;
  // With a MANIFEST that matches (as if training had diverged), the finite check stops it.
  ASSERT_TRUE(rlt::runlog::WriteDirManifest(run + "/final").ok());
  r = RunCli("eval " + run);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "final/policy.rlt: tensor")) << r.out;
  EXPECT_TRUE(Has(r.out, "NaN or inf")) << r.out;
  r = RunCli("signal " + run + " --bars " + Path("bars.csv") + " --json");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "NaN or inf")) << r.out;
}

TEST_F(HostileCli, FlippedByteInOptimizerOrEnvStateStopsResumeNamingTheFile) {
  const std::string run = TrainIntraday("run", "", /*checkpoint_every=*/128);
  const std::string ckpt = run + "/checkpoints/step_256";
  ASSERT_TRUE(fs::exists(ckpt + "/FORMAT"));
  for (const char* file : {"optimizer.rlt", "envs.bin"}) {
    const std::string path = ckpt + "/" + file;
    const std::string original = ReadFile(path);
    FlipByte(path, original.size() / 2);
    const CmdResult r = RunCli("train --resume " + run + " --set run.total_steps=512 --quiet");
    EXPECT_EQ(r.exit_code, 1) << file << ": " << r.out;
    EXPECT_TRUE(Has(r.out, path + ": checksum mismatch")) << r.out;
    rlt::testing::WriteFile(path, original);
  }
  const CmdResult ok = RunCli("train --resume " + run + " --set run.total_steps=512 --quiet");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
}

TEST_F(HostileCli, ASecondWriterIsRefusedNamingThePidAndADeadWritersLockIsTakenOver) {
  const std::string config = Write("cartpole.toml", kCartPole);
  const std::string run = Path("run");
  const CmdResult started = rlt::testing::RunCommand(Binary() + " train " + config + " --run-dir " +
                                                     run + " --quiet >/dev/null 2>&1 & echo $!");
  const pid_t pid = static_cast<pid_t>(std::stol(started.out));
  // Wait for its first checkpoint (at most 60 s).
  for (int i = 0; i < 600 && !fs::exists(run + "/checkpoints/step_256/MANIFEST"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(fs::exists(run + "/checkpoints/step_256/MANIFEST"));
  CmdResult r = RunCli("train --resume " + run + " --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "pid " + std::to_string(pid))) << r.out;
  r = RunCli("eval " + run + " --episodes 1");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "pid " + std::to_string(pid))) << r.out;
  ::kill(pid, SIGKILL);
  for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // The dead writer's lock file still names it; the lock itself is free.
  EXPECT_TRUE(Has(ReadFile(run + "/.lock"), std::to_string(pid)));
  r = RunCli("train --resume " + run + " --set run.total_steps=1 --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const std::string metrics = ReadFile(run + "/metrics.csv");
  EXPECT_FALSE(metrics.empty());
}

TEST_F(HostileCli, ResumeWithChangedSettingsIsRefusedListingTheKeys) {
  const std::string run = TrainIntraday("run");
  const std::string config_before = ReadFile(run + "/config.toml");
  CmdResult r = RunCli("train --resume " + run + " --set algo.gamma=0.5 --set run.seed=9 --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "algo.gamma")) << r.out;
  EXPECT_TRUE(Has(r.out, "run.seed")) << r.out;
  EXPECT_TRUE(Has(r.out, "--allow-config-change")) << r.out;
  EXPECT_EQ(ReadFile(run + "/config.toml"), config_before);
  EXPECT_FALSE(fs::exists(run + "/history.jsonl"));
  // Extending the run (and the other always-allowed keys) needs no flag; it is recorded.
  r = RunCli("train --resume " + run +
             " --set run.total_steps=384 --set run.checkpoint_every=128 --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<std::string> history = rlt::testing::Lines(ReadFile(run + "/history.jsonl"));
  ASSERT_EQ(history.size(), 1u);
  nlohmann::json h = nlohmann::json::parse(history[0]);
  EXPECT_EQ(h["changes"].size(), 2u);
  EXPECT_EQ(h["changes"][1]["key"], "run.total_steps");
  EXPECT_EQ(h["changes"][1]["from"], "256");
  EXPECT_EQ(h["changes"][1]["to"], "384");
  // With the flag, a changed algorithm setting is accepted and recorded.
  r = RunCli("train --resume " + run +
             " --set run.total_steps=448 --set algo.gamma=0.5 --allow-config-change --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  history = rlt::testing::Lines(ReadFile(run + "/history.jsonl"));
  ASSERT_EQ(history.size(), 2u);
  EXPECT_TRUE(Has(history[1], "\"key\":\"algo.gamma\"")) << history[1];
  EXPECT_TRUE(Has(ReadFile(run + "/config.toml"), "gamma = 0.5"));
  // A resume without changes writes no history line.
  r = RunCli("train --resume " + run + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(rlt::testing::Lines(ReadFile(run + "/history.jsonl")).size(), 2u);
}

TEST_F(HostileCli, OutIsWrittenOnlyOverRegularFilesOrNewPaths) {
  ASSERT_EQ(
      RunCli("data synth --kind intraday --symbols 1 --days 3 --out " + Path("bars.csv")).exit_code,
      0);
  Write("target.csv", "keep\n");
  fs::create_symlink(Path("target.csv"), Path("link.csv"));
  ASSERT_EQ(::mkfifo(Path("fifo.csv").c_str(), 0644), 0);
  for (const std::string& out : {Path("link.csv"), Path("fifo.csv")}) {
    CmdResult r = RunCli("features --input " + Path("bars.csv") + " --preset scaled --out " + out);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_TRUE(Has(r.out, "refusing to write")) << r.out;
    r = RunCli("data synth --kind intraday --symbols 1 --days 3 --out " + out);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_TRUE(Has(r.out, "refusing to write")) << r.out;
  }
  EXPECT_TRUE(fs::is_symlink(Path("link.csv")));
  EXPECT_EQ(ReadFile(Path("target.csv")), "keep\n");
  EXPECT_TRUE(fs::is_fifo(Path("fifo.csv")));
  EXPECT_EQ(
      RunCli("features --input " + Path("bars.csv") + " --preset scaled --out " + Path("new.csv"))
          .exit_code,
      0);
}

TEST_F(HostileCli, WritesToAFullStdoutExit1WithAMessage) {
  const std::string run = TrainIntraday("run");
  ASSERT_EQ(RunCli("data synth --kind intraday --symbols 1 --days 20 --out " + Path("bars.csv"))
                .exit_code,
            0);
  Write("returns.csv", "return\n0.01\n-0.02\n0.005\n");
  const std::string commands[] = {
      "metrics --returns " + Path("returns.csv"),
      "metrics --returns " + Path("returns.csv") + " --json",
      "data check " + Path("bars.csv"),
      "status " + run + " --json",
      "signal " + run + " --bars " + Path("bars.csv") + " --json",
      "eval " + run + " --json",
  };
  for (const std::string& args : commands) {
    const std::string err = Path("stderr.txt");
    const CmdResult r = RunCli(args + " >/dev/full", "", err);
    EXPECT_EQ(r.exit_code, 1) << args << ": " << ReadFile(err);
    EXPECT_TRUE(Has(ReadFile(err), "standard output")) << args << ": " << ReadFile(err);
  }
}

TEST_F(HostileCli, StagingLeftoversAreRemovedAndStatusSuggestsResumeOnlyWhenLoadable) {
  const std::string run = TrainIntraday("run", "", /*checkpoint_every=*/128);
  fs::create_directories(run + "/checkpoints/.step_384.tmp-99999-0a1b2c3d");
  rlt::testing::WriteFile(run + "/checkpoints/.step_384.tmp-99999-0a1b2c3d/policy.pt", "half");
  fs::create_directories(run + "/eval/.test.tmp-99999-0a1b2c3d");
  CmdResult r = RunCli("eval " + run, "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_FALSE(fs::exists(run + "/eval/.test.tmp-99999-0a1b2c3d"));
  r = RunCli("train --resume " + run + " --set run.total_steps=384 --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_FALSE(fs::exists(run + "/checkpoints/.step_384.tmp-99999-0a1b2c3d"));

  // A run that "died" (status running, process gone): resume is suggested only while a
  // checkpoint with a verified MANIFEST exists.
  nlohmann::json status = nlohmann::json::parse(ReadFile(run + "/status.json"));
  status["state"] = "running";
  status["pid"] = 999999999;
  rlt::testing::WriteFile(run + "/status.json", status.dump());
  r = RunCli("status " + run);
  EXPECT_TRUE(Has(r.out, "continue with rltrade train --resume")) << r.out;
  for (const auto& entry : fs::directory_iterator(run + "/checkpoints")) {
    FlipByte(entry.path().string() + "/policy.rlt", 100);
  }
  FlipByte(run + "/final/policy.rlt", 100);
  r = RunCli("status " + run);
  EXPECT_FALSE(Has(r.out, "--resume")) << r.out;
  EXPECT_TRUE(Has(r.out, "no loadable checkpoint")) << r.out;
}

// ---- §3 Never grow without bound; §4 validation of every value ------------------------

TEST_F(HostileCli, ReadersRefuseDevicesAndLongLinesInsteadOfGrowing) {
  // data check, features, train --data and eval --data read bars through one reader.
  for (const std::string cmd :
       {"data check /dev/zero", "features --input /dev/zero --preset scaled"}) {
    const CmdResult r = RunCli(cmd, AddressSpaceLimit("2000000"));
    EXPECT_NE(r.exit_code, 0) << cmd << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "'/dev/zero' is a character device, expected a regular file")) << r.out;
  }
  std::string text = IntradayConfig();
  text.replace(text.find("source = \"synthetic\""), 20, "source = \"file\"\nfile = \"/dev/zero\"");
  const std::string config = Write("c.toml", text);
  const CmdResult train = RunCli("train " + config + " --run-dir " + Path("run") + " --quiet",
                                 AddressSpaceLimit("4000000"));
  EXPECT_NE(train.exit_code, 0) << train.out;
  EXPECT_TRUE(Has(train.out, "character device")) << train.out;
  EXPECT_FALSE(fs::exists(Path("run")));
  const std::string wide =
      Write("wide.csv", "date,close\n2024-01-02," + std::string(100000, '1') + "\n");
  const CmdResult r = RunCli("data check " + wide);
  EXPECT_EQ(r.exit_code, 1) << r.out.substr(0, 500);
  EXPECT_TRUE(Has(r.out, ":2: the line is 100011 bytes long")) << r.out.substr(0, 500);
  EXPECT_LT(r.out.size(), 2000u);  // the line is not echoed
}

TEST_F(HostileCli, BadConfigValuesAreRefusedWithFileLineAndRangeLeavingNoRunDir) {
  struct Case {
    std::string line;      // appended to the config file's last section ([algo])
    std::string fragment;  // expected in the message
  };
  const Case cases[] = {
      {"ent_coef = nan", "[algo] 'ent_coef' = 'nan'"},
      {"vf_coef = inf", "'inf' is not a finite number"},
      {"vf_coef = 1e30", "[algo] vf_coef = 1e+30: must be in [0, 100]"},
      {"learning_rate = 1e30", "learning_rate = 1e+30: Adam step size must stay in (0, 1]"},
      {"learning_rate = 0", "a constant must be > 0"},
      {"learning_rate = -1", "a constant must be > 0"},
      {"learning_rate = \"linear(1e-3, -1)\"", "here it spans [-0.99"},
      {"clip_range = 0", "[algo] clip_range = 0: policy ratio clip must stay in (0, 10]"},
      {"n_steps = \"64\"",
       "[algo] 'n_steps' = \"64\": expected a number or true/false, found a string"},
      {"batch_size = 50", "the nearest valid values are 32 and 64"},
      {"[policy]\nlog_std_init = 1e30", "[policy] log_std_init = 1e+30: must be in [-20, 5]"},
      {"[features]\nclip = nan", "[features] 'clip' = 'nan'"},
      {"[run]\nthreads = -1", "[run] threads = -1: must be in [0, "},
      {"[run]\nthreads = 1000000", "[run] threads = 1000000: must be in [0, "},
      {"[run]\ncheckpoint_every = -1", "[run] checkpoint_every = -1: must be >= 0"},
      {"[run]\ntotal_steps = -5", "[run] total_steps = -5: must be >= 1"},
      {"[env]\ncost_rate = 2", "[env] cost_rate must be in [0, 1)"},
  };
  for (const Case& c : cases) {
    // The [run] section repeated below would be a duplicate: write those keys in place.
    std::string text = IntradayConfig();
    std::string line = c.line;
    if (line.rfind("[run]\n", 0) == 0) {
      const std::string key = line.substr(6, line.find(' ') - 6);
      const size_t at = text.find("\n" + key + " = ");
      if (at != std::string::npos) text.erase(at + 1, text.find('\n', at + 1) - at);
      text.insert(text.find("[run]\n") + 6, line.substr(6) + "\n");
      line.clear();
    } else if (line.rfind("[env]\n", 0) == 0) {
      text.insert(text.find("[env]\n") + 6, line.substr(6) + "\n");
      line.clear();
    } else if (line.rfind("[algo]", 0) != 0 && line[0] != '[') {
      const std::string key = line.substr(0, line.find(' '));
      const size_t at = text.find("\n" + key + " = ");
      if (at != std::string::npos) text.erase(at + 1, text.find('\n', at + 1) - at);
    }
    const std::string config = Write("c.toml", text + line + "\n");
    fs::remove_all(Path("run"));
    const CmdResult r = RunCli("train " + config + " --run-dir " + Path("run") + " --quiet");
    EXPECT_EQ(r.exit_code, 1) << c.line << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, config + ":")) << c.line << "\n" << r.out;  // file:line
    EXPECT_TRUE(Has(r.out, c.fragment)) << c.line << "\n" << r.out;
    EXPECT_FALSE(fs::exists(Path("run"))) << c.line;
  }
}

TEST_F(HostileCli, TrainAfterTestIsRefusedAndSyntheticIgnoredKeysWarn) {
  std::string text = IntradayConfig();
  text.replace(text.find(kTrain), std::string(kTrain).size(), "2023-03-01:2023-03-31");
  text.replace(text.find(kTest), std::string(kTest).size(), "2023-01-02:2023-02-15");
  const CmdResult r =
      RunCli("train " + Write("c.toml", text) + " --run-dir " + Path("run") + " --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "starts after test 2023-01-02:2023-02-15")) << r.out;
  EXPECT_FALSE(fs::exists(Path("run")));
  const CmdResult w =
      RunCli("train " + Write("w.toml", IntradayConfig()) +
             " --set data.timezone=Europe/Berlin --run-dir " + Path("w") + " --quiet");
  EXPECT_EQ(w.exit_code, 0) << w.out;
  EXPECT_TRUE(Has(w.out, "[data] timezone does not apply to source = \"synthetic\"")) << w.out;
}

TEST_F(HostileCli, MemoryIsEstimatedBeforeEnvironmentsAreBuilt) {
  const std::string config = Write("c.toml", IntradayConfig());
  for (const char* n : {"1000000000", "3000000"}) {
    // Under a 4 GB address-space limit: building the envs first would fail differently.
    const CmdResult r = RunCli(
        "train " + config + " --set env.num_envs=" + n + " --run-dir " + Path("run") + " --quiet",
        AddressSpaceLimit("4000000"));
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_TRUE(Has(r.out, "lower env.num_envs or algo.n_steps")) << r.out;
    EXPECT_TRUE(Has(r.out, std::string("env.num_envs ") + n)) << r.out;
    EXPECT_FALSE(fs::exists(Path("run")));
  }
}

TEST_F(HostileCli, EmptyOrZeroCliValuesAreRejectedNotReplacedByDefaults) {
  const std::string config = Write("c.toml", IntradayConfig());
  CmdResult r = RunCli("train " + config + " --run-dir \"\" --quiet");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "must not be empty")) << r.out;
  for (const char* flag : {"--test-days 0", "--train-days 0"}) {
    r = RunCli("walkforward " + config + " --folds 2 " + flag + " --out " + Path("wf") +
               " --quiet");
    EXPECT_NE(r.exit_code, 0) << flag << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, std::string(flag).substr(0, std::string(flag).find(" ")) +
                               ": Value 0 not in range 1 to"))
        << r.out;
    EXPECT_FALSE(fs::exists(Path("wf")));
  }
  r = RunCli("walkforward " + config + " --folds 2 --out \"\" --quiet");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "must not be empty")) << r.out;
}

TEST_F(HostileCli, DataSynthRejectsNonFiniteSignalAndDatesItsReaderCannotRead) {
  for (const std::string flags :
       {"--signal-to-noise nan", "--start 9999-12-31", "--start 2023-02-30"}) {
    const CmdResult r = RunCli("data synth --out " + Path("s.csv") + " " + flags);
    EXPECT_NE(r.exit_code, 0) << flags << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, flags.substr(0, flags.find(' ')))) << r.out;
    EXPECT_FALSE(fs::exists(Path("s.csv"))) << flags;
  }
}

TEST_F(HostileCli, MetricsRejectsImpossibleReturnsAndANanRiskFreeRate) {
  const std::string below = Write("below.csv", "return\n0.1\n-1.5\n0.2\n");
  CmdResult r = RunCli("metrics --returns " + below);
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Has(r.out, below + ":3")) << r.out;
  r = RunCli("metrics --returns " + Write("big.csv", "return\n1e308\n-0.5\n"));
  EXPECT_NE(r.exit_code, 0) << r.out;
  r = RunCli("metrics --returns " + Write("ok.csv", "return\n0.1\n0.2\n") + " --risk-free nan");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "--risk-free")) << r.out;
  // One BOM rule for every reader: skipped by the returns reader as by the bar reader.
  r = RunCli("metrics --returns " + Write("bom.csv", "\xEF\xBB\xBFreturn\n0.1\n0.2\n"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = RunCli("data check " + Write("bom_bars.csv",
                                   "\xEF\xBB\xBF"
                                   "date,close\n2024-01-02,10\n"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = RunCli("train " + Write("bom.toml", "\xEF\xBB\xBF" + IntradayConfig()) + " --run-dir " +
             Path("run") + " --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

// Never abort, never echo garbage. A network too large for memory is
// refused before LibTorch allocates it; bytes that are not UTF-8 (a run directory named
// with 0xFF, a Latin-1 symbol, garbage in metrics.csv) never make a JSON writer throw; a
// status.json of nulls and wrong types is read; binary bytes and a 10 MB line in an error
// are escaped and cut; a config path that is a directory says so.
TEST_F(HostileCli, NeverAbortsOnHugeNetworksOrBadBytesAndNeverEchoesGarbage) {
  const std::string config = Write("c.toml", IntradayConfig());
  CmdResult r = RunCli("train " + config + " --set policy.pi=[100000,100000] --run-dir " +
                       Path("huge") + " --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.out.substr(0, 2000);
  EXPECT_TRUE(Has(r.out, "lower the layer widths (policy.pi, policy.vf")) << r.out;
  EXPECT_FALSE(Has(r.out, "terminate called")) << r.out;
  EXPECT_FALSE(fs::exists(Path("huge")));
  for (const char* lr : {"nan", "-1", "'linear(nan, 0)'"}) {
    r = RunCli("train " + config + " --set algo.learning_rate=" + lr + " --run-dir " + Path("lr") +
               " --quiet");
    EXPECT_EQ(r.exit_code, 1) << lr << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "learning_rate")) << r.out;
    EXPECT_FALSE(fs::exists(Path("lr")));
  }

  // A run directory whose name holds byte 0xFF (made by printf: sh has no $'\xff'): trains,
  // finishes, and status --json is JSON.
  const std::string odd = "\"$(printf '" + Path("run") + "\\377')\"";
  r = RunCli("train " + config + " --run-dir " + odd + " --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(Path("run\xff")));
  r = RunCli("status " + odd + " --json", "", "/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json st = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(st.is_discarded()) << r.out;
  EXPECT_EQ(st["state"], "finished") << r.out;

  // Garbage in metrics.csv and a status.json of nulls and wrong types.
  const std::string run = TrainIntraday("run");
  { std::ofstream(Path("run/metrics.csv"), std::ios::app) << "garbage\x01\xff\xfe,\xe9\n"; }
  r = RunCli("status " + run + " --json", "", "/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_FALSE(nlohmann::json::parse(r.out, nullptr, false).is_discarded()) << r.out;
  Write("run/status.json",
        R"({"state": null, "step": "x", "metrics": {"a": null, "b": "\u0001"}, "pid": "abc",
            "fps": [1], "total_steps": {}})");
  for (const char* flags : {"", " --json"}) {
    r = RunCli("status " + run + flags);
    EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.out;
    EXPECT_FALSE(Has(r.out, "terminate called")) << r.out;
    EXPECT_FALSE(Has(r.out, "\x01")) << r.out;  // the control character is not echoed raw
  }

  // A Latin-1 symbol in a bar file, reported as JSON.
  r = RunCli(
      "data check " +
          Write("latin1.csv", "date,symbol,close\n2024-01-02,CAF\xc9,10\n2024-01-03,CAF\xc9,11\n") +
          " --json",
      "", "/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_FALSE(nlohmann::json::parse(r.out, nullptr, false).is_discarded()) << r.out;
  // ... and as text: the byte is shown escaped, never raw.
  r = RunCli("data check " + Path("latin1.csv"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "CAF\\xC9")) << r.out;
  EXPECT_FALSE(Has(r.out, "\xc9")) << r.out;

  // Binary bytes in a value are escaped; a 10 MB line is cut; a directory is named as one.
  r = RunCli("metrics --returns " + Write("bin.csv", "return\n0.01\n\xe9\xff\x01x\n"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "found '\\xE9\\xFF\\x01x'")) << r.out;
  EXPECT_FALSE(Has(r.out, "\xff")) << r.out;
  r = RunCli("metrics --returns " + Write("long.csv", "return\n" + std::string(10 << 20, '1')));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_LT(r.out.size(), 5000u);
  EXPECT_TRUE(Has(r.out, "more bytes not shown")) << r.out.substr(0, 300);
  fs::create_directories(Path("cfgdir"));
  r = RunCli("train " + Path("cfgdir") + " --run-dir " + Path("x"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "is a directory, expected a regular file")) << r.out;
  EXPECT_FALSE(fs::exists(Path("x")));
}

}  // namespace
