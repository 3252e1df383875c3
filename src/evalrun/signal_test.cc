// rltrade evalrun tests: `rltrade signal` on a tiny trained intraday run — the signal's
// observation is bit-identical to the eval env's observation at the same bar (no
// train/serve skew), its action is PolicyRunner::Act on that observation, and too few
// bars is an error that says how many are needed.
#include "evalrun/signal.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/civil_time.h"
#include "core/status_test_util.h"
#include "env/envs/intraday.h"
#include "env/registry.h"
#include "evalrun/test_util.h"
#include "learn/inference.h"
#include "market/market.h"
#include "testing/testing.h"
#include "train/train.h"
#include "train/train_options.h"

namespace rlt::evalrun {
namespace {

namespace fs = std::filesystem;
using testing_util::Read;

constexpr int kDays = 60;

class SignalRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new fs::path(rlt::testing::NewScratchDir("rlt_signal_test_"));
    const fs::path config = *root_ / "run.toml";
    std::ofstream(config) << "[run]\ntotal_steps = 1024\nthreads = 1\nseed = 3\n"
                          << "[data]\nsource = \"synthetic\"\ndays = " << kDays
                          << "\nsignal_to_noise = 0.0\n"
                          << "[split]\ntrain = \"2023-01-02:2023-02-15\"\n"
                          << "test = \"2023-02-16:2023-03-31\"\n"
                          << "[env]\nid = \"intraday\"\nnum_envs = 4\n"
                          << "[algo]\nn_steps = 128\nbatch_size = 128\nn_epochs = 2\n"
                          << "norm_obs = true\n";
    train::TrainRequest req;
    req.config_path = config.string();
    req.run_dir = (*root_ / "run").string();
    req.quiet = true;
    auto out = train::RunTraining(req);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    // The run's bars, written once as CSV.
    market::SynthOptions so;
    so.num_days = kDays;
    so.seed = 7;
    so.bar_minutes = 5;
    auto md = market::GenerateSynthetic(so);
    ASSERT_TRUE(md.ok());
    bars_ = new market::Bars(md->symbols.front());
    ASSERT_TRUE(market::WriteBarsCsv((*root_ / "all.csv").string(), *md).ok());
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete root_;
    delete bars_;
  }
  static fs::path RunDir() { return *root_ / "run"; }

  // Rows [first, last] (bar indices) of the run's bars as a CSV file.
  static std::string WriteRows(const std::string& name, int64_t first, int64_t last) {
    std::istringstream in(Read(*root_ / "all.csv"));
    std::string line, out;
    std::getline(in, line);
    out = line + "\n";
    for (int64_t i = 0; std::getline(in, line); ++i) {
      if (i >= first && i <= last) out += line + "\n";
    }
    const fs::path p = *root_ / name;
    std::ofstream(p, std::ios::binary) << out;
    return p.string();
  }

  // The run's env setup as `rltrade eval` builds it (stored normaliser; data_file "" =
  // the run's own data).
  static train::EnvSetup Setup(const std::string& data_file) {
    auto config = config::Config::LoadFile((RunDir() / "config.toml").string());
    RLT_CHECK(config.ok());
    auto norm =
        features::Normalizer::FromJson(nlohmann::json::parse(Read(RunDir() / "normalizer.json")));
    RLT_CHECK(norm.ok());
    train::EnvSetupOverrides o;
    o.normalizer = &*norm;
    o.data_file = data_file;
    auto setup = train::BuildEnvSetup(*config, o);
    RLT_CHECK(setup.ok());
    return std::move(*setup);
  }

  // The eval env's observation at `bar` (global index in setup's data): a sequential env
  // over that bar's session, held flat until it reaches the bar.
  static std::vector<float> EvalObservation(const train::EnvSetup& setup, int32_t bar) {
    const market::Bars& b = setup.context.market->bars;
    const int32_t date = b.sessions[b.session[bar]].date;
    const std::string day = FormatDate(date);
    env::EnvContext ctx = setup.context;
    ctx.settings["range"] = day + ":" + day;
    ctx.settings["sequential"] = "true";
    auto envs = env::MakeEnvs(setup.id, ctx, 1);
    RLT_CHECK(envs.ok());
    env::Env& e = *envs->front();
    std::vector<float> obs(e.spec().obs_dim);
    std::vector<double> info(e.spec().info_names.size());
    e.Reset(obs.data(), info.data());
    const float hold[2] = {0.0f, 1.0f};
    while (static_cast<int32_t>(info[env::kInfoBar]) < bar) {
      e.Step(hold, obs.data(), info.data());
    }
    RLT_CHECK(static_cast<int32_t>(info[env::kInfoBar]) == bar);
    return obs;
  }

  // A bar in the middle of a test session.
  static int32_t TestBar() {
    const market::Session& s = bars_->sessions[50];
    return s.begin + s.size() / 2;
  }

