// Tests that a run's config.toml records every effective value: every field
// of every options struct a run binds — [run], [algo], [policy], [data], [features] and
// the [env] options of each registered environment — read from the structs' VisitFields,
// so a field added later is covered without touching this test. And that a run written
// before these keys were recorded still resumes (a missing key reads as its default).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/status_test_util.h"
#include "env/envs/cartpole.h"
#include "env/envs/delta_hedging.h"
#include "env/envs/example.h"
#include "env/envs/intraday.h"
#include "env/envs/memory_cue.h"
#include "env/envs/options_portfolio.h"
#include "env/envs/pendulum.h"
#include "env/registry.h"
#include "learn/policy.h"
#include "learn/ppo.h"
#include "runlog/manifest.h"
#include "testing/testing.h"
#include "train/train.h"
#include "train/train_options.h"

namespace rlt::train {
namespace {

namespace fs = std::filesystem;

// The field names an options struct lists in VisitFields.
struct NameCollector {
  std::vector<std::string> names;
  template <typename T>
  void operator()(const char* name, T*, const char*, std::initializer_list<const char*> = {}) {
    names.emplace_back(name);
  }
};
template <typename Options>
std::vector<std::string> FieldsOf() {
  Options options;
  NameCollector c;
  options.VisitFields(c);
  return c.names;
}

// The options struct of each registered environment id. An environment added to the
// registry without a line here fails EveryRegisteredEnvironmentHasItsOptionsListedHere.
const std::map<std::string, std::function<std::vector<std::string>()>>& EnvFields() {
  static const std::map<std::string, std::function<std::vector<std::string>()>> kFields = {
      {"intraday", FieldsOf<env::IntradayOptions>},
      {"cartpole", FieldsOf<env::CartPoleOptions>},
      {"pendulum", FieldsOf<env::PendulumOptions>},
      {"example", FieldsOf<env::ExampleOptions>},
      {"memory_cue", FieldsOf<env::MemoryCueOptions>},
      {"hedging", FieldsOf<env::HedgingOptions>},
      {"options", FieldsOf<env::OptionsPortfolioOptions>},
  };
  return kFields;
}

// A tiny config of environment `id`: only what the id needs, everything else default.
std::string TinyConfig(const std::string& id, bool market) {
  std::string text =
      "[run]\ntotal_steps = 128\nthreads = 1\n[algo]\nn_steps = 64\nbatch_size = 64\n"
      "n_epochs = 1\n[env]\nid = \"" +
      id + "\"\nnum_envs = 2\n";
  if (market) {
    text +=
        "[data]\nsource = \"synthetic\"\ndays = 30\n[split]\ntrain = "
        "\"2023-01-02:2023-01-31\"\ntest = \"2023-02-01:2023-02-10\"\n";
  }
  return text;
}

class ResolvedConfig : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = rlt::testing::NewScratchDir("rlt_resolved_config_"); }
  void TearDown() override { fs::remove_all(dir_); }
  // Trains a tiny run of `id` into dir_/<id> and returns its config.toml.
  config::Config Train(const std::string& id, bool market) {
    const fs::path cfg = dir_ / (id + ".toml");
    std::ofstream(cfg) << TinyConfig(id, market);
    TrainRequest req;
    req.config_path = cfg.string();
    req.run_dir = (dir_ / id).string();
    req.quiet = true;
    auto out = RunTraining(req);
    EXPECT_TRUE(out.ok()) << id << ": " << out.status().ToString();
    auto config = config::Config::LoadFile((dir_ / id / "config.toml").string());
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    return config.ok() ? *config : config::Config();
  }
  static void ExpectEveryField(const config::Config& config, const std::string& section,
                               const std::vector<std::string>& fields,
                               const std::vector<std::string>& except = {}) {
    ASSERT_FALSE(fields.empty()) << section;
    for (const std::string& f : fields) {
      if (std::find(except.begin(), except.end(), f) != except.end()) continue;
      EXPECT_NE(config.Get(section, f), nullptr)
          << "config.toml has no [" << section << "] " << f << "\n"
          << config.ToToml();
    }
  }
  fs::path dir_;
};

TEST_F(ResolvedConfig, EveryRegisteredEnvironmentHasItsOptionsListedHere) {
  for (const env::EnvEntry& e : env::EnvRegistry()) {
    EXPECT_EQ(EnvFields().count(e.id), 1u) << "add " << e.id << "'s options struct to EnvFields()";
  }
}

