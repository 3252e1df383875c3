// End-to-end tests of several symbols, one policy ([data] symbols / files): training on a
// long file of three symbols from another directory, the run's record of every symbol,
// eval of each symbol and of their equal-weight portfolio, signal and paper trading of
// one symbol (--symbol), the same training from one file per symbol, and the leakage
// check (perturbing one symbol's test bars changes nothing training produced).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

namespace rlt::cli {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunCli;

// 40 weekday sessions from 2023-01-02 of three symbols; validation selects best/.
constexpr const char* kConfig = R"([run]
total_steps = 2048
seed = 4
threads = 1
eval_every = 1024
[data]
source = "file"
DATA
timezone = "Asia/Kolkata"
[split]
train = "2023-01-02:2023-01-31"
validation = "2023-02-01:2023-02-10"
test = "2023-02-13:2023-02-24"
[features]
symbol_id = true
[env]
id = "intraday"
action_mode = "target_position"
num_envs = 8
[algo]
n_steps = 64
batch_size = 256
n_epochs = 2
)";

const char* const kSymbols[] = {"SYN0", "SYN1", "SYN2"};

std::string ConfigWith(const std::string& data_lines) {
  std::string c = kConfig;
  c.replace(c.find("DATA"), 4, data_lines);
  return c;
}

class SymbolsCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(rlt::testing::NewScratchDir("rlt_symbols_"));
    fs::create_directories(*dir_ / "project" / "data");
    fs::create_directories(*dir_ / "elsewhere");
    auto made = RunCli("data synth --symbols 3 --days 40 --seed 5 --signal-to-noise 0.2 --out " +
                       Path("project/data/three.csv"));
    ASSERT_EQ(made.exit_code, 0) << made.out;
    rlt::testing::WriteFile(*dir_ / "project" / "cfg.toml",
                            ConfigWith("file = \"data/three.csv\"\nsymbols = \"all\""));
    auto trained = RunCli("train ../project/cfg.toml --run-dir ../run --quiet",
                          "cd " + (*dir_ / "elsewhere").string() + " &&");
    ASSERT_EQ(trained.exit_code, 0) << trained.out;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string Path(const std::string& name) { return (*dir_ / name).string(); }
  static testing_util::CmdResult FromRoot(const std::string& args) {
    return RunCli(args, "cd / &&");
  }
  static void WriteLines(const std::string& path, const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    rlt::testing::WriteFile(path, text);
  }
  // date -> return of a daily_returns.csv (date,return,...) or one column of another CSV.
  static std::map<std::string, double> Column(const std::string& path, size_t col = 1) {
    std::map<std::string, double> out;
    const std::vector<std::string> lines = rlt::testing::Lines(ReadFile(path));
    for (size_t i = 1; i < lines.size(); ++i) {
      const std::vector<std::string> cells = rlt::testing::Cells(lines[i]);
      out[cells[0]] = std::stod(cells[col]);
    }
    return out;
  }
  static fs::path* dir_;
};
fs::path* SymbolsCli::dir_ = nullptr;

TEST_F(SymbolsCli, TheRunRecordsEverySymbolItsSessionsAndItsNormaliser) {
  const std::string config = ReadFile(Path("run/config.toml"));
  EXPECT_NE(config.find("symbols = [\"SYN0\", \"SYN1\", \"SYN2\"]"), std::string::npos) << config;
  const auto record = nlohmann::json::parse(ReadFile(Path("run/data.json")));
  ASSERT_EQ(record["files"].size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(record["files"][i]["symbols"], nlohmann::json({kSymbols[i]}));
    EXPECT_EQ(record["files"][i]["sessions"].size(), 22u);  // 2023-01-02 .. 2023-01-31
  }
  const auto norm = nlohmann::json::parse(ReadFile(Path("run/normalizer.json")));
  EXPECT_EQ(norm["format"], "rltrade.symbol_normalizers");
  EXPECT_EQ(norm["normalize_by"], "symbol");
  for (const char* s : kSymbols) EXPECT_TRUE(norm["normalizers"].contains(s)) << s;
}

