// End-to-end tests of `rltrade mine`: a config run and an --input run write the four
// files; the test range is never read (perturbing its bars leaves every output byte for
// byte unchanged, while the same perturbation inside a training range changes them); bad
// input is refused with a message naming the flag and no output directory; the report
// renders in headless Chromium. Honesty on the synthetic market, over the whole signal
// library: with no signal in the market (20 seeds), the count of survivors stays within
// the expected false discoveries plus two standard errors, while the undeflated test finds
// several; with a planted momentum, the planted signal ranks first and survives.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "testing/chromium.h"
#include "testing/testing.h"

namespace rlt::cli {
namespace {

namespace fs = std::filesystem;
using rlt::testing::Cells;
using rlt::testing::Lines;
using rlt::testing::NewScratchDir;
using rlt::testing::ReadFile;
using rlt::testing::WriteFile;
using testing_util::RunCli;

const char* const kFiles[] = {"signals.csv", "preset.toml", "report.html", "summary.json"};

class MineCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = NewScratchDir("rlt_mine_cli_");
    bars_ = (dir_ / "bars.csv").string();
    const auto r = RunCli(fmt::format(
        "data synth --out {} --days 60 --start 2023-01-02 --seed 5 --signal-to-noise 0.05", bars_));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    config_ = (dir_ / "mine.toml").string();
    WriteFile(config_, fmt::format("[data]\nsource = \"file\"\nfile = \"{}\"\n"
                                   "[split]\ntrain = \"2023-01-02:2023-02-24\"\n"
                                   "test = \"2023-02-27:2023-03-31\"\n"
                                   "[env]\nid = \"intraday\"\ncost_rate = 0.0002\n",
                                   bars_));
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Multiplies the prices of every bar dated on or after `from` (YYYY-MM-DD) by `factor`.
  void PerturbFrom(const std::string& path, const std::string& from, double factor) {
    const std::vector<std::string> lines = Lines(ReadFile(path));
    const std::vector<std::string> header = Cells(lines[0]);
    std::vector<size_t> prices;
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == "open" || header[i] == "high" || header[i] == "low" ||
          header[i] == "close") {
        prices.push_back(i);
      }
    }
    ASSERT_EQ(prices.size(), 4u) << lines[0];
    std::string out = lines[0] + "\n";
    int changed = 0;
    for (size_t l = 1; l < lines.size(); ++l) {
      std::vector<std::string> cells = Cells(lines[l]);
      if (cells.empty()) continue;
      if (cells[0].substr(0, 10) >= from) {
        for (size_t i : prices) cells[i] = fmt::format("{}", std::stod(cells[i]) * factor);
        ++changed;
      }
      for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
      out += "\n";
    }
    ASSERT_GT(changed, 0);
    WriteFile(path, out);
  }

  std::vector<std::string> Outputs(const fs::path& out) {
    std::vector<std::string> files;
    for (const char* f : kFiles) files.push_back(ReadFile(out / f));
    return files;
  }

  fs::path dir_;
  std::string bars_, config_;
};

TEST_F(MineCli, ConfigRunWritesTheFourFilesAndAJsonSummary) {
  const fs::path out = dir_ / "out";
  const auto r = RunCli(fmt::format("mine {} --out {} --json", config_, out.string()), "",
                        (dir_ / "err.txt").string());
  ASSERT_EQ(r.exit_code, 0) << r.out << ReadFile(dir_ / "err.txt");
  for (const char* f : kFiles) EXPECT_TRUE(fs::exists(out / f)) << f;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("train").get<std::string>(), "2023-01-02:2023-02-24");
  EXPECT_EQ(j.at("options").at("cost_rate").get<double>(), 0.0002);
  EXPECT_EQ(j.at("train_dates").get<int>(), 40);  // 8 weeks of weekdays
  EXPECT_GE(j.at("kept").size(), 1u);
  const std::string preset = ReadFile(out / "preset.toml");
  EXPECT_NE(preset.find("signals = [\"" + j.at("kept")[0].at("name").get<std::string>()),
            std::string::npos)
      << preset;
  // Every candidate has a row.
  EXPECT_EQ(Lines(ReadFile(out / "signals.csv")).size(),
            1 + j.at("candidates_total").get<size_t>());
  // The preset file trains a run, which records the kept list as its features.
  const auto trained = RunCli(fmt::format(
      "train {}/configs/intraday_ppo.toml --set data.source=file --set data.file={} "
      "--set features.preset={} --set split.train=2023-01-02:2023-02-24 "
      "--set split.test=2023-02-27:2023-03-31 --set run.total_steps=512 --set run.threads=1 "
      "--set env.num_envs=2 --set algo.n_steps=64 --set algo.batch_size=64 --quiet --run-dir {}",
      RLT_SOURCE_DIR, bars_, (out / "preset.toml").string(), (dir_ / "run").string()));
  ASSERT_EQ(trained.exit_code, 0) << trained.out;
  const std::string config = ReadFile(dir_ / "run" / "config.toml");
  EXPECT_NE(config.find("preset = \"full184\""), std::string::npos) << config;
  EXPECT_NE(config.find("signals = [\"" + j.at("kept")[0].at("name").get<std::string>()),
            std::string::npos)
      << config;
}

