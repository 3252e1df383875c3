// rltrade walkforward tests: K folds on a tiny synthetic intraday config —
// fold run directories with their evaluations, window geometry (expanding and rolling),
// the concatenated out-of-sample series against the folds' own rows and its metrics
// against eval::ComputeReturnMetrics, and refusals that write nothing.
#include "evalrun/walkforward.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/civil_time.h"
#include "core/status_test_util.h"
#include "env/market_dataset.h"
#include "eval/metrics.h"
#include "eval/outputs.h"
#include "evalrun/test_util.h"
#include "market/date_range.h"
#include "testing/testing.h"
#include "train/train_options.h"

namespace rlt::evalrun {
namespace {

namespace fs = std::filesystem;
using testing_util::Cells;
using testing_util::Lines;
using testing_util::Read;

double Value(const std::string& cell) { return cell == "nan" ? NAN : std::stod(cell); }

void ExpectMetric(const nlohmann::json& j, const char* key, double expected) {
  ASSERT_TRUE(j.contains(key)) << key;
  if (!std::isfinite(expected)) {
    EXPECT_TRUE(j.at(key).is_null()) << key;
  } else {
    EXPECT_DOUBLE_EQ(j.at(key).get<double>(), expected) << key;
  }
}

void ExpectMetricsOf(const nlohmann::json& j, const std::vector<double>& series) {
  const eval::ReturnMetrics m = eval::ComputeReturnMetrics(series);
  ExpectMetric(j, "sharpe_ratio", m.sharpe_ratio);
  ExpectMetric(j, "sortino_ratio", m.sortino_ratio);
  ExpectMetric(j, "downside_risk", m.downside_risk);
  ExpectMetric(j, "annual_return", m.annual_return);
  ExpectMetric(j, "annual_volatility", m.annual_volatility);
  ExpectMetric(j, "max_drawdown", m.max_drawdown);
  ExpectMetric(j, "calmar_ratio", m.calmar_ratio);
  ExpectMetric(j, "cum_returns_final", m.cum_returns_final);
  ExpectMetric(j, "win_rate", m.win_rate);
  ExpectMetric(j, "psr", m.psr);
  EXPECT_EQ(j.at("observations").get<int64_t>(), m.observations);
  EXPECT_EQ(j.at("max_drawdown_duration").get<int64_t>(), m.max_drawdown_duration);
  EXPECT_EQ(j.at("psr_observations").get<int64_t>(), m.psr_observations);
}

// The annualisation, the short-sample flags and the significance of the concatenated
// series and of every fold: the synthetic market trades on weekdays only (252), the test
// against flat is the policy's own Sharpe ratio (flat counts as Sharpe 0), and a fold of
// fewer than 30 sessions has its ratios flagged.
void ExpectBenchmarkSignificance(const nlohmann::json& summary, size_t sessions) {
  EXPECT_EQ(summary["periods_per_year"].get<int>(), 252);
  EXPECT_EQ(summary["metrics"]["few_observations"].get<bool>(), sessions < 30);
  const nlohmann::json& sig = summary["significance"];
  for (const char* name : {"flat", "buy_and_hold"}) {
    ASSERT_TRUE(sig.contains(name)) << name;
    EXPECT_EQ(sig[name]["observations"].get<size_t>(), sessions) << name;
    const double p = sig[name]["p_value"].get<double>();
    EXPECT_GT(p, 0.0) << name;
    EXPECT_LE(p, 1.0) << name;
  }
  const nlohmann::json& sr = summary["metrics"]["sharpe_ratio"];
  if (sr.is_number()) {
    const double v = sr.get<double>();
    EXPECT_NEAR(sig["flat"]["sharpe_difference"].get<double>(), v,
                1e-9 * std::max(1.0, std::fabs(v)));
  }
  for (const nlohmann::json& f : summary["folds"]) {
    EXPECT_TRUE(f.contains("significance")) << f.dump();
    EXPECT_EQ(f["metrics"]["few_observations"].get<bool>(),
              f["metrics"]["observations"].get<int>() < 30);
  }
}

constexpr int kDays = 40;

class Walkforward : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new fs::path(rlt::testing::NewScratchDir("rlt_walkforward_test_"));
    // The [split] ranges are replaced per fold; validation overlaps and must go.
    std::ofstream(Config()) << "[run]\ntotal_steps = 2048\nthreads = 1\nseed = 3\n"
                            << "[data]\nsource = \"synthetic\"\ndays = " << kDays
                            << "\nsignal_to_noise = 0.0\n"
                            << "[split]\ntrain = \"2023-01-02:2023-01-31\"\n"
                            << "validation = \"2023-02-01:2023-02-10\"\n"
                            << "test = \"2023-02-13:2023-02-24\"\n"
                            << "[env]\nid = \"intraday\"\nnum_envs = 4\n"
                            << "[algo]\nn_steps = 128\nbatch_size = 128\nn_epochs = 2\n";
    WalkforwardRequest req;
    req.config_path = Config();
    req.folds = 3;
    req.out_dir = (*root_ / "expanding").string();
    req.quiet = true;
    auto out = RunWalkforward(req);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    expanding_ = new WalkforwardOutcome(*out);

