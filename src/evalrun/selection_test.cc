// End-to-end tests of selection on validation: a tiny intraday run on bars from a file,
// trained with periodic evaluation, its best/ checkpoint, patience, --resume, the
// evaluation that uses best/ by default, and the proof that selection never sees the test
// range (the test range's bars perturbed: the same selection and stopping step).
#include "train/selection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status_test_util.h"
#include "evalrun/evalrun.h"
#include "evalrun/signal.h"
#include "market/csv.h"
#include "market/synth.h"
#include "runlog/run_dir.h"
#include "testing/testing.h"
#include "train/train.h"

namespace rlt::evalrun {
namespace {

namespace fs = std::filesystem;
using rlt::testing::Cells;
using rlt::testing::Lines;
using rlt::testing::ReadFile;

// 40 weekday sessions from 2023-01-02 (to 2023-02-24) of 75 five-minute bars.
constexpr const char* kConfig = R"(
[run]
total_steps = 3072
seed = 3
threads = 1
eval_every = 512
patience = 2
[data]
source = "file"
file = "BARS"
timezone = "Asia/Kolkata"
[split]
train = "2023-01-02:2023-01-31"
validation = "2023-02-01:2023-02-10"
test = "2023-02-13:2023-02-24"
[env]
id = "intraday"
num_envs = 4
[algo]
n_steps = 64
batch_size = 128
n_epochs = 2
learning_rate = 0.003
norm_obs = true
)";

constexpr int32_t kTestStart = 20230213;

class SelectionRun : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = rlt::testing::NewScratchDir("rlt_select_"); }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes the bars (the test range's prices scaled by `test_scale`) and the config.
  std::string WriteInputs(const std::string& name, double test_scale) {
    market::SynthOptions so;
    so.num_days = 40;
    so.seed = 11;
    so.signal_to_noise = 0.3;
    Result<market::MarketData> md = market::GenerateSynthetic(so);
    EXPECT_TRUE(md.ok()) << md.status().ToString();
    market::Bars& bars = md->symbols.front();
    for (const market::Session& s : bars.sessions) {
      if (s.date < kTestStart) continue;
      for (int32_t t = s.begin; t < s.end; ++t) {
        const double f = test_scale * (1.0 + 0.05 * std::sin(0.7 * t));  // a new path
        bars.open[t] *= f, bars.high[t] *= f, bars.low[t] *= f, bars.close[t] *= f;
      }
    }
    const std::string bars_path = (dir_ / (name + ".csv")).string();
    EXPECT_TRUE(market::WriteBarsCsv(bars_path, *md).ok());
    std::string text = kConfig;
    text.replace(text.find("BARS"), 4, bars_path);
    const std::string config = (dir_ / (name + ".toml")).string();
    rlt::testing::WriteFile(config, text);
    return config;
  }

  train::TrainOutcome Train(const std::string& config, const std::string& run,
                            std::vector<std::string> overrides = {}, int64_t stop_at = 0) {
    train::TrainRequest req;
    req.config_path = config;
    req.run_dir = (dir_ / run).string();
    req.quiet = true;
    req.overrides = std::move(overrides);
    req.stop_at_steps = stop_at;
    Result<train::TrainOutcome> out = train::RunTraining(req);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? *out : train::TrainOutcome{};
  }

  train::Selection Record(const fs::path& dir) {
    Result<train::Selection> s = train::Selection::Read(dir.string());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : train::Selection{};
  }

  fs::path dir_;
};

// metrics.csv's column `key` at the rows where it holds a finite number.
std::vector<std::pair<int64_t, double>> Column(const fs::path& run, const std::string& key) {
  const std::vector<std::string> lines = Lines(ReadFile(run / "metrics.csv"));
  const std::vector<std::string> header = Cells(lines.at(0));
  const auto at = std::find(header.begin(), header.end(), key);
  EXPECT_NE(at, header.end()) << key;
  std::vector<std::pair<int64_t, double>> out;
  for (size_t i = 1; i < lines.size() && at != header.end(); ++i) {
    const std::vector<std::string> cells = Cells(lines[i]);
    const std::string& cell = cells.at(at - header.begin());
    if (cell.empty()) continue;
    const double v = std::stod(cell);  // "nan" and "-nan" too
    if (std::isfinite(v)) out.emplace_back(std::stoll(cells[0]), v);
  }
  return out;
}