// eval reports every symbol and their equal-weight portfolio, whose daily return is the
// mean of the symbols' (recomputed here from each symbol's own evaluation); --symbol
// evaluates one symbol exactly as the full evaluation did.
TEST_F(SymbolsCli, EvalReportsEachSymbolAndTheirEqualWeightPortfolio) {
  auto eval = FromRoot("eval " + Path("run") + " --range test");
  ASSERT_EQ(eval.exit_code, 0) << eval.out;
  for (const char* s : kSymbols) EXPECT_NE(eval.out.find(s), std::string::npos) << eval.out;
  EXPECT_NE(eval.out.find("equal-weight portfolio"), std::string::npos) << eval.out;
  const fs::path out = Path("run/eval/test.ckpt-best");
  const auto summary = nlohmann::json::parse(ReadFile(out / "summary.json"));
  EXPECT_EQ(summary["portfolio"], "equal_weight");
  ASSERT_EQ(summary["symbols"].size(), 3u);
  std::vector<std::map<std::string, double>> each;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(summary["symbols"][i]["symbol"], kSymbols[i]);
    const std::string dir = summary["symbols"][i]["eval_dir"];
    EXPECT_EQ(dir, std::string("eval/test.ckpt-best.symbol-") + kSymbols[i]);
    each.push_back(Column(Path("run/" + dir + "/daily_returns.csv")));
  }
  // The portfolio's report: its metrics, each symbol's row and equity line.
  const std::string report = ReadFile(out / "report.html");
  EXPECT_NE(report.find("The equal-weight portfolio of the symbols"), std::string::npos);
  for (const char* s : kSymbols) {
    EXPECT_NE(report.find(std::string("<th>") + s + "</th>"), std::string::npos) << s;
  }
  const std::map<std::string, double> portfolio = Column((out / "daily_returns.csv").string());
  ASSERT_EQ(portfolio.size(), 10u);  // the test range's sessions
  for (const auto& [date, r] : portfolio) {
    double sum = 0, scale = 0;
    for (const auto& e : each) sum += e.at(date), scale += std::fabs(e.at(date));
    // Each file prints 10 significant digits.
    EXPECT_NEAR(r, sum / 3, 1e-9 * scale + 1e-300) << date;
  }
  const std::string syn1 = Path("run/eval/test.ckpt-best.symbol-SYN1/daily_returns.csv");
  const std::string from_all = ReadFile(syn1);
  fs::remove_all(fs::path(syn1).parent_path());
  auto one = FromRoot("eval " + Path("run") + " --range test --symbol SYN1 --json");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  EXPECT_EQ(ReadFile(syn1), from_all);
  auto unknown = FromRoot("eval " + Path("run") + " --symbol NOPE");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.out.find("the run was trained on SYN0, SYN1, SYN2"), std::string::npos)
      << unknown.out;
}

// eval --costs on several symbols: each symbol's sweep, and the portfolio's table whose
// total return at each level compounds the mean of the symbols' returns at that level
// (recomputed here from their costs_daily_returns.csv) and whose fills are their sum.
TEST_F(SymbolsCli, TheCostTableOfSeveralSymbolsIsTheirPortfolios) {
  auto eval = FromRoot("eval " + Path("run") + " --range test --costs 0,2,5");
  ASSERT_EQ(eval.exit_code, 0) << eval.out;
  EXPECT_NE(eval.out.find("Equal-weight portfolio: Net return by cost level"), std::string::npos)
      << eval.out;
  const fs::path out = Path("run/eval/test.ckpt-best");
  const auto table = nlohmann::json::parse(ReadFile(out / "costs.json"));
  ASSERT_EQ(table["levels"].size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    std::map<std::string, std::vector<double>> by_date;
    int64_t fills = 0;
    for (const char* s : kSymbols) {
      const std::string dir = Path(std::string("run/eval/test.ckpt-best.symbol-") + s);
      for (const auto& [date, r] : Column(dir + "/costs_daily_returns.csv", k + 1)) {
        by_date[date].push_back(r);
      }
      fills +=
          nlohmann::json::parse(ReadFile(dir + "/costs.json"))["levels"][k]["fills"].get<int64_t>();
    }
    double growth = 1;
    for (const auto& [date, rs] : by_date) growth *= 1 + (rs[0] + rs[1] + rs[2]) / 3;
    const nlohmann::json& level = table["levels"][k];
    EXPECT_NEAR(level["cum_returns_final"].get<double>(), growth - 1, 1e-8 * growth) << k;
    EXPECT_EQ(level["fills"].get<int64_t>(), fills);
  }
}

