// End-to-end regression tests of `rltrade tune` against hostile studies: each runs the
// command a hostile tester ran and asserts the exit code, a message fragment and what is
// (not) left on disk.
//  - The space cannot reach the ranges or the data: split.*, data.*, env.range, env.id
//    (and run.seeds, run.total_steps under asha) are refused as space keys, naming the
//    space's file:line, the key and why; a resumed study's config (its ranges included)
//    must be the one it started with.
//  - Values are checked before anything runs: int bounds beyond 2^53, a value the key's
//    type does not hold (both ends of a range, the middle of a continuous one, every
//    choice), keys that name no config key, an objective no evaluation reports.
//  - A study in which no trial produced an objective exits non-zero.
//  - --resume: study.json and trials.jsonl are read field by field (file:line and what is
//    wrong, never an internal error; nothing is changed), trials above the cap are
//    refused, arguments given with it must equal the study's, and --seed takes
//    0 .. 2^64 - 1 only.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

namespace {

namespace fs = std::filesystem;
using rlt::cli::testing_util::CmdResult;
using rlt::cli::testing_util::ReadFile;
using rlt::cli::testing_util::RunCli;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The 1-based line of the first occurrence of `part` in `text` (0 when absent).
int LineOf(const std::string& text, const std::string& part) {
  const size_t at = text.find(part);
  if (at == std::string::npos) return 0;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

// A small intraday study config: 60 synthetic sessions, train / validation / test.
constexpr const char* kIntraday = R"([run]
total_steps = 256
threads = 1
seed = 3
[data]
source = "synthetic"
days = 60
[split]
train = "2023-01-02:2023-02-10"
validation = "2023-02-13:2023-02-24"
test = "2023-02-27:2023-03-24"
[env]
id = "intraday"
num_envs = 2
[algo]
n_steps = 64
batch_size = 64
n_epochs = 1
)";

class HostileTune : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_ / name; }
  std::string Write(const std::string& name, const std::string& text) {
    rlt::testing::WriteFile(Path(name), text);
    return Path(name);
  }
  static std::string CartPole() {
    return std::string(RLT_SOURCE_DIR) + "/configs/cartpole_ppo.toml";
  }
  // A finished Branin study of 8 trials in OUT `name` (no training: fast).
  std::string BraninStudy(const std::string& name) {
    const std::string space =
        Write("branin.toml", "x1 = { uniform = [-5, 10] }\nx2 = { uniform = [0, 15] }\n");
    const CmdResult r = RunCli("tune --objective-fn branin --space " + space +
                                   " --trials 8 --seed 2 --quiet --json --out " + Path(name),
                               "", "/dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return Path(name);
  }
  rlt::testing::ScratchDir dir_{"rlt_hostile_tune_"};
};

// ---- The space cannot reach the ranges or the data ---------------------------------------

