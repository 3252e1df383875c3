// Tests of rltrade tune's parts: the Sobol sequence against SciPy's Joe-Kuo points
// (tests/fixtures/sobol), its scrambled version's stratification, search spaces and their
// errors, the search methods on Branin's function (known minimum), and the study journal
// (resume replays it without running a finished trial again).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/status_test_util.h"
#include "tune/json_file.h"
#include "tune/objectives.h"
#include "tune/search.h"
#include "tune/sobol.h"
#include "tune/space.h"
#include "tune/study.h"

namespace rlt::tune {
namespace {

TEST(Sobol, UnscrambledPointsEqualSciPysJoeKuoSequence) {
  std::ifstream in(std::string(RLT_SOURCE_DIR) + "/tests/fixtures/sobol/sobol_joe_kuo.csv");
  ASSERT_TRUE(in) << "tests/fixtures/sobol/sobol_joe_kuo.csv";
  std::string line;
  std::getline(in, line);  // provenance comment
  std::getline(in, line);  // header
  Sobol sobol(kMaxSobolDims, false, 0);
  int rows = 0;
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::string field;
    const std::vector<double> p = sobol.Point(rows);
    for (int j = 0; j < kMaxSobolDims; ++j) {
      ASSERT_TRUE(std::getline(fields, field, ','));
      EXPECT_EQ(p[j], std::stod(field)) << "point " << rows << " dimension " << j + 1;
    }
    ++rows;
  }
  EXPECT_EQ(rows, 64);
  // The textbook start of dimension 2: 0, 1/2, 1/4, 3/4, 3/8, 7/8, 1/8, 5/8 (Gray order).
  const double dim2[] = {0, 0.5, 0.25, 0.75, 0.375, 0.875, 0.125, 0.625};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(sobol.Point(i)[1], dim2[i]) << i;
}

TEST(Sobol, ScrambledBlocksStayStratifiedAndDifferBySeed) {
  for (uint64_t seed : {1, 2}) {
    Sobol sobol(6, true, seed);
    for (int j = 0; j < 6; ++j) {
      std::set<int> cells;
      for (int i = 0; i < 256; ++i) cells.insert(static_cast<int>(sobol.Point(i)[j] * 256));
      EXPECT_EQ(cells.size(), 256u) << "dimension " << j << ": one point per 1/256 cell";
    }
    // Two dimensions together: every 1/16 x 1/16 square of the first 256 points once.
    std::set<int> squares;
    for (int i = 0; i < 256; ++i) {
      const auto p = sobol.Point(i);
      squares.insert(static_cast<int>(p[0] * 16) * 16 + static_cast<int>(p[1] * 16));
    }
    EXPECT_EQ(squares.size(), 256u);
  }
  EXPECT_NE(Sobol(3, true, 1).Point(5), Sobol(3, true, 2).Point(5));
}

TEST(Space, ParsesEveryDistributionAndMapsTheUnitCube) {
  auto s = ParseSpace(
      "\"algo.learning_rate\" = { log_uniform = [1e-5, 1e-3] }\n"
      "\"algo.gae_lambda\" = { uniform = [0.8, 0.99] }\n"
      "\"algo.n_epochs\" = { int = [3, 20] }\n"
      "\"algo.batch_size\" = { choice = [128, 256, 512] }\n"
      "\"policy.activation\" = { choice = [\"tanh\", \"relu\"] }\n",
      "space.toml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->dims(), 5);
  const auto& p = s->params;
  EXPECT_EQ(p[0].key, "algo.learning_rate");
  EXPECT_NEAR(ValueNumber(p[0], 0.5), 1e-4, 1e-12);  // the geometric midpoint
  EXPECT_EQ(ValueText(p[1], 0.0), "0.8");
  EXPECT_EQ(ValueText(p[2], 0.0), "3");
  EXPECT_EQ(ValueText(p[2], 0.999999), "20");
  EXPECT_EQ(ValueText(p[3], 0.5), "256");
  EXPECT_EQ(ValueText(p[4], 0.9), "relu");
}

TEST(Space, ErrorsNameTheFileLineKeyAndRule) {
  const std::pair<const char*, const char*> cases[] = {
      {"x1 = { uniform = [1, 0] }", "space.toml:1: 'x1': uniform needs finite low < high"},
      {"x1 = { log_uniform = [0, 1] }", "log_uniform needs low > 0"},
      {"x1 = { normal = [0, 1] }", "unknown distribution 'normal'"},
      {"x1 = { int = [0.5, 3] }", "whole-number bounds"},
      {"x1 = 3", "expected one of { uniform"},
      {"\n\nx1 = { choice = [] }", "space.toml:3: 'x1': choice lists no value"},
      {"x1 = { choice = [64, 128, 64] }", "space.toml:1: 'x1': choice lists 64 twice"},
      {"x1 = { uniform = [0, 1 }", "space.toml:1:"},
      {"", "names no parameter"},
  };
  for (const auto& [text, fragment] : cases) {
    auto s = ParseSpace(text, "space.toml");
    ASSERT_TRUE(IsError(s, Status::Code::kRefused, fragment)) << text;
  }
}

TEST(Space, BoundsBeyondWhatASampledValueHoldsAreRefused) {
  const std::pair<const char*, const char*> cases[] = {
      // 1e30 sampled and cast to a 64-bit integer was -9223372036854775808.
      {"x1 = { int = [1, 1e30] }", "space.toml:1: 'x1': int [1, 1e+30]: bounds must lie within"},
      {"x1 = { int = [-9007199254740994, 0] }", "bounds must lie within"},
      {"x1 = { uniform = [-1e308, 1e308] }", "the width high - low overflows a double"},
      {"algo.lr = { uniform = [0.1, 0.2] }", "a dotted key must be quoted"},
  };
  for (const auto& [text, fragment] : cases) {
    auto s = ParseSpace(text, "space.toml");
    ASSERT_TRUE(IsError(s, Status::Code::kRefused, fragment)) << text;
  }
  // Up to 2^53 every whole number is held exactly: the ends map to themselves.
  auto edge = ParseSpace("x1 = { int = [9007199254740982, 9007199254740992] }", "space.toml");
  ASSERT_TRUE(edge.ok()) << edge.status().message();
  EXPECT_EQ(ValueText(edge->params[0], 0.0), "9007199254740982");
  EXPECT_EQ(ValueText(edge->params[0], 1.0), "9007199254740992");
  auto low = ParseSpace("x1 = { int = [-9007199254740992, -9007199254740990] }", "space.toml");
  ASSERT_TRUE(low.ok()) << low.status().message();
  EXPECT_EQ(ValueText(low->params[0], 0.0), "-9007199254740992");
}

TEST(JsonDoc, NamesTheLineOfEachKeyAndWhatIsWrong) {
  const std::string text =
      "{\n  \"a\": 1,\n  \"b\": {\n    \"c\": \"x\",\n    \"d\": [1,\n      -2]\n  }\n}\n";
  auto doc = JsonDoc::Parse(text, "f.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ(doc->Place("/a"), "f.json:2");
  EXPECT_EQ(doc->Place("/b/c"), "f.json:4");
  EXPECT_EQ(doc->Place("/b/d/1"), "f.json:6");      // an array element's own line
  EXPECT_EQ(doc->Place("/b/missing"), "f.json:3");  // its parent's
  EXPECT_EQ(doc->Int("/a", 0, 5).value(), 1);
  const auto bad_int = doc->Int("/b/c", 0, 5);
  ASSERT_TRUE(IsError(bad_int, Status::Code::kDataError, "f.json:4: 'b.c'"));
  EXPECT_EQ(bad_int.status().message(),
            "f.json:4: 'b.c' = \"x\": expected a whole number from 0 to 5");
  EXPECT_NE(doc->Int("/a", 2, 5).status().message().find("expected a whole number from 2 to 5"),
            std::string::npos);
  EXPECT_NE(doc->Ints("/b/d", 0, 5).status().message().find("f.json:6: 'b.d.1' = -2"),
            std::string::npos);
  EXPECT_NE(doc->Uint64("/b/d/1").status().message().find("expected a whole number from 0 to"),
            std::string::npos);
  EXPECT_NE(doc->String("/nope").status().message().find("f.json:1: 'nope' is missing"),
            std::string::npos);
  // A journal line: its lines count from the file's line, and a syntax error names
  // line:column.
  auto line = JsonDoc::Parse("{\"trial\": \"x\"}", "t.jsonl", 7);
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line->Place("/trial"), "t.jsonl:7");
  auto broken = JsonDoc::Parse("{\n  \"a\": 1,\n  \"b\" 2\n}", "f.json");
  ASSERT_TRUE(IsError(broken, Status::Code::kDataError, "f.json:3:7: not valid JSON"));
  EXPECT_EQ(broken.status().message().rfind("f.json:3:7: not valid JSON", 0), 0u)
      << broken.status().message();
}

Space BraninSpace() {
  return ParseSpace("x1 = { uniform = [-5, 10] }\nx2 = { uniform = [0, 15] }\n", "branin.toml")
      .value();
}

double BestOf(const std::string& method, const Space& space, int evals, uint64_t seed) {
  auto search = MakeSearch(method, space, evals, seed);
  RLT_CHECK(search.ok());
  double best = INFINITY;
  for (int i = 0; i < evals; ++i) {
    const auto u = (*search)->Propose();
    const double f = EvaluateObjective("branin", space, u);
    best = std::min(best, f);
    (*search)->Tell(-f);
  }
  return best;
}

TEST(Search, BraninsKnownMinimumAndTheObjectiveFunctions) {
  constexpr double pi = 3.14159265358979323846;
  EXPECT_NEAR(Branin(-pi, 12.275), kBraninMinimum, 1e-6);
  EXPECT_NEAR(Branin(pi, 2.275), kBraninMinimum, 1e-6);
  EXPECT_NEAR(Branin(9.42478, 2.475), kBraninMinimum, 1e-6);
  EXPECT_EQ(Rosenbrock({1, 1, 1}), 0.0);
  EXPECT_EQ(Rosenbrock({0, 0}), 1.0);
}

TEST(Search, AnnealingReachesBraninsMinimumIn128Evaluations) {
  // Over 40 seeds: most runs end within 0.05 of the minimum, none far from it.
  const Space space = BraninSpace();
  int hits = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const double best = BestOf("anneal", space, 128, seed);
    hits += best < kBraninMinimum + 0.05;
    EXPECT_LT(best, kBraninMinimum + 1.0) << "seed " << seed;
  }
  EXPECT_GE(hits, 28) << "of 40";  // measured: 81.5% of 200 seeds
}

TEST(Search, RandomAndSobolFindBraninsMinimumAsOftenAsUniformSamplingPredicts) {
  // Within 0.05 of the minimum lies a fraction p of the domain; the best of 128 uniform
  // points is within it with probability 1 - (1 - p)^128. p is measured here by an
  // independent Monte Carlo over the domain; the methods' hit rates over 200 studies must
  // agree with it (Sobol's points are uniform too).
  Rng rng(12345);
  int64_t inside = 0;
  const int64_t samples = 2000000;
  for (int64_t k = 0; k < samples; ++k) {
    inside += Branin(rng.Uniform(-5, 10), rng.Uniform(0, 15)) < kBraninMinimum + 0.05;
  }
  const double p = static_cast<double>(inside) / samples;
  const double expected = 1 - std::pow(1 - p, 128);
  const Space space = BraninSpace();
  for (const char* method : {"random", "sobol"}) {
    int hits = 0;
    for (uint64_t seed = 0; seed < 200; ++seed)
      hits += BestOf(method, space, 128, seed) < kBraninMinimum + 0.05;
    const double sd = std::sqrt(200 * expected * (1 - expected));
    EXPECT_NEAR(hits, 200 * expected, 4 * sd) << method << ": p = " << p;
    // And the search is useful: the median best is far below the domain's median value.
    EXPECT_LT(BestOf(method, space, 128, 7), 5.0) << method;
  }
}

TEST(Study, AResumedStudyReplaysItsJournalAndRunsNoTrialTwice) {
  const Space space = BraninSpace();
  const std::string dir = ::testing::TempDir() + "/study_resume";
  std::filesystem::remove_all(dir);
  int calls = 0;
  TrialFn fn = [&](const TrialJob& job) {
    ++calls;
    TrialResult t;
    t.objective = Branin(std::stod(job.params[0].second), std::stod(job.params[1].second));
    return t;
  };
  StudyOptions o;
  o.out_dir = dir + "/straight";
  o.method = "anneal";
  o.trials = 20;
  o.seed = 3;
  o.objective = "f";
  o.minimize = true;
  o.quiet = true;
  auto straight = RunStudy(space, o, fn);
  ASSERT_TRUE(straight.ok()) << straight.status().message();
  EXPECT_EQ(calls, 20);
  // A study killed after 8 trials, the ninth line half written.
  StudyOptions k = o;
  k.out_dir = dir + "/killed";
  k.trials = 20;
  std::filesystem::create_directories(k.out_dir);
  std::filesystem::copy_file(o.out_dir + "/study.json", k.out_dir + "/study.json");
  {
    std::ifstream in(o.out_dir + "/trials.jsonl");
    std::ofstream out(k.out_dir + "/trials.jsonl");
    std::string line;
    for (int i = 0; i < 8 && std::getline(in, line); ++i) out << line << "\n";
    std::getline(in, line);
    out << line.substr(0, line.size() / 2);
  }
  calls = 0;
  k.resume = true;
  auto resumed = RunStudy(space, k, fn);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(calls, 12);  // trials 8..19 only
  EXPECT_EQ(resumed->best_objective, straight->best_objective);
  EXPECT_EQ(resumed->best_params, straight->best_params);
  // Another study's arguments are refused; an existing OUT is not overwritten.
  StudyOptions other = k;
  other.seed = 4;
  EXPECT_TRUE(
      IsError(RunStudy(space, other, fn), Status::Code::kRefused, "describes another study"));
  StudyOptions again = o;
  const auto exists = RunStudy(space, again, fn);
  ASSERT_TRUE(IsError(exists, Status::Code::kRefused, "exists already"));
  EXPECT_NE(exists.status().message().find("--resume"), std::string::npos);
}

TEST(Study, RejectedTrialsAreRecordedWithTheirReasonAndDoNotStopTheStudy) {
  const Space space = BraninSpace();
  StudyOptions o;
  o.out_dir = ::testing::TempDir() + "/study_rejected";
  std::filesystem::remove_all(o.out_dir);
  o.trials = 6;
  o.objective = "f";
  o.minimize = true;
  o.quiet = true;
  auto r = RunStudy(space, o, [](const TrialJob& job) {
    TrialResult t;
    if (job.trial % 2 == 1) {
      t.status = "rejected";
      t.reason = "batch_size does not divide n_steps * num_envs";
      return t;
    }
    t.objective = Branin(std::stod(job.params[0].second), std::stod(job.params[1].second));
    return t;
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->trials, 6);
  EXPECT_EQ(r->ok, 3);
  std::ifstream in(o.out_dir + "/results.csv");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("rejected"), std::string::npos);
  EXPECT_NE(text.find("batch_size does not divide"), std::string::npos);
}

TEST(Study, ABadJournalLineIsAnErrorNamingItAndTheJournalIsLeftAsItWas) {
  const Space space = BraninSpace();
  StudyOptions o;
  o.out_dir = ::testing::TempDir() + "/study_bad_journal";
  std::filesystem::remove_all(o.out_dir);
  o.trials = 4;
  o.objective = "f";
  o.minimize = true;
  o.quiet = true;
  int calls = 0;
  const TrialFn fn = [&](const TrialJob& job) {
    ++calls;
    TrialResult t;
    t.objective = Branin(std::stod(job.params[0].second), std::stod(job.params[1].second));
    return t;
  };
  ASSERT_TRUE(RunStudy(space, o, fn).ok());
  const std::string journal = o.out_dir + "/trials.jsonl";
  std::ifstream in(journal);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);
  o.resume = true;
  const std::pair<std::string, std::string> cases[] = {
      {"not json", ":2:"},
      {"{\"trial\": 1}", ":2: 'rung' is missing: expected a whole number from 0 to 0"},
      {"[]", ":2: '(document)' = []: expected an object"},
  };
  for (const auto& [second, fragment] : cases) {
    const std::string text = lines[0] + "\n" + second + "\n" + lines[2] + "\n";
    std::ofstream(journal, std::ios::trunc) << text;
    calls = 0;
    const auto r = RunStudy(space, o, fn);
    ASSERT_TRUE(IsError(r, Status::Code::kDataError, journal + fragment)) << second;
    EXPECT_EQ(calls, 0);
    std::ifstream again(journal);
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), {}), text);
  }
  // More lines than the study has trials.
  std::string text;
  for (int i = 0; i < 5; ++i) text += lines[std::min(i, 3)] + "\n";
  std::ofstream(journal, std::ios::trunc) << text;
  const auto extra = RunStudy(space, o, fn);
  ASSERT_TRUE(IsError(extra, Status::Code::kDataError, journal + ":5: the study has 4 trials"));
  // study.json with trials above the cap: refused by the field check, naming its line.
  auto header = ReadStudyHeader(o.out_dir);
  ASSERT_TRUE(header.ok());
  const auto fields = StudyOptionsFromHeader(header.value());
  ASSERT_TRUE(fields.ok()) << fields.status().message();
  EXPECT_EQ(fields->trials, 4);
  StudyOptions big = o;
  big.trials = kMaxTrials + 1;
  EXPECT_EQ(RunStudy(space, big, fn).status().code(), Status::Code::kRefused);
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(Study, AshaClimbsRungsWithGrowingBudgetsAndResumesFromItsJournal) {
  const Space space = BraninSpace();
  const std::string dir = ::testing::TempDir() + "/study_asha";
  std::filesystem::remove_all(dir);
  // A budget-dependent objective: Branin plus an error that shrinks with the steps.
  std::vector<TrialJob> jobs;
  TrialFn fn = [&](const TrialJob& job) {
    jobs.push_back(job);
    TrialResult t;
    t.steps = job.steps;
    t.objective = Branin(std::stod(job.params[0].second), std::stod(job.params[1].second)) +
                  10.0 / static_cast<double>(job.steps);
    return t;
  };
  StudyOptions o;
  o.out_dir = dir + "/straight";
  o.method = "asha";
  o.trials = 27;
  o.eta = 3;
  o.rung_steps = {1, 3, 9, 27};
  o.seed = 5;
  o.objective = "f";
  o.minimize = true;
  o.quiet = true;
  auto straight = RunStudy(space, o, fn);
  ASSERT_TRUE(straight.ok()) << straight.status().message();
  // Every job trains to its rung's budget, and climbs from the rung below it.
  std::vector<std::set<int>> rung_trials(4);
  for (const TrialJob& job : jobs) {
    EXPECT_EQ(job.steps, o.rung_steps[job.rung]);
    if (job.rung > 0) {
      EXPECT_EQ(rung_trials[job.rung - 1].count(job.trial), 1u) << job.trial;
    }
    EXPECT_TRUE(rung_trials[job.rung].insert(job.trial).second) << "a rung ran twice";
  }
  EXPECT_EQ(rung_trials[0].size(), 27u);
  EXPECT_GE(rung_trials[1].size(), 9u);  // at least the top third of each rung climbs
  EXPECT_GE(rung_trials[2].size(), 3u);
  EXPECT_GE(rung_trials[3].size(), 1u);
  EXPECT_EQ(straight->best_rung, 3);  // the best is taken at the full budget
  EXPECT_EQ(straight->trials, 27);
  // The same points as the random method's trials.
  StudyOptions r = o;
  r.method = "random";
  r.out_dir = dir + "/random";
  std::vector<TrialJob> random_jobs;
  ASSERT_TRUE(RunStudy(space, r, [&](const TrialJob& job) {
                random_jobs.push_back(job);
                return TrialResult{};
              }).ok());
  for (const TrialJob& job : jobs) EXPECT_EQ(job.params, random_jobs[job.trial].params);
  // Killed after 20 finished rungs (the 21st line half written): the resumed study runs
  // only the rest and writes the same journal as the uninterrupted one.
  const std::vector<std::string> full = Lines(o.out_dir + "/trials.jsonl");
  ASSERT_EQ(full.size(), jobs.size());
  StudyOptions k = o;
  k.out_dir = dir + "/killed";
  std::filesystem::create_directories(k.out_dir);
  std::filesystem::copy_file(o.out_dir + "/study.json", k.out_dir + "/study.json");
  {
    std::ofstream out(k.out_dir + "/trials.jsonl");
    for (int i = 0; i < 20; ++i) out << full[i] << "\n";
    out << full[20].substr(0, full[20].size() / 2);
  }
  jobs.clear();
  k.resume = true;
  auto resumed = RunStudy(space, k, fn);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(jobs.size(), full.size() - 20);
  // The half line was cut off before the resumed study appended.
  const std::vector<std::string> after = Lines(k.out_dir + "/trials.jsonl");
  auto without_timing = [](const std::string& line) {
    nlohmann::json j = nlohmann::json::parse(line);
    j.erase("seconds");
    return j;
  };
  ASSERT_EQ(after.size(), full.size());
  for (size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(without_timing(after[i]), without_timing(full[i])) << "line " << i + 1;
  }
  EXPECT_EQ(resumed->best_objective, straight->best_objective);
}

}  // namespace
}  // namespace rlt::tune
