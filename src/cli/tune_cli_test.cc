// End-to-end tests of `rltrade tune` (evalrun/tune_run.h): the analytic mode's outputs and
// JSON keys, a space key checked against the config before anything runs, training
// trials whose sampled values reach their config.toml, a rejected combination recorded
// with its reason, and no leakage: no trial touches the test range, and perturbing the
// test range's bars changes no trial's objective.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "testing/chromium.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;
using rlt::cli::testing_util::CmdResult;
using rlt::cli::testing_util::RunCli;

class TuneCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/tune_cli_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  std::string P(const std::string& name) const { return dir_ + "/" + name; }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(P(name)) << text;
    return P(name);
  }
  static std::vector<nlohmann::json> Journal(const std::string& path) {
    std::vector<nlohmann::json> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  // Starts `rltrade ARGS OUT` in the background and kills it with SIGKILL once
  // OUT/trials.jsonl has `lines` lines (polling every `poll_us`); false if it finished
  // first.
  bool KillWhenJournalHas(const std::string& args, const std::string& out, size_t lines,
                          int poll_us) {
    const std::string cmd =
        rlt::testing::RltradeBinary() + " " + args + out + " > /dev/null 2>&1 & echo $!";
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return false;
    long pid = 0;
    const bool started = fscanf(p, "%ld", &pid) == 1;
    pclose(p);
    if (!started) return false;
    for (int wait = 0; wait < 30000000 / poll_us; ++wait) {
      if (Journal(out + "/trials.jsonl").size() >= lines) {
        const bool killed = kill(static_cast<pid_t>(pid), SIGKILL) == 0;
        usleep(100000);
        return killed;
      }
      usleep(poll_us);
    }
    return false;
  }
  std::string dir_;
};

TEST_F(TuneCli, TheAnalyticModeWritesTheStudyAndPrintsTheContractKeys) {
  const std::string space = Write("branin.toml",
                                  "x1 = { uniform = [-5, 10] }\n"
                                  "x2 = { uniform = [0, 15] }\n");
  const CmdResult r =
      RunCli("tune --objective-fn branin --space " + space +
                 " --method sobol --trials 64 --seed 2 --json --quiet --out " + P("study"),
             "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"best_objective", "best_params", "trials", "method"}) {
    EXPECT_TRUE(j.contains(key)) << key << " in " << r.out;
  }
  EXPECT_EQ(j["trials"], 64);
  EXPECT_EQ(j["method"], "sobol");
  EXPECT_LT(j["best_objective"].get<double>(), 5.0);
  EXPECT_EQ(Journal(P("study/trials.jsonl")).size(), 64u);
  for (const char* f : {"study.json", "results.csv", "best.json"}) {
    EXPECT_TRUE(fs::exists(P("study/") + f)) << f;
  }
  // The best trial's objective is the smallest in the journal.
  double smallest = 1e300;
  for (const auto& line : Journal(P("study/trials.jsonl"))) {
    smallest = std::min(smallest, line["objective"].get<double>());
  }
  EXPECT_EQ(smallest, j["best_objective"].get<double>());
}