TEST_F(SymbolsCli, SignalDecidesForTheSymbolItIsGiven) {
  auto bare = FromRoot("signal " + Path("run") + " --bars " + Path("project/data/three.csv"));
  EXPECT_NE(bare.exit_code, 0);
  EXPECT_NE(bare.out.find("--symbol SYMBOL"), std::string::npos) << bare.out;
  auto one = FromRoot("signal " + Path("run") + " --bars " + Path("project/data/three.csv") +
                      " --symbol SYN2 --json");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  EXPECT_EQ(nlohmann::json::parse(one.out)["symbol"], "SYN2");
}

// Paper trading one symbol of the run replays exactly what eval computed for it (the
// stream's features with the symbol's normaliser and one-hot id, as the batch ones).
TEST_F(SymbolsCli, PaperTradesOneSymbolAsEvalDoes) {
  auto eval = FromRoot("eval " + Path("run") + " --range test --symbol SYN2");
  ASSERT_EQ(eval.exit_code, 0) << eval.out;
  auto paper =
      FromRoot("paper " + Path("run") + " --feed replay:" + Path("project/data/three.csv") +
               " --symbol SYN2 --start 2023-02-13 --quiet --journal " + Path("journal"));
  ASSERT_EQ(paper.exit_code, 0) << paper.out;
  const fs::path ev = Path("run/eval/test.ckpt-best.symbol-SYN2");
  EXPECT_EQ(ReadFile(Path("journal/daily_returns.csv")), ReadFile(ev / "daily_returns.csv"));
  EXPECT_EQ(ReadFile(Path("journal/trades.csv")), ReadFile(ev / "trades.csv"));
  auto bare = FromRoot("paper " + Path("run") + " --feed replay:" + Path("project/data/three.csv") +
                       " --quiet --journal " + Path("journal2"));
  EXPECT_NE(bare.exit_code, 0);
  EXPECT_NE(bare.out.find("--symbol"), std::string::npos) << bare.out;
  EXPECT_FALSE(fs::exists(Path("journal2/journal.jsonl")));
}