TEST_F(HostileTune, SpaceKeysThatDefineRangesOrDataAreRefusedNamingLineKeyAndWhy) {
  const std::string config = Write("c.toml", kIntraday);
  const std::string space =
      Write("space.toml",
            "\"algo.learning_rate\" = { log_uniform = [1e-4, 1e-3] }\n"
            "\"split.test\" = { choice = [\"2023-02-13:2023-02-17\"] }\n"
            "\"split.validation\" = { choice = [\"2023-02-27:2023-03-03\"] }\n"
            "\"data.days\" = { int = [40, 60] }\n"
            "\"env.range\" = { choice = [\"2023-01-02:2023-03-24\"] }\n"
            "\"env.id\" = { choice = [\"intraday\", \"cartpole\"] }\n");
  const CmdResult r =
      RunCli("tune " + config + " --space " + space + " --trials 2 --out " + Path("study"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(
      Has(r.out, space + ":2: 'split.test' may not be tuned: [split] holds the study's ranges"))
      << r.out;
  EXPECT_TRUE(Has(r.out, space + ":3: 'split.validation' may not be tuned")) << r.out;
  EXPECT_TRUE(Has(r.out, space + ":4: 'data.days' may not be tuned: [data] defines the bars"))
      << r.out;
  EXPECT_TRUE(Has(r.out, space + ":5: 'env.range' may not be tuned")) << r.out;
  EXPECT_TRUE(Has(r.out, space + ":6: 'env.id' may not be tuned")) << r.out;
  EXPECT_FALSE(Has(r.out, "'algo.learning_rate'")) << r.out;
  EXPECT_FALSE(fs::exists(Path("study")));
}

TEST_F(HostileTune, RunSeedsAndAshaTotalStepsAndKeysAlsoGivenWithSetAreRefused) {
  const std::string space = Write("space.toml",
                                  "\"run.seeds\" = { int = [1, 3] }\n"
                                  "\"run.total_steps\" = { choice = [1024, 2048] }\n"
                                  "\"algo.n_epochs\" = { int = [1, 3] }\n");
  const CmdResult r = RunCli("tune " + CartPole() + " --space " + space +
                             " --method asha --set algo.n_epochs=2 --out " + Path("study"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, space + ":1: 'run.seeds' may not be tuned: a trial trains one seed"))
      << r.out;
  EXPECT_TRUE(Has(r.out, space + ":2: 'run.total_steps' may not be tuned: with --method asha"))
      << r.out;
  EXPECT_TRUE(Has(r.out, space + ":3: 'algo.n_epochs' is also given with --set")) << r.out;
  EXPECT_FALSE(fs::exists(Path("study")));
}

TEST_F(HostileTune, AResumeWithAChangedTestRangeIsRefusedAndTheStudyIsLeftAsItWas) {
  const std::string config = Write("c.toml", kIntraday);
  const std::string space =
      Write("space.toml", "\"algo.learning_rate\" = { log_uniform = [1e-4, 1e-3] }\n");
  // 256 steps leave the policy nearly flat: cum_returns_final is defined where a Sharpe
  // ratio of returns that never varied is not.
  const CmdResult r =
      RunCli("tune " + config + " --space " + space +
                 " --objective cum_returns_final --trials 1 --quiet --json --out " + Path("study"),
             "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // The out-of-sample figure is the config's test range's.
  const auto summary = nlohmann::json::parse(ReadFile(Path("study/test_evaluation.json")));
  EXPECT_EQ(summary["range"]["first"], "2023-02-27") << summary.dump();
  const std::string journal = ReadFile(Path("study/trials.jsonl"));
  std::string moved = kIntraday;
  moved.replace(moved.find("test = \"2023-02-27:2023-03-24\""), 30,
                "test = \"2023-02-27:2023-03-03\"");
  Write("c.toml", moved);
  const CmdResult again = RunCli("tune --resume " + Path("study") + " --quiet --json");
  EXPECT_EQ(again.exit_code, 2) << again.out;
  EXPECT_TRUE(
      Has(again.out, "[split] test was 2023-02-27:2023-03-24, is now 2023-02-27:2023-03-03"))
      << again.out;
  EXPECT_EQ(ReadFile(Path("study/trials.jsonl")), journal);
}

TEST_F(HostileTune, TheOptionsEnvironmentIsScoredOnValidationLikeTheMarketOnes) {
  // Its evaluation walks a [split] range and reports the metric table: without a
  // validation range the trials would have nothing to be scored on.
  const std::string space =
      Write("space.toml", "\"algo.learning_rate\" = { log_uniform = [1e-5, 1e-4] }\n");
  const CmdResult r =
      RunCli("tune " + std::string(RLT_SOURCE_DIR) + "/configs/options_rppo.toml --space " + space +
             " --out " + Path("study"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "[split] validation is missing")) << r.out;
  EXPECT_FALSE(fs::exists(Path("study")));
}

// ---- Values checked before anything runs -----------------------------------------------

TEST_F(HostileTune, IntBoundsBeyondWhatTheKeyHoldsAreRefusedWhenTheSpaceIsRead) {
  // 1e30 is beyond any whole number a sampled value holds exactly.
  const std::string huge =
      Write("huge.toml", "x1 = { int = [1, 1e30] }\nx2 = { uniform = [0, 1] }\n");
  CmdResult r = RunCli("tune --objective-fn branin --space " + huge + " --out " + Path("a"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, huge + ":1: 'x1': int [1, 1e+30]: bounds must lie within")) << r.out;
  EXPECT_FALSE(Has(r.out, "9223372036854775808")) << r.out;
  EXPECT_FALSE(fs::exists(Path("a")));
  // algo.n_epochs is a 32-bit int: 3e9 fits 2^53 but not the key.
  const std::string wide = Write("wide.toml", "\"algo.n_epochs\" = { int = [1, 3000000000] }\n");
  r = RunCli("tune " + CartPole() + " --space " + wide + " --out " + Path("b"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, wide + ":1: 'algo.n_epochs' = 3000000000: training refuses this value"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "expected an integer")) << r.out;
  EXPECT_FALSE(fs::exists(Path("b")));
  // A continuous range on a whole-number key: both ends pass, the middle does not.
  const std::string mid = Write("mid.toml", "\"algo.n_epochs\" = { uniform = [1, 10] }\n");
  r = RunCli("tune " + CartPole() + " --space " + mid + " --out " + Path("c"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "'algo.n_epochs' = 5.5: training refuses this value")) << r.out;
  EXPECT_FALSE(fs::exists(Path("c")));
}

TEST_F(HostileTune, KeysThatNameNoConfigKeyAreRefusedBeforeAnyTrial) {
  const std::string space = Write("space.toml",
                                  "\"foo.bar\" = { uniform = [0, 1] }\n"
                                  "x1 = { uniform = [0, 1] }\n");
  const CmdResult r =
      RunCli("tune " + CartPole() + " --space " + space + " --out " + Path("study"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, space + ":2: 'x1' names no config key")) << r.out;
  EXPECT_FALSE(fs::exists(Path("study")));
  const std::string section = Write("section.toml", "\"foo.bar\" = { uniform = [0, 1] }\n");
  const CmdResult s =
      RunCli("tune " + CartPole() + " --space " + section + " --out " + Path("study"));
  EXPECT_EQ(s.exit_code, 2) << s.out;
  EXPECT_TRUE(Has(s.out, section + ":1: 'foo.bar' = 0: training refuses this value")) << s.out;
  EXPECT_TRUE(Has(s.out, "unknown section [foo]")) << s.out;
  EXPECT_FALSE(fs::exists(Path("study")));
  // An unquoted dotted key is a TOML table: the message says to quote it.
  const std::string dotted =
      Write("dotted.toml", "algo.learning_rate = { uniform = [0.001, 0.01] }\n");
  const CmdResult d =
      RunCli("tune " + CartPole() + " --space " + dotted + " --out " + Path("study"));
  EXPECT_EQ(d.exit_code, 2) << d.out;
  EXPECT_TRUE(Has(d.out, "a dotted key must be quoted")) << d.out;
  EXPECT_FALSE(fs::exists(Path("study")));
}

TEST_F(HostileTune, AChoiceListIsCheckedValueByValue) {
  struct Case {
    const char* space;
    const char* fragment;
  } cases[] = {
      {"\"algo.n_epochs\" = { choice = [3, \"many\"] }\n",
       ":1: 'algo.n_epochs' = many: training refuses this value"},
      {"\"policy.activation\" = { choice = [\"tanh\", \"swish\"] }\n",
       ":1: 'policy.activation' = swish: training refuses this value"},
      // "es" makes the config's PPO keys unknown in [algo].
      {"\"algo.learning_rate\" = { uniform = [0.0001, 0.001] }\n"
       "\"algo.name\" = { choice = [\"ppo\", \"es\"] }\n",
       ":2: 'algo.name' = es: training refuses this value"},
  };
  int k = 0;
  for (const Case& c : cases) {
    const std::string space = Write("space" + std::to_string(k) + ".toml", c.space);
    const std::string out = Path("study" + std::to_string(k++));
    const CmdResult r = RunCli("tune " + CartPole() + " --space " + space + " --out " + out);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_TRUE(Has(r.out, space + c.fragment)) << r.out;
    EXPECT_FALSE(fs::exists(out));
  }
}

// A repeated choice would be drawn twice as often; an --out that exists is refused as a
// run directory that exists is (exit 2), and is left as it was.
TEST_F(HostileTune, ARepeatedChoiceAndAnExistingOutAreRefusedWithExitTwo) {
  const std::string space = Write("dup.toml", "x1 = { choice = [1, 2, 1] }\n");
  const CmdResult d =
      RunCli("tune --objective-fn branin --space " + space + " --out " + Path("dup_study"));
  EXPECT_EQ(d.exit_code, 2) << d.out;
  EXPECT_TRUE(Has(d.out, space + ":1: 'x1': choice lists 1 twice")) << d.out;
  EXPECT_FALSE(fs::exists(Path("dup_study")));
  const std::string study = BraninStudy("taken");
  const std::string before = rlt::testing::ReadFile(fs::path(study) / "trials.jsonl");
  const std::string branin =
      Write("branin2.toml", "x1 = { uniform = [-5, 10] }\nx2 = { uniform = [0, 15] }\n");
  const CmdResult r =
      RunCli("tune --objective-fn branin --space " + branin + " --trials 4 --out " + study);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, study +
                             " exists already: choose another --out, or continue it with "
                             "--resume " +
                             study))
      << r.out;
  EXPECT_EQ(rlt::testing::ReadFile(fs::path(study) / "trials.jsonl"), before);
}

TEST_F(HostileTune, AnUnknownObjectiveIsRefusedBeforeAnyTrialTrains) {
  const std::string space = Write("space.toml", "\"algo.n_epochs\" = { int = [1, 3] }\n");
  const CmdResult r = RunCli("tune " + CartPole() + " --space " + space +
                             " --objective no_such_metric --out " + Path("study"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "--objective no_such_metric: not a metric")) << r.out;
  EXPECT_TRUE(Has(r.out, "mean_return")) << r.out;
  EXPECT_FALSE(fs::exists(Path("study")));
  // A market config lists the metric table.
  const std::string config = Write("c.toml", kIntraday);
  const CmdResult m = RunCli("tune " + config + " --space " + space +
                             " --objective mean_return --out " + Path("market"));
  EXPECT_EQ(m.exit_code, 2) << m.out;
  EXPECT_TRUE(Has(m.out, "sharpe_ratio, sortino_ratio")) << m.out;
  EXPECT_FALSE(fs::exists(Path("market")));
}

TEST_F(HostileTune, AStudyInWhichNoTrialProducedAnObjectiveExitsNonZero) {
  // Every batch size fails to divide n_steps x num_envs: each trial is rejected (a rule on
  // a combination, so not refused up front), and the study has no result.
  const std::string space =
      Write("space.toml", "\"algo.batch_size\" = { choice = [1000, 3000] }\n");
  const CmdResult r = RunCli("tune " + CartPole() + " --space " + space +
                             " --trials 2 --quiet --out " + Path("study"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "no trial produced an objective (2 trials: 2 rejected, 0 failed)"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "does not divide")) << r.out;
  // The journal stays: it holds each trial's reason.
  EXPECT_EQ(rlt::testing::Lines(ReadFile(Path("study/trials.jsonl"))).size(), 2u);
  const CmdResult again = RunCli("tune --resume " + Path("study") + " --quiet");
  EXPECT_EQ(again.exit_code, 1) << again.out;
  EXPECT_TRUE(Has(again.out, "no trial produced an objective")) << again.out;
}

// ---- --resume and --seed ---------------------------------------------------------------

TEST_F(HostileTune, ResumeRefusesTrialsAboveTheCapNamingStudyJsonLine) {
  const std::string out = BraninStudy("study");
  const std::string path = out + "/study.json";
  std::string header = ReadFile(path);
  const size_t at = header.find("\"trials\": 8");
  ASSERT_NE(at, std::string::npos) << header;
  header.replace(at, 11, "\"trials\": 30000000");
  Write("study/study.json", header);
  const std::string journal = ReadFile(out + "/trials.jsonl");
  const CmdResult r = RunCli("tune --resume " + out + " --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Has(r.out, path + ":" + std::to_string(LineOf(header, "\"trials\"")) +
                             ": 'trials' = 30000000: expected a whole number from 1 to 100000"))
      << r.out;
  EXPECT_EQ(ReadFile(out + "/trials.jsonl"), journal);
}

