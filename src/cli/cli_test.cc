// End-to-end tests of the `rltrade` binary: run it as a user would and check its output
// against values computed here independently (from the bar file it read).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "cli/cli_test_util.h"
#include "market/csv.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;

using rlt::cli::testing_util::CmdResult;
using rlt::cli::testing_util::ReadFile;

CmdResult RunRltrade(const std::string& args) { return rlt::cli::testing_util::RunCli(args); }

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = rlt::testing::NewScratchDir("rlt_cli_"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Synth(const std::string& name, int seed, int days = 5) {
    const std::string path = (dir_ / name).string();
    CmdResult r =
        RunRltrade("data synth --kind intraday --symbols 1 --days " + std::to_string(days) +
                   " --bar-minutes 5 --seed " + std::to_string(seed) + " --out " + path);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return path;
  }
  fs::path dir_;
};

TEST_F(CliTest, DataSynthIsByteIdenticalForTheSameSeed) {
  const std::string a = ReadFile(Synth("a.csv", 3)), b = ReadFile(Synth("b.csv", 3));
  const std::string c = ReadFile(Synth("c.csv", 4));
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST_F(CliTest, DataCheckPassesACleanFileAndReportsFileLineOfABadOne) {
  const std::string good = Synth("good.csv", 1);
  CmdResult ok = RunRltrade("data check " + good + " --timezone Asia/Kolkata");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  const std::string bad = (dir_ / "bad.csv").string();
  std::ofstream(bad) << "date,open,high,low,close,volume\n"
                        "2024-01-02,10,11,9,10.5,100\n"
                        "2024-01-03,10,9.5,9,10.5,100\n";  // high below close
  CmdResult r = RunRltrade("data check " + bad);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("bad.csv:3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("high"), std::string::npos) << r.out;
}

TEST_F(CliTest, IndicatorJsonMatchesAnSmaComputedHere) {
  const std::string path = Synth("bars.csv", 2);
  CmdResult r = RunRltrade("indicator sma --input " + path +
                           " --timezone Asia/Kolkata --param period=5 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["indicator"], "sma");
  rlt::market::CsvReadOptions o;
  o.timezone = "Asia/Kolkata";
  auto md = rlt::market::ReadBarsCsv(path, o);
  ASSERT_TRUE(md.ok());
  const auto& close = md->symbols[0].close;
  const auto& values = j["outputs"].begin().value();
  ASSERT_EQ(values.size(), close.size());
  for (size_t t = 0; t < close.size(); ++t) {
    if (t < 4) {
      EXPECT_TRUE(values[t].is_null());
      continue;
    }
    const double mean = (close[t] + close[t - 1] + close[t - 2] + close[t - 3] + close[t - 4]) / 5;
    EXPECT_NEAR(values[t].get<double>(), mean, 1e-9 * mean);
  }
}

TEST_F(CliTest, FeaturesWritesOneRowPerBarWithEmptyWarmUpCells) {
  const std::string path = Synth("bars.csv", 2);
  const std::string out = (dir_ / "f.csv").string();
  CmdResult r = RunRltrade("features --input " + path +
                           " --timezone Asia/Kolkata --preset fast22 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(out);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("timestamp,hl,co,volume,sma5,", 0), 0u) << header;
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), 22);
  int rows = 0;
  while (std::getline(in, line)) {
    if (rows == 0) {
      EXPECT_NE(line.find(",,"), std::string::npos) << "warm-up row has empty cells";
    }
    ++rows;
  }
  EXPECT_EQ(rows, 5 * 75);
}

TEST_F(CliTest, BenchEnvPrintsTheContractedJsonKeys) {
  CmdResult r =
      RunRltrade("bench env --env intraday --envs 8 --threads 1 --seconds 0.2 --days 10 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key :
       {"env", "envs", "threads", "obs_dim", "steps", "seconds", "steps_per_sec"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["envs"], 8);
  EXPECT_EQ(j["obs_dim"], 6 * 22 + 3);
  EXPECT_GT(j["steps_per_sec"].get<double>(), 0.0);
}

// The install script puts OpenBLAS behind libblas.so.3; the report must say which BLAS
// LibTorch actually mapped, and measure matmul for every size at every thread count.
TEST_F(CliTest, BenchMachineReportsTheBlasInUseAndMatmulRates) {
  CmdResult r = RunRltrade("bench machine --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(j["blas_library"].get<std::string>().find("openblas"), std::string::npos)
      << j["blas_library"];
  const int cores = j["cores"].get<int>();
  ASSERT_GE(cores, 1);
  const auto& cpu = j["devices"][0];
  EXPECT_EQ(cpu["device"], "cpu");
  EXPECT_EQ(cpu["matmul"].size(), static_cast<size_t>(3 * cores));  // sizes 256, 1024, 2000
  for (const auto& m : cpu["matmul"]) EXPECT_GT(m["gflops"].get<double>(), 0.0);
  EXPECT_GT(j["memcpy_gbytes_per_sec"].get<double>(), 0.0);
}

TEST_F(CliTest, DemoRunsEndToEnd) {
  CmdResult r = RunRltrade("demo --days 40 --out " + (dir_ / "demo").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("momentum5"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dir_ / "demo" / "synth_intraday.csv"));
}

TEST_F(CliTest, UsageErrorsExitWithCodeTwoAndBadEnvIdsNameTheNearest) {
  EXPECT_EQ(RunRltrade("data synth --no-such-flag").exit_code, 2);
  CmdResult r = RunRltrade("bench env --env intrady --seconds 0.1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("did you mean 'intraday'"), std::string::npos) << r.out;
}

// eval --set refuses, before reading the run, a key the policy observes (exit 2, the
// key named) and malformed --set and --costs text (exit 1).
TEST_F(CliTest, EvalSetRefusesKeysOutsideTheExecutionSettingsByName) {
  CmdResult r = RunRltrade("eval " + (dir_ / "no_run").string() + " --set env.initial_capital=5");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--set env.initial_capital"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("env.cost_rate"), std::string::npos) << r.out;
  r = RunRltrade("eval " + (dir_ / "no_run").string() + " --set env.cost_rate");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("expected env.KEY=VALUE"), std::string::npos) << r.out;
  r = RunRltrade("eval " + (dir_ / "no_run").string() + " --costs 5,2");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("--costs 5,2"), std::string::npos) << r.out;
  // An empty list is an error, not an evaluation without the sweep.
  r = RunRltrade("eval " + (dir_ / "no_run").string() + " --costs ''");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("--costs : '' is not a number"), std::string::npos) << r.out;
}

// The oracle: empyrical's mixed_returns series and its published metrics
// (tests/fixtures/empyrical_mixed.csv, from empyrical/tests/test_stats.py).
TEST_F(CliTest, MetricsJsonHasTheContractedKeysAndEmpyricalsValues) {
  std::ifstream oracle(std::string(RLT_SOURCE_DIR) + "/tests/fixtures/empyrical_mixed.csv");
  ASSERT_TRUE(oracle.good());
  std::map<std::string, double> expected;
  std::string line, returns_csv = "return\n";
  while (std::getline(oracle, line)) {
    if (line.rfind("# returns:", 0) == 0) {
      std::stringstream cells(line.substr(10));
      std::string cell;
      while (std::getline(cells, cell, ',')) returns_csv += (cell == "nan" ? "" : cell) + "\n";
    } else if (!line.empty() && line[0] != '#' && line.rfind("metric,", 0) != 0) {
      expected[line.substr(0, line.find(','))] = std::stod(line.substr(line.rfind(',') + 1));
    }
  }
  const std::string path = (dir_ / "returns.csv").string();
  std::ofstream(path) << returns_csv;

  CmdResult r = RunRltrade("metrics --returns " + path + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"sharpe_ratio", "sortino_ratio", "downside_risk", "annual_return",
                          "annual_volatility", "max_drawdown", "calmar_ratio", "cum_returns_final",
                          "win_rate", "observations", "psr", "max_drawdown_duration"}) {
    EXPECT_TRUE(j.contains(key)) << key << " missing in " << r.out;
  }
  for (const char* key :
       {"sharpe_ratio", "sortino_ratio", "annual_return", "max_drawdown", "calmar_ratio"}) {
    EXPECT_NEAR(j.at(key).get<double>(), expected.at(key), 1e-8) << key;
  }
  EXPECT_EQ(j.at("observations").get<int>(), 8);  // 9 rows, the first missing

  // One return: the ratios are undefined (NaN in empyrical) and print as null.
  const std::string one = (dir_ / "one.csv").string();
  std::ofstream(one) << "return\n0.01\n";
  CmdResult single = RunRltrade("metrics --returns " + one + " --json");
  ASSERT_EQ(single.exit_code, 0) << single.out;
  EXPECT_TRUE(nlohmann::json::parse(single.out).at("sharpe_ratio").is_null()) << single.out;

  // A bad cell is an error naming file:line and the column.
  const std::string bad = (dir_ / "bad.csv").string();
  std::ofstream(bad) << "return\n0.01\n1,5\n";
  CmdResult err = RunRltrade("metrics --returns " + bad);
  EXPECT_EQ(err.exit_code, 1);
  EXPECT_NE(err.out.find(bad + ":3: column 2"), std::string::npos) << err.out;
}

// One day of naive 1-minute bars 04:00..20:00 (SPY's extended hours).
std::string WriteExtendedHoursDay(const fs::path& dir, int days = 2) {
  std::string text = "date,open,high,low,close,volume\n";
  for (int day = 1; day <= days; ++day) {
    for (int m = 4 * 60; m <= 20 * 60; ++m) {
      const double p = 600 + (m % 17) * 0.1;
      text += "2025-07-0" + std::to_string(day) + " " + (m / 60 < 10 ? "0" : "") +
              std::to_string(m / 60) + ":" + (m % 60 < 10 ? "0" : "") + std::to_string(m % 60) +
              ":00," + std::to_string(p) + "," + std::to_string(p + 0.5) + "," +
              std::to_string(p - 0.5) + "," + std::to_string(p) + ",100\n";
    }
  }
  const std::string path = (dir / "spy_ext.csv").string();
  std::ofstream(path) << text;
  return path;
}

// Naive timestamps read in a zone nobody gave are noted once on stderr; not when
// --timezone is given.
TEST_F(CliTest, NaiveTimestampsWithoutATimezoneAreNotedOnceOnStderr) {
  const std::string path = WriteExtendedHoursDay(dir_);
  const std::string err = (dir_ / "err.txt").string();
  const std::string note =
      "note: " + path +
      " has no UTC offsets; timestamps read as UTC (set [data] timezone or --timezone)";
  for (const std::string& cmd : {"data check " + path, "features --preset fast22 --input " + path +
                                                           " --out " + (dir_ / "f.csv").string()}) {
    CmdResult r = rlt::cli::testing_util::RunCli(cmd, "", err);
    EXPECT_EQ(r.exit_code, 0) << cmd << "\n" << r.out;
    const std::string e = ReadFile(err);
    ASSERT_NE(e.find(note), std::string::npos) << cmd << "\n" << e;
    EXPECT_EQ(e.find(note), e.rfind(note)) << e;  // once
    r = rlt::cli::testing_util::RunCli(cmd + " --timezone America/New_York", "", err);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(ReadFile(err).find("no UTC offsets"), std::string::npos) << ReadFile(err);
  }
}

// --session keeps the regular session: 09:30..15:59 by bar start is 390 one-minute bars.
TEST_F(CliTest, SessionFlagKeepsTheRegularSessionBars) {
  const std::string path = WriteExtendedHoursDay(dir_);
  CmdResult r = RunRltrade("data check " + path +
                           " --timezone America/New_York --session 09:30-16:00 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["symbols"][0]["sessions"], 2);
  EXPECT_EQ(j["symbols"][0]["bars_per_session"]["min"], 390);
  EXPECT_EQ(j["symbols"][0]["bars_per_session"]["max"], 390);
  EXPECT_EQ(j["rows_outside_session"], 2 * (961 - 390));
  const std::string out = (dir_ / "f.csv").string();
  r = RunRltrade(
      "features --preset fast22 --timezone America/New_York --session 09:30-16:00 "
      "--input " +
      path + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(out);
  std::string line;
  int rows = -1;  // the header
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 2 * 390);
  r = RunRltrade("data check " + path + " --session 16:00-09:30");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("--session '16:00-09:30': the open must be before the close"),
            std::string::npos)
      << r.out;
}

// Under --on-bad-rows drop the Fix text does not suggest that very flag.
TEST_F(CliTest, DataCheckFixTextFitsThePolicyInForce) {
  const std::string bad = (dir_ / "bad.csv").string();
  std::ofstream(bad) << "date,open,high,low,close,volume\n"
                        "2024-01-02,10,11,9,10.5,100\n"
                        "2024-01-03,10,9.5,9,10.5,100\n";  // high below close
  CmdResult drop = RunRltrade("data check " + bad + " --on-bad-rows drop");
  EXPECT_EQ(drop.exit_code, 0) << drop.out;
  EXPECT_NE(drop.out.find("bad.csv:3"), std::string::npos) << drop.out;
  EXPECT_EQ(drop.out.find("with --on-bad-rows drop"), std::string::npos) << drop.out;
  EXPECT_NE(drop.out.find("(the row is dropped under --on-bad-rows drop)"), std::string::npos)
      << drop.out;
  CmdResult fail = RunRltrade("data check " + bad);
  EXPECT_EQ(fail.exit_code, 1) << fail.out;
  EXPECT_NE(fail.out.find("or drop the row with --on-bad-rows drop"), std::string::npos)
      << fail.out;
}

}  // namespace

