// End-to-end tests of rltrade under mpirun (dist/dist.h): `mpirun -np 2 rltrade
// walkforward` runs fold k on rank k mod 2 and writes exactly what one process writes (the
// concatenated daily returns and equity byte for byte, the same summary but for the output
// path, the same table on stdout); `mpirun -np 2 rltrade train --seeds 3` trains every seed
// bit for bit as one process does; an error is reported once and ends every rank, and a
// refusal on one rank alone ends the job within seconds, its message above OpenMPI's; the
// commands that do not spread their work are refused under mpirun. `mpirun -np 2 rltrade
// train CONFIG` trains one policy data-parallel: rank 0 writes one run, --resume on 2 ranks
// ends bit for bit where the uninterrupted run ended, on one process it continues with new
// environments; a rank killed (SIGKILL) or stopped (SIGSTOP) ends the job within 60 s and
// the run resumes from its last checkpoint. (That the 2-rank run equals one process with
// twice the environments is learn/data_parallel_test.cc.)
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_test_util.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;
using rlt::testing::ReadFile;
using rlt::testing::RunRltrade;

constexpr const char* kConfig = rlt::cli::testing_util::kSmallIntradayConfig;

// `mpirun -np N` before rltrade (CI runs as root: OpenMPI then needs both variables).
std::string Mpirun(int ranks) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + std::string(RLT_MPIEXEC) +
         " --oversubscribe -np " + std::to_string(ranks);
}

class MpiCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = rlt::testing::NewScratchDir("rlt_mpi_");
    config_ = (dir_ / "cfg.toml").string();
    rlt::testing::WriteFile(config_, kConfig);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string config_;
};

TEST_F(MpiCli, WalkforwardOnTwoRanksWritesWhatOneProcessWrites) {
  const std::string one = (dir_ / "one").string(), two = (dir_ / "two").string();
  const auto a = RunRltrade("walkforward " + config_ + " --folds 3 --out " + one + " --quiet", "",
                            "/dev/null");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  const auto b = RunRltrade("walkforward " + config_ + " --folds 3 --out " + two + " --quiet",
                            Mpirun(2), "/dev/null");
  ASSERT_EQ(b.exit_code, 0) << b.out;
  EXPECT_EQ(a.out, b.out);  // the table, printed once
  for (const char* f : {"daily_returns.csv", "equity.csv"}) {
    const std::string x = ReadFile(fs::path(one) / "walkforward" / f);
    EXPECT_GT(rlt::testing::Lines(x).size(), 10u) << f;
    EXPECT_EQ(x, ReadFile(fs::path(two) / "walkforward" / f)) << f;
  }
  const std::string s1 = ReadFile(fs::path(one) / "walkforward" / "summary.json");
  const std::string s2 = ReadFile(fs::path(two) / "walkforward" / "summary.json");
  EXPECT_NE(s1.find("\"fold\": 3"), std::string::npos);
  EXPECT_EQ(std::regex_replace(s1, std::regex(one), "OUT"),
            std::regex_replace(s2, std::regex(two), "OUT"));
  for (int k = 1; k <= 3; ++k) {  // each fold trained once, by its rank
    EXPECT_TRUE(fs::exists(fs::path(two) / ("fold_" + std::to_string(k)) / "final" / "MANIFEST"));
  }
}

TEST_F(MpiCli, AnErrorIsReportedOnceAndEndsEveryRank) {
  const std::string out = (dir_ / "taken").string();
  fs::create_directories(out);
  rlt::testing::WriteFile(fs::path(out) / "keep.txt", "x");
  const auto r =
      RunRltrade("walkforward " + config_ + " --folds 2 --out " + out + " --quiet", Mpirun(2));
  EXPECT_NE(r.exit_code, 0);
  const std::string message = "already exists and is not empty";
  const size_t first = r.out.find(message);
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(message, first + 1), std::string::npos) << "reported twice:\n" << r.out;
  EXPECT_EQ(ReadFile(fs::path(out) / "keep.txt"), "x");
}