// One file per symbol (without a symbol column, named by [data] symbols) is the same
// training as the long file: the same bars, features, normalisers and draws, so the same
// policy byte for byte.
TEST_F(SymbolsCli, OneFilePerSymbolTrainsTheSamePolicyAsTheLongFile) {
  const std::vector<std::string> lines =
      rlt::testing::Lines(ReadFile(Path("project/data/three.csv")));
  std::string files;
  for (const char* s : kSymbols) {
    std::vector<std::string> mine = {"timestamp,open,high,low,close,volume"};
    for (size_t i = 1; i < lines.size(); ++i) {
      std::vector<std::string> c = rlt::testing::Cells(lines[i]);
      if (c[1] != s) continue;
      mine.push_back(c[0] + "," + c[2] + "," + c[3] + "," + c[4] + "," + c[5] + "," + c[6]);
    }
    WriteLines(Path(std::string("project/data/") + s + ".csv"), mine);
    files += std::string(files.empty() ? "" : ", ") + "\"data/" + s + ".csv\"";
  }
  rlt::testing::WriteFile(
      *dir_ / "project" / "files.toml",
      ConfigWith("files = [" + files + "]\nsymbols = [\"SYN0\", \"SYN1\", \"SYN2\"]"));
  auto trained = FromRoot("train " + Path("project/files.toml") + " --run-dir " +
                          Path("run_files") + " --quiet");
  ASSERT_EQ(trained.exit_code, 0) << trained.out;
  for (const char* file : {"final/policy.rlt", "best/policy.rlt", "normalizer.json"}) {
    EXPECT_TRUE(ReadFile(Path("run_files/") + file) == ReadFile(Path("run/") + file)) << file;
  }
  const auto record = nlohmann::json::parse(ReadFile(Path("run_files/data.json")));
  ASSERT_EQ(record["files"].size(), 3u);
  EXPECT_EQ(record["files"][1]["symbols"], nlohmann::json({"SYN1"}));
  EXPECT_NE(record["files"][1]["path"].get<std::string>().find("SYN1.csv"), std::string::npos);
  auto eval = FromRoot("eval " + Path("run_files") + " --range test --symbol SYN1");
  ASSERT_EQ(eval.exit_code, 0) << eval.out;
  auto long_eval = FromRoot("eval " + Path("run") + " --range test --symbol SYN1");
  ASSERT_EQ(long_eval.exit_code, 0) << long_eval.out;
  EXPECT_EQ(ReadFile(Path("run_files/eval/test.ckpt-best.symbol-SYN1/daily_returns.csv")),
            ReadFile(Path("run/eval/test.ckpt-best.symbol-SYN1/daily_returns.csv")));
}

// Leakage: any symbol's test-range bars replaced by another path change nothing training
// produced (the policy, the normalisers, the selection, the training ranges), while that
// symbol's test evaluation does change (so the perturbation reaches the test range).
TEST_F(SymbolsCli, PerturbingAnySymbolsTestBarsChangesNoTrainingOutput) {
  const std::vector<std::string> original =
      rlt::testing::Lines(ReadFile(Path("project/data/three.csv")));
  for (const char* symbol : kSymbols) {
    std::vector<std::string> lines = original;
    int changed = 0;
    for (size_t i = 1; i < lines.size(); ++i) {
      std::vector<std::string> c = rlt::testing::Cells(lines[i]);
      if (c[1] != symbol || c[0] < "2023-02-13") continue;
      for (int k = 2; k <= 5; ++k) c[k] = std::to_string(std::stod(c[k]) * 1.3);
      std::string row;
      for (const std::string& cell : c) row += (row.empty() ? "" : ",") + cell;
      lines[i] = row;
      ++changed;
    }
    ASSERT_EQ(changed, 10 * 75) << symbol;
    const std::string name = std::string("perturbed_") + symbol;
    WriteLines(Path("project/data/" + name + ".csv"), lines);
    rlt::testing::WriteFile(*dir_ / "project" / (name + ".toml"),
                            ConfigWith("file = \"data/" + name + ".csv\"\nsymbols = \"all\""));
    auto trained = FromRoot("train " + Path("project/" + name + ".toml") + " --run-dir " +
                            Path("run_" + name) + " --quiet");
    ASSERT_EQ(trained.exit_code, 0) << trained.out;
    for (const char* file : {"final/policy.rlt", "best/policy.rlt", "normalizer.json",
                             "selection.json", "training_ranges.json"}) {
      EXPECT_TRUE(ReadFile(Path("run_" + name + "/") + file) == ReadFile(Path("run/") + file))
          << symbol << " " << file;
    }
    for (const std::string& run : {std::string("run"), "run_" + name}) {
      auto eval = FromRoot("eval " + Path(run) + " --range test --symbol " + symbol);
      ASSERT_EQ(eval.exit_code, 0) << eval.out;
    }
    const std::string dir = std::string("/eval/test.ckpt-best.symbol-") + symbol;
    EXPECT_NE(ReadFile(Path("run") + dir + "/daily_returns.csv"),
              ReadFile(Path("run_" + name) + dir + "/daily_returns.csv"))
        << symbol;
  }
}

