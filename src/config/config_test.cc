#include "config/config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/status_test_util.h"
#include "testing/testing.h"

namespace rlt::config {
namespace {

struct AlgoOptions {
  int n_steps = 128;
  double lr = 3e-4;
  bool normalize = true;
  std::string schedule = "linear";
  std::vector<int> hidden = {64, 64};
  std::vector<double> weights;
  uint64_t seed = 1;
  template <typename V>
  void VisitFields(V& v) {
    v("n_steps", &n_steps, "rollout length per environment");
    v("lr", &lr, "learning rate");
    v("normalize", &normalize, "normalise advantages");
    v("schedule", &schedule, "learning-rate schedule", {"linear", "constant"});
    v("hidden", &hidden, "hidden layer sizes");
    v("weights", &weights, "loss weights");
    v("seed", &seed, "seed");
  }
};

Config Parse(const std::string& text) {
  Result<Config> c = Config::FromString(text, "x.toml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : Config();
}

std::string ParseError(const std::string& text) {
  Result<Config> c = Config::FromString(text, "x.toml");
  EXPECT_TRUE(IsError(c, Status::Code::kInvalidArgument, "x.toml:"));
  return c.ok() ? "" : c.status().message();
}

TEST(Config, ParsesEveryTomlTypeIntoTextAndKind) {
  Config c = Parse(
      "[data]\n"
      "symbol = \"SPY\"\n"
      "bars = 390\n"
      "cost = 5e-4\n"
      "whole = 3.0\n"
      "shorting = false\n"
      "start = 2019-01-02\n"
      "hidden = [64, 64]\n"
      "weights = [0.5, 1.25]\n"
      "names = [\"rsi\", \"macd\"]\n"
      "empty = []\n"
      "big = 1_000\n"
      "neg = -7\n");
  auto expect = [&](const std::string& key, const std::string& text, ValueKind kind) {
    const ConfigValue* v = c.Get("data", key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_EQ(v->text, text) << key;
    EXPECT_EQ(v->kind, kind) << key << " is " << KindName(v->kind);
  };
  expect("symbol", "SPY", ValueKind::kString);
  expect("bars", "390", ValueKind::kInteger);
  expect("cost", "0.0005", ValueKind::kFloat);
  expect("whole", "3", ValueKind::kFloat);
  expect("shorting", "false", ValueKind::kBool);
  expect("start", "2019-01-02", ValueKind::kString);
  expect("hidden", "[64, 64]", ValueKind::kArray);
  expect("weights", "[0.5, 1.25]", ValueKind::kArray);
  expect("names", "[rsi, macd]", ValueKind::kArray);
  expect("empty", "[]", ValueKind::kArray);
  expect("big", "1000", ValueKind::kInteger);
  expect("neg", "-7", ValueKind::kInteger);
  EXPECT_EQ(c.Get("data", "symbol")->source, "x.toml:2:1");
  EXPECT_EQ(c.Get("data", "neg")->source, "x.toml:13:1");
}

TEST(Config, KeepsSectionsAndKeysInFileOrder) {
  Config c = Parse("[run]\nzeta = 1\nalpha = 2\nmid = 3\n[algo]\nb = 1\na = 2\n[data]\n");
  EXPECT_EQ(c.SectionNames(), (std::vector<std::string>{"run", "algo", "data"}));
  EXPECT_EQ(c.Find("run")->Keys(), (std::vector<std::string>{"zeta", "alpha", "mid"}));
  EXPECT_EQ(c.Find("algo")->Keys(), (std::vector<std::string>{"b", "a"}));
  EXPECT_TRUE(c.Find("data")->entries.empty());
  EXPECT_EQ(c.Find("algo")->source, "x.toml:5:1");
  EXPECT_EQ(c.Find("nope"), nullptr);
  EXPECT_EQ(c.Get("run", "nope"), nullptr);
}

TEST(Config, SyntaxErrorsNameFileLineAndColumn) {
  const std::string m = ParseError("[run]\nseed = 3\nlr = = 0.1\n");
  // "x.toml:3:<column>: <parser message>"
  ASSERT_EQ(m.rfind("x.toml:3:", 0), 0u) << m;
  const size_t colon = m.find(':', 9);
  ASSERT_NE(colon, std::string::npos) << m;
  EXPECT_GT(std::stoi(m.substr(9, colon - 9)), 1) << m;
  EXPECT_GT(m.size(), colon + 3) << "the parser's message is missing: " << m;

  const std::string dup = ParseError("[run]\nseed = 3\nseed = 4\n");
  EXPECT_EQ(dup.rfind("x.toml:3:", 0), 0u) << dup;
}

TEST(Config, NestedTablesAreErrorsNamingTheKeyPath) {
  EXPECT_NE(ParseError("[algo]\nlr = 1\n[algo.ppo]\nclip = 0.2\n").find("'algo.ppo' is a table"),
            std::string::npos);
  const std::string dotted = ParseError("[algo]\nppo.clip = 0.2\n");
  EXPECT_NE(dotted.find("x.toml:2:1: 'algo.ppo' is a table"), std::string::npos) << dotted;
  EXPECT_NE(ParseError("[policy]\nnet = { a = 1 }\n").find("'policy.net' is a table"),
            std::string::npos);
  EXPECT_NE(ParseError("seed = 3\n[run]\n").find("x.toml:1:1: 'seed' is outside any section"),
            std::string::npos);
  EXPECT_NE(ParseError("[[run]]\nseed = 3\n").find("array of tables"), std::string::npos);
  EXPECT_NE(ParseError("[policy]\nhidden = [[1], [2]]\n").find("'policy.hidden': element 1"),
            std::string::npos);
  EXPECT_NE(ParseError("[data]\nnames = [\"a,b\"]\n").find("cannot be a list element"),
            std::string::npos);
}

TEST(Config, BindAppliesEveryKeyOntoTheOptionsStruct) {
  Config c = Parse(
      "[algo]\nn_steps = 256\nlr = 1e-3\nnormalize = false\nschedule = \"constant\"\n"
      "hidden = [128, 32]\nweights = [0.5, 2]\nseed = 99\n");
  AlgoOptions o;
  ASSERT_TRUE(c.Bind("algo", o).ok()) << c.Bind("algo", o).message();
  EXPECT_EQ(o.n_steps, 256);
  EXPECT_DOUBLE_EQ(o.lr, 1e-3);
  EXPECT_FALSE(o.normalize);
  EXPECT_EQ(o.schedule, "constant");
  EXPECT_EQ(o.hidden, (std::vector<int>{128, 32}));
  EXPECT_EQ(o.weights, (std::vector<double>{0.5, 2.0}));
  EXPECT_EQ(o.seed, 99u);
}

TEST(Config, UnsignedValuesAboveInt64AreQuotedStrings) {
  // TOML integers are 64-bit signed: an unsigned seed above 2^63-1 must be quoted.
  EXPECT_EQ(ParseError("[algo]\nseed = 18446744073709551615\n").rfind("x.toml:2:", 0), 0u);
  Config c = Parse("[algo]\nseed = \"18446744073709551615\"\n");
  AlgoOptions o;
  ASSERT_TRUE(c.Bind("algo", o).ok());
  EXPECT_EQ(o.seed, 18446744073709551615ull);
}

TEST(Config, AbsentSectionBindsNothing) {
  Config c = Parse("[run]\nseed = 1\n");
  AlgoOptions o;
  EXPECT_TRUE(c.Bind("algo", o).ok());
  EXPECT_EQ(o.n_steps, 128);
}

TEST(Config, UnknownKeysNameTheLineAndTheNearestValidKey) {
  Config c = Parse("[algo]\nlr = 0.01\nn_step = 64\nnormalise = true\n");
  AlgoOptions o;
  Status s = c.Bind("algo", o);
  ASSERT_TRUE(IsError(s, Status::Code::kInvalidArgument,
                      "x.toml:3: [algo] unknown key 'n_step'; did you mean 'n_steps'?"));
  // Every unknown key is reported, not only the first.
  EXPECT_NE(
      s.message().find("\nx.toml:4: [algo] unknown key 'normalise'; did you mean 'normalize'?"),
      std::string::npos)
      << s.message();
  EXPECT_DOUBLE_EQ(o.lr, 0.01);  // good keys still applied
}

TEST(Config, BadValuesNameTheLineKeyAndExpectedType) {
  Config c = Parse("[algo]\nn_steps = 1.5\nschedule = \"cosine\"\nhidden = [64, \"x\"]\n");
  AlgoOptions o;
  Status s = c.Bind("algo", o);
  ASSERT_TRUE(IsError(s, Status::Code::kInvalidArgument,
                      "x.toml:2: [algo] 'n_steps' = '1.5': expected an integer"));
  EXPECT_NE(s.message().find("x.toml:3: [algo] 'schedule' = 'cosine': expected one of: linear, "
                             "constant"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("x.toml:4: [algo] 'hidden' = '[64, x]': element 2"), std::string::npos)
      << s.message();
}

// `n_steps = "64"` was read as 64; a NaN or an infinity reached training.
TEST(Config, QuotedNumbersForNumberFieldsAndNonFiniteValuesAreErrors) {
  Config c = Parse("[algo]\nn_steps = \"64\"\nnormalize = \"true\"\nlr = nan\n");
  AlgoOptions o;
  Status s = c.Bind("algo", o);
  ASSERT_TRUE(IsError(
      s, Status::Code::kInvalidArgument,
      "x.toml:2: [algo] 'n_steps' = \"64\": expected a number or true/false, found a string"));
  EXPECT_NE(s.message().find("x.toml:3: [algo] 'normalize' = \"true\""), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("x.toml:4: [algo] 'lr' = 'nan': 'nan' is not a finite number"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(o.n_steps, 128);
}

TEST(Config, IgnoredKeysAreLeftToTheCaller) {
  Config c = Parse("[algo]\nid = \"ppo\"\nnum_envs = 64\nn_steps = 32\n");
  AlgoOptions o;
  EXPECT_TRUE(IsError(c.Bind("algo", o), Status::Code::kInvalidArgument,
                      "x.toml:2: [algo] unknown key 'id'"));
  ASSERT_TRUE(c.Bind("algo", o, {"id", "num_envs"}).ok());
  EXPECT_EQ(o.n_steps, 32);
  EXPECT_EQ(c.Get("algo", "num_envs")->text, "64");
}

TEST(Config, UnknownSectionsNameTheNearestKnownSection) {
  Config c = Parse("[run]\nseed = 1\n\n[polcy]\nhidden = [8]\n[algo]\n[evall]\n");
  const std::vector<std::string> known = {"run", "data", "split",  "features",
                                          "env", "algo", "policy", "eval"};
  Status s = c.CheckSections(known);
  ASSERT_TRUE(IsError(s, Status::Code::kInvalidArgument,
                      "x.toml:4: unknown section [polcy]; did you mean [policy]?"));
  EXPECT_NE(s.message().find("x.toml:7: unknown section [evall]; did you mean [eval]?"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(Parse("[run]\n[algo]\n").CheckSections(known).ok());
}

TEST(Config, OverridesReplaceOrAddKeysWithTheirSource) {
  Config c = Parse("[algo]\nn_steps = 64\nlr = 0.1\n");
  ASSERT_TRUE(c.ApplyOverride("algo.n_steps=512").ok());
  ASSERT_TRUE(c.ApplyOverride("algo.hidden=128,128").ok());       // key not in the file
  ASSERT_TRUE(c.ApplyOverride("run.seed=3").ok());                // section not in the file
  ASSERT_TRUE(c.ApplyOverride("algo.schedule=constant=x").ok());  // value taken literally
  EXPECT_EQ(c.Find("algo")->Keys(),
            (std::vector<std::string>{"n_steps", "lr", "hidden", "schedule"}));
  EXPECT_EQ(c.Get("algo", "n_steps")->text, "512");
  EXPECT_EQ(c.Get("algo", "n_steps")->source, "--set algo.n_steps=512");
  EXPECT_EQ(c.Get("algo", "schedule")->text, "constant=x");
  EXPECT_EQ(c.SectionNames(), (std::vector<std::string>{"algo", "run"}));
  EXPECT_EQ(c.Get("run", "seed")->kind, ValueKind::kInteger);

  ASSERT_TRUE(c.ApplyOverride("algo.schedule=constant").ok());
  AlgoOptions o;
  ASSERT_TRUE(c.Bind("algo", o).ok());
  EXPECT_EQ(o.n_steps, 512);
  EXPECT_EQ(o.hidden, (std::vector<int>{128, 128}));

  ASSERT_TRUE(c.ApplyOverride("algo.n_stepz=5").ok());
  Status s = c.Bind("algo", o);
  EXPECT_NE(s.message().find("--set algo.n_stepz=5: [algo] unknown key 'n_stepz'; did you mean "
                             "'n_steps'?"),
            std::string::npos)
      << s.message();
}

TEST(Config, BadOverridesSayWhatIsExpected) {
  Config c;
  const std::string expected = "expected SECTION.KEY=VALUE, e.g. --set run.seed=3";
  Status no_dot = c.ApplyOverride("seed=3");
  EXPECT_NE(no_dot.message().find("'seed' names no section; " + expected), std::string::npos)
      << no_dot.message();
  EXPECT_NE(c.ApplyOverride("run.seed").message().find(expected), std::string::npos);
  EXPECT_NE(c.ApplyOverride(".seed=3").message().find("empty section or key"), std::string::npos);
  EXPECT_NE(c.ApplyOverride("run.=3").message().find("empty section or key"), std::string::npos);
  EXPECT_NE(c.ApplyOverride("algo.ppo.clip=0.2").message().find("deeper than section.key"),
            std::string::npos);
  EXPECT_TRUE(c.SectionNames().empty());
}

// Found by fuzz/config_fuzz: `clip = -0.0` resolves (SetSection, FormatValue) to the
// text "-0", which was written back as the TOML integer -0 and read as "0".
TEST(Config, NegativeZeroSurvivesTheResolvedRoundTrip) {
  EXPECT_EQ(InferKind("-0"), ValueKind::kFloat);
  auto c = Config::FromString("[features]\nclip = -0.0\n", "x.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->Get("features", "clip")->text, "-0");
  Config resolved = *c;
  resolved.SetSectionValues("features", {{"clip", "-0"}});
  auto back = Config::FromString(resolved.ToToml(), "resolved.toml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->Get("features", "clip")->text, "-0") << resolved.ToToml();
}

TEST(Config, InferKindFollowsTheDocumentedRule) {
  EXPECT_EQ(InferKind("true"), ValueKind::kBool);
  EXPECT_EQ(InferKind("false"), ValueKind::kBool);
  EXPECT_EQ(InferKind("42"), ValueKind::kInteger);
  EXPECT_EQ(InferKind("-42"), ValueKind::kInteger);
  EXPECT_EQ(InferKind("18446744073709551615"), ValueKind::kString);
  EXPECT_EQ(InferKind("0.5"), ValueKind::kFloat);
  EXPECT_EQ(InferKind("1e-3"), ValueKind::kFloat);
  EXPECT_EQ(InferKind("[64, 64]"), ValueKind::kArray);
  EXPECT_EQ(InferKind("[64"), ValueKind::kString);
  EXPECT_EQ(InferKind("SPY"), ValueKind::kString);
  EXPECT_EQ(InferKind(""), ValueKind::kString);
}

// Every section, key and text of `a` equals those of `b`.
void ExpectSameValues(const Config& a, const Config& b) {
  ASSERT_EQ(a.SectionNames(), b.SectionNames());
  for (const auto& name : a.SectionNames()) {
    ASSERT_EQ(a.Find(name)->Keys(), b.Find(name)->Keys()) << name;
    for (const auto& [key, value] : a.Find(name)->entries) {
      EXPECT_EQ(value.text, b.Get(name, key)->text) << name << "." << key;
    }
  }
}

TEST(Config, ToTomlRoundTripsEveryValue) {
  Config c = Parse(
      "[run]\nname = \"say \\\"hi\\\"\\n\\tback\\\\slash\"\nseed = 7\n"
      "[data]\nstart = 2019-01-02\ncost = 3.0\ntiny = 1e-300\nflag = true\n"
      "names = [\"rsi\", \"macd\", \"5\"]\nhidden = [64, 64]\nmixed = [1, 2.5, true]\n"
      "empty = []\n\"odd key\" = 1\n");
  ASSERT_TRUE(c.ApplyOverride("algo.lr=1e-3").ok());
  ASSERT_TRUE(c.ApplyOverride("algo.seed=18446744073709551615").ok());
  ASSERT_TRUE(c.ApplyOverride("algo.odd=[1, 2").ok());
  const std::string toml = c.ToToml();
  Result<Config> back = Config::FromString(toml, "saved.toml");
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << toml;
  // Typed on the way out: numbers and booleans bare, strings quoted, arrays as arrays.
  EXPECT_NE(toml.find("seed = 7\n"), std::string::npos) << toml;
  EXPECT_NE(toml.find("cost = 3.0\n"), std::string::npos) << toml;
  EXPECT_NE(toml.find("flag = true\n"), std::string::npos) << toml;
  EXPECT_NE(toml.find("names = [\"rsi\", \"macd\", 5]\n"), std::string::npos) << toml;
  EXPECT_NE(toml.find("hidden = [64, 64]\n"), std::string::npos) << toml;
  EXPECT_NE(toml.find("seed = \"18446744073709551615\"\n"), std::string::npos) << toml;
  EXPECT_NE(toml.find("\"odd key\" = 1\n"), std::string::npos) << toml;
  EXPECT_EQ(back->Get("data", "cost")->kind, ValueKind::kFloat);
  EXPECT_EQ(back->Get("data", "hidden")->kind, ValueKind::kArray);
  EXPECT_EQ(back->Get("run", "name")->text, "say \"hi\"\n\tback\\slash");
  EXPECT_EQ(back->Get("algo", "lr")->text, "0.001");  // the value, not the spelling
  c.Set("algo", "lr", "0.001", "test");
  ExpectSameValues(c, *back);
}

TEST(Config, SetSectionWritesEveryEffectiveValueForTheResolvedConfig) {
  Config c = Parse("[algo]\nid = \"ppo\"\nn_steps = 256\n[run]\nseed = 3\n");
  AlgoOptions o;
  ASSERT_TRUE(c.Bind("algo", o, {"id"}).ok());
  c.SetSection("algo", o);
  const Section* algo = c.Find("algo");
  EXPECT_EQ(algo->Keys(), (std::vector<std::string>{"id", "n_steps", "lr", "normalize", "schedule",
                                                    "hidden", "weights", "seed"}));
  EXPECT_EQ(algo->Find("id")->source, "x.toml:2:1");  // handled by the caller, kept
  EXPECT_EQ(algo->Find("n_steps")->text, "256");
  EXPECT_EQ(algo->Find("n_steps")->source, "resolved");
  EXPECT_EQ(algo->Find("lr")->text, "0.0003");
  EXPECT_EQ(algo->Find("lr")->kind, ValueKind::kFloat);
  EXPECT_EQ(algo->Find("normalize")->kind, ValueKind::kBool);
  EXPECT_EQ(algo->Find("hidden")->text, "[64, 64]");
  EXPECT_EQ(algo->Find("weights")->text, "[]");
  c.SetSection("policy", o);  // a section that was not in the file
  EXPECT_EQ(c.SectionNames(), (std::vector<std::string>{"algo", "run", "policy"}));

  // The saved config reads back into the same options.
  Result<Config> back = Config::FromString(c.ToToml(), "resolved.toml");
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << c.ToToml();
  ExpectSameValues(c, *back);
  AlgoOptions p;
  p.n_steps = 1;
  p.hidden = {1, 2, 3};
  p.weights = {9};
  ASSERT_TRUE(back->Bind("algo", p, {"id"}).ok());
  EXPECT_EQ(p.n_steps, o.n_steps);
  EXPECT_EQ(p.lr, o.lr);
  EXPECT_EQ(p.hidden, o.hidden);
  EXPECT_TRUE(p.weights.empty());
}

TEST(Config, LoadFileReadsAFileAndNamesItInSources) {
  const rlt::testing::ScratchDir scratch("rlt_config_test_");
  const std::string path = scratch / "load.toml";
  {
    std::ofstream out(path);
    out << "# a comment\n[algo]\n\nn_step = 3\n";
  }
  Result<Config> c = Config::LoadFile(path);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->Get("algo", "n_step")->source, path + ":4:1");
  AlgoOptions o;
  EXPECT_EQ(c->Bind("algo", o).message(),
            path + ":4: [algo] unknown key 'n_step'; did you mean 'n_steps'?");
  std::remove(path.c_str());

  Result<Config> missing = Config::LoadFile(path);
  ASSERT_TRUE(IsError(missing, Status::Code::kNotFound, path));
}

TEST(Config, MessagePlaceDropsOnlyTheColumn) {
  EXPECT_EQ(MessagePlace("configs/x.toml:12:1"), "configs/x.toml:12");
  EXPECT_EQ(MessagePlace("--set a.b=c:1:2"), "--set a.b=c:1:2");
  EXPECT_EQ(MessagePlace("resolved"), "resolved");
  EXPECT_EQ(MessagePlace("x:y:1"), "x:y:1");
}

// A FilePath key of a config file is relative to that file's directory; one of `--set` to
// the current directory; absolute paths, keywords and other keys are left as written.
struct PathsOptions {
  FilePath file;
  FilePath underlying = "synthetic";
  std::string name;
  template <typename V>
  void VisitFields(V& v) {
    v("file", &file, "a file");
    v("underlying", &underlying, "synthetic or a file", {"synthetic"});
    v("name", &name, "not a path");
  }
};

TEST(Config, RelativePathsResolveAgainstTheConfigFilesDirectory) {
  const std::filesystem::path dir = rlt::testing::NewScratchDir("rlt_config_paths_");
  std::filesystem::create_directories(dir / "configs");
  const std::string path = (dir / "configs" / "run.toml").string();
  rlt::testing::WriteFile(path,
                          "[data]\nfile = \"../data/bars.csv\"\nunderlying = \"synthetic\"\n"
                          "name = \"x/y\"\n[env]\nfile = \"kept.csv\"\n");
  Result<Config> c = Config::LoadFile(path);
  ASSERT_TRUE(c.ok()) << c.status().message();
  c->ResolvePaths("data", PathOptions(PathsOptions()));
  EXPECT_EQ(c->Get("data", "file")->text, (dir / "data" / "bars.csv").string());
  EXPECT_EQ(c->Get("data", "underlying")->text, "synthetic");  // a keyword
  EXPECT_EQ(c->Get("data", "name")->text, "x/y");              // not a path key
  EXPECT_EQ(c->Get("env", "file")->text, "kept.csv");          // another section
  // The source still names the file and line.
  EXPECT_EQ(c->Get("data", "file")->source, path + ":2:1");

  ASSERT_TRUE(c->ApplyOverride("data.underlying=spx.csv").ok());
  ASSERT_TRUE(c->ApplyOverride("data.file=/abs/bars.csv").ok());
  c->ResolvePaths("data", PathOptions(PathsOptions()));
  EXPECT_EQ(c->Get("data", "underlying")->text,
            (std::filesystem::current_path() / "spx.csv").string());
  EXPECT_EQ(c->Get("data", "file")->text, "/abs/bars.csv");
  // Resolving again changes nothing (every path is absolute now).
  const std::string toml = c->ToToml();
  c->ResolvePaths("data", PathOptions(PathsOptions()));
  EXPECT_EQ(c->ToToml(), toml);
  std::filesystem::remove_all(dir);
}

TEST(Config, PathOptionsListFilePathFieldsWithTheirKeywords) {
  const auto paths = PathOptions(PathsOptions());
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0].first, "file");
  EXPECT_TRUE(paths[0].second.empty());
  EXPECT_EQ(paths[1].first, "underlying");
  EXPECT_EQ(paths[1].second, std::vector<std::string>{"synthetic"});
  // A path field's keywords are not its only values, and its type is documented as a path.
  PathsOptions o;
  EXPECT_TRUE(SetOption(o, "underlying", "data/spx.csv").ok());
  EXPECT_EQ(o.underlying, "data/spx.csv");
  EXPECT_EQ(DocumentOptions(o)[0].type, "path");
}

}  // namespace
}  // namespace rlt::config