TEST_F(SelectionRun, BestIsTheFirstMaximumOfTheValidationCurveAndPatienceStopsAfterItsCount) {
  const train::TrainOutcome out =
      Train(WriteInputs("bars", 1.0), "run", {"run.eval_every=256", "run.patience=1"});
  const fs::path run = dir_ / "run";
  const train::Selection sel = Record(run);
  // The finite scores (a policy that never trades has an undefined Sharpe ratio).
  const auto scores = Column(run, "eval/score");
  int64_t finite = 0;
  for (const train::SelectionPoint& p : sel.curve) finite += std::isfinite(p.score);
  ASSERT_EQ(static_cast<int64_t>(scores.size()), finite);
  ASSERT_GE(scores.size(), 2u);
  // The selected point is the first maximum of the curve metrics.csv shows.
  size_t first_max = 0;
  for (size_t i = 1; i < scores.size(); ++i) {
    if (scores[i].second > scores[first_max].second) first_max = i;
  }
  ASSERT_TRUE(sel.has_best());
  EXPECT_EQ(sel.best_step, scores[first_max].first);
  EXPECT_NEAR(sel.best_score, scores[first_max].second, 1e-6 * std::fabs(sel.best_score) + 1e-12);
  EXPECT_EQ(Record(run / "best").best_step, sel.best_step);
  EXPECT_TRUE(fs::exists(run / "best" / "MANIFEST"));
  EXPECT_TRUE(fs::exists(run / "final" / "MANIFEST"));
  // Patience 1: training ran to the end or stopped at the first evaluation without
  // improvement after the best, never later.
  int64_t after_best = 0;
  for (const train::SelectionPoint& p : sel.curve)
    after_best = p.step > sel.best_step ? after_best + 1 : 0;
  if (out.total_steps < 3072) {
    EXPECT_EQ(after_best, 1);
    EXPECT_NE(out.stop_reason.find("did not improve in 1 evaluation "), std::string::npos)
        << out.stop_reason;
    Result<runlog::RunStatusRead> status = runlog::ReadRunStatus(run);
    ASSERT_TRUE(status.ok());
    EXPECT_EQ(status->state, "finished");
    EXPECT_NE(status->message.find("stopped early"), std::string::npos) << status->message;
  } else {
    EXPECT_EQ(after_best, 0);
    EXPECT_TRUE(out.stop_reason.empty());
  }
}

// The validation score recorded for best/ is the Sharpe ratio `rltrade eval --range
// validation --checkpoint best` computes by its own walk (evalrun's backtest).
TEST_F(SelectionRun, TheRecordedScoreIsWhatEvaluationOfBestOnValidationComputes) {
  Train(WriteInputs("bars", 1.0), "run");
  const train::Selection sel = Record(dir_ / "run");
  EvalRequest er;
  er.run_dir = (dir_ / "run").string();
  er.range = "validation";
  er.checkpoint = "best";
  Result<EvalOutcome> ev = RunEvaluation(er);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->name, "validation.ckpt-best");
  const nlohmann::json summary = nlohmann::json::parse(ev->summary_json);
  const double sharpe = summary["metrics"]["sharpe_ratio"].get<double>();
  EXPECT_NEAR(sharpe, sel.best_score, 1e-9 * std::fabs(sel.best_score));
}

// Selection never sees the test range: with the test range's bars replaced by another
// path, the selected step and score and the stopping step are the same and best/ is the
// same checkpoint byte for byte (threads = 1 is deterministic), while an evaluation of
// that checkpoint on the test range does change (the perturbation reaches the test range).
TEST_F(SelectionRun, PerturbingTheTestRangeChangesNeitherTheSelectionNorTheStoppingStep) {
  const train::TrainOutcome a = Train(WriteInputs("a", 1.0), "a");
  const train::TrainOutcome b = Train(WriteInputs("b", 1.3), "b");
  EXPECT_EQ(a.total_steps, b.total_steps);
  const train::Selection sa = Record(dir_ / "a"), sb = Record(dir_ / "b");
  ASSERT_TRUE(sa.has_best());
  EXPECT_EQ(sa.best_step, sb.best_step);
  EXPECT_EQ(sa.best_score, sb.best_score);
  EXPECT_EQ(sa.evaluations(), sb.evaluations());
  for (const char* file : {"policy.rlt", "optimizer.rlt", "normalizer.rlt", "state.rlt"}) {
    EXPECT_TRUE(ReadFile(dir_ / "a" / "best" / file) == ReadFile(dir_ / "b" / "best" / file))
        << file;
  }
  double test_sharpe[2];
  for (int k = 0; k < 2; ++k) {
    EvalRequest er;
    er.run_dir = (dir_ / (k == 0 ? "a" : "b")).string();
    Result<EvalOutcome> ev = RunEvaluation(er);  // the default: best/ on [split] test
    ASSERT_TRUE(ev.ok()) << ev.status().ToString();
    EXPECT_EQ(ev->name, "test.ckpt-best");
    test_sharpe[k] = nlohmann::json::parse(ev->summary_json)["metrics"]["sharpe_ratio"];
  }
  EXPECT_NE(test_sharpe[0], test_sharpe[1]);
}