// A refusal on one rank only: mpirun's MPMD form (`A : B`) gives rank 1 a setting it
// refuses, while rank 0 goes on into the data-parallel run and waits for rank 1 there.
// The job ends in seconds, not after the ranks' watchdog (600 s here), with the refusal
// above OpenMPI's banner, and nothing is written.
TEST_F(MpiCli, ARefusalOnOneRankEndsEveryRankWithItsMessageOnTop) {
  const std::string run = (dir_ / "run").string();
  const std::string common = " --run-dir " + run + " --quiet --set run.rank_timeout_seconds=600";
  const auto start = std::chrono::steady_clock::now();
  const auto r =
      RunRltrade("train " + config_ + common + " : -np 1 " + rlt::testing::RltradeBinary() +
                     " train " + config_ + common + " --set env.num_envs=0",
                 Mpirun(1));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_LT(seconds, 120) << r.out;
  const std::string refusal = "num_envs";
  const size_t at = r.out.find(refusal);
  ASSERT_NE(at, std::string::npos) << r.out;
  for (const char* banner : {"MPI_ABORT", "-----", "mpirun"}) {
    const size_t b = r.out.find(banner);
    if (b != std::string::npos) {
      EXPECT_LT(at, b) << banner << " before the refusal:\n" << r.out;
    }
  }
  EXPECT_NE(r.out.find("ending the job (the reason is above)"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(fs::path(run) / "final")) << r.out;
}

TEST_F(MpiCli, TrainSeedsOnTwoRanksTrainEachSeedAsOneProcessDoes) {
  const std::string one = (dir_ / "s1").string(), two = (dir_ / "s2").string();
  ASSERT_EQ(RunRltrade("train " + config_ + " --seeds 3 --run-dir " + one + " --quiet").exit_code,
            0);
  const auto r =
      RunRltrade("train " + config_ + " --seeds 3 --run-dir " + two + " --quiet", Mpirun(2));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(ReadFile(fs::path(one) / "seeds.json"), ReadFile(fs::path(two) / "seeds.json"));
  for (const char* seed : {"seed_4", "seed_5", "seed_6"}) {  // seeds 4, 6 on rank 0; 5 on 1
    for (const char* f : {"policy.rlt", "state.rlt", "envs.bin", "normalizer.json"}) {
      const fs::path a = fs::path(one) / seed / "final" / f, b = fs::path(two) / seed / "final" / f;
      ASSERT_TRUE(fs::exists(b)) << b;
      EXPECT_EQ(ReadFile(a), ReadFile(b)) << seed << "/" << f;
    }
  }
}

TEST_F(MpiCli, CommandsThatDoNotSpreadTheirWorkAreRefusedUnderMpirun) {
  auto r = RunRltrade("data synth --days 5 --out " + (dir_ / "bars.csv").string(), Mpirun(2));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("only `rltrade walkforward` (its folds), `rltrade train` (its seeds, or "
                       "one policy data-parallel) and `rltrade tune` (its trials) spread their "
                       "work over the ranks"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "bars.csv"));
}

// ---- Data-parallel training: one policy on the ranks --------------------

// CartPole, 2 environments per rank: with 2 ranks, 4 environments of 32 steps per update
// and minibatches of 16 samples per environment (batch_size 64 = 4 x 16).
constexpr const char* kCartPole = R"toml(
[run]
total_steps = 4096
seed = 3
threads = 1
checkpoint_every = 1024
[env]
id = "cartpole"
num_envs = 2
[algo]
n_steps = 32
batch_size = 64
n_epochs = 4
norm_obs = true
norm_reward = true
learning_rate = "linear(1e-3, 0)"
[policy]
pi = [32, 32]
vf = [32, 32]
)toml";

// metrics.csv without the columns that measure time and the machine (time/fps, sys/*).
std::string TrainingColumns(const std::string& csv) {
  std::string out;
  std::vector<bool> keep;
  for (const std::string& line : rlt::testing::Lines(csv)) {
    std::vector<std::string> cells;
    std::stringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
    if (keep.empty()) {
      for (const std::string& name : cells) {
        keep.push_back(name != "time/fps" && name.rfind("sys/", 0) != 0);
      }
    }
    for (size_t k = 0; k < cells.size() && k < keep.size(); ++k) {
      if (keep[k]) out += cells[k] + ",";
    }
    out += "\n";
  }
  return out;
}

