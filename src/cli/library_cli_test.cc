// End-to-end tests of the signal library in a run: a preset file (as `rltrade mine`
// writes it) selects library signals for training; the run's config.toml records the
// list, so nothing reads the file again; the quantile normaliser fits 5 edges to ordinary
// signals and 3 to regime flags ([features] quantiles, quantiles_binary); the paper
// session, which computes the signals one bar at a time, trades the test range exactly as
// the evaluation, which computes them in one batch (byte-identical files); `signal` works
// on the library; `features --preset full184 --signals` writes the selected columns; bad
// selections are clear errors that leave no run directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;
using rlt::testing::ReadFile;
using rlt::testing::RunRltrade;
using rlt::testing::WriteFile;

// Ordinary signals, a lag, a q-variant, a per-day one, regime flags and a long rank (its
// 1,875-bar warm-up is the run's).
const char kPreset[] =
    "# written as rltrade mine writes a preset\n"
    "signals = [\"dv\", \"qco\", \"rsi14\", \"h5dv\", \"lret23\", \"bull\", \"squeeze\", "
    "\"ndv\"]\n"
    "\n[mine]\nsource = \"a test\"\n";

class LibraryCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new rlt::testing::ScratchDir("rlt_library_cli_");
    const std::string d = dir_->path();
    ASSERT_EQ(RunRltrade("data synth --days 60 --out " + d + "/bars.csv").exit_code, 0);
    WriteFile(fs::path(d) / "preset.toml", kPreset);
    const auto trained = RunRltrade(
        "train " + std::string(RLT_SOURCE_DIR) + "/configs/intraday_ppo.toml" +
        " --set data.source=file --set data.file=" + d + "/bars.csv --set features.preset=" + d +
        "/preset.toml --set features.normalizer=quantile --set features.quantiles=5"
        " --set features.quantiles_binary=3"
        " --set split.train=start:2023-02-17 --set split.validation=2023-02-20:2023-03-03"
        " --set split.test=2023-03-06:end --set run.total_steps=2048 --set run.threads=1"
        " --set env.num_envs=8 --set algo.n_steps=64 --set algo.batch_size=256"
        " --quiet --run-dir " +
        d + "/run");
    ASSERT_EQ(trained.exit_code, 0) << trained.out;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string D() { return dir_->path(); }
  static rlt::testing::ScratchDir* dir_;
};

rlt::testing::ScratchDir* LibraryCli::dir_ = nullptr;

TEST_F(LibraryCli, TheRunRecordsThePresetFilesListAndNeverReadsTheFileAgain) {
  const std::string config = ReadFile(D() + "/run/config.toml");
  EXPECT_NE(config.find("preset = \"full184\""), std::string::npos) << config;
  EXPECT_NE(config.find("\"dv\", \"qco\", \"rsi14\", \"h5dv\", \"lret23\", \"bull\", \"squeeze\", "
                        "\"ndv\""),
            std::string::npos)
      << config;
  // The normaliser: 5 edges for the ordinary signals, 3 for the regime flags.
  const auto norm = nlohmann::json::parse(ReadFile(D() + "/run/normalizer.json"));
  const auto names = norm.at("names").get<std::vector<std::string>>();
  ASSERT_EQ(names.size(), 8u);
  for (size_t j = 0; j < names.size(); ++j) {
    const bool flag = names[j] == "bull" || names[j] == "squeeze";
    EXPECT_EQ(norm.at("edges").at(j).size(), flag ? 3u : 5u) << names[j];
  }
  // Removing the preset file does not change what evaluation reads.
  fs::rename(D() + "/preset.toml", D() + "/preset.moved");
  const auto ev = RunRltrade("eval " + D() + "/run --range validation");
  fs::rename(D() + "/preset.moved", D() + "/preset.toml");
  EXPECT_EQ(ev.exit_code, 0) << ev.out;
}

TEST_F(LibraryCli, APaperReplayOfTheStreamedSignalsIsTheBatchEvaluation) {
  ASSERT_EQ(RunRltrade("eval " + D() + "/run --range test").exit_code, 0);
  const std::string j = D() + "/journal";
  const auto r = RunRltrade("paper " + D() + "/run --feed replay:" + D() +
                            "/bars.csv --broker sim --start 2023-03-06 --quiet --journal " + j);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* f : {"daily_returns.csv", "trades.csv", "equity.csv"}) {
    const std::string a = ReadFile(D() + "/run/eval/test/" + f), b = ReadFile(j + "/" + f);
    EXPECT_GT(rlt::testing::Lines(a).size(), 2u) << f;
    EXPECT_EQ(a, b) << f << " differs from the evaluation's";
  }
}