namespace {

// The binary starts without LibTorch: the dynamic loader's list of what `rltrade` loads
// (LD_TRACE_LOADED_OBJECTS, what ldd prints) names neither LibTorch nor its c10, whatever
// the build; LibTorch comes only through the torch plug-in (learn/torch_plugin.h).
TEST(CliStartup, TheBinaryLoadsNoLibTorchUntilACommandNeedsIt) {
  const CmdResult r = rlt::cli::testing_util::RunCli("--help", "LD_TRACE_LOADED_OBJECTS=1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("libc.so"), std::string::npos) << r.out;  // the list was printed
  EXPECT_EQ(r.out.find("libtorch"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libc10"), std::string::npos) << r.out;
}

// --version names the version, the commit (the source tree's, when it is a git checkout),
// the build type and the optional parts as this build has them.
TEST(CliStartup, VersionNamesTheCommitAndTheOptionalParts) {
  const CmdResult r = rlt::cli::testing_util::RunCli("--version");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(^rltrade \d+\.\d+\.\d+ \(commit ([0-9a-f]{12}(-modified)?|unknown), )"
                        R"(\w+ build\)\n)")))
      << r.out;
#ifdef RLT_TEST_WITH_TORCH
  EXPECT_NE(r.out.find("LibTorch backend: built"), std::string::npos) << r.out;
#else
  EXPECT_NE(r.out.find("LibTorch backend: not built (configure with -DRLT_WITH_TORCH=ON"),
            std::string::npos)
      << r.out;
#endif
  EXPECT_NE(r.out.find("\nMPI: "), std::string::npos) << r.out;
  // The loop kernels: compiled for this machine, or chosen at load time (portable builds);
  // a CPU with AVX2 and FMA never runs the baseline ones.
  std::smatch kernels;
  ASSERT_TRUE(std::regex_search(
      r.out, kernels, std::regex(R"(\nLoop kernels: (native|x86-64(-v[34])?|portable) )")))
      << r.out;
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_NE(kernels[1], "x86-64") << r.out;
  }
#endif
}

// [policy] backend = "torch" trains through the plug-in in builds with LibTorch, and is
// refused before anything is written, saying how to get LibTorch, in builds without it.
TEST(CliStartup, TheTorchBackendTrainsThroughThePluginOrIsRefusedSayingHow) {
  const fs::path dir = rlt::testing::NewScratchDir("rlt_cli_torch_");
  const std::string run = (dir / "run").string();
  const CmdResult r = RunRltrade(std::string("train ") + RLT_SOURCE_DIR +
                                 "/configs/cartpole_ppo.toml --set policy.backend=torch "
                                 "--set run.total_steps=512 --run-dir " +
                                 run);
#ifdef RLT_TEST_WITH_TORCH
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(fs::path(run) / "status.json")) << r.out;
#else
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("backend = \"torch\" needs LibTorch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-DRLT_WITH_TORCH=ON"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(run)) << r.out;
#endif
  fs::remove_all(dir);
}

}  // namespace