  static fs::path* root_;
  static market::Bars* bars_;
};
fs::path* SignalRun::root_ = nullptr;
market::Bars* SignalRun::bars_ = nullptr;

TEST_F(SignalRun, ObservationIsBitIdenticalToTheEvalEnvsOnTheRunsOwnData) {
  // The full history up to the bar (the file ends mid-session, as live data does).
  const int32_t t = TestBar();
  SignalRequest req;
  req.run_dir = RunDir().string();
  req.bars_file = WriteRows("prefix.csv", 0, t);
  auto sig = ComputeSignal(req);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->bar, t);
  EXPECT_EQ(sig->bars_used, t + 1);
  const std::vector<float> expected = EvalObservation(Setup(""), t);
  ASSERT_EQ(sig->observation.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(sig->observation[i], expected[i]) << "obs[" << i << "]";  // bit-identical
  }
  EXPECT_FALSE(sig->session_closing);
  EXPECT_EQ(sig->session_bars, bars_->sessions[50].size());
}

TEST_F(SignalRun, LastKBarsMatchTheEvalEnvOnTheSameFile) {
  // Only the last K bars (history truncated): the same as `rltrade eval --data` on that
  // file sees. Mid-session, every element but the session fraction left (the eval env
  // takes the file's truncated last session as complete; the signal infers its length).
  const int32_t t = TestBar();
  const int64_t k = 400;
  SignalRequest req;
  req.run_dir = RunDir().string();
  req.bars_file = WriteRows("lastk.csv", t - k + 1, t);
  auto sig = ComputeSignal(req);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->bars_used, k);
  std::vector<float> expected = EvalObservation(Setup(req.bars_file), sig->bar);
  ASSERT_EQ(sig->observation.size(), expected.size());
  for (size_t i = 0; i + 1 < expected.size(); ++i) {
    EXPECT_EQ(sig->observation[i], expected[i]) << "obs[" << i << "]";
  }
  // Ending at a session's last bar: all of it, bit-identical.
  const int32_t last = bars_->sessions[50].end - 1;
  req.bars_file = WriteRows("lastk_close.csv", last - k + 1, last);
  sig = ComputeSignal(req);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_TRUE(sig->session_closing);
  expected = EvalObservation(Setup(req.bars_file), sig->bar);
  ASSERT_EQ(sig->observation.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(sig->observation[i], expected[i]) << "obs[" << i << "]";
  }
}