class MpiTrain : public MpiCli {
 protected:
  void SetUp() override {
    MpiCli::SetUp();
    cartpole_ = (dir_ / "cartpole.toml").string();
    rlt::testing::WriteFile(cartpole_, kCartPole);
  }
  // A copy of run `from` as it was at checkpoint step_<step>: later checkpoints and final/
  // removed (what a run killed after that checkpoint leaves).
  std::string CutAt(const std::string& from, const std::string& name, int step) {
    const fs::path to = dir_ / name;
    fs::copy(from, to, fs::copy_options::recursive);
    fs::remove_all(to / "final");
    for (const auto& e : fs::directory_iterator(to / "checkpoints")) {
      if (std::stoi(e.path().filename().string().substr(5)) > step) fs::remove_all(e.path());
    }
    return to.string();
  }
  void ExpectOnePolicyOnTwoRanksResumesBitForBit(const std::string& sets);
  std::string cartpole_;
};

// Trains kCartPole (with `sets`, --set options) on 2 ranks, checks what rank 0 wrote, and
// resumes it from a mid-run checkpoint on 2 ranks (bit for bit) and on one process.
void MpiTrain::ExpectOnePolicyOnTwoRanksResumesBitForBit(const std::string& sets) {
  const std::string run = (dir_ / "dp").string();
  const auto r = RunRltrade("train " + cartpole_ + sets + " --run-dir " + run, Mpirun(2));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("on 2 ranks of 2 environments each (4 environments, one policy)"),
            std::string::npos)
      << r.out;
  // Rank 0 wrote one run: every update once, counting both ranks' steps.
  const std::vector<std::string> rows =
      rlt::testing::Lines(ReadFile(fs::path(run) / "metrics.csv"));
  ASSERT_EQ(rows.size(), 1u + 4096 / 128);
  EXPECT_EQ(rows[1].substr(0, 4), "128,");
  for (const char* f : {"group.txt", "member_1.bin", "envs.bin", "policy.rlt"}) {
    EXPECT_TRUE(fs::exists(fs::path(run) / "final" / f)) << f;
  }
  EXPECT_EQ(ReadFile(fs::path(run) / "final" / "group.txt"), "ranks 2\nenvs_per_rank 2\n");

  // Killed after step 2048: --resume on 2 ranks ends where the uninterrupted run ended.
  const std::string cut = CutAt(run, "cut", 2048);
  const auto resumed = RunRltrade("train --resume " + cut + " --quiet", Mpirun(2));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  for (const char* f : {"policy.rlt", "envs.bin", "member_1.bin", "normalizer.rlt"}) {
    EXPECT_TRUE(ReadFile(fs::path(run) / "final" / f) == ReadFile(fs::path(cut) / "final" / f))
        << f << " differs";
  }
  EXPECT_TRUE(TrainingColumns(ReadFile(fs::path(run) / "metrics.csv")) ==
              TrainingColumns(ReadFile(fs::path(cut) / "metrics.csv")))
      << "metrics.csv differs";

  // On another number of ranks (here one process) the policy continues, the envs restart.
  const std::string alone = CutAt(run, "alone", 2048);
  const auto single = RunRltrade("train --resume " + alone);
  ASSERT_EQ(single.exit_code, 0) << single.out;
  EXPECT_NE(single.out.find("was written by 2 ranks of 2 environments and this run has 1"),
            std::string::npos)
      << single.out;
  EXPECT_TRUE(fs::exists(fs::path(alone) / "final" / "MANIFEST"));
}

TEST_F(MpiTrain, OnePolicyOnTwoRanksResumesBitForBit) {
  ExpectOnePolicyOnTwoRanksResumesBitForBit("");
}

// A recurrent policy: each rank's LSTM states travel in its member file, so the 2-rank
// resume is bit for bit too (2 sequences of 8 steps per environment per minibatch).
TEST_F(MpiTrain, OneRecurrentPolicyOnTwoRanksResumesBitForBit) {
  ExpectOnePolicyOnTwoRanksResumesBitForBit(
      " --set policy.recurrent=lstm --set policy.lstm_hidden_size=16 --set "
      "algo.sequence_length=8");
}