TEST_F(HostileTune, CorruptStudyJsonIsAClearErrorNotAnInternalOne) {
  const std::string out = BraninStudy("study");
  const std::string path = out + "/study.json";
  const std::string good = ReadFile(path);
  struct Case {
    std::string text;
    std::string fragment;
  } cases[] = {
      {good.substr(0, good.size() / 2), ": not valid JSON"},
      {std::string(good).replace(good.find("\"seed\": 2"), 9, "\"seed\": \"x\""),
       ":" + std::to_string(LineOf(good, "\"seed\"")) +
           ": 'seed' = \"x\": expected a whole number"},
      {std::string(good).replace(good.find("\"seed\": 2"), 9, "\"seed\": -1"),
       ": 'seed' = -1: expected a whole number from 0 to 18446744073709551615"},
      {std::string(good).replace(good.find("\"method\": \"random\""), 18, "\"method\": 7"),
       ": 'method' = 7: expected a string"},
      {"[1, 2]", ": '(document)' = [1,2]: expected an object"},
  };
  for (const Case& c : cases) {
    Write("study/study.json", c.text);
    const CmdResult r = RunCli("tune --resume " + out + " --quiet");
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_TRUE(Has(r.out, "error: " + path + ":")) << r.out;
    EXPECT_TRUE(Has(r.out, c.fragment)) << r.out;
    EXPECT_FALSE(Has(r.out, "internal error")) << r.out;
  }
}