// A run paused half-way and resumed selects the same checkpoint and stops at the same step
// as the uninterrupted run: the best score and the patience count come back from the
// checkpoint's record.
TEST_F(SelectionRun, AResumedRunSelectsAndStopsAsTheUninterruptedOne) {
  const std::string config = WriteInputs("bars", 1.0);
  const train::TrainOutcome whole = Train(config, "whole");
  const train::TrainOutcome first = Train(config, "parts", {}, 1280);
  ASSERT_TRUE(first.paused || first.total_steps < 1280);
  train::TrainRequest req;
  req.resume_dir = (dir_ / "parts").string();
  req.quiet = true;
  Result<train::TrainOutcome> rest = train::RunTraining(req);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(rest->total_steps, whole.total_steps);
  EXPECT_EQ(rest->stop_reason.empty(), whole.stop_reason.empty());
  const train::Selection a = Record(dir_ / "whole"), b = Record(dir_ / "parts");
  EXPECT_EQ(a.best_step, b.best_step);
  EXPECT_EQ(a.best_score, b.best_score);
  EXPECT_EQ(a.evaluations(), b.evaluations());
  EXPECT_TRUE(ReadFile(dir_ / "whole" / "best" / "policy.rlt") ==
              ReadFile(dir_ / "parts" / "best" / "policy.rlt"));
}

// eval uses best/ by default and says so (its output name and the selection block with the
// deflated Sharpe ratio over the run's validation evaluations); --checkpoint final is the
// final policy under the old name; --checkpoint best on a run without best/ is an error
// naming the alternative.
TEST_F(SelectionRun, EvalDefaultsToBestReportsItsSelectionAndFinalKeepsItsName) {
  const std::string config = WriteInputs("bars", 1.0);
  Train(config, "run");
  const fs::path run = dir_ / "run";
  EvalRequest er;
  er.run_dir = run.string();
  Result<EvalOutcome> best = RunEvaluation(er);
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  EXPECT_EQ(best->name, "test.ckpt-best");
  EXPECT_NE(best->table.find("checkpoint best/"), std::string::npos) << best->table;
  const nlohmann::json sel = nlohmann::json::parse(best->summary_json)["selection"];
  // One trial per evaluation: the rows with an eval/mean_reward (always finite).
  EXPECT_EQ(sel["trials"].get<size_t>(), Column(run, "eval/mean_reward").size());
  const auto sharpes = Column(run, "eval/sharpe_ratio");  // the finite ones
  // The variance of the per-session validation Sharpe ratios, from metrics.csv.
  double mean = 0, var = 0;
  for (const auto& [step, v] : sharpes) mean += v / std::sqrt(252.0);
  mean /= static_cast<double>(sharpes.size());
  for (const auto& [step, v] : sharpes) var += std::pow(v / std::sqrt(252.0) - mean, 2);
  var /= static_cast<double>(sharpes.size() - 1);
  EXPECT_NEAR(sel["deflated_sharpe_detail"]["sharpe_variance_per_period"].get<double>(), var,
              1e-5 * var);
  EXPECT_TRUE(sel["deflated_sharpe"].is_number());
  EXPECT_TRUE(fs::exists(run / "eval" / "test.ckpt-best" / "report.html"));
  EXPECT_NE(ReadFile(run / "eval" / "test.ckpt-best" / "report.html").find("selected-point"),
            std::string::npos);
  er.checkpoint = "final";
  Result<EvalOutcome> final_eval = RunEvaluation(er);
  ASSERT_TRUE(final_eval.ok()) << final_eval.status().ToString();
  EXPECT_EQ(final_eval->name, "test");
  EXPECT_FALSE(nlohmann::json::parse(final_eval->summary_json).contains("selection"));

  // signal decides with best/ by default and names it; --checkpoint final is final/.
  SignalRequest sr;
  sr.run_dir = run.string();
  sr.bars_file = (dir_ / "bars.csv").string();
  Result<Signal> signal = ComputeSignal(sr);
  ASSERT_TRUE(signal.ok()) << signal.status().ToString();
  EXPECT_EQ(fs::path(signal->checkpoint), runlog::BestCheckpointPath(run));
  EXPECT_NE(signal->json.find("\"checkpoint\""), std::string::npos);
  sr.checkpoint = "final";
  signal = ComputeSignal(sr);
  ASSERT_TRUE(signal.ok()) << signal.status().ToString();
  EXPECT_EQ(fs::path(signal->checkpoint), runlog::FinalCheckpointPath(run));

  Train(config, "plain", {"run.eval_every=0", "run.patience=0", "run.total_steps=512"});
  EXPECT_FALSE(fs::exists(dir_ / "plain" / "best"));
  er.run_dir = (dir_ / "plain").string();
  er.checkpoint = "best";
  EXPECT_TRUE(IsError(RunEvaluation(er), Status::Code::kNotFound, "--checkpoint final"));
  er.checkpoint = "";
  Result<EvalOutcome> plain = RunEvaluation(er);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->name, "test");
}

}  // namespace
}  // namespace rlt::evalrun