TEST_F(SignalRun, ActionAndValueArePolicyRunnerActOnTheObservation) {
  const int32_t t = TestBar();
  SignalRequest req;
  req.run_dir = RunDir().string();
  req.bars_file = WriteRows("prefix.csv", 0, t);
  auto sig = ComputeSignal(req);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  env::IntradayOptions options;  // the run's [env] is the default action mode
  const env::EnvSpec spec =
      env::IntradayStockEnv::MakeSpec(Setup("").context.market->features.cols, options);
  auto runner = learn::PolicyRunner::Load((RunDir() / "final").string(), spec.obs_dim, spec.action);
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  std::vector<float> action(spec.action.dim);
  float value = 0;
  (*runner)->Act(sig->observation.data(), 1, action.data(), &value);
  EXPECT_EQ(sig->raw_action, action);
  EXPECT_EQ(sig->value, static_cast<double>(value));
  const std::string expected_kind =
      action[0] >= 0.3f ? "BUY" : (action[0] <= -0.3f ? "SELL" : "HOLD");
  EXPECT_EQ(sig->action, expected_kind);
  const nlohmann::json j = nlohmann::json::parse(sig->json);
  for (const char* key : {"time", "action", "amount", "value", "symbol", "bars_used"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["action"], expected_kind);
  EXPECT_EQ(j["bars_used"].get<int64_t>(), t + 1);
  EXPECT_EQ(j["symbol"], bars_->symbol);
  EXPECT_EQ(j["time"].get<std::string>().size(), std::string("2023-01-02T03:45:00+00:00").size());
}

TEST_F(SignalRun, TooFewBarsSaysHowManyAreNeeded) {
  const int32_t t = TestBar();
  // scaled preset warm-up 49 + nlags 5 + 1 = 55 bars.
  SignalRequest req;
  req.run_dir = RunDir().string();
  req.bars_file = WriteRows("short.csv", t - 29, t);
  auto sig = ComputeSignal(req);
  ASSERT_TRUE(IsError(sig, Status::Code::kInvalidArgument, "needs 55 bars"));
  EXPECT_NE(sig.status().message().find("but 30 were given"), std::string::npos)
      << sig.status().message();
  // Exactly enough works.
  req.bars_file = WriteRows("enough.csv", t - 54, t);
  auto ok = ComputeSignal(req);
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
  req.bars_file = WriteRows("one_short.csv", t - 53, t);
  auto short_one = ComputeSignal(req);
  ASSERT_TRUE(IsError(short_one, Status::Code::kInvalidArgument, "but 54 were given"));
  EXPECT_NE(short_one.status().message().find("needs 55 bars"), std::string::npos);
}

TEST_F(SignalRun, PositionEntersTheObservationAndBadInputIsRefused) {
  const int32_t t = TestBar();
  SignalRequest req;
  req.run_dir = RunDir().string();
  req.bars_file = WriteRows("prefix.csv", 0, t);
  req.position = 0.5;
  auto sig = ComputeSignal(req);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  const size_t n = sig->observation.size();
  EXPECT_EQ(sig->observation[n - 3], 0.5f);
  EXPECT_EQ(sig->observation[n - 2], 0.0f);
  req.position = 2.0;
  EXPECT_TRUE(IsError(ComputeSignal(req), Status::Code::kInvalidArgument,
                      "--position must be a fraction of net worth in [-1, 1] (got 2)"));
  req.position = 0.0;
  req.run_dir = (*root_ / "nope").string();
  EXPECT_TRUE(IsError(ComputeSignal(req), Status::Code::kNotFound,
                      "nope is not a run directory (no config.toml)"));
}

// On a session's closing bar the decision is the flatten the environment
// does there (SELL when long, BUY when short, HOLD when flat; target exposure 0), with
// the note, whatever the policy's action.
TEST_F(SignalRun, ClosingBarDecisionIsTheEnvironmentsFlatten) {
  const int32_t last = bars_->sessions[50].end - 1;
  SignalRequest req;
  req.run_dir = RunDir().string();
  req.bars_file = WriteRows("to_close.csv", 0, last);
  for (const auto& [position, action] :
       {std::pair<double, std::string>{0.5, "SELL"}, {-0.5, "BUY"}, {0.0, "HOLD"}}) {
    req.position = position;
    auto sig = ComputeSignal(req);
    ASSERT_TRUE(sig.ok()) << sig.status().ToString();
    EXPECT_TRUE(sig->session_closing);
    EXPECT_EQ(sig->action, action) << position;
    EXPECT_EQ(sig->target_exposure, 0.0);
    EXPECT_NE(sig->text.find("note: this bar closes its session"), std::string::npos) << sig->text;
    const nlohmann::json j = nlohmann::json::parse(sig->json);
    EXPECT_EQ(j["action"], action);
    EXPECT_EQ(j["target_exposure"].get<double>(), 0.0);
    EXPECT_TRUE(j["session_closing"].get<bool>());
  }
  // Mid-session the policy decides (no flatten).
  req.position = 0.5;
  req.bars_file = WriteRows("mid.csv", 0, TestBar());
  auto mid = ComputeSignal(req);
  ASSERT_TRUE(mid.ok()) << mid.status().ToString();
  EXPECT_FALSE(mid->session_closing);
  EXPECT_EQ(nlohmann::json::parse(mid->json).count("flatten"), 0u);
}

// BTC 1-minute bars for a model of 5-minute SYN0 bars in +05:30 are refused
// with every difference named; --allow-mismatch accepts them with a warning.
TEST_F(SignalRun, BarsOfAnotherMarketAreRefusedNamingEachDifference) {
  std::string text = "timestamp,symbol,open,high,low,close,volume\n";
  for (int i = 0; i < 300; ++i) {
    const double p = 100000 + 50 * std::sin(i / 7.0) + i;
    text += fmt::format("2023-03-01T{:02}:{:02}:00+00:00,BTCUSDT,{},{},{},{},{}\n", i / 60, i % 60,
                        p, p + 20, p - 20, p + 5, 10 + i % 3);
  }
  const fs::path file = *root_ / "btc.csv";
  std::ofstream(file, std::ios::binary) << text;
  SignalRequest req;
  req.run_dir = RunDir().string();
  req.bars_file = file.string();
  auto refused = ComputeSignal(req);
  ASSERT_TRUE(IsError(refused, Status::Code::kRefused, "bar size: " + file.string()));
  const std::string& m = refused.status().message();
  EXPECT_NE(m.find("bar size: " + file.string() +
                   " has 1-minute bars, the run trained on "
                   "5-minute bars"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("symbol: " + file.string() + " holds 'BTCUSDT', the run trained on 'SYN0'"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("time zone: " + file.string() + "'s timestamps carry UTC offset +00:00"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("+05:30"), std::string::npos) << m;
  EXPECT_NE(m.find("--allow-mismatch"), std::string::npos) << m;

  req.allow_mismatch = true;
  auto accepted = ComputeSignal(req);
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  EXPECT_EQ(accepted->mismatches.size(), 3u);
  EXPECT_NE(accepted->text.find("warning: accepted with --allow-mismatch: bar size"),
            std::string::npos)
      << accepted->text;
}

}  // namespace
}  // namespace rlt::evalrun