TEST_F(LibraryCli, SignalAndFeaturesComputeTheLibrary) {
  const auto s =
      RunRltrade("signal " + D() + "/run --bars " + D() + "/bars.csv --json", "", "/dev/null");
  ASSERT_EQ(s.exit_code, 0) << s.out;
  EXPECT_TRUE(nlohmann::json::accept(s.out)) << s.out;
  const auto f =
      RunRltrade("features --input " + D() +
                 "/bars.csv --preset full184 --signals dv,bull,qco --out " + D() + "/f.csv");
  ASSERT_EQ(f.exit_code, 0) << f.out;
  const std::vector<std::string> lines = rlt::testing::Lines(ReadFile(D() + "/f.csv"));
  ASSERT_GT(lines.size(), 100u);
  EXPECT_EQ(lines.front(), "timestamp,dv,bull,qco");
  // dv on a bar (after the selection's warm-up: bull needs 50 bars): close / ((2 low + 2 high
  // + 3 close + 3 open) / 10) - 1, recomputed here from the bar file's row.
  const std::vector<std::string> bars = rlt::testing::Lines(ReadFile(D() + "/bars.csv"));
  const std::string header = bars.front();
  ASSERT_EQ(header, "timestamp,symbol,open,high,low,close,volume");
  for (size_t row : {100u, 400u, 2000u}) {
    std::vector<double> v;
    const std::string& line = bars[row];
    const size_t first = line.find(',', line.find(',') + 1);
    for (size_t p = first; p != std::string::npos; p = line.find(',', p + 1)) {
      v.push_back(std::stod(line.substr(p + 1)));
    }
    const double vw = (2 * v[2] + 2 * v[1] + 3 * v[3] + 3 * v[0]) / 10;
    const double dv = v[3] / vw - 1;
    const std::string cell = lines[row].substr(lines[row].find(',') + 1);
    const double got = std::stod(cell.substr(0, cell.find(',')));
    // Feature values are stored as float: within float's rounding of dv.
    EXPECT_NEAR(got, dv, 2e-7 * std::abs(dv) + 1e-15) << row;
  }
  const auto bad = RunRltrade("features --input " + D() + "/bars.csv --preset scaled --signals dv");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.out.find("--preset full184"), std::string::npos) << bad.out;
}

TEST_F(LibraryCli, BadSelectionsAreClearErrorsAndLeaveNoRun) {
  struct Case {
    std::string name, file_text, sets, expect;
  };
  const Case cases[] = {
      {"unknown", "signals = [\"dv\",\n  \"rsi_14\"]\n", "",
       "p_unknown.toml:2: signals: unknown "
       "signal 'rsi_14'; did you mean "
       "'rsi14'?"},
      {"twice", "signals = [\"dv\", \"dv\"]\n", "", "'dv' is listed twice"},
      {"key", "signal = [\"dv\"]\n", "", "p_key.toml:1: unknown key 'signal'"},
      {"syntax", "signals = [\"dv\"\n", "", "p_syntax.toml:"},
      {"scaled", "", " --set features.preset=scaled --set 'features.signals=[\"dv\"]'",
       "set [features] preset = \"full184\""},
      {"name", "", " --set features.preset=full148", "did you mean 'full184'?"},
      {"quantiles", "", " --set features.preset=full184 --set features.quantiles_binary=1",
       "quantiles_binary = 1: must be 0"},
  };
  for (const Case& c : cases) {
    std::string sets = c.sets;
    if (!c.file_text.empty()) {
      WriteFile(fs::path(D()) / ("p_" + c.name + ".toml"), c.file_text);
      sets = " --set features.preset=" + D() + "/p_" + c.name + ".toml";
    }
    const auto r =
        RunRltrade("train " + std::string(RLT_SOURCE_DIR) +
                   "/configs/intraday_ppo.toml --set data.source=file --set data.file=" + D() +
                   "/bars.csv" + sets + " --quiet --run-dir " + D() + "/bad_run");
    EXPECT_NE(r.exit_code, 0) << c.name;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.name << ": " << r.out;
    EXPECT_FALSE(fs::exists(D() + "/bad_run")) << c.name;
  }
}

}  // namespace