TEST_F(HostileTune, CorruptJournalLinesNameTheLineAndLeaveTheJournalAsItWas) {
  const std::string out = BraninStudy("study");
  const std::string journal = out + "/trials.jsonl";
  const std::vector<std::string> lines = rlt::testing::Lines(ReadFile(journal));
  ASSERT_EQ(lines.size(), 8u);
  auto with_line2 = [&](const std::string& second) {
    std::string text;
    for (size_t i = 0; i < lines.size(); ++i) text += (i == 1 ? second : lines[i]) + "\n";
    return text;
  };
  std::string wrong_trial = lines[1];
  wrong_trial.replace(wrong_trial.find("\"trial\":1"), 9, "\"trial\":\"x\"");
  std::string wrong_objective = lines[1];
  const size_t obj = wrong_objective.find("\"objective\":");
  wrong_objective.insert(obj + 12, "\"abc\",\"was\":");
  struct Case {
    std::string line;
    std::string fragment;
  } cases[] = {
      {"{\"trial\": 1, garbage", journal + ":2:"},
      {wrong_trial, journal + ":2: 'trial' = \"x\": expected a whole number from 0 to 7"},
      {wrong_objective, journal + ":2: 'objective' = \"abc\": expected a number or null"},
      {lines[0], journal + ":2: trial 0 is journaled twice"},
  };
  for (const Case& c : cases) {
    const std::string text = with_line2(c.line);
    Write("study/trials.jsonl", text);
    const CmdResult r = RunCli("tune --resume " + out + " --quiet");
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_TRUE(Has(r.out, c.fragment)) << r.out;
    EXPECT_FALSE(Has(r.out, "internal error")) << r.out;
    EXPECT_EQ(ReadFile(journal), text) << "the journal was changed";
  }
  // A last line without its newline was cut by a kill: it is dropped and run again.
  std::string cut;
  for (const std::string& l : lines) cut += l + "\n";
  Write("study/trials.jsonl", cut + lines[7].substr(0, 20));
  const CmdResult r = RunCli("tune --resume " + out + " --quiet --json", "", "/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(ReadFile(journal), cut);
}

TEST_F(HostileTune, ArgumentsGivenWithResumeAreHonouredWhenEqualAndRefusedWhenNot) {
  const std::string out = BraninStudy("study");
  const std::string journal = ReadFile(out + "/trials.jsonl");
  const std::string space = Path("branin.toml");
  // The command line that started it, plus --resume: honoured.
  CmdResult r = RunCli("tune --objective-fn branin --space " + space +
                           " --trials 8 --seed 2 --quiet --json --resume " + out,
                       "", "/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(ReadFile(out + "/trials.jsonl"), journal);
  // Different values: refused, each named with the study's value.
  const std::string other =
      Write("other.toml", "x1 = { uniform = [-5, 9] }\nx2 = { uniform = [0, 15] }\n");
  r = RunCli("tune " + CartPole() + " --space " + other + " --trials 30000000 --resume " + out);
  EXPECT_EQ(r.exit_code, 2) << r.out;  // CLI11 refuses the trials above the cap first
  r = RunCli("tune " + CartPole() + " --space " + other + " --trials 50 --seed 3 --resume " + out);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "CONFIG " + CartPole() + " (the study's: none, --objective-fn)")) << r.out;
  EXPECT_TRUE(Has(r.out, "--space " + other + " (its text differs")) << r.out;
  EXPECT_TRUE(Has(r.out, "--trials 50 (the study's: 8)")) << r.out;
  EXPECT_TRUE(Has(r.out, "--seed 3 (the study's: 2)")) << r.out;
  EXPECT_EQ(ReadFile(out + "/trials.jsonl"), journal);
}