TEST_F(MpiTrain, SettingsDataParallelTrainingCannotUseAreRefusedBeforeAnythingIsWritten) {
  const std::string run = (dir_ / "bad").string();
  auto r =
      RunRltrade("train " + cartpole_ + " --set algo.batch_size=2 --run-dir " + run, Mpirun(2));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("batch_size must be a multiple of env.num_envs x ranks = 2 x 2 = 4"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("e.g. batch_size = 4"), std::string::npos) << r.out;
  r = RunRltrade("train " + cartpole_ + " --set policy.backend=torch --run-dir " + run, Mpirun(2));
  EXPECT_NE(r.exit_code, 0);
#ifdef RLT_TEST_WITH_TORCH
  EXPECT_NE(r.out.find("runs on the native backend"), std::string::npos) << r.out;
#else
  // A build without LibTorch refuses the torch backend before data parallelism is asked.
  EXPECT_NE(r.out.find("-DRLT_WITH_TORCH=ON"), std::string::npos) << r.out;
#endif
  // A recurrent minibatch of one 8-step sequence cannot take one from each of 4 envs.
  r = RunRltrade("train " + cartpole_ +
                     " --set policy.recurrent=lstm --set algo.sequence_length=8 --set "
                     "algo.batch_size=8 --run-dir " +
                     run,
                 Mpirun(2));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("batch_size / sequence_length = 1 must be a multiple of env.num_envs x "
                       "ranks = 2 x 2 = 4"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("e.g. batch_size = 32"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(run));
}

// Evolution strategies: the population split over 2 ranks is the
// one-process population — the same fitnesses every generation (metrics.csv) and the same
// parameters, Adam state and observation statistics bit for bit — and a checkpoint written
// by one process resumes on 2 ranks bit for bit.
TEST_F(MpiTrain, EsPopulationOnTwoRanksEqualsOneProcess) {
  const std::string config = (dir_ / "es.toml").string();
  rlt::testing::WriteFile(config, rlt::cli::testing_util::kSmallIntradayEsConfig);
  const std::string one = (dir_ / "es1").string(), two = (dir_ / "es2").string(),
                    half = (dir_ / "es_half").string();
  const std::string steps = " --set run.total_steps=120000 --quiet";
  ASSERT_EQ(RunRltrade("train " + config + steps + " --run-dir " + one).exit_code, 0);
  const auto r = RunRltrade("train " + config + steps + " --run-dir " + two, Mpirun(2));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ASSERT_EQ(RunRltrade("train " + config + " --set run.total_steps=60000 --quiet --run-dir " + half)
                .exit_code,
            0);
  const auto resumed = RunRltrade("train --resume " + half + steps, Mpirun(2));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const std::string rows = TrainingColumns(ReadFile(fs::path(one) / "metrics.csv"));
  EXPECT_GT(rlt::testing::Lines(rows).size(), 6u);
  EXPECT_EQ(rows, TrainingColumns(ReadFile(fs::path(two) / "metrics.csv")));
  EXPECT_EQ(rows, TrainingColumns(ReadFile(fs::path(half) / "metrics.csv")));
  for (const char* f : {"es_state.bin", "policy.rlt", "normalizer.rlt"}) {
    const std::string expected = ReadFile(fs::path(one) / "final" / f);
    EXPECT_FALSE(expected.empty()) << f;
    EXPECT_TRUE(expected == ReadFile(fs::path(two) / "final" / f)) << f;  // binary: no dump
    EXPECT_TRUE(expected == ReadFile(fs::path(half) / "final" / f)) << f;
  }
  // Every rank needs a pair: refused before anything is written.
  const std::string never = (dir_ / "es_never").string();
  const auto small =
      RunRltrade("train " + config + " --set algo.population=2 --run-dir " + never, Mpirun(2));
  EXPECT_NE(small.exit_code, 0);
  EXPECT_NE(small.out.find("than the 2 ranks, and every rank needs one; raise population to at "
                           "least 4"),
            std::string::npos)
      << small.out;
  EXPECT_FALSE(fs::exists(never));
}

// `bench mpi` and `bench train` under mpirun measure the data-parallel run; the parameter
// count is the analytic one of pi = vf = [32, 32] on CartPole (obs 4, 2 actions):
// 2 x (4*32 + 32 + 32*32 + 32) + (32*2 + 2) + (32 + 1) = 2531.
TEST_F(MpiTrain, BenchMpiAndBenchTrainMeasureTheRanks) {
  auto r =
      RunRltrade("bench mpi --config " + cartpole_ + " --steps 512 --json", Mpirun(2), "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"], 2);
  EXPECT_EQ(j["parameters"], 2531);
  bool policy_size = false;
  for (const auto& a : j["allreduce"]) {
    EXPECT_GT(a["median_seconds"].get<double>(), 0);
    EXPECT_GT(a["bus_gbps"].get<double>(), 0);
    policy_size = policy_size || a["floats"] == 2531;
  }
  EXPECT_TRUE(policy_size);
  EXPECT_GT(j["env_steps_per_sec"].get<double>(), 0);
  EXPECT_GE(j["communicate_fraction"].get<double>(), 0);
  EXPECT_LT(j["communicate_fraction"].get<double>(), 1);
  ASSERT_EQ(j["projection"].size(), 8u);
  EXPECT_EQ(j["projection"][3]["ranks"], 512);

  r = RunRltrade("bench train --config " + cartpole_ + " --steps 512 --json", Mpirun(2),
                 "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json t = nlohmann::json::parse(r.out);
  EXPECT_EQ(t["ranks"], 2);
  EXPECT_EQ(t["envs_per_rank"], 2);
  EXPECT_GT(t["one_rank_env_steps_per_sec"].get<double>(), 0);
  EXPECT_NEAR(t["scaling_efficiency"].get<double>(), t["speedup"].get<double>() / 2, 1e-9);
}

// Trials on the ranks: the study a single process runs, each trial run once,
// on both ranks (journaled as "rank"); with training, each trial equals one process's.
TEST_F(MpiTrain, TuneTrialsOnTwoRanksEqualOneProcess) {
  const std::string branin = (dir_ / "branin.toml").string();
  rlt::testing::WriteFile(branin, "x1 = { uniform = [-5, 10] }\nx2 = { uniform = [0, 15] }\n");
  auto study = [&](const std::string& args, const std::string& prefix) {
    const auto r = RunRltrade("tune " + args + " --json --quiet", prefix, "/dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return r;
  };
  auto journal = [](const std::string& out) {
    std::vector<nlohmann::json> lines;
    for (const std::string& l : rlt::testing::Lines(ReadFile(fs::path(out) / "trials.jsonl"))) {
      lines.push_back(nlohmann::json::parse(l));
    }
    return lines;
  };
  // Every method, the learning ones (whose proposals depend on earlier scores) and pruning
  // included: the same points and values as one process running as many trials at once
  // (--parallel 2: two ranks, so trial i is proposed with the scores of trials 0 .. i - 2,
  // tune/study.h's lag). With pruning, which trials are promoted depends on the order results
  // arrive in, as with --parallel; the first rungs (every trial's point and its value at the
  // first budget) do not.
  for (const char* name : {"sobol", "tpe", "cmaes", "tpe --prune asha"}) {
    const std::string method = name;
    SCOPED_TRACE(method);
    const bool pruned = method.find("asha") != std::string::npos;
    const std::string tag = method.substr(0, method.find(' ')) + (pruned ? "_asha" : "");
    const std::string one = (dir_ / ("t1_" + tag)).string(), two = (dir_ / ("t2_" + tag)).string();
    const std::string common =
        "--space " + branin + " --objective-fn branin --method " + method + " --trials 16";
    const auto a = study(common + " --parallel 2 --out " + one, "");
    const auto b = study(common + " --out " + two, Mpirun(2));
    std::map<int, nlohmann::json> first_a, first_b;
    std::set<int> ranks;
    for (const auto& t : journal(one)) {
      if (t["rung"] == 0) first_a[t["trial"].get<int>()] = t;
    }
    for (const auto& t : journal(two)) {
      if (t["rung"] == 0) first_b[t["trial"].get<int>()] = t;
      ranks.insert(t["rank"].get<int>());
    }
    ASSERT_EQ(first_a.size(), 16u);
    ASSERT_EQ(first_b.size(), 16u);
    for (const auto& [trial, t] : first_a) {
      EXPECT_EQ(t["params"], first_b[trial]["params"]) << trial;
      EXPECT_EQ(t["objective"], first_b[trial]["objective"]) << trial;
    }
    if (!pruned) {
      EXPECT_EQ(nlohmann::json::parse(a.out)["best_objective"],
                nlohmann::json::parse(b.out)["best_objective"]);
    }
    EXPECT_EQ(ranks.count(1), 1u);  // rank 1 serves trials (rank 0 dispatches, and helps)
  }

  // Training trials: each rank trains its trials; the scores equal one process's.
  const std::string space = (dir_ / "lr.toml").string();
  rlt::testing::WriteFile(space, "\"algo.learning_rate\" = { log_uniform = [1e-4, 3e-3] }\n");
  const std::string trained1 = (dir_ / "r1").string(), trained2 = (dir_ / "r2").string();
  const std::string train_args =
      cartpole_ + " --space " + space + " --method sobol --trials 2 --set run.total_steps=1024";
  study(train_args + " --out " + trained1, "");
  study(train_args + " --out " + trained2, Mpirun(2));
  const auto ta = journal(trained1), tb = journal(trained2);
  ASSERT_EQ(ta.size(), 2u);
  ASSERT_EQ(tb.size(), 2u);
  for (size_t i = 0; i < ta.size(); ++i) {
    EXPECT_EQ(ta[i]["status"], "ok") << ta[i].dump();
    EXPECT_EQ(ta[i]["params"], tb[i]["params"]);
    EXPECT_EQ(ta[i]["objective"], tb[i]["objective"]);
    EXPECT_EQ(ta[i]["steps"], tb[i]["steps"]);
  }
  EXPECT_NE(tb[0]["rank"], tb[1]["rank"]);
}

// The PIDs of the processes whose parent is `parent` (mpirun's ranks on this machine).
std::vector<pid_t> Children(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(std::stoi(name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A long data-parallel run; once it has written a checkpoint, `signal` goes to one rank.
// The job must end within 60 s with a non-zero status, and the run must resume.
void KillOneRank(const fs::path& dir, const std::string& config, int signal,
                 const std::string& expected_message) {
  const std::string run = (dir / "long").string(), log = (dir / "long.log").string();
  const std::string command =
      "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; exec " +
      std::string(RLT_MPIEXEC) + " --oversubscribe -np 2 " + rlt::testing::RltradeBinary() +
      " train " + config +
      " --set run.total_steps=100000000 --set run.rank_timeout_seconds=10 --run-dir " + run +
      " --quiet > " + log + " 2>&1";
  const pid_t mpirun = ::fork();
  ASSERT_GE(mpirun, 0);
  if (mpirun == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (seconds() < 60 && !fs::exists(fs::path(run) / "checkpoints")) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(fs::exists(fs::path(run) / "checkpoints")) << ReadFile(log);
  std::vector<pid_t> ranks = Children(mpirun);
  ASSERT_EQ(ranks.size(), 2u) << ReadFile(log);
  ASSERT_EQ(::kill(ranks[1], signal), 0);
  const auto hit = std::chrono::steady_clock::now();
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(mpirun, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() - hit < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (done == 0) {  // still running: fail, and do not leave the job behind
    ::kill(ranks[1], SIGCONT);
    ::kill(mpirun, SIGKILL);
    ::waitpid(mpirun, &status, 0);
    FAIL() << "the job did not end within 60 s of the signal:\n" << ReadFile(log);
  }
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(log);
  EXPECT_NE(ReadFile(log).find(expected_message), std::string::npos) << ReadFile(log);
  // The last checkpoint stays loadable: the run resumes on 2 ranks and finishes.
  int64_t last = 0;
  for (const auto& e : fs::directory_iterator(fs::path(run) / "checkpoints")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("step_", 0) == 0) last = std::max<int64_t>(last, std::stoll(name.substr(5)));
  }
  ASSERT_GT(last, 0);
  const auto resumed = RunRltrade(
      "train --resume " + run + " --set run.total_steps=" + std::to_string(last + 512) + " --quiet",
      Mpirun(2));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_TRUE(fs::exists(fs::path(run) / "final" / "MANIFEST"));
}

TEST_F(MpiTrain, ARankKilledEndsTheJob) {
  KillOneRank(dir_, cartpole_, SIGKILL, "exited on signal 9");
}

TEST_F(MpiTrain, AStoppedRankEndsTheJobWithAMessage) {
  KillOneRank(dir_, cartpole_, SIGSTOP, "no answer from the other ranks for 10 s");
}

}  // namespace