// One numbering: the printed lines name each trial by the number the journal, results.csv
// and best.json give it (from 0); the parenthesis only counts.
TEST_F(TuneCli, ThePrintedLinesNumberTrialsAsTheJournalDoes) {
  const std::string space =
      Write("one.toml", "x1 = { uniform = [-5, 10] }\nx2 = { uniform = [0, 15] }\n");
  const CmdResult r = RunCli("tune --objective-fn branin --space " + space +
                             " --method sobol --trials 3 --seed 2 --out " + P("numbered"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto lines = Journal(P("numbered/trials.jsonl"));
  ASSERT_EQ(lines.size(), 3u);
  for (size_t i = 0; i < lines.size(); ++i) {
    const int trial = lines[i]["trial"].get<int>();
    EXPECT_EQ(trial, static_cast<int>(i));
    EXPECT_NE(r.out.find("trial " + std::to_string(trial) + " (" + std::to_string(i + 1) +
                         " of 3): objective"),
              std::string::npos)
        << r.out;
  }
  EXPECT_EQ(r.out.find("trial 3"), std::string::npos) << r.out;
  const std::string csv = rlt::testing::ReadFile(P("numbered/results.csv"));
  EXPECT_NE(csv.find("\n0,"), std::string::npos) << csv;
}

TEST_F(TuneCli, TheReportShowsEveryTrialAndRendersInChromium) {
  const std::string numeric = Write("numeric.toml",
                                    "x1 = { uniform = [-2, 2] }\n"
                                    "x2 = { log_uniform = [0.01, 10] }\n");
  for (const char* method : {"sobol", "asha"}) {
    const std::string out = P(std::string("study_") + method);
    const CmdResult r = RunCli("tune --objective-fn rosenbrock --space " + numeric + " --method " +
                                   method + " --trials 27 --seed 1 --json --quiet --out " + out,
                               "", "/dev/null");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const std::string html = rlt::testing::ReadFile(out + "/report.html");
    const auto lines = Journal(out + "/trials.jsonl");
    // One dot per finished trial (rung) in the first chart and in each parameter's chart.
    EXPECT_EQ(rlt::testing::CountOf(html, "<circle class=\"pt"), 3 * lines.size()) << method;
    EXPECT_EQ(rlt::testing::CountOf(html, "<figure>"), 2u);
    EXPECT_NE(html.find("x2 (log scale)"), std::string::npos);  // 0.01..10: a log axis
    EXPECT_EQ(html.find("x1 (log scale)"), std::string::npos);
    EXPECT_EQ(rlt::testing::CountOf(html, " best\""), 3u);  // the best dot, in each chart
    const auto best = nlohmann::json::parse(r.out);
    EXPECT_NE(html.find("<td>" + std::to_string(best["best_trial"].get<int>()) + "</td>"),
              std::string::npos);
    EXPECT_EQ(html.find("out-of-sample"), std::string::npos);  // no test range here
    EXPECT_EQ(html.find("<script"), std::string::npos);
    if (access(rlt::testing::kChromium, X_OK) != 0) continue;
    EXPECT_EQ(rlt::testing::PageErrors(dir_, html, std::string("probe_") + method), "");
    const std::string png = out + "/report.png";
    ASSERT_EQ(rlt::testing::RunChromium(out + "/report.html", "--screenshot=" + png,
                                        out + "/shot.out", out + "/shot.err"),
              0);
    EXPECT_GT(rlt::testing::DistinctPixelValues(png, out), 20) << method;
  }
}

TEST_F(TuneCli, BadSpacesAndArgumentsAreRefusedBeforeAnythingIsWritten) {
  const std::string typo =
      Write("typo.toml", "\"algo.learnin_rate\" = { uniform = [1e-4, 1e-3] }\n");
  const std::string config = std::string(RLT_SOURCE_DIR) + "/configs/cartpole_ppo.toml";
  CmdResult r = RunCli("tune " + config + " --space " + typo + " --out " + P("a"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("did you mean 'learning_rate'"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(P("a")));
  const std::string bad = Write("bad.toml", "x1 = { uniform = [3, 1] }\n");
  r = RunCli("tune --objective-fn branin --space " + bad + " --out " + P("b"));
  EXPECT_NE(r.out.find("bad.toml:1: 'x1': uniform needs finite low < high"), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(P("b")));
  // A market config without [split] validation: trials would have nothing to be scored on.
  const std::string space =
      Write("lr.toml", "\"algo.learning_rate\" = { uniform = [1e-4, 1e-3] }\n");
  r = RunCli("tune " + std::string(RLT_SOURCE_DIR) + "/configs/intraday_ppo.toml --space " + space +
             " --out " + P("c"));
  EXPECT_NE(r.out.find("[split] validation is missing"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(P("c")));
}

TEST_F(TuneCli, LearningMethodsAndPruningRunAndRefuseWhatTheyCannotDo) {
  std::string text;
  for (int i = 1; i <= 6; ++i) text += "x" + std::to_string(i) + " = { uniform = [0, 1] }\n";
  const std::string h6 = Write("h6.toml", text);
  // tpe and cmaes with asha pruning on Hartmann6: the study records both, and its JSON the
  // rung of the best.
  for (const char* method : {"tpe", "cmaes"}) {
    const CmdResult r =
        RunCli("tune --objective-fn hartmann6 --space " + h6 + " --method " + method +
               " --prune asha --trials 12 --parallel 2 --quiet --json --out " + P(method));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["method"], method);
    EXPECT_EQ(j["prune"], "asha");
    EXPECT_TRUE(j.contains("best_rung"));
    EXPECT_LT(j["best_objective"].get<double>(), 0.0);
    std::ifstream in(P(method) + "/study.json");
    const auto study = nlohmann::json::parse(in);
    EXPECT_EQ(study["prune"], "asha");
    EXPECT_EQ(study["lag"], 1);
  }
  // Pruned on Branin: a trial's lower rungs see the function through noise (tune/objectives.h),
  // its full-budget rung the function itself; the same study again draws the same values.
  const std::string b2 =
      Write("b2.toml", "x1 = { uniform = [-5, 10] }\nx2 = { uniform = [0, 15] }\n");
  auto rows = [&](const std::string& out) {
    std::vector<nlohmann::json> v;
    std::ifstream in(out + "/trials.jsonl");
    for (std::string line; std::getline(in, line);) {
      v.push_back(nlohmann::json::parse(line));
      v.back().erase("seconds");  // wall time: the one field that differs between runs
    }
    return v;
  };
  for (const std::string& out : {P("noisy1"), P("noisy2")}) {
    const CmdResult n = RunCli("tune --objective-fn branin --space " + b2 +
                               " --method tpe --prune asha --trials 27 --quiet --out " + out);
    ASSERT_EQ(n.exit_code, 0) << n.out;
  }
  const std::vector<nlohmann::json> noisy = rows(P("noisy1"));
  ASSERT_GT(noisy.size(), 27u);  // 27 first rungs and the promotions (eta 3, rungs 3 .. 81)
  int full = 0, off = 0;
  for (const auto& t : noisy) {
    const double x1 = std::stod(t["params"]["x1"].get<std::string>());
    const double x2 = std::stod(t["params"]["x2"].get<std::string>());
    const double pi = 3.14159265358979323846;
    const double q = x2 - 5.1 / (4 * pi * pi) * x1 * x1 + 5 / pi * x1 - 6;
    const double f = q * q + 10 * (1 - 1 / (8 * pi)) * std::cos(x1) + 10;
    const double got = t["objective"].get<double>();
    if (t["steps"].get<int64_t>() == 81) {
      ++full;
      EXPECT_NEAR(got, f, 1e-12 * std::fabs(f)) << t.dump();
    } else if (std::fabs(got - f) > 1e-6 * std::fabs(f)) {
      ++off;
    }
  }
  EXPECT_GE(full, 1);
  EXPECT_EQ(off, static_cast<int>(noisy.size()) - full);
  EXPECT_EQ(rows(P("noisy2")), noisy);
  // A resume keeps the study's pruning: another --prune is refused, the same one is fine.
  CmdResult resumed = RunCli("tune --resume " + P("tpe") + " --prune none --quiet --json");
  EXPECT_EQ(resumed.exit_code, 2);
  EXPECT_NE(resumed.out.find("--prune none (the study's: asha)"), std::string::npos) << resumed.out;
  resumed = RunCli("tune --resume " + P("tpe") + " --prune asha --method tpe --quiet --json");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.out;
  // --method random --prune asha is --method asha.
  CmdResult r = RunCli("tune --objective-fn hartmann6 --space " + h6 +
                       " --prune asha --trials 6 --quiet --json --out " + P("random_asha"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["method"], "asha");
  // Bad input, refused before anything is written.
  r = RunCli("tune --objective-fn hartmann6 --space " + h6 + " --prune median --out " + P("p"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("--prune"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(P("p")));
  r = RunCli("tune --objective-fn hartmann6 --space " + h6 + " --method tpe --eta 3 --out " +
             P("e"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--eta (only --method asha or --prune asha)"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(P("e")));
  const std::string branin =
      Write("b.toml", "x1 = { uniform = [-5, 10] }\nx2 = { uniform = [0, 15] }\n");
  r = RunCli("tune --objective-fn hartmann6 --space " + branin + " --out " + P("h"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("hartmann6 takes x1 .. x6"), std::string::npos) << r.out;
  const std::string config = std::string(RLT_SOURCE_DIR) + "/configs/cartpole_ppo.toml";
  const std::string choices = Write("c.toml", "\"algo.n_epochs\" = { choice = [5, 10] }\n");
  r = RunCli("tune " + config + " --space " + choices + " --method cmaes --out " + P("c"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("only choice keys (algo.n_epochs)"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(P("c")));
}

// The example study of configs/intraday_ppo_space.toml with TPE and pruning, on a small
// budget: every trial climbs from the first rung, the best is chosen on validation and the
// test range is evaluated once, afterwards.
TEST_F(TuneCli, TheIntradayExampleSpaceRunsWithTpeAndPruning) {
  const std::string src = RLT_SOURCE_DIR;
  const CmdResult r =
      RunCli("tune " + src + "/configs/intraday_ppo.toml --space " + src +
             "/configs/intraday_ppo_space.toml --method tpe --prune asha --trials 4 --parallel 2 "
             "--set split.train=2023-01-02:2023-08-04 --set split.validation=2023-08-07:2023-10-06 "
             "--set run.total_steps=16384 --set run.threads=1 --quiet --json --out " +
             P("intraday"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // The output holds the JSON summary (stdout) and the test range's report (stderr).
  const size_t from = r.out.find("{\n  \"best_objective\"");
  ASSERT_NE(from, std::string::npos) << r.out;
  size_t to = r.out.find("\n}", from);
  ASSERT_NE(to, std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(r.out.substr(from, to + 2 - from));
  EXPECT_EQ(j["method"], "tpe");
  EXPECT_EQ(j["prune"], "asha");
  EXPECT_TRUE(j["best_objective"].is_number()) << r.out;
  // The test figure, evaluated once; null when the policy stayed flat there (no Sharpe ratio).
  ASSERT_TRUE(j.contains("test_objective")) << r.out;
  EXPECT_TRUE(j["test_objective"].is_number() || j["test_objective"].is_null()) << r.out;
  EXPECT_EQ(j["best_params"].size(), 8u);
  EXPECT_TRUE(fs::exists(P("intraday") + "/test_evaluation.json"));
  std::ifstream in(P("intraday") + "/trials.jsonl");
  int first_rungs = 0;
  for (std::string line; std::getline(in, line);) {
    const auto t = nlohmann::json::parse(line);
    EXPECT_EQ(t["status"], "ok") << line;
    first_rungs += t["rung"] == 0;
  }
  EXPECT_EQ(first_rungs, 4);
}

TEST_F(TuneCli, TrainingTrialsCarryTheirValuesAndRejectImpossibleBatches) {
  const std::string space = Write("cp.toml",
                                  "\"algo.learning_rate\" = { log_uniform = [1e-4, 1e-2] }\n"
                                  "\"algo.batch_size\" = { choice = [64, 1000] }\n");
  const std::string config = std::string(RLT_SOURCE_DIR) + "/configs/cartpole_ppo.toml";
  const CmdResult r = RunCli("tune " + config + " --space " + space +
                                 " --trials 4 --seed 1 --quiet --json --set run.total_steps=1024 "
                                 "--out " +
                                 P("study"),
                             "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  int rejected = 0, ok = 0;
  for (const auto& line : Journal(P("study/trials.jsonl"))) {
    const std::string batch = line["params"]["algo.batch_size"];
    if (batch == "1000") {
      EXPECT_EQ(line["status"], "rejected");
      EXPECT_NE(line["reason"].get<std::string>().find("does not divide"), std::string::npos);
      ++rejected;
      continue;
    }
    ASSERT_EQ(line["status"], "ok") << line.dump();
    ++ok;
    // Every proposal takes effect: the trial's resolved config holds the sampled values.
    std::ifstream in(line["run_dir"].get<std::string>() + "/config.toml");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(
        text.find("learning_rate = " + line["params"]["algo.learning_rate"].get<std::string>()),
        std::string::npos);
    EXPECT_NE(text.find("batch_size = 64"), std::string::npos);
  }
  EXPECT_EQ(rejected + ok, 4);
  EXPECT_GT(ok, 0);
  EXPECT_TRUE(fs::exists(P("study/best.toml")));
}

TEST_F(TuneCli, NoTrialReadsTheTestRange) {
  // 60 sessions: train to 2023-02-17, validation to 2023-03-03, test after.
  ASSERT_EQ(RunCli("data synth --days 60 --out " + P("bars.csv")).exit_code, 0);
  // The same bars with every test-range close changed.
  {
    std::ifstream in(P("bars.csv"));
    std::ofstream out(P("perturbed.csv"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("2023-03-1", 0) == 0 || line.rfind("2023-03-2", 0) == 0) {
        // timestamp,symbol,open,high,low,close,volume: scale every price by 1.1.
        std::stringstream fields(line);
        std::vector<std::string> f;
        std::string x;
        while (std::getline(fields, x, ',')) f.push_back(x);
        for (int k = 2; k <= 5; ++k) f[k] = std::to_string(std::stod(f[k]) * 1.1);
        line.clear();
        for (size_t k = 0; k < f.size(); ++k) line += (k ? "," : "") + f[k];
      }
      out << line << "\n";
    }
  }
  const std::string space =
      Write("lr.toml", "\"algo.learning_rate\" = { log_uniform = [1e-4, 1e-2] }\n");
  auto study = [&](const std::string& bars, const std::string& out) {
    return RunCli(
        "tune " + std::string(RLT_SOURCE_DIR) + "/configs/intraday_ppo.toml --space " + space +
            " --trials 2 --seed 3 --quiet --json --out " + out +
            " --set data.source=file --set data.file=" + bars +
            " --set split.train=start:2023-02-17 --set split.validation=2023-02-20:2023-03-03"
            " --set split.test=2023-03-06:end --set run.total_steps=8192 --set run.threads=1"
            " --set env.num_envs=16 --set algo.n_steps=64 --set algo.batch_size=256",
        "", "/dev/null");
  };
  const CmdResult a = study(P("bars.csv"), P("a"));
  ASSERT_EQ(a.exit_code, 0) << a.out;
  const CmdResult b = study(P("perturbed.csv"), P("b"));
  ASSERT_EQ(b.exit_code, 0) << b.out;
  const auto ja = Journal(P("a/trials.jsonl")), jb = Journal(P("b/trials.jsonl"));
  ASSERT_EQ(ja.size(), 2u);
  for (size_t i = 0; i < ja.size(); ++i) {
    ASSERT_EQ(ja[i]["status"], "ok") << ja[i].dump();
    EXPECT_EQ(ja[i]["objective"], jb[i]["objective"]) << "trial " << i;
    // The trial evaluated the validation range and nothing else.
    const fs::path eval = fs::path(ja[i]["run_dir"].get<std::string>()) / "eval";
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(eval)) names.push_back(e.path().filename());
    EXPECT_EQ(names, std::vector<std::string>{"validation"}) << eval;
  }
  // The test range is read once, after the search, by the copy in best_run/; the
  // perturbation shows there.
  const auto out_a = nlohmann::json::parse(a.out), out_b = nlohmann::json::parse(b.out);
  ASSERT_TRUE(out_a.contains("test_objective")) << a.out;
  EXPECT_NE(out_a["test_objective"], out_b["test_objective"]);
  // The best trial's deflated Sharpe ratio: trials = the two validation evaluations, the
  // variance that of their per-session Sharpe ratios (from the trials' own summaries);
  // validation only, so the test range's perturbation leaves it as it was.
  ASSERT_TRUE(out_a.contains("deflated_sharpe_detail")) << a.out;
  const nlohmann::json& d = out_a["deflated_sharpe_detail"];
  EXPECT_EQ(d["trials"].get<double>(), 2.0);
  double sr[2];
  for (size_t i = 0; i < 2; ++i) {
    const fs::path summary =
        fs::path(ja[i]["run_dir"].get<std::string>()) / "eval" / "validation" / "summary.json";
    sr[i] = nlohmann::json::parse(rlt::testing::ReadFile(summary))["metrics"]["sharpe_ratio"]
                .get<double>() /
            std::sqrt(252.0);
  }
  const double variance = (sr[0] - sr[1]) * (sr[0] - sr[1]) / 2;
  EXPECT_NEAR(d["sharpe_variance_per_period"].get<double>(), variance, 1e-9 * variance);
  EXPECT_NEAR(d["sharpe_ratio"].get<double>(), out_a["best_objective"].get<double>(),
              1e-9 * std::fabs(out_a["best_objective"].get<double>()));
  EXPECT_EQ(out_a["deflated_sharpe"], out_b["deflated_sharpe"]);
  EXPECT_TRUE(fs::exists(P("a/test_evaluation.json")));
  // Beside it, the same metric for the benchmarks on the test range.
  const auto test_eval = nlohmann::json::parse(rlt::testing::ReadFile(P("a/test_evaluation.json")));
  for (const char* name : {"flat", "buy_and_hold"}) {
    EXPECT_EQ(out_a["test_benchmarks"][name], test_eval["benchmarks"][name]["sharpe_ratio"])
        << name;
  }
  EXPECT_TRUE(test_eval["significance"]["buy_and_hold"]["p_value"].is_number());
  // The report shows that figure apart, labelled as the only out-of-sample number.
  const std::string report = rlt::testing::ReadFile(P("a/report.html"));
  EXPECT_NE(report.find("id=\"out-of-sample\""), std::string::npos);
  EXPECT_NE(report.find("only out-of-sample number"), std::string::npos);
}

}  // namespace

namespace {

TEST_F(TuneCli, AStudyKilledWithSigkillResumesWithoutRepeatingATrial) {
  const std::string space =
      Write("lr.toml", "\"algo.learning_rate\" = { log_uniform = [1e-4, 1e-2] }\n");
  const std::string args = "tune " + std::string(RLT_SOURCE_DIR) +
                           "/configs/cartpole_ppo.toml --space " + space +
                           " --trials 6 --seed 5 --quiet --json --set run.total_steps=1024"
                           " --set run.threads=1 --out ";
  ASSERT_EQ(RunCli(args + P("straight"), "", "/dev/null").exit_code, 0);
  ASSERT_TRUE(KillWhenJournalHas(args, P("killed"), 2, 5000))
      << "the study finished before two trials were journaled";
  const size_t before = Journal(P("killed/trials.jsonl")).size();
  ASSERT_LT(before, 6u);
  // --resume alone: the arguments come from study.json.
  const CmdResult resumed =
      RunCli("tune --resume " + P("killed") + " --quiet --json", "", "/dev/null");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const auto straight = Journal(P("straight/trials.jsonl")),
             again = Journal(P("killed/trials.jsonl"));
  ASSERT_EQ(again.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(again[i]["trial"], static_cast<int>(i));  // each trial once, in order
    EXPECT_EQ(again[i]["params"], straight[i]["params"]);
    EXPECT_EQ(again[i]["objective"], straight[i]["objective"]) << "trial " << i;
  }
  EXPECT_EQ(nlohmann::json::parse(resumed.out)["best_objective"],
            nlohmann::json::parse(
                RunCli("tune --resume " + P("straight") + " --quiet --json", "", "/dev/null")
                    .out)["best_objective"]);
}

}  // namespace

namespace {

TEST_F(TuneCli, ParallelTrialsInThreadsGiveTheSequentialStudy) {
  // Trials of different lengths (n_epochs): the workers take the next trial as they free
  // up, and the journal still lists the trials in order with the sequential results.
  const std::string space = Write("lr.toml",
                                  "\"algo.learning_rate\" = { log_uniform = [1e-4, 1e-2] }\n"
                                  "\"algo.n_epochs\" = { int = [1, 12] }\n");
  auto study = [&](int parallel, const std::string& out) {
    return RunCli("tune " + std::string(RLT_SOURCE_DIR) + "/configs/cartpole_ppo.toml --space " +
                      space + " --method sobol --trials 6 --seed 2 --quiet --json" +
                      " --set run.total_steps=2048 --set run.threads=1 --parallel " +
                      std::to_string(parallel) + " --out " + out,
                  "", "/dev/null");
  };
  ASSERT_EQ(study(1, P("one")).exit_code, 0);
  const CmdResult two = study(2, P("two"));
  ASSERT_EQ(two.exit_code, 0) << two.out;
  const auto a = Journal(P("one/trials.jsonl")), b = Journal(P("two/trials.jsonl"));
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(b.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(b[i]["trial"], static_cast<int>(i));
    EXPECT_EQ(b[i]["status"], "ok") << b[i].dump();
    EXPECT_EQ(a[i]["params"], b[i]["params"]);
    EXPECT_EQ(a[i]["objective"], b[i]["objective"]) << "trial " << i;
    EXPECT_EQ(a[i]["steps"], b[i]["steps"]);
    // The journal splits a trial's time: training loop, and the rest (setup, evaluation).
    EXPECT_GT(b[i]["train_seconds"].get<double>(), 0.0);
    EXPECT_LE(b[i]["train_seconds"].get<double>(), b[i]["seconds"].get<double>());
  }
}

std::string FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST_F(TuneCli, AshaTrainsRungsByResumingAndSurvivesSigkill) {
  const std::string space = Write("lr.toml",
                                  "\"algo.learning_rate\" = { log_uniform = [1e-4, 1e-2] }\n"
                                  "\"algo.gae_lambda\" = { uniform = [0.8, 0.99] }\n");
  const std::string config = std::string(RLT_SOURCE_DIR) + "/configs/cartpole_ppo.toml";
  const std::string args = "tune " + config + " --space " + space +
                           " --method asha --eta 2 --min-steps 2048 --trials 4 --seed 4 --quiet"
                           " --json --set run.total_steps=8192 --set run.threads=1 --parallel 1"
                           " --out ";
  const CmdResult r = RunCli(args + P("straight"), "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto lines = Journal(P("straight/trials.jsonl"));
  // Rungs of 2048, 4096 and 8192 steps (one update is 256 steps: the targets are met
  // exactly); 4 trials in rung 0, the top half of each rung climbs.
  std::map<int, int> per_rung;
  int top_trial = -1;
  for (const auto& line : lines) {
    ASSERT_EQ(line["status"], "ok") << line.dump();
    const int rung = line["rung"];
    ++per_rung[rung];
    EXPECT_EQ(line["steps"], 2048 << rung) << line.dump();
    if (rung == 2) top_trial = line["trial"];
    // Every rung is scored on the checkpoint of its own step, on the validation episodes.
    const std::string ckpt = line["checkpoint"];
    EXPECT_TRUE(fs::exists(ckpt)) << ckpt;
    const std::string name =
        rung == 2 ? "episodes" : "episodes.ckpt-step_" + std::to_string(2048 << rung);
    EXPECT_TRUE(fs::exists(line["run_dir"].get<std::string>() + "/eval/" + name)) << name;
  }
  EXPECT_EQ(per_rung[0], 4);
  EXPECT_GE(per_rung[1], 2);
  EXPECT_GE(per_rung[2], 1);
  ASSERT_GE(top_trial, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out)["best_rung"], 2);
  // A trial that climbed every rung is the run one `rltrade train` makes: the rungs resumed
  // it, bit for bit, with the schedules over the full 8192 steps.
  std::string sets;
  for (const auto& line : lines) {
    if (line["trial"] != top_trial || line["rung"] != 2) continue;
    for (const auto& [k, v] : line["params"].items())
      sets += " --set " + k + "=" + v.get<std::string>();
  }
  ASSERT_EQ(RunCli("train " + config + sets +
                   " --set run.total_steps=8192 --set run.threads=1 --quiet --run-dir " +
                   P("straight_train"))
                .exit_code,
            0);
  const std::string trial_dir = P("straight/trials/trial_") + std::to_string(top_trial);
  for (const char* f : {"policy.rlt", "state.rlt", "normalizer.rlt"}) {
    EXPECT_EQ(FileText(trial_dir + "/final/" + f), FileText(P("straight_train/final/") + f)) << f;
  }
  // Killed with SIGKILL once two rungs are journaled, then resumed: every (trial, rung)
  // runs once and the results are the uninterrupted study's.
  ASSERT_TRUE(KillWhenJournalHas(args, P("killed"), 2, 2000))
      << "the study finished before two rungs were journaled";
  ASSERT_LT(Journal(P("killed/trials.jsonl")).size(), lines.size());
  const CmdResult resumed =
      RunCli("tune --resume " + P("killed") + " --quiet --json", "", "/dev/null");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const auto again = Journal(P("killed/trials.jsonl"));
  ASSERT_EQ(again.size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(again[i]["trial"], lines[i]["trial"]) << "line " << i;
    EXPECT_EQ(again[i]["rung"], lines[i]["rung"]) << "line " << i;
    EXPECT_EQ(again[i]["objective"], lines[i]["objective"]) << "line " << i;
  }
  EXPECT_EQ(nlohmann::json::parse(resumed.out)["best_objective"],
            nlohmann::json::parse(r.out)["best_objective"]);
}

}  // namespace

namespace {

TEST_F(TuneCli, SettingsTrainingRefusesMakeTheTrialRejectedInBothModes) {
  const std::string space = Write("ne.toml", "\"algo.n_epochs\" = { choice = [0, 20] }\n");
  for (int parallel : {1, 2}) {
    std::string name = "p";
    name += std::to_string(parallel);
    const std::string out = P(name);
    const CmdResult r =
        RunCli("tune " + std::string(RLT_SOURCE_DIR) + "/configs/cartpole_ppo.toml --space " +
                   space + " --method sobol --trials 2 --quiet --json --set run.total_steps=1024" +
                   " --set run.threads=1 --parallel " + std::to_string(parallel) + " --out " + out,
               "", "/dev/null");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    int rejected = 0;
    for (const auto& line : Journal(out + "/trials.jsonl")) {
      if (line["params"]["algo.n_epochs"] != "0") continue;
      EXPECT_EQ(line["status"], "rejected") << line.dump();
      EXPECT_NE(line["reason"].get<std::string>().find("n_epochs must be >= 1"), std::string::npos)
          << line.dump();
      EXPECT_FALSE(fs::exists(line["run_dir"].get<std::string>()));
      ++rejected;
    }
    EXPECT_EQ(rejected, 1) << "parallel " << parallel;
  }
}

}  // namespace