TEST_F(HostileTune, SeedsOutsideZeroToTwoToThe64AreRefused) {
  const std::string space =
      Write("branin.toml", "x1 = { uniform = [-5, 10] }\nx2 = { uniform = [0, 15] }\n");
  for (const char* seed : {"-1", "12345678901234567890123", "18446744073709551616", "1e3", "+4"}) {
    const CmdResult r = RunCli("tune --objective-fn branin --space " + space + " --seed " + seed +
                               " --out " + Path("study"));
    EXPECT_EQ(r.exit_code, 2) << seed << ": " << r.out;
    EXPECT_TRUE(Has(r.out, std::string("--seed ") + seed +
                               ": expected a whole number from 0 to 18446744073709551615"))
        << r.out;
    EXPECT_FALSE(fs::exists(Path("study")));
  }
  // The largest seed is valid and recorded as given.
  const CmdResult r =
      RunCli("tune --objective-fn branin --space " + space +
                 " --trials 2 --seed 18446744073709551615 --quiet --json --out " + Path("study"),
             "", "/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Has(ReadFile(Path("study/study.json")), "\"seed\": 18446744073709551615"));
}

TEST_F(HostileTune, FlagsTheStudyWouldNotUseAreRefused) {
  const std::string space =
      Write("branin.toml", "x1 = { uniform = [-5, 10] }\nx2 = { uniform = [0, 15] }\n");
  const std::string base = "tune --objective-fn branin --space " + space + " --out " + Path("s");
  for (const auto& [flags, fragment] : std::vector<std::pair<std::string, std::string>>{
           {" --eta 2", "--eta (only --method asha or --prune asha)"},
           {" --min-steps 10", "--min-steps (only --method asha or --prune asha)"},
           {" --objective sharpe_ratio", "--objective (--objective-fn is the objective)"},
           {" --set algo.n_epochs=3", "--set (--objective-fn trains nothing)"}}) {
    const CmdResult r = RunCli(base + flags);
    EXPECT_EQ(r.exit_code, 2) << flags << ": " << r.out;
    EXPECT_TRUE(Has(r.out, fragment)) << r.out;
    EXPECT_FALSE(fs::exists(Path("s")));
  }
}

}  // namespace