    req.out_dir = (*root_ / "rolling").string();
    req.rolling = true;
    req.train_days = 12;
    req.test_days = 5;
    req.overrides = {"run.total_steps=1024"};
    auto rolled = RunWalkforward(req);
    ASSERT_TRUE(rolled.ok()) << rolled.status().ToString();
    rolling_ = new WalkforwardOutcome(*rolled);

    auto cfg = config::Config::LoadFile(Config());
    RLT_CHECK(cfg.ok());
    auto dates = train::SessionDates(*cfg);
    RLT_CHECK(dates.ok());
    sessions_ = new std::vector<int32_t>(*dates);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete root_;
    delete expanding_;
    delete rolling_;
    delete sessions_;
  }
  static std::string Config() { return (*root_ / "wf.toml").string(); }
  static nlohmann::json Summary(const WalkforwardOutcome& o) {
    return nlohmann::json::parse(Read(fs::path(o.summary_dir) / eval::kSummaryFile));
  }
  // Sessions of the data with first <= date <= last.
  static int SessionsBetween(int32_t first, int32_t last) {
    int n = 0;
    for (int32_t d : *sessions_) n += (d >= first && d <= last);
    return n;
  }

  static fs::path* root_;
  static WalkforwardOutcome* expanding_;
  static WalkforwardOutcome* rolling_;
  static std::vector<int32_t>* sessions_;
};
fs::path* Walkforward::root_ = nullptr;
WalkforwardOutcome* Walkforward::expanding_ = nullptr;
WalkforwardOutcome* Walkforward::rolling_ = nullptr;
std::vector<int32_t>* Walkforward::sessions_ = nullptr;

TEST_F(Walkforward, EveryFoldIsARunDirectoryWithItsEvaluation) {
  ASSERT_EQ(expanding_->fold_dirs.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    // Folds are numbered from 1: OUT/fold_1 .. OUT/fold_3.
    const fs::path dir = fs::path(expanding_->out_dir) / ("fold_" + std::to_string(k + 1));
    EXPECT_EQ(expanding_->fold_dirs[k], dir.string());
    EXPECT_TRUE(fs::exists(dir / "config.toml"));
    EXPECT_TRUE(fs::exists(dir / "final"));
    for (const char* file : {eval::kSummaryFile, eval::kEquityFile, eval::kDailyReturnsFile}) {
      EXPECT_TRUE(fs::exists(dir / "eval" / "test" / file)) << dir << " " << file;
    }
    // The fold's resolved config holds its windows.
    const std::string config = Read(dir / "config.toml");
    const FoldWindow& w = expanding_->windows[k];
    EXPECT_NE(config.find(market::DateRange{w.train_first, w.train_last}.ToString()),
              std::string::npos);
    EXPECT_NE(config.find(market::DateRange{w.test_first, w.test_last}.ToString()),
              std::string::npos);
    EXPECT_EQ(config.find("validation"), std::string::npos);
    const auto s = nlohmann::json::parse(Read(dir / "eval" / "test" / eval::kSummaryFile));
    EXPECT_FALSE(s["in_sample"].get<bool>());
  }
  for (const char* file : {eval::kSummaryFile, eval::kEquityFile, eval::kDailyReturnsFile}) {
    EXPECT_TRUE(fs::exists(fs::path(expanding_->summary_dir) / file)) << file;
  }
  EXPECT_FALSE(expanding_->notes.empty());  // the overlapping validation range was removed
}

