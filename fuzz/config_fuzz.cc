// Fuzzes the TOML config binder: Config::FromString, the round trip through ToToml that
// config.h promises (same sections, keys and texts), CheckSections, binding [run], [data],
// [features] into the option structs `rltrade train` uses (train/train_options.h), the
// [split] date ranges, and [env] settings into a small environment of the configured id
// (cartpole, pendulum, example, or intraday on a small synthetic dataset), which is then
// reset and stepped. LibTorch-free: [algo] and [policy] bind into learn/ structs that need
// LibTorch and are not covered here.
#include <set>
#include <string>

#include "config/config.h"
#include "env/registry.h"
#include "env/vec_env.h"
#include "fuzz_env_util.h"
#include "fuzz_util.h"
#include "market/date_range.h"
#include "train/train_options.h"

namespace {

using rlt::config::Config;

void CheckRoundTrip(const Config& config) {
  const std::string toml = config.ToToml();
  auto again = Config::FromString(toml, "roundtrip.toml");
  FUZZ_REQUIRE(again.ok(), "ToToml output does not parse: " + again.status().message() +
                               "\n--- text ---\n" + toml);
  FUZZ_REQUIRE(again->SectionNames() == config.SectionNames(), "sections differ after ToToml");
  for (const std::string& name : config.SectionNames()) {
    const auto* a = config.Find(name);
    const auto* b = again->Find(name);
    FUZZ_REQUIRE(b != nullptr && a->Keys() == b->Keys(), "keys differ in [" + name + "]");
    for (size_t i = 0; i < a->entries.size(); ++i) {
      FUZZ_REQUIRE(a->entries[i].second.text == b->entries[i].second.text,
                   "[" + name + "] " + a->entries[i].first + ": '" + a->entries[i].second.text +
                       "' came back as '" + b->entries[i].second.text + "'");
    }
  }
}

void BuildEnv(const Config& config) {
  const auto* id = config.Get("env", "id");
  if (id == nullptr) return;
  rlt::env::EnvContext ctx;
  if (const auto* env = config.Find("env")) {
    for (const auto& [key, value] : env->entries) {
      if (key != "id" && key != "num_envs") ctx.settings[key] = value.text;
    }
  }
  if (id->text == "intraday") ctx.market = rlt::fuzz::SmallDataset();
  if (id->text == "options") {
    // Keep each input fast: at most 99 synthetic days for the chain it prepares (the
    // env's own limits are tested in options_portfolio_test.cc).
    const auto days = ctx.settings.find("synthetic_days");
    if (days == ctx.settings.end() || days->second.size() > 2)
      ctx.settings["synthetic_days"] = "60";
    ctx.settings.erase("underlying");  // no file reads from the harness
  }
  auto envs = rlt::env::MakeEnvs(id->text, ctx, 2);
  if (!envs.ok()) return;
  rlt::env::VecEnv vec(std::move(*envs), 1);
  vec.Reset(1);
  rlt::fuzz::StepSome(vec, 8);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto config = Config::FromString(std::string(rlt::fuzz::AsText(data, size)), "fuzz.toml");
  if (!config.ok()) {
    FUZZ_REQUIRE(!config.status().message().empty(), "error without a message");
    return 0;
  }
  CheckRoundTrip(*config);
  (void)config->CheckSections({"run", "data", "split", "features", "env", "algo", "policy"});
  rlt::train::RunOptions run;
  rlt::train::DataOptions data_options;
  rlt::train::FeatureOptions features;
  bool bound = config->Bind("run", run).ok();
  bound = config->Bind("data", data_options).ok() && bound;
  bound = config->Bind("features", features).ok() && bound;
  if (const auto* split = config->Find("split")) {
    for (const auto& [name, value] : split->entries) {
      auto range = rlt::market::DateRange::Parse(value.text);
      if (range.ok()) {
        auto back = rlt::market::DateRange::Parse(range->ToString());
        FUZZ_REQUIRE(back.ok() && back->ToString() == range->ToString(),
                     "DateRange does not round-trip: " + value.text);
      }
    }
  }
  BuildEnv(*config);
  if (bound) {
    // The resolved config (what a run directory keeps) must parse back.
    Config resolved = *config;
    resolved.SetSection("run", run);
    resolved.SetSection("data", data_options);
    resolved.SetSection("features", features);
    CheckRoundTrip(resolved);
  }
  return 0;
}