TEST_F(MineCli, TheTestRangeIsNeverRead) {
  const fs::path out = dir_ / "out";
  const std::string args =
      fmt::format("mine {} --out {} --validation 2023-02-27:2023-03-03", config_, out.string());
  // The validation range overlaps [split] test: refused.
  auto r = RunCli(args);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("overlaps [split] test"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));

  const std::string run = fmt::format("mine {} --out {}", config_, out.string());
  r = RunCli(run);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> before = Outputs(out);
  PerturbFrom(bars_, "2023-02-27", 1.07);
  r = RunCli(run);  // replaces the earlier mining output
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> after = Outputs(out);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i], after[i]) << kFiles[i];

  // The same kind of change inside the training range does change the outputs (the test
  // can fail).
  PerturbFrom(bars_, "2023-02-06", 0.97);
  r = RunCli(run);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(before[0], Outputs(out)[0]);
}

TEST_F(MineCli, InputRunTakesTrainCostAndSignals) {
  const fs::path out = dir_ / "in";
  const auto r = RunCli(
      fmt::format(
          "mine --input {} --train 2023-01-02:2023-02-24 --validation 2023-02-27:2023-03-24 --cost "
          "0.0001 --signals lret1,rsi14,price_vs_sma20 --metric sharpe --folds 4 "
          "--embargo 2 --out "
          "{} --json",
          bars_, out.string()),
      "", (dir_ / "err.txt").string());
  ASSERT_EQ(r.exit_code, 0) << r.out << ReadFile(dir_ / "err.txt");
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("ranked").get<int>(), 3);
  EXPECT_EQ(j.at("trials").get<int>(), 6);
  EXPECT_EQ(j.at("folds").size(), 4u);
  EXPECT_EQ(j.at("validation_units").get<int>(), 20);
  const std::vector<std::string> rows = Lines(ReadFile(out / "signals.csv"));
  ASSERT_EQ(rows.size(), 4u);
  const std::vector<std::string> header = Cells(rows[0]);
  const size_t val =
      static_cast<size_t>(std::find(header.begin(), header.end(), "val_units") - header.begin());
  ASSERT_LT(val, header.size());
  EXPECT_EQ(Cells(rows[1])[val], "20");
}

// [data] symbols: both symbols' sessions are pooled as (symbol, session) units.
TEST_F(MineCli, SeveralSymbolsArePooledBySession) {
  const std::string two = (dir_ / "two.csv").string();
  auto r = RunCli(
      fmt::format("data synth --out {} --symbols 2 --days 60 --start 2023-01-02 --seed 9", two));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string config = (dir_ / "two.toml").string();
  WriteFile(config, fmt::format("[data]\nsource = \"file\"\nfile = \"{}\"\n"
                                "symbols = [\"SYN0\", \"SYN1\"]\n"
                                "[split]\ntrain = \"2023-01-02:2023-02-24\"\n"
                                "test = \"2023-02-27:2023-03-31\"\n"
                                "[env]\nid = \"intraday\"\n",
                                two));
  r = RunCli(fmt::format("mine {} --out {} --json", config, (dir_ / "two").string()), "",
             (dir_ / "err.txt").string());
  ASSERT_EQ(r.exit_code, 0) << r.out << ReadFile(dir_ / "err.txt");
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("symbols"), nlohmann::json({"SYN0", "SYN1"}));
  EXPECT_EQ(j.at("train_dates").get<int>(), 40);
  EXPECT_EQ(j.at("train_units").get<int>(), 80);
  EXPECT_EQ(j.at("options").at("cost_rate").get<double>(), 0.0005);  // [env]'s default
}

TEST_F(MineCli, BadInputIsRefusedWithoutAnOutputDirectory) {
  const fs::path out = dir_ / "bad";
  struct Case {
    std::string args, expect;
  };
  const std::vector<Case> cases = {
      {fmt::format("mine {} --lower-q 0.8 --upper-q 0.2", config_), "--lower-q"},
      {fmt::format("mine {} --train 2023-01-02:2023-01-06", config_), "--folds = 5"},
      {fmt::format("mine {} --train 2023-01-02:2023-03-03", config_), "overlaps [split] test"},
      {fmt::format("mine {} --signals lret1,rsi_14", config_), "did you mean 'rsi14'"},
      {fmt::format("mine --input {} --train 2023-01-02:2023-02-24", bars_), "--cost"},
      {fmt::format("mine {} --signals lret1,lret5,lret1", config_), "'lret1' is selected twice"},
  };
  for (const Case& c : cases) {
    const auto r = RunCli(c.args + " --out " + out.string());
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_FALSE(fs::exists(out)) << c.args;
  }
  // Nothing staged is left behind either.
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().filename().string().find(".bad"), std::string::npos) << e.path();
  }
}