TEST_F(Walkforward, ExpandingTestWindowsAreDisjointInOrderAndFollowTheirTrainWindow) {
  const auto& w = expanding_->windows;
  ASSERT_EQ(w.size(), 3u);
  const int s = static_cast<int>(sessions_->size());
  const int n = s / 2, m = (s - n) / 3;
  const nlohmann::json summary = Summary(*expanding_);
  EXPECT_EQ(summary["mode"], "expanding");
  EXPECT_EQ(summary["sessions"].get<int>(), s);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(w[k].train_begin, 0);
    EXPECT_EQ(w[k].train_first, sessions_->front());
    EXPECT_EQ(w[k].test_begin, n + k * m);
    EXPECT_EQ(w[k].test_end - w[k].test_begin, m);
    EXPECT_EQ(w[k].train_end, w[k].test_begin);
    EXPECT_LT(w[k].train_last, w[k].test_first);
    if (k > 0) {
      EXPECT_LT(w[k - 1].test_last, w[k].test_first);
    }
    const nlohmann::json& f = summary["folds"][k];
    EXPECT_EQ(f["fold"].get<int>(), k + 1);
    EXPECT_EQ(f["run_dir"].get<std::string>(),
              (fs::path(expanding_->out_dir) / ("fold_" + std::to_string(k + 1))).string());
    EXPECT_EQ(f["train"]["first"], FormatDate(w[k].train_first));
    EXPECT_EQ(f["test"]["last"], FormatDate(w[k].test_last));
    EXPECT_EQ(f["train"]["sessions"].get<int>(),
              SessionsBetween(w[k].train_first, w[k].train_last));
    EXPECT_EQ(f["test"]["sessions"].get<int>(), m);
  }
}

TEST_F(Walkforward, RollingTrainWindowsHaveExactlyNSessions) {
  const auto& w = rolling_->windows;
  ASSERT_EQ(w.size(), 3u);
  const nlohmann::json summary = Summary(*rolling_);
  EXPECT_EQ(summary["mode"], "rolling");
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(w[k].train_end - w[k].train_begin, 12);
    EXPECT_EQ(SessionsBetween(w[k].train_first, w[k].train_last), 12);
    EXPECT_EQ(SessionsBetween(w[k].test_first, w[k].test_last), 5);
    EXPECT_EQ(w[k].train_end, w[k].test_begin);
    EXPECT_EQ(w[k].test_begin, 12 + 5 * k);
    if (k > 0) {
      EXPECT_LT(w[k - 1].test_last, w[k].test_first);
    }
  }
  EXPECT_GT(w[1].train_first, sessions_->front());
}

