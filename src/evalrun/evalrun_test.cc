// rltrade evalrun tests: `rltrade eval` on a tiny trained intraday run — the files of the
// eval/outputs.h contract, the in-sample guard, benchmarks checked against an independent
// computation from the bars, reproducibility, and the honesty checks (a
// cheat policy that reads the future wins hugely; without a predictable component nothing
// honest beats flat beyond noise).
#include "evalrun/evalrun.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/civil_time.h"
#include "core/status_test_util.h"
#include "env/envs/intraday.h"
#include "eval/outputs.h"
#include "evalrun/test_util.h"
#include "market/market.h"
#include "testing/testing.h"
#include "train/train.h"

namespace rlt::evalrun {
namespace {

namespace fs = std::filesystem;
using testing_util::Cells;
using testing_util::Lines;
using testing_util::Read;

constexpr int kDays = 60;
constexpr const char* kTrain = "2023-01-02:2023-02-15";
constexpr const char* kTest = "2023-02-16:2023-03-31";

// One tiny run shared by the tests: synthetic market without a predictable component
// (signal_to_noise = 0), original action mode, default costs.
class EvalRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new fs::path(rlt::testing::NewScratchDir("rlt_evalrun_test_"));
    const fs::path config = *root_ / "run.toml";
    std::ofstream(config) << "[run]\ntotal_steps = 2048\nthreads = 1\nseed = 3\n"
                          << "[data]\nsource = \"synthetic\"\ndays = " << kDays
                          << "\nsignal_to_noise = 0.0\n"
                          << "[split]\ntrain = \"" << kTrain << "\"\ntest = \"" << kTest << "\"\n"
                          << "[env]\nid = \"intraday\"\nnum_envs = 4\n"
                          << "[algo]\nn_steps = 128\nbatch_size = 128\nn_epochs = 2\n"
                          << "norm_obs = true\n";
    train::TrainRequest req;
    req.config_path = config.string();
    req.run_dir = (*root_ / "run").string();
    req.quiet = true;
    auto out = train::RunTraining(req);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete root_;
  }
  static fs::path RunDir() { return *root_ / "run"; }
  static EvalRequest Request(const std::string& range = "test") {
    EvalRequest r;
    r.run_dir = RunDir().string();
    r.range = range;
    return r;
  }
  // The run's bars, generated independently with the run's [data] settings.
  static market::Bars Bars() {
    market::SynthOptions so;
    so.num_days = kDays;
    so.seed = 7;  // [data] seed default
    so.bar_minutes = 5;
    auto md = market::GenerateSynthetic(so);
    RLT_CHECK(md.ok());
    return md->symbols.front();
  }
  static nlohmann::json Summary(const EvalOutcome& out) {
    return nlohmann::json::parse(Read(fs::path(out.out_dir) / eval::kSummaryFile));
  }
  static fs::path* root_;
};
fs::path* EvalRun::root_ = nullptr;

TEST_F(EvalRun, EvalOnTestWritesEveryFileWithTheContractedHeaders) {
  auto out = RunEvaluation(Request());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const fs::path dir = RunDir() / "eval" / "test";
  EXPECT_EQ(out->out_dir, dir.string());
  EXPECT_EQ(Lines(Read(dir / eval::kEquityFile)).at(0), eval::kEquityHeader);
  EXPECT_EQ(Lines(Read(dir / eval::kDailyReturnsFile)).at(0), eval::kDailyReturnsHeader);
  EXPECT_EQ(Lines(Read(dir / eval::kTradesFile)).at(0), eval::kTradesHeader);
  EXPECT_TRUE(out->report_written);
  EXPECT_TRUE(fs::exists(dir / eval::kReportFile));
  const nlohmann::json s = Summary(*out);
  EXPECT_FALSE(s["in_sample"].get<bool>());
  EXPECT_EQ(s["policy"], "trained");
  EXPECT_EQ(s["range"]["name"], "test");
  EXPECT_GE(s["range"]["first"].get<std::string>(), "2023-02-16");
  EXPECT_LE(s["range"]["last"].get<std::string>(), "2023-03-31");
  for (const char* key :
       {"sharpe_ratio", "sortino_ratio", "downside_risk", "annual_return", "annual_volatility",
        "max_drawdown", "max_drawdown_duration", "calmar_ratio", "cum_returns_final", "win_rate",
        "observations", "psr", "psr_observations", "num_trades", "average_trade_pnl",
        "profit_factor", "turnover", "exposure", "costs_paid"}) {
    EXPECT_TRUE(s["metrics"].contains(key)) << key;
    EXPECT_TRUE(s["benchmarks"]["flat"].contains(key)) << key;
    EXPECT_TRUE(s["benchmarks"]["buy_and_hold"].contains(key)) << key;
  }
  // One daily row per test session; every bar of those sessions in equity.csv.
  const int rows = static_cast<int>(Lines(Read(dir / eval::kDailyReturnsFile)).size()) - 1;
  EXPECT_EQ(s["metrics"]["observations"].get<int>(), rows);
  const market::Bars bars = Bars();
  int sessions = 0, bars_in_test = 0;
  for (const auto& session : bars.sessions) {
    if (session.date >= 20230216 && session.date <= 20230331) {
      ++sessions;
      bars_in_test += session.size();
    }
  }
  EXPECT_EQ(rows, sessions);
  EXPECT_EQ(static_cast<int>(Lines(Read(dir / eval::kEquityFile)).size()) - 1, bars_in_test);
  EXPECT_EQ(out->table.find("IN-SAMPLE"), std::string::npos);
}