TEST_F(MineCli, ReportRendersInHeadlessChromium) {
  if (access(rlt::testing::kChromium, X_OK) != 0) {
    GTEST_SKIP() << rlt::testing::kChromium << " is absent";
  }
  const fs::path out = dir_ / "out";
  const auto r = RunCli(fmt::format("mine {} --out {}", config_, out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string html = ReadFile(out / "report.html");
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no fetches
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(rlt::testing::PageErrors(dir_, html, "mine_report"), "");
  const fs::path png = dir_ / "shot.png";
  ASSERT_EQ(rlt::testing::RunChromium(out / "report.html", "--screenshot=" + png.string(),
                                      dir_ / "shot.out", dir_ / "shot.err"),
            0);
  EXPECT_GT(rlt::testing::DistinctPixelValues(png, dir_), 3);
}

// Runs `mine --input` on a synthetic market of `days` sessions (seed, signal_to_noise)
// without costs and returns summary.json and the rows of signals.csv by column name.
struct Mined {
  nlohmann::json summary;
  std::vector<std::map<std::string, std::string>> rows;
};
Mined MineSynthetic(const fs::path& dir, int days, int seed, double snr) {
  const std::string bars = (dir / fmt::format("m{}.csv", seed)).string();
  const fs::path out = dir / fmt::format("m{}", seed);
  Mined m;
  auto r =
      RunCli(fmt::format("data synth --out {} --days {} --start 2023-01-02 --seed {} "
                         "--signal-to-noise {}",
                         bars, days, seed, snr));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = RunCli(fmt::format("mine --input {} --train 2023-01-02:2023-12-31 --cost 0 --out {} --json",
                         bars, out.string()),
             "", "/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  if (r.exit_code != 0) return m;
  m.summary = nlohmann::json::parse(r.out);
  const std::vector<std::string> lines = Lines(ReadFile(out / "signals.csv"));
  const std::vector<std::string> header = Cells(lines.at(0));
  for (size_t l = 1; l < lines.size(); ++l) {
    const std::vector<std::string> cells = Cells(lines[l]);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    m.rows.push_back(std::move(row));
  }
  return m;
}

TEST(MineHonesty, OnTheNullMarketSurvivorsStayWithinTheExpectedFalseDiscoveries) {
  const fs::path dir = NewScratchDir("rlt_mine_null_");
  constexpr int kSeeds = 20;
  std::vector<double> survivors;
  double expected = 0, naive = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const Mined m = MineSynthetic(dir, 60, seed, 0.0);
    ASSERT_FALSE(m.rows.empty());
    EXPECT_EQ(m.summary.at("candidates_total").get<int>(), 184);
    survivors.push_back(m.summary.at("survivors").get<double>());
    expected += m.summary.at("expected_false_discoveries").get<double>() / kSeeds;
    // The undeflated test on the same trials: a kept signal whose training Sharpe alone is
    // significant at 5% (SR·√(T − 1) >= 1.645, normal returns).
    const double t = m.summary.at("train_units").get<double>();
    for (const auto& row : m.rows) {
      if (row.at("kept") == "1" && std::stod(row.at("train_sharpe")) * std::sqrt(t - 1) >= 1.645) {
        naive += 1.0 / kSeeds;
      }
    }
  }
  double mean = 0;
  for (double v : survivors) mean += v / kSeeds;
  double ss = 0;
  for (double v : survivors) ss += (v - mean) * (v - mean);
  const double se = std::sqrt(ss / (kSeeds - 1) / kSeeds);
  EXPECT_LE(mean, expected + 2 * se) << "expected " << expected << ", se " << se;
  // Without the deflation the same data would report discoveries: the test can tell.
  EXPECT_GE(naive, 2.0) << "undeflated discoveries per seed";
  fs::remove_all(dir);
}

TEST(MineHonesty, APlantedMomentumRanksFirstAndSurvives) {
  // The generator adds c·ln(c_t/c_{t−5}) to the next bar's return (market/synth.h): roc5 is
  // that trailing return (up to a monotone map, which the quantile rule ignores), sma5 the
  // same difference over the SMA instead of c_{t−5}. Momentum: long when high, sign −1.
  const fs::path dir = NewScratchDir("rlt_mine_planted_");
  for (int seed : {1, 2, 3}) {
    const Mined m = MineSynthetic(dir, 120, seed, 0.3);
    ASSERT_FALSE(m.rows.empty());
    const auto& top = m.rows.front();
    EXPECT_EQ(top.at("rank"), "1");
    EXPECT_TRUE(top.at("name") == "roc5" || top.at("name") == "sma5") << top.at("name");
    EXPECT_EQ(top.at("sign"), "-1");
    EXPECT_GE(std::stod(top.at("dsr")), 0.95) << top.at("name");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rlt::cli