// Several symbols and several seeds: the seeds' ensemble is evaluated symbol by symbol
// into its own portfolio, signal and paper take --symbol, and a paper replay of one symbol
// is the ensemble's evaluation of that symbol.
TEST_F(SymbolsCli, TheEnsembleOfSeedsTradesEverySymbol) {
  auto trained = FromRoot("train " + Path("project/cfg.toml") + " --seeds 2 --run-dir " +
                          Path("run_seeds") + " --quiet");
  ASSERT_EQ(trained.exit_code, 0) << trained.out;
  auto eval = FromRoot("eval " + Path("run_seeds") + " --range test");
  ASSERT_EQ(eval.exit_code, 0) << eval.out;
  EXPECT_NE(eval.out.find("ensemble (mean)"), std::string::npos) << eval.out;
  const auto portfolio =
      nlohmann::json::parse(ReadFile(Path("run_seeds/eval/test.ensemble-mean/summary.json")));
  EXPECT_EQ(portfolio["portfolio"], "equal_weight");
  EXPECT_EQ(portfolio["ensemble"]["method"], "mean");
  EXPECT_EQ(portfolio["symbols"][2]["eval_dir"], "eval/test.ensemble-mean.symbol-SYN2");
  auto signal = FromRoot("signal " + Path("run_seeds") + " --bars " +
                         Path("project/data/three.csv") + " --symbol SYN0 --json");
  ASSERT_EQ(signal.exit_code, 0) << signal.out;
  const auto decision = nlohmann::json::parse(signal.out);
  EXPECT_EQ(decision["symbol"], "SYN0");
  EXPECT_EQ(decision["seeds"].size(), 2u);
  auto paper =
      FromRoot("paper " + Path("run_seeds") + " --feed replay:" + Path("project/data/three.csv") +
               " --symbol SYN2 --start 2023-02-13 --quiet --journal " + Path("journal_seeds"));
  ASSERT_EQ(paper.exit_code, 0) << paper.out;
  EXPECT_EQ(ReadFile(Path("journal_seeds/daily_returns.csv")),
            ReadFile(Path("run_seeds/eval/test.ensemble-mean.symbol-SYN2/daily_returns.csv")));
}

TEST_F(SymbolsCli, BadSymbolSettingsAreErrorsThatLeaveNoRunDirectory) {
  struct Case {
    std::string data, message;
  };
  const Case cases[] = {
      {"file = \"data/three.csv\"\nsymbols = [\"SYN0\", \"AAPL\"]",
       "has no bars of 'AAPL' (it holds SYN0, SYN1, SYN2)"},
      {"file = \"data/three.csv\"\nsymbols = [\"SYN0\", \"SYN0\"]", "'SYN0' is listed twice"},
      {"file = \"data/three.csv\"\nsymbol = \"SYN0\"\nsymbols = \"all\"", "are both set"},
      {"file = \"data/three.csv\"", "holds 3 symbols; choose one with symbol"},
      {"file = \"data/three.csv\"\nfiles = [\"data/three.csv\", \"data/three.csv\"]",
       "remove [data] file"},
  };
  int k = 0;
  for (const Case& c : cases) {
    const std::string cfg = Path("project/bad" + std::to_string(k) + ".toml");
    rlt::testing::WriteFile(cfg, ConfigWith(c.data));
    const std::string run = Path("bad_run" + std::to_string(k++));
    auto r = FromRoot("train " + cfg + " --run-dir " + run + " --quiet");
    EXPECT_NE(r.exit_code, 0) << c.data;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.data << "\n" << r.out;
    EXPECT_FALSE(fs::exists(run)) << c.data;
  }
}

}  // namespace
}  // namespace rlt::cli