TEST_F(Walkforward, ConcatenatedDailyReturnsAreTheFoldsRowsInOrder) {
  for (const WalkforwardOutcome* o : {expanding_, rolling_}) {
    std::vector<std::string> expected = {kWalkforwardDailyHeader};
    for (size_t k = 0; k < o->fold_dirs.size(); ++k) {
      const auto rows =
          Lines(Read(fs::path(o->fold_dirs[k]) / "eval" / "test" / eval::kDailyReturnsFile));
      ASSERT_EQ(rows.at(0), eval::kDailyReturnsHeader);
      const FoldWindow& w = o->windows[k];
      EXPECT_EQ(static_cast<int>(rows.size()) - 1, w.test_end - w.test_begin);
      for (size_t i = 1; i < rows.size(); ++i) {
        expected.push_back(rows[i] + "," + std::to_string(k + 1));  // fold numbers 1..K
      }
    }
    const auto got = Lines(Read(fs::path(o->summary_dir) / eval::kDailyReturnsFile));
    EXPECT_EQ(got, expected);
    for (size_t i = 2; i < got.size(); ++i) EXPECT_LT(Cells(got[i - 1])[0], Cells(got[i])[0]);
  }
}

TEST_F(Walkforward, ConcatenatedMetricsAreComputeReturnMetricsOfTheSeries) {
  for (const WalkforwardOutcome* o : {expanding_, rolling_}) {
    const auto rows = Lines(Read(fs::path(o->summary_dir) / eval::kDailyReturnsFile));
    std::vector<double> strategy, bh, flat;
    for (size_t i = 1; i < rows.size(); ++i) {
      const auto c = Cells(rows[i]);
      strategy.push_back(Value(c[1]));
      bh.push_back(Value(c[2]));
      flat.push_back(Value(c[3]));
    }
    const nlohmann::json summary = Summary(*o);
    ExpectMetricsOf(summary["metrics"], strategy);
    ExpectMetricsOf(summary["benchmarks"]["buy_and_hold"], bh);
    ExpectMetricsOf(summary["benchmarks"]["flat"], flat);
    EXPECT_EQ(summary["range"]["first"], Cells(rows[1])[0]);
    EXPECT_EQ(summary["range"]["last"], Cells(rows.back())[0]);
    // equity.csv compounds the same returns.
    const auto equity = Lines(Read(fs::path(o->summary_dir) / eval::kEquityFile));
    ASSERT_EQ(equity.at(0), kWalkforwardEquityHeader);
    ASSERT_EQ(equity.size(), rows.size());
    const double final_worth = std::stod(Cells(equity.back())[1]);
    EXPECT_NEAR(final_worth, 1.0 + eval::CumReturnsFinal(strategy), 1e-8);
    EXPECT_NEAR(std::stod(Cells(equity.back())[2]), 1.0 + eval::CumReturnsFinal(bh), 1e-8);
    EXPECT_EQ(Cells(equity.back())[3], Cells(rows.back())[4]);
    EXPECT_NE(o->table.find("buy-and-hold"), std::string::npos);
    ExpectBenchmarkSignificance(summary, strategy.size());
    EXPECT_NE(o->table.find("p-value (bootstrap"), std::string::npos) << o->table;
    EXPECT_NE(o->table.find("p_vs_bh"), std::string::npos) << o->table;
    EXPECT_NE(o->table.find("252 periods per year"), std::string::npos) << o->table;
  }
}

TEST_F(Walkforward, BadFoldsOrWindowsFailWithoutWritingOut) {
  struct Case {
    int folds, train_days, test_days;
    bool rolling;
    const char* expect;
  };
  const std::string sessions = std::to_string(sessions_->size()) + " sessions";
  for (const Case& c :
       {Case{0, 0, 0, false, "--folds"}, Case{-2, 0, 0, false, "--folds"},
        Case{3, 0, 20, false, sessions.c_str()}, Case{3, 39, 0, false, sessions.c_str()},
        Case{2, 30, 10, false, sessions.c_str()}, Case{50, 0, 0, false, sessions.c_str()},
        Case{3, 0, 0, true, "--train-days"}}) {
    WalkforwardRequest req;
    req.config_path = Config();
    req.folds = c.folds;
    req.train_days = c.train_days;
    req.test_days = c.test_days;
    req.rolling = c.rolling;
    req.out_dir = (*root_ / "refused").string();
    req.quiet = true;
    auto out = RunWalkforward(req);
    ASSERT_TRUE(IsError(out, Status::Code::kInvalidArgument, c.expect))
        << c.folds << " " << c.train_days << " " << c.test_days;
    EXPECT_FALSE(fs::exists(*root_ / "refused"));
  }
}