// The synthetic market trades on weekdays only, so ratios are annualised with 252 periods;
// --periods overrides it, and the Sharpe ratio and volatility scale by the square root of
// the ratio of the two. Against flat (Sharpe 0 by definition) the tested difference is the
// policy's own Sharpe ratio; against buy-and-hold it is the difference of the two.
TEST_F(EvalRun, SummaryStatesPeriodsPerYearAndTheSignificanceOfEachBenchmark) {
  for (const auto& session : Bars().sessions) {
    const int weekday =
        Weekday(DaysFromCivil(session.date / 10000, session.date / 100 % 100, session.date % 100));
    ASSERT_TRUE(weekday >= 1 && weekday <= 5) << session.date;
  }
  EvalRequest req = Request();
  req.policy = "rule:momentum5";
  auto out = RunEvaluation(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const nlohmann::json s = Summary(*out);
  EXPECT_EQ(s["periods_per_year"].get<int>(), 252);
  const double sr = s["metrics"]["sharpe_ratio"].get<double>();
  const double bh_sr = s["benchmarks"]["buy_and_hold"]["sharpe_ratio"].get<double>();
  const nlohmann::json& sig = s["significance"];
  EXPECT_NEAR(sig["flat"]["sharpe_difference"].get<double>(), sr, 1e-9 * std::fabs(sr));
  EXPECT_NEAR(sig["buy_and_hold"]["sharpe_difference"].get<double>(), sr - bh_sr,
              1e-9 * (std::fabs(sr) + std::fabs(bh_sr)));
  for (const char* name : {"flat", "buy_and_hold"}) {
    const double p = sig[name]["p_value"].get<double>();
    EXPECT_GT(p, 0.0) << name;
    EXPECT_LE(p, 1.0) << name;
    EXPECT_LT(sig[name]["ci_low"].get<double>(), sig[name]["ci_high"].get<double>()) << name;
    EXPECT_EQ(sig[name]["observations"], s["metrics"]["observations"]) << name;
  }
  EXPECT_EQ(sig["resamples"].get<int>(), 2000);
  EXPECT_NE(out->table.find("p-value (bootstrap"), std::string::npos) << out->table;
  EXPECT_NE(out->table.find("252 periods per year"), std::string::npos) << out->table;
  req.periods_per_year = 365;
  auto calendar = RunEvaluation(req);
  ASSERT_TRUE(calendar.ok()) << calendar.status().ToString();
  const nlohmann::json c = Summary(*calendar);
  EXPECT_EQ(c["periods_per_year"].get<int>(), 365);
  EXPECT_EQ(c["settings"]["eval.periods"].get<int>(), 365);
  const double scale = std::sqrt(365.0 / 252.0);
  EXPECT_NEAR(c["metrics"]["sharpe_ratio"].get<double>(), sr * scale, 1e-9 * std::fabs(sr));
  EXPECT_NEAR(c["metrics"]["annual_volatility"].get<double>(),
              s["metrics"]["annual_volatility"].get<double>() * scale, 1e-12);
  EXPECT_NE(calendar->table.find("365 periods per year (--periods)"), std::string::npos);
}

// The test range has fewer than 30 sessions (the data's 60 minus the training ones): its
// ratios are flagged in summary.json, in the table (a '*' and a note) and in the report;
// the whole data (in-sample, about 60 sessions) is not flagged.
TEST_F(EvalRun, RatiosFromFewerThanThirtySessionsAreFlagged) {
  int test_sessions = 0;
  for (const auto& session : Bars().sessions) test_sessions += session.date >= 20230216;
  ASSERT_LT(test_sessions, 30);
  auto out = RunEvaluation(Request());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const nlohmann::json s = Summary(*out);
  EXPECT_EQ(s["metrics"]["observations"].get<int>(), test_sessions);
  EXPECT_TRUE(s["metrics"]["few_observations"].get<bool>());
  EXPECT_TRUE(s["benchmarks"]["buy_and_hold"]["few_observations"].get<bool>());
  EXPECT_TRUE(s["significance"]["buy_and_hold"]["few_observations"].get<bool>());
  std::string sharpe_line;
  for (const std::string& line : Lines(out->table)) {
    if (line.rfind("Sharpe ratio", 0) == 0) sharpe_line = line;
  }
  EXPECT_NE(sharpe_line.find('*'), std::string::npos) << out->table;
  EXPECT_NE(out->table.find("* a ratio from fewer than 30 daily returns (" +
                            std::to_string(test_sessions) + " here)"),
            std::string::npos)
      << out->table;
  const std::string html = Read(fs::path(out->out_dir) / eval::kReportFile);
  EXPECT_NE(html.find("id=\"few-observations\""), std::string::npos);
  EXPECT_NE(html.find("id=\"significance\""), std::string::npos);
  EvalRequest all = Request("2023-01-01:2023-12-31");
  all.allow_in_sample = true;
  all.policy = "buy-and-hold";
  auto whole = RunEvaluation(all);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  const nlohmann::json w = Summary(*whole);
  EXPECT_GE(w["metrics"]["observations"].get<int>(), 30);
  EXPECT_FALSE(w["metrics"]["few_observations"].get<bool>());
  EXPECT_EQ(whole->table.find("fewer than 30"), std::string::npos) << whole->table;
  EXPECT_EQ(Read(fs::path(whole->out_dir) / eval::kReportFile).find("few-observations"),
            std::string::npos);
}

TEST_F(EvalRun, ARangeOverlappingTrainIsRefusedNamingBothRanges) {
  auto out = RunEvaluation(Request("2023-02-01:2023-02-28"));
  ASSERT_TRUE(
      IsError(out, Status::Code::kInvalidArgument, "overlaps what the policy saw in training"));
  const std::string& msg = out.status().message();
  EXPECT_NE(msg.find("2023-02-01:2023-02-28"), std::string::npos) << msg;
  EXPECT_NE(msg.find(kTrain), std::string::npos) << msg;
  EXPECT_NE(msg.find("--allow-in-sample"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(RunDir() / "eval" / "2023-02-01_2023-02-28"));
  auto train = RunEvaluation(Request("train"));
  ASSERT_TRUE(
      IsError(train, Status::Code::kInvalidArgument, "overlaps what the policy saw in training"));
  EXPECT_NE(train.status().message().find(kTrain), std::string::npos);
}

TEST_F(EvalRun, AllowInSampleLabelsEveryOutputInSample) {
  EvalRequest req = Request("train");
  req.allow_in_sample = true;
  req.policy = "flat";
  auto out = RunEvaluation(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(Summary(*out)["in_sample"].get<bool>());
  EXPECT_NE(out->table.find("IN-SAMPLE"), std::string::npos);
}

TEST_F(EvalRun, FlatPolicyHasNoTradesAndZeroReturn) {
  EvalRequest req = Request();
  req.policy = "flat";
  auto out = RunEvaluation(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const nlohmann::json m = Summary(*out)["metrics"];
  EXPECT_EQ(m["num_trades"].get<int>(), 0);
  EXPECT_EQ(m["cum_returns_final"].get<double>(), 0.0);
  EXPECT_EQ(m["costs_paid"].get<double>(), 0.0);
  EXPECT_EQ(m["exposure"].get<double>(), 0.0);
  EXPECT_EQ(Lines(Read(fs::path(out->out_dir) / eval::kTradesFile)).size(), 1u);
}

// Buy-and-hold in original mode: at each session's first decision buy with all cash at the
// next bar's open, flatten at the session's last close. Computed here from the bars alone.
TEST_F(EvalRun, BuyAndHoldMatchesAnIndependentComputationFromTheBars) {
  EvalRequest req = Request();
  req.policy = "buy-and-hold";
  auto out = RunEvaluation(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const market::Bars bars = Bars();
  const env::IntradayOptions o;  // the run's [env] keeps the defaults
  double worth = o.initial_capital;
  std::vector<double> expected;
  int64_t fills = 0;
  for (const auto& s : bars.sessions) {
    if (s.date < 20230216 || s.date > 20230331) continue;
    const double open = bars.open[s.begin + 1], close = bars.close[s.end - 1];
    const double shares = std::floor((worth - o.fixed_cost) / (open * (1 + o.cost_rate)));
    const double pnl =
        shares * (close - open) - o.cost_rate * shares * (open + close) - 2 * o.fixed_cost;
    expected.push_back(pnl / worth);
    worth += pnl;
    fills += 2;
  }
  const auto daily = Lines(Read(fs::path(out->out_dir) / eval::kDailyReturnsFile));
  ASSERT_EQ(daily.size(), expected.size() + 1);
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto cells = Cells(daily[i + 1]);
    EXPECT_NEAR(std::stod(cells.at(1)), expected[i], 1e-9) << daily[i + 1];
    EXPECT_NEAR(std::stod(cells.at(2)), expected[i], 1e-9) << "benchmark column";
    EXPECT_EQ(std::stod(cells.at(3)), 0.0) << "flat column";
  }
  EXPECT_EQ(
      static_cast<int64_t>(Lines(Read(fs::path(out->out_dir) / eval::kTradesFile)).size()) - 1,
      fills);
  const nlohmann::json m = Summary(*out)["metrics"];
  EXPECT_EQ(m["num_trades"].get<size_t>(), expected.size());
  EXPECT_NEAR(m["exposure"].get<double>(), 1.0, 0.05);
}

TEST_F(EvalRun, TheSameRunAndRangeGiveAByteIdenticalSummary) {
  auto a = RunEvaluation(Request());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const std::string first = Read(fs::path(a->out_dir) / eval::kSummaryFile);
  const std::string trades = Read(fs::path(a->out_dir) / eval::kTradesFile);
  auto b = RunEvaluation(Request());
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Read(fs::path(b->out_dir) / eval::kSummaryFile), first);
  EXPECT_EQ(Read(fs::path(b->out_dir) / eval::kTradesFile), trades);
  EXPECT_EQ(b->summary_json, first);
}

// A test-only cheat: it looks up whether the bar its order fills in (t + 1) closes above
// its open, and goes fully long or short accordingly — through the public env interface.
TEST_F(EvalRun, ACheatPolicyThatReadsTheFutureWinsHugely) {
  const market::Bars bars = Bars();
  ActionFn cheat = [&bars](const float*, const double* info, float* action) {
    const int64_t next = static_cast<int64_t>(info[env::kInfoBar]) + 1;
    action[0] = bars.close[next] > bars.open[next] ? 1.0f : -1.0f;
    action[1] = 1.0f;
  };
  auto out = RunEvaluationWith(Request(), "cheat", cheat);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const nlohmann::json m = Summary(*out)["metrics"];
  EXPECT_GT(m["sharpe_ratio"].get<double>(), 5.0);
  EXPECT_GT(m["psr"].get<double>(), 0.99);
}

// With the predictable component off (signal_to_noise = 0), neither the momentum rule nor
// the trained policy beats flat (a zero return) by more than noise.
TEST_F(EvalRun, WithoutAPredictableComponentNothingHonestBeatsFlat) {
  for (const char* policy : {"rule:momentum5", "trained"}) {
    EvalRequest req = Request();
    req.policy = policy;
    auto out = RunEvaluation(req);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const nlohmann::json m = Summary(*out)["metrics"];
    const double psr = m["psr"].is_null() ? 0.0 : m["psr"].get<double>();
    EXPECT_LT(psr, 0.95) << policy;
  }
}

// The same with a policy trained in target_position mode, whose deterministic action is
// a non-zero exposure (so the check is not passed by a policy that never trades).
TEST(EvalHonesty, ATrainedTargetPositionPolicyDoesNotBeatFlatWithoutASignal) {
  const fs::path root = rlt::testing::NewScratchDir("rlt_evalrun_target_");
  std::ofstream(root / "t.toml") << "[run]\ntotal_steps = 2048\nthreads = 1\nseed = 5\n"
                                 << "[data]\nsource = \"synthetic\"\ndays = " << kDays
                                 << "\nsignal_to_noise = 0.0\n"
                                 << "[split]\ntrain = \"" << kTrain << "\"\ntest = \"" << kTest
                                 << "\"\n[env]\nid = \"intraday\"\nnum_envs = 4\n"
                                 << "action_mode = \"target_position\"\n"
                                 << "[algo]\nn_steps = 128\nbatch_size = 128\nn_epochs = 2\n";
  train::TrainRequest treq;
  treq.config_path = (root / "t.toml").string();
  treq.run_dir = (root / "run").string();
  treq.quiet = true;
  ASSERT_TRUE(train::RunTraining(treq).ok());
  EvalRequest req;
  req.run_dir = treq.run_dir;
  auto out = RunEvaluation(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const nlohmann::json m = nlohmann::json::parse(out->summary_json)["metrics"];
  EXPECT_GT(m["exposure"].get<double>(), 0.0) << "the trained policy never held a position";
  const double psr = m["psr"].is_null() ? 0.0 : m["psr"].get<double>();
  EXPECT_LT(psr, 0.95);
  fs::remove_all(root);
}

TEST_F(EvalRun, UnknownPolicyAndRangeAreErrorsThatSayWhatToGive) {
  EvalRequest req = Request("holdout");
  auto out = RunEvaluation(req);
  ASSERT_TRUE(IsError(out, Status::Code::kInvalidArgument,
                      "--range holdout: the run's [split] has no 'holdout'"));
  req = Request();
  req.policy = "rule:nope";
  out = RunEvaluation(req);
  ASSERT_TRUE(IsError(out, Status::Code::kInvalidArgument, "unknown rule 'nope'"));
  EXPECT_NE(out.status().message().find("momentum5"), std::string::npos);
}

TEST(EvalEpisodic, CartPoleWritesMeanAndStdOfDeterministicEpisodes) {
  const fs::path root = rlt::testing::NewScratchDir("rlt_evalrun_cartpole_");
  std::ofstream(root / "c.toml") << "[run]\ntotal_steps = 256\nthreads = 1\n"
                                 << "[env]\nid = \"cartpole\"\nnum_envs = 2\n"
                                 << "[algo]\nn_steps = 64\nbatch_size = 64\nn_epochs = 1\n";
  train::TrainRequest treq;
  treq.config_path = (root / "c.toml").string();
  treq.run_dir = (root / "run").string();
  treq.quiet = true;
  ASSERT_TRUE(train::RunTraining(treq).ok());
  EvalRequest req;
  req.run_dir = treq.run_dir;
  req.episodes = 3;
  auto out = RunEvaluation(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const nlohmann::json s = nlohmann::json::parse(Read(root / "run/eval/episodes/summary.json"));
  EXPECT_EQ(s["episodes"].get<int>(), 3);
  EXPECT_TRUE(s.contains("mean_return"));
  EXPECT_TRUE(s.contains("std_return"));
  EXPECT_GT(s["mean_return"].get<double>(), 0.0);  // CartPole pays 1 per step
  fs::remove_all(root);
}

// Output names: what was evaluated names the directory, so evaluating
// another policy, checkpoint or data file never overwrites the trained policy's eval/test.
TEST(EvalOutputName, NamesThePolicyCheckpointAndDataFile) {
  const fs::path root = rlt::testing::NewScratchDir("rlt_eval_name_");
  EvalRequest r;
  r.run_dir = (root / "run").string();
  EXPECT_EQ(EvalOutputName(r, "test", "trained"), "test");
  EXPECT_EQ(EvalOutputName(r, "test", "rule:momentum5"), "test.rule-momentum5");
  EXPECT_EQ(EvalOutputName(r, "test", "flat"), "test.flat");
  EXPECT_EQ(EvalOutputName(r, "test", "buy-and-hold"), "test.buy-and-hold");
  r.checkpoint = (root / "run" / "final").string();
  EXPECT_EQ(EvalOutputName(r, "test", "trained"), "test");
  r.checkpoint = (root / "run" / "checkpoints" / "step_500000").string();
  EXPECT_EQ(EvalOutputName(r, "test", "trained"), "test.ckpt-step_500000");
  EXPECT_EQ(EvalOutputName(r, "test", "flat"), "test.flat");  // a rule uses no checkpoint
  r.checkpoint = (root / "other_run" / "final").string();
  EXPECT_EQ(EvalOutputName(r, "test", "trained"), "test.ckpt-other_run-final");
  r.checkpoint.clear();
  r.data_file = "/data/SPY 1min.csv";
  EXPECT_EQ(EvalOutputName(r, "2024-03-01_2024-06-30", "trained"),
            "2024-03-01_2024-06-30.data-SPY-1min");
  EXPECT_EQ(EvalOutputName(r, "test", "rule:momentum5"), "test.rule-momentum5.data-SPY-1min");
  fs::remove_all(root);
}

TEST_F(EvalRun, OtherPoliciesCheckpointsAndDataDoNotOverwriteTheTrainedPolicysEvaluation) {
  auto trained = RunEvaluation(Request());
  ASSERT_TRUE(trained.ok()) << trained.status().ToString();
  EXPECT_EQ(trained->out_dir, (RunDir() / "eval" / "test").string());
  const std::string trained_summary = Read(RunDir() / "eval" / "test" / eval::kSummaryFile);
  // The run's data, as a CSV file of another name.
  const fs::path csv = *root_ / "other_bars.csv";
  market::SynthOptions so;
  so.num_days = kDays;
  so.seed = 7;
  so.bar_minutes = 5;
  auto md = market::GenerateSynthetic(so);
  ASSERT_TRUE(md.ok());
  ASSERT_TRUE(market::WriteBarsCsv(csv.string(), *md).ok());
  // A copy of final/ as an intermediate checkpoint of the run.
  const fs::path step = RunDir() / "checkpoints" / "step_2048";
  fs::create_directories(step.parent_path());
  fs::copy(RunDir() / "final", step, fs::copy_options::recursive);
  struct Case {
    std::string policy, data, checkpoint, dir;
  };
  for (const Case& c :
       {Case{"rule:momentum5", "", "", "test.rule-momentum5"}, Case{"flat", "", "", "test.flat"},
        Case{"buy-and-hold", "", "", "test.buy-and-hold"},
        Case{"trained", csv.string(), "", "test.data-other_bars"},
        Case{"rule:momentum5", csv.string(), "", "test.rule-momentum5.data-other_bars"},
        Case{"trained", "", step.string(), "test.ckpt-step_2048"}}) {
    SCOPED_TRACE(c.dir);
    EvalRequest req = Request();
    req.policy = c.policy;
    req.data_file = c.data;
    req.checkpoint = c.checkpoint;
    auto out = RunEvaluation(req);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(out->out_dir, (RunDir() / "eval" / c.dir).string());
    EXPECT_EQ(out->name, c.dir);
    EXPECT_EQ(out->range_name, "test");
    const nlohmann::json s = Summary(*out);
    EXPECT_EQ(s["policy"], c.policy);
    EXPECT_EQ(s["range"]["name"], "test");
    // The printed header and summary.json name the policy and the data.
    EXPECT_NE(out->table.find("policy " + c.policy), std::string::npos) << out->table;
    if (c.data.empty()) {
      EXPECT_EQ(s["data"]["source"], "synthetic");
      EXPECT_NE(out->table.find("synthetic data (seed 7)"), std::string::npos) << out->table;
      EXPECT_FALSE(s["settings"].contains("data.file"));
      EXPECT_TRUE(s["settings"].contains("data.days"));
    } else {
      EXPECT_EQ(s["data"]["source"], "file");
      EXPECT_EQ(s["data"]["file"], c.data);
      EXPECT_NE(out->table.find(c.data), std::string::npos) << out->table;
      EXPECT_EQ(s["settings"]["data.file"], c.data);
      EXPECT_FALSE(s["settings"].contains("data.days"));  // synthetic-only keys do not apply
      EXPECT_FALSE(s["settings"].contains("data.seed"));
    }
    if (!c.checkpoint.empty()) {
      EXPECT_EQ(s["checkpoint"], c.checkpoint);
      EXPECT_NE(out->table.find(c.checkpoint), std::string::npos) << out->table;
    }
  }
  // The trained policy's evaluation is untouched.
  EXPECT_EQ(Read(RunDir() / "eval" / "test" / eval::kSummaryFile), trained_summary);
  fs::remove_all(RunDir() / "checkpoints");
}

// The terminal table labels round trips and fills apart; the fill counts are the rows of
// each policy's trades.csv.
TEST_F(EvalRun, TheTableLabelsRoundTripsAndFillsApart) {
  EvalRequest req = Request();
  req.policy = "buy-and-hold";
  auto out = RunEvaluation(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const int64_t fills =
      static_cast<int64_t>(Lines(Read(fs::path(out->out_dir) / eval::kTradesFile)).size()) - 1;
  ASSERT_GT(fills, 0);
  const nlohmann::json s = Summary(*out);
  EXPECT_EQ(s["fills"]["strategy"].get<int64_t>(), fills);
  EXPECT_EQ(s["fills"]["flat"].get<int64_t>(), 0);
  EXPECT_EQ(s["fills"]["buy_and_hold"].get<int64_t>(), fills);  // the policy is buy-and-hold
  std::string trips_line, fills_line;
  for (const std::string& line : Lines(out->table)) {
    if (line.rfind("Round trips (flat to flat)", 0) == 0) trips_line = line;
    if (line.rfind("Fills (orders executed)", 0) == 0) fills_line = line;
  }
  ASSERT_FALSE(trips_line.empty()) << out->table;
  ASSERT_FALSE(fills_line.empty()) << out->table;
  const auto words = [](const std::string& line) {
    std::vector<std::string> w;
    std::stringstream in(line.substr(line.find(')') + 1));
    for (std::string x; in >> x;) w.push_back(x);
    return w;
  };
  EXPECT_EQ(words(fills_line),
            (std::vector<std::string>{std::to_string(fills), "0", std::to_string(fills)}));
  EXPECT_EQ(words(trips_line).at(0), std::to_string(s["metrics"]["num_trades"].get<int64_t>()));
  EXPECT_EQ(out->table.find("num_trades"), std::string::npos);
}

// The options environment: a tiny recurrent run evaluated on its test range:
// one walk over the range's days, buy-and-hold of the underlying from its closes, flat
// earning the cash rate (an analytic check), daily returns that reproduce net worth, the
// overlap guard, and a byte-identical summary on a second evaluation.
TEST(EvalOptions, TestRangeWalkWithBuyAndHoldAndFlatCheckedIndependently) {
  const fs::path root = rlt::testing::NewScratchDir("rlt_evalrun_options_");
  std::ofstream(root / "o.toml") << "[run]\ntotal_steps = 256\nthreads = 1\n"
                                 << "[split]\ntrain = \"2014-01-02:2014-12-31\"\n"
                                 << "test = \"2015-01-02:2015-06-30\"\n"
                                 << "[env]\nid = \"options\"\nnum_envs = 2\n"
                                 << "synthetic_days = 400\nepisode_days = 40\nrate = 0.03\n"
                                 << "[algo]\nn_steps = 64\nbatch_size = 64\nsequence_length = 8\n"
                                 << "n_epochs = 1\n"
                                 << "[policy]\nrecurrent = \"lstm\"\nlstm_hidden_size = 8\n"
                                 << "pi = [8]\nvf = [8]\n";
  train::TrainRequest treq;
  treq.config_path = (root / "o.toml").string();
  treq.run_dir = (root / "run").string();
  treq.quiet = true;
  auto trained = train::RunTraining(treq);
  ASSERT_TRUE(trained.ok()) << trained.status().ToString();
  EvalRequest req;
  req.run_dir = treq.run_dir;
  req.range = "test";
  auto out = RunEvaluation(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const nlohmann::json s = nlohmann::json::parse(Read(fs::path(out->out_dir) / eval::kSummaryFile));
  EXPECT_EQ(s["range"]["first"], "2015-01-02");
  EXPECT_LE(s["range"]["last"].get<std::string>(), "2015-06-30");
  EXPECT_FALSE(s["in_sample"].get<bool>());
  // portfolio.csv: date,underlying,net_worth,...; daily_returns.csv: date,return,bh,flat.
  const auto rows = Lines(Read(fs::path(out->out_dir) / "portfolio.csv"));
  const auto daily = Lines(Read(fs::path(out->out_dir) / eval::kDailyReturnsFile));
  ASSERT_GT(rows.size(), 100u);
  ASSERT_EQ(daily.size(), rows.size() - 1);  // one return per day after the first
  EXPECT_EQ(daily[0], eval::kDailyReturnsHeader);
  double growth = 1, bh_growth = 1;
  for (size_t i = 2; i < rows.size(); ++i) {
    const auto prev = Cells(rows[i - 1]), cur = Cells(rows[i]), d = Cells(daily[i - 1]);
    EXPECT_EQ(d[0], cur[0]);
    const double ret = std::stod(d[1]), bh = std::stod(d[2]), flat = std::stod(d[3]);
    EXPECT_NEAR(ret, std::stod(cur[2]) / std::stod(prev[2]) - 1, 1e-9);
    EXPECT_NEAR(bh, std::stod(cur[1]) / std::stod(prev[1]) - 1, 1e-9);
    // Flat holds cash at the rate: e^{r days / 365} - 1 over the calendar days elapsed.
    auto days = [](const std::string& date) {
      return DaysFromCivil(std::stoi(date.substr(0, 4)), std::stoi(date.substr(5, 2)),
                           std::stoi(date.substr(8, 2)));
    };
    EXPECT_NEAR(flat, std::expm1(0.03 * static_cast<double>(days(cur[0]) - days(prev[0])) / 365),
                1e-12);
    growth *= 1 + ret;
    bh_growth *= 1 + bh;
  }
  EXPECT_NEAR(s["metrics"]["cum_returns_final"].get<double>(), growth - 1, 1e-9);
  EXPECT_NEAR(s["benchmarks"]["buy_and_hold"]["cum_returns_final"].get<double>(), bh_growth - 1,
              1e-9);
  // Reproducible; and a range inside training is refused.
  const std::string first = Read(fs::path(out->out_dir) / eval::kSummaryFile);
  ASSERT_TRUE(RunEvaluation(req).ok());
  EXPECT_EQ(Read(fs::path(out->out_dir) / eval::kSummaryFile), first);
  req.range = "2014-06-02:2014-08-29";
  auto refused = RunEvaluation(req);
  ASSERT_TRUE(
      IsError(refused, Status::Code::kInvalidArgument, "overlaps what the policy saw in training"));
  EXPECT_NE(refused.status().message().find("2014-01-02:2014-12-31"), std::string::npos)
      << refused.status().ToString();
  fs::remove_all(root);
}

// A listed chain file for the options environment: 40 business days from 2021-01-04, a
// random-walk close, the monthly expiries of January to April 2021, strikes 80..120 by 5,
// quotes around a Black-Scholes value at 20% vol (zero rates), every 7th row left out (a
// contract without a quote that day).
std::string WriteOptionsChain(const fs::path& path) {
  const auto bs = [](bool call, double s, double k, double t) {
    const double vol = 0.2, sd = vol * std::sqrt(t);
    const double d1 = (std::log(s / k) + 0.5 * vol * vol * t) / sd, d2 = d1 - sd;
    const auto n = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
    return call ? s * n(d1) - k * n(d2) : k * n(-d2) - s * n(-d1);
  };
  const int64_t expiries[] = {DaysFromCivil(2021, 1, 15), DaysFromCivil(2021, 2, 19),
                              DaysFromCivil(2021, 3, 19), DaysFromCivil(2021, 4, 16)};
  std::string csv = "quote_date,expiration,strike,type,bid,ask,underlying_price\n";
  double s = 100;
  int64_t row = 0;
  int dates = 0;
  for (int64_t day = DaysFromCivil(2021, 1, 4); dates < 40; ++day) {
    if (Weekday(day) == 0 || Weekday(day) == 6) continue;
    ++dates;
    s *= std::exp(0.01 * std::sin(static_cast<double>(day)));
    for (int64_t e : expiries) {
      if (e < day) continue;
      for (bool call : {true, false}) {
        for (int k = 80; k <= 120; k += 5) {
          if (++row % 7 == 0) continue;
          const double t = static_cast<double>(e - day) / 365;
          const double v = t > 0 ? bs(call, s, k, t) : std::max(0.0, (call ? 1 : -1) * (s - k));
          csv += fmt::format("{},{},{},{},{:.2f},{:.2f},{:.4f}\n",
                             FormatDate(DateKey(CivilFromDays(day))),
                             FormatDate(DateKey(CivilFromDays(e))), k, call ? "C" : "P",
                             std::max(0.0, v - 0.05), v + 0.05, s);
        }
      }
    }
  }
  std::ofstream(path) << csv;
  return path.string();
}

std::string ChainFileConfig(const std::string& chain, const std::string& train,
                            const std::string& test) {
  return "[run]\ntotal_steps = 256\nthreads = 1\n[split]\ntrain = \"" + train + "\"\ntest = \"" +
         test + "\"\n[env]\nid = \"options\"\nnum_envs = 2\nchain_file = \"" + chain +
         "\"\nepisode_days = 10\nrate = 0.01\n" +
         "[algo]\nn_steps = 64\nbatch_size = 64\nsequence_length = 8\nn_epochs = 1\n" +
         "[policy]\nrecurrent = \"lstm\"\nlstm_hidden_size = 8\npi = [8]\nvf = [8]\n";
}

// chain_file end to end: trained on the file's first weeks, evaluated on the rest; the
// summary names the file and counts the days a held contract was marked without a quote
// (the walk's last value in portfolio.csv). A training range the file does not cover is
// refused before anything is written.
TEST(EvalOptions, ChainFileTrainsAndEvaluatesAndRefusesARangeItDoesNotCover) {
  const fs::path root = rlt::testing::NewScratchDir("rlt_evalrun_chain_");
  const std::string chain = WriteOptionsChain(root / "chain.csv");
  std::ofstream(root / "o.toml") << ChainFileConfig(chain, "2021-01-04:2021-02-05",
                                                    "2021-02-08:2021-02-26");
  train::TrainRequest treq;
  treq.config_path = (root / "o.toml").string();
  treq.run_dir = (root / "run").string();
  treq.quiet = true;
  auto trained = train::RunTraining(treq);
  ASSERT_TRUE(trained.ok()) << trained.status().ToString();
  EvalRequest req;
  req.run_dir = treq.run_dir;
  req.range = "test";
  auto out = RunEvaluation(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const nlohmann::json s = nlohmann::json::parse(Read(fs::path(out->out_dir) / eval::kSummaryFile));
  EXPECT_EQ(s.at("range").at("first"), "2021-02-08");
  EXPECT_EQ(s.at("range").at("last"), "2021-02-26");
  EXPECT_EQ(s.at("data").at("source"), "chain_file");
  EXPECT_EQ(s.at("data").at("chain_file"), chain);
  const auto rows = Lines(Read(fs::path(out->out_dir) / "portfolio.csv"));
  ASSERT_EQ(rows.size(), 1 + 15u);  // 15 business days, 2021-02-08 .. 2021-02-26
  EXPECT_EQ(Cells(rows[0]).back(), "missing_quote_marks");
  EXPECT_EQ(s.at("missing_quote_marks").get<double>(), std::stod(Cells(rows.back()).back()));

  std::ofstream(root / "bad.toml")
      << ChainFileConfig(chain, "2020-06-01:2020-12-31", "2021-01-04:2021-02-26");
  treq.config_path = (root / "bad.toml").string();
  treq.run_dir = (root / "bad_run").string();
  auto refused = train::RunTraining(treq);
  ASSERT_TRUE(IsError(refused, Status::Code::kInvalidArgument, chain))
      << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("2020-06-01:2020-12-31"), std::string::npos)
      << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("2021-01-04 to 2021-02-26"), std::string::npos)
      << refused.status().ToString();
  EXPECT_FALSE(fs::exists(root / "bad_run"));
  fs::remove_all(root);
}

// configs/options_rppo_spxw.toml on the SPXW file of January and February 2018 when the
// shared data is present, the file as it is (its rows without an offer, ask 0, are "no
// quote"): trains on January, evaluates on February's 19 quote dates.
TEST(EvalOptions, SpxwConfigTrainsOnJanuaryAndEvaluatesOnFebruary) {
  const std::string real =
      RLT_SHARED_DIR "/data/options/SPXW_chain_EOD_2018-01-02_2018-02-28_optopsy.csv";
  if (!fs::exists(real)) GTEST_SKIP() << real << " is absent";
  const fs::path root = rlt::testing::NewScratchDir("rlt_evalrun_spxw_");
  train::TrainRequest treq;
  treq.config_path = std::string(RLT_SOURCE_DIR) + "/configs/options_rppo_spxw.toml";
  treq.overrides = {"run.total_steps=256", "run.threads=1", "env.chain_file=" + real};
  treq.run_dir = (root / "run").string();
  treq.quiet = true;
  auto trained = train::RunTraining(treq);
  ASSERT_TRUE(trained.ok()) << trained.status().ToString();
  EvalRequest req;
  req.run_dir = treq.run_dir;
  req.range = "test";
  auto out = RunEvaluation(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const nlohmann::json s = nlohmann::json::parse(Read(fs::path(out->out_dir) / eval::kSummaryFile));
  EXPECT_EQ(s.at("range").at("first"), "2018-02-01");
  EXPECT_EQ(s.at("range").at("last"), "2018-02-28");
  EXPECT_EQ(Lines(Read(fs::path(out->out_dir) / "portfolio.csv")).size(), 1 + 19u);
  EXPECT_TRUE(s.at("final_net_worth").is_number());
  fs::remove_all(root);
}

// ---- --set env.KEY=VALUE and --costs.

// Σ over trades.csv of |quantity| x price: the traded value a proportional cost charges.
double TradedValue(const fs::path& eval_dir) {
  const std::vector<std::string> lines = Lines(Read(eval_dir / eval::kTradesFile));
  double value = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> c = Cells(lines[i]);  // time,side,quantity,price,cost,...
    value += std::fabs(std::stod(c[2])) * std::stod(c[3]);
  }
  return value;
}

TEST_F(EvalRun, SetCostRateChargesThatRateOnTheTradedValueAndNamesTheOutput) {
  for (const std::string rate : {"0", "0.002"}) {
    EvalRequest req = Request();
    req.policy = "buy-and-hold";
    req.env_settings["cost_rate"] = rate;
    auto out = RunEvaluation(req);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(out->name, "test.buy-and-hold.set-cost_rate-" + rate);
    const nlohmann::json s = Summary(*out);
    EXPECT_EQ(s["settings"]["eval.set.env.cost_rate"].get<std::string>(), rate);
    EXPECT_EQ(s["settings"]["env.cost_rate"].get<std::string>(), rate);
    const double costs = s["metrics"]["costs_paid"].get<double>();
    const double traded = TradedValue(out->out_dir);
    ASSERT_GT(traded, 0);
    EXPECT_NEAR(costs, std::stod(rate) * traded, 1e-9 * traded);
    const nlohmann::json& pnl = s["pnl"]["strategy"];
    EXPECT_NEAR(pnl["gross"].get<double>() - pnl["net"].get<double>(), costs,
                1e-9 * std::fabs(pnl["gross"].get<double>()) + 1e-9);
    if (rate == "0") {
      EXPECT_EQ(pnl["net"].get<double>(), pnl["gross"].get<double>());
    }
  }
  // The plain evaluation is another directory, at the run's rate (0.0005).
  EvalRequest plain = Request();
  plain.policy = "buy-and-hold";
  auto out = RunEvaluation(plain);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->name, "test.buy-and-hold");
  const double costs = Summary(*out)["metrics"]["costs_paid"].get<double>();
  EXPECT_NEAR(costs, 0.0005 * TradedValue(out->out_dir), 1e-9 * costs);
}

// A policy that churns all in and all out every bar at 5% costs loses half its capital in
// the first session and is stopped ([env] stop_fraction 0.5): the account trades no more,
// every later session of the range counts as flat (return 0), so its daily returns cover
// the range as the benchmarks' do and the significance against them is computed.
TEST_F(EvalRun, AStoppedOutWalkCountsTheRestOfTheRangeAsFlat) {
  ActionFn churn = [](const float*, const double* info, float* action) {
    action[0] = static_cast<int64_t>(info[env::kInfoBar]) % 2 == 0 ? 1.0f : -1.0f;
    action[1] = 1.0f;
  };
  EvalRequest req = Request();
  req.env_settings["cost_rate"] = "0.05";
  auto out = RunEvaluationWith(req, "churn", churn);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const nlohmann::json s = Summary(*out);
  const std::vector<std::string> rows = Lines(Read(fs::path(out->out_dir) / "daily_returns.csv"));
  ASSERT_TRUE(s.contains("stopped_out")) << out->table;
  const std::string stopped = s["stopped_out"];
  EXPECT_NE(out->table.find("stopped out on " + stopped), std::string::npos) << out->table;
  size_t after = 0;
  double first_loss = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string> c = Cells(rows[i]);
    EXPECT_NE(c[3], "nan") << rows[i];  // every date has the flat benchmark's row
    if (c[0] == stopped) first_loss = std::stod(c[1]);
    if (c[0] > stopped) {
      EXPECT_EQ(std::stod(c[1]), 0.0) << rows[i];
      ++after;
    }
  }
  EXPECT_LT(first_loss, -0.4);
  EXPECT_GT(after, 5u);
  EXPECT_EQ(s["metrics"]["observations"], s["benchmarks"]["flat"]["observations"]);
  EXPECT_TRUE(s.contains("significance"));
}

TEST(EvalSettings, KeysThatChangeTheObservationOrTheTrainingAreRefusedByName) {
  for (const std::string text : {"env.initial_capital=5", "env.nlags=3", "algo.lr=0.1"}) {
    std::map<std::string, std::string> settings;
    const Status st = ParseEvalSetting(text, settings);
    EXPECT_EQ(st.code(), Status::Code::kRefused) << text;
    EXPECT_NE(st.message().find("--set " + text.substr(0, text.find('='))), std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find("env.cost_rate, env.fixed_cost, env.fill, env.lot_size"),
              std::string::npos)
        << st.message();
    EXPECT_TRUE(settings.empty());
  }
  std::map<std::string, std::string> settings;
  EXPECT_EQ(ParseEvalSetting("env.cost_rate", settings).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(ParseEvalSetting("cost_rate=1", settings).code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(ParseEvalSetting("env.fill=next_typical", settings).ok());
  EXPECT_EQ(ParseEvalSetting("env.fill=next_open", settings).code(),
            Status::Code::kInvalidArgument);  // given twice
  EXPECT_EQ(settings.at("fill"), "next_typical");
}

TEST(EvalSettings, CostLevelsAreIncreasingBasisPoints) {
  auto levels = ParseCostLevels("0,1,2.5,10");
  ASSERT_TRUE(levels.ok()) << levels.status().ToString();
  EXPECT_EQ(*levels, (std::vector<double>{0, 1, 2.5, 10}));
  for (const char* bad : {"", "1,,2", "2,1", "1,1", "-1", "abc", "1e9", "nan"}) {
    auto r = ParseCostLevels(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--costs"), std::string::npos);
  }
}

TEST(EvalSettings, BreakEvenInterpolatesBetweenTheLevelsThatBracketZero) {
  const std::vector<double> bps = {0, 1, 2, 5, 10};
  // Between 2 (+0.004) and 5 (-0.002): 2 + 3 x 0.004 / 0.006 = 4.
  BreakEven b = BreakEvenCost(bps, std::vector<double>{0.02, 0.01, 0.004, -0.002, -0.01});
  EXPECT_EQ(b.kind, "crossed");
  EXPECT_NEAR(b.bps, 4.0, 1e-12);
  b = BreakEvenCost(bps, std::vector<double>{0.02, 0.01, 0.0, -0.002, -0.01});
  EXPECT_EQ(b.kind, "crossed");
  EXPECT_EQ(b.bps, 2.0);
  b = BreakEvenCost(bps, std::vector<double>{0.05, 0.04, 0.03, 0.02, 0.01});
  EXPECT_EQ(b.kind, "above_largest");
  EXPECT_TRUE(std::isnan(b.bps));
  b = BreakEvenCost(bps, std::vector<double>{-0.01, -0.02, -0.03, -0.04, -0.05});
  EXPECT_EQ(b.kind, "at_or_below_smallest");
}

// Buy-and-hold's orders hardly depend on costs: its net return falls as the cost rises, and
// each level's costs are that level's rate on the traded value.
TEST_F(EvalRun, CostsTableOfBuyAndHoldFallsWithCostAndIsWrittenBesideTheSummary) {
  EvalRequest req = Request();
  req.policy = "buy-and-hold";
  auto plain = RunEvaluation(req);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  req.cost_levels_bps = {0, 1, 2, 5, 10};
  auto out = RunEvaluation(req);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->out_dir, plain->out_dir);
  EXPECT_EQ(out->summary_json, plain->summary_json);  // the run's own costs, unchanged
  EXPECT_NE(out->table.find("break-even cost"), std::string::npos);
  const std::vector<std::string> lines = Lines(Read(fs::path(out->out_dir) / eval::kCostsCsvFile));
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0],
            "cost_bps,cost_rate,total_return,annual_return,sharpe_ratio,max_drawdown,turnover,"
            "costs_paid,net_pnl,gross_pnl,fills");
  double previous = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> c = Cells(lines[i]);
    const double bps = std::stod(c[0]), rate = std::stod(c[1]), total = std::stod(c[2]);
    const double costs = std::stod(c[7]), net = std::stod(c[8]), gross = std::stod(c[9]);
    EXPECT_NEAR(rate, bps / 1e4, 1e-15);
    if (i > 1) {
      EXPECT_LE(total, previous) << lines[i];
    }
    previous = total;
    EXPECT_NEAR(gross - net, costs, 1e-9 * std::fabs(gross) + 1e-9);
    if (bps == 0) {
      EXPECT_EQ(costs, 0.0);
    }
    if (bps == 5) {  // the run's rate: the plain evaluation's costs
      const double plain_costs = Summary(*plain)["metrics"]["costs_paid"].get<double>();
      EXPECT_NEAR(costs, plain_costs, 1e-9 * plain_costs);
    }
  }
  const nlohmann::json j =
      nlohmann::json::parse(Read(fs::path(out->out_dir) / eval::kCostsJsonFile));
  ASSERT_EQ(j["levels"].size(), 5u);
  const std::string kind = j["break_even"]["result"].get<std::string>();
  EXPECT_TRUE(kind == "crossed" || kind == "above_largest" || kind == "at_or_below_smallest");
}

}  // namespace
}  // namespace rlt::evalrun