TEST_F(ResolvedConfig, AMarketRunRecordsEveryFieldOfEveryOptionsStruct) {
  const config::Config config = Train("intraday", /*market=*/true);
  ExpectEveryField(config, "run", FieldsOf<RunOptions>());
  ExpectEveryField(config, "data", FieldsOf<DataOptions>());
  ExpectEveryField(config, "features", FieldsOf<FeatureOptions>());
  // The run length lives in [run] total_steps ([algo] total_timesteps is refused).
  ExpectEveryField(config, "algo", FieldsOf<learn::PpoOptions>(), {"total_timesteps"});
  ExpectEveryField(config, "policy", FieldsOf<learn::PolicyOptions>());
  ExpectEveryField(config, "env", EnvFields().at("intraday")());
  // Keys a saved config once lacked, with their defaults.
  ASSERT_NE(config.Get("env", "fill"), nullptr);
  EXPECT_EQ(config.Get("env", "fill")->text, "next_open");
  ASSERT_NE(config.Get("env", "nlags"), nullptr);
  EXPECT_EQ(config.Get("env", "nlags")->text, "5");
  ASSERT_NE(config.Get("env", "initial_capital"), nullptr);
  EXPECT_DOUBLE_EQ(std::stod(config.Get("env", "initial_capital")->text), 100000.0);
}

TEST_F(ResolvedConfig, EveryEpisodicEnvironmentRecordsEveryEnvOption) {
  for (const env::EnvEntry& e : env::EnvRegistry()) {
    if (e.needs_market_data) continue;
    SCOPED_TRACE(e.id);
    const config::Config config = Train(e.id, /*market=*/false);
    ExpectEveryField(config, "run", FieldsOf<RunOptions>());
    ExpectEveryField(config, "policy", FieldsOf<learn::PolicyOptions>());
    ExpectEveryField(config, "env", EnvFields().at(e.id)());
  }
}

// The run's config.toml without the given "section.key" lines and without data.json,
// MANIFEST rewritten: a run as an older rltrade wrote it.
void StripKeys(const fs::path& run, const std::map<std::string, std::vector<std::string>>& keys) {
  std::ifstream in(run / "config.toml");
  std::stringstream kept;
  std::string line, section;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '[') section = line.substr(1, line.find(']') - 1);
    bool drop = false;
    const auto it = keys.find(section);
    for (size_t i = 0; it != keys.end() && i < it->second.size(); ++i) {
      drop |= line.rfind(it->second[i] + " =", 0) == 0;
    }
    if (!drop) kept << line << "\n";
  }
  in.close();
  std::ofstream(run / "config.toml") << kept.str();
  fs::remove(run / "data.json");
  std::vector<std::string> present;
  for (const char* f : {"config.toml", "normalizer.json", "training_ranges.json"}) {
    if (fs::exists(run / f)) present.push_back(f);
  }
  ASSERT_TRUE(runlog::WriteManifestOf(run.string(), present).ok());
}

TEST_F(ResolvedConfig, ARunWithoutTheNewKeysStillResumes) {
  Train("intraday", /*market=*/true);
  const fs::path run = dir_ / "intraday";
  StripKeys(run, {{"env", {"fill", "initial_capital", "nlags", "lot_size", "reward"}},
                  {"run", {"seeds"}}});
  const std::string stripped = rlt::testing::ReadFile((run / "config.toml").string());
  ASSERT_EQ(stripped.find("fill ="), std::string::npos) << stripped;
  TrainRequest more;
  more.resume_dir = run.string();
  more.overrides = {"run.total_steps=256"};
  more.quiet = true;
  auto out = RunTraining(more);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->total_steps, 256);
}

TEST_F(ResolvedConfig, AResumeThatChangesAnEnvValueIsStillRefused) {
  Train("intraday", /*market=*/true);
  TrainRequest more;
  more.resume_dir = (dir_ / "intraday").string();
  more.overrides = {"run.total_steps=256", "env.fill=next_typical"};
  more.quiet = true;
  auto out = RunTraining(more);
  ASSERT_TRUE(IsError(out, Status::Code::kRefused, "env.fill"));
}

}  // namespace
}  // namespace rlt::train