TEST(PlanFolds, DefaultsSplitTheSecondHalfEvenly) {
  std::vector<int32_t> dates;
  for (int i = 0; i < 25; ++i) dates.push_back(20230101 + i);
  auto w = PlanFolds(dates, 4, 0, 0, false);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->size(), 4u);
  // N = 12, M = (25 - 12) / 4 = 3: tests 12-14, 15-17, 18-20, 21-23; session 24 unused.
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ((*w)[k].train_begin, 0);
    EXPECT_EQ((*w)[k].train_end, 12 + 3 * k);
    EXPECT_EQ((*w)[k].test_begin, 12 + 3 * k);
    EXPECT_EQ((*w)[k].test_end, 15 + 3 * k);
    EXPECT_EQ((*w)[k].test_first, dates[12 + 3 * k]);
  }
  auto r = PlanFolds(dates, 2, 5, 10, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[1].train_begin, 10);
  EXPECT_EQ((*r)[1].train_end, 15);
  EXPECT_TRUE(IsError(PlanFolds(dates, 2, 5, 11, true), Status::Code::kInvalidArgument,
                      "test windows of 11 sessions need 27 sessions"));  // 5 + 22 > 25
  EXPECT_TRUE(PlanFolds(dates, 2, 5, 10, true).ok());                    // 5 + 20 <= 25
  EXPECT_TRUE(IsError(PlanFolds(dates, 30, 0, 0, false), Status::Code::kInvalidArgument,
                      "13 remain for 30 test windows"));
}

// The fold column of OUT/walkforward/equity.csv: 1..K, each fold's rows on its test dates.
TEST_F(Walkforward, EquityFoldColumnIsNumberedFromOne) {
  const auto rows = Lines(Read(fs::path(expanding_->summary_dir) / eval::kEquityFile));
  ASSERT_EQ(rows.at(0), kWalkforwardEquityHeader);
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto c = Cells(rows[i]);
    const int fold = std::stoi(c.at(3));
    ASSERT_GE(fold, 1);
    ASSERT_LE(fold, 3);
    const FoldWindow& w = expanding_->windows[fold - 1];
    EXPECT_GE(c[0], FormatDate(w.test_first));
    EXPECT_LE(c[0], FormatDate(w.test_last));
  }
}

// report.html of the concatenated result: every fold named and its test window marked at
// the window's first and last session (from the planned windows, not from the report).
TEST_F(Walkforward, ReportMarksEveryFoldAtItsTestWindow) {
  for (const WalkforwardOutcome* o : {expanding_, rolling_}) {
    const std::string html = Read(fs::path(o->summary_dir) / eval::kReportFile);
    ASSERT_FALSE(html.empty());
    const std::regex band(
        R"re(<rect class="fold-band [a-z]+" data-fold="(\d+)" data-first="([0-9-]+)" data-last="([0-9-]+)")re");
    size_t k = 0;
    for (auto it = std::sregex_iterator(html.begin(), html.end(), band);
         it != std::sregex_iterator(); ++it, ++k) {
      ASSERT_LT(k, o->windows.size());
      const FoldWindow& w = o->windows[k];
      EXPECT_EQ(std::stoi((*it)[1]), static_cast<int>(k + 1));
      EXPECT_EQ((*it)[2].str(), FormatDate(w.test_first));
      EXPECT_EQ((*it)[3].str(), FormatDate(w.test_last));
      EXPECT_NE(html.find(">fold " + std::to_string(k + 1) + "<"), std::string::npos);
    }
    EXPECT_EQ(k, o->windows.size());
    EXPECT_EQ(html.find("fold 0"), std::string::npos);
    EXPECT_EQ(html.find("fold_0"), std::string::npos);
  }
}

}  // namespace
}  // namespace rlt::evalrun
