// rltrade cli: `rltrade hedge` — Monte Carlo delta hedging of a short European call:
// the option's Black-Scholes price, and the mean and standard deviation of
// the present value of the cost of hedging it, over N simulated paths.
//
// The simulation is env::SimulateHedging on the "hedging" environment
// (env/envs/delta_hedging.h) with the command's parameters: one env step per
// rebalancing interval (--rebalance-weeks; the last interval is shorter when it does not
// divide --maturity-weeks), GBM paths with the real-world drift --drift, cash earning
// --rate, proportional costs --cost on every trade and on the final sale, one option sold
// (quantity 1: every figure is per option).
// The policy is the Black-Scholes delta (`bs-delta`) or a trained run's policy (RUN_DIR,
// trained on env id "hedging"; its other [env] settings are kept, the command's
// parameters replace theirs), run deterministically through learn::PolicyRunner.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/numeric_flags.h"
#include "config/config.h"
#include "core/json_text.h"
#include "env/envs/delta_hedging.h"
#include "learn/inference.h"
#include "pricing/pricing.h"
#include "train/train_options.h"

namespace rlt::cli {
namespace {

namespace fs = std::filesystem;

// The most environment steps (paths x rebalancing steps) one `hedge` run may take, and
// the measured speed of the bs-delta simulation on one core (Release build).
constexpr double kMaxHedgeEnvSteps = 1e9;
constexpr double kHedgeStepsPerSecond = 5e6;

struct HedgeFlags {
  double spot = 0, strike = 0, rate = 0, drift = 0, vol = 0;
  double maturity_weeks = 0, rebalance_weeks = 0;
  int64_t paths = 0;
  std::string policy;
  double cost = 0;
  uint64_t seed = 1;
  bool json = false;
};

Status CheckFlags(const HedgeFlags& f) {
  auto positive = [](const char* flag, double v, const char* what) -> Status {
    if (std::isfinite(v) && v > 0) return Status::Ok();
    return Status::InvalidArgument(
        fmt::format("{} {}: expected {} > 0 (a finite number)", flag, v, what));
  };
  auto finite = [](const char* flag, double v, const char* what) -> Status {
    if (std::isfinite(v)) return Status::Ok();
    return Status::InvalidArgument(
        fmt::format("{} {}: expected {} (a finite number)", flag, v, what));
  };
  RLT_RETURN_IF_ERROR(positive("--spot", f.spot, "the underlying's price"));
  RLT_RETURN_IF_ERROR(positive("--strike", f.strike, "the strike"));
  RLT_RETURN_IF_ERROR(positive("--vol", f.vol, "a volatility per sqrt(year), e.g. 0.2"));
  RLT_RETURN_IF_ERROR(finite("--rate", f.rate, "a rate per year, e.g. 0.05"));
  RLT_RETURN_IF_ERROR(finite("--drift", f.drift, "a drift per year, e.g. 0.13"));
  RLT_RETURN_IF_ERROR(positive("--maturity-weeks", f.maturity_weeks, "weeks to maturity"));
  if (!(f.rebalance_weeks > 0 && f.rebalance_weeks <= f.maturity_weeks)) {
    return Status::InvalidArgument(
        fmt::format("--rebalance-weeks {}: expected 0 < D <= --maturity-weeks ({})",
                    f.rebalance_weeks, f.maturity_weeks));
  }
  if (f.paths < 1 || f.paths > env::kMaxHedgePaths) {
    return Status::InvalidArgument(
        fmt::format("--paths {}: expected 1 to {}", f.paths, env::kMaxHedgePaths));
  }
  if (!(f.cost >= 0 && f.cost < 1)) {
    return Status::InvalidArgument(fmt::format(
        "--cost {}: expected a proportional cost in [0, 1) (0.001 = 0.1% of traded value)",
        f.cost));
  }
  if (f.policy.empty()) {
    return Status::InvalidArgument("--policy: expected bs-delta or a run directory");
  }
  return Status::Ok();
}

// The run's [env] settings (minus id and num_envs) after checking it trained "hedging".
Result<std::map<std::string, std::string>> RunEnvSettings(const std::string& run_dir) {
  const fs::path config_path = fs::path(run_dir) / "config.toml";
  if (!fs::exists(config_path)) {
    return Status::NotFound(fmt::format(
        "--policy {}: neither bs-delta nor a run directory (no config.toml); pass bs-delta or "
        "a directory written by `rltrade train` (for multi-seed runs, RUN/seed_<N>)",
        run_dir));
  }
  RLT_ASSIGN_OR_RETURN(config::Config config, train::LoadConfig(config_path.string()));
  const config::ConfigValue* id = config.Get("env", "id");
  if (id == nullptr || id->text != "hedging") {
    return Status::InvalidArgument(fmt::format(
        "--policy {}: rltrade hedge needs a run trained on the hedging environment ([env] id = "
        "\"hedging\"), but {} has {}",
        run_dir, config_path.string(),
        id == nullptr ? std::string("no [env] id") : "[env] id = \"" + id->text + "\""));
  }
  std::map<std::string, std::string> settings;
  if (const config::Section* s = config.Find("env")) {
    for (const auto& [key, value] : s->entries) {
      if (key != "id" && key != "num_envs") settings[key] = value.text;
    }
  }
  return settings;
}

Result<env::HedgingOptions> MakeOptions(const HedgeFlags& f,
                                        const std::map<std::string, std::string>& base) {
  env::HedgingOptions o;
  RLT_RETURN_IF_ERROR(SetOptions(o, base, "[env]"));
  o.option_type = "call";
  o.spot = f.spot;
  o.strike = f.strike;
  o.rate = f.rate;
  o.drift = f.drift;
  o.vol = f.vol;
  o.maturity_weeks = f.maturity_weeks;
  o.step_weeks = f.rebalance_weeks;
  o.rebalance_every = 1;
  o.cost = f.cost;
  o.paths = "gbm";
  o.quantity = 1;
  return o;
}

int RunHedge(const HedgeFlags& f) {
  Status ok = CheckFlags(f);
  if (!ok.ok()) return ReportError(ok);
  const bool baseline = f.policy == "bs-delta";
  std::map<std::string, std::string> settings;
  if (!baseline) {
    Result<std::map<std::string, std::string>> s = RunEnvSettings(f.policy);
    if (!s.ok()) return ReportError(s.status());
    settings = *s;
  }
  Result<env::HedgingOptions> options = MakeOptions(f, settings);
  if (!options.ok()) return ReportError(options.status());
  // Options the command's flags map onto: an env error names the [env] key; say the flag.
  Result<std::unique_ptr<env::DeltaHedgingEnv>> probe = env::DeltaHedgingEnv::Create(*options);
  if (!probe.ok()) {
    return ReportError(Status::InvalidArgument(
        probe.status().message() +
        " (spot, strike, rate, drift, vol, maturity_weeks, step_weeks and cost come from "
        "--spot, --strike, --rate, --drift, --vol, --maturity-weeks, --rebalance-weeks and "
        "--cost)"));
  }
  // The work is paths x steps per path env steps: refuse what would not finish in minutes.
  const double env_steps = static_cast<double>(f.paths) * (*probe)->num_steps();
  if (env_steps > kMaxHedgeEnvSteps) {
    const int64_t paths_fitting =
        std::max<int64_t>(1, static_cast<int64_t>(kMaxHedgeEnvSteps / (*probe)->num_steps()));
    return ReportError(Status::InvalidArgument(fmt::format(
        "hedge: --paths {} x {} rebalancing steps (--maturity-weeks {} / --rebalance-weeks {}) "
        "= {:.3g} environment steps, ~{:.0f} s with bs-delta on one core (~{:.0f} million steps "
        "a second; a trained policy is slower). The limit is {:.0e} steps (~{:.0f} s). Fix: "
        "lower --paths to at most {} or rebalance less often (a larger --rebalance-weeks)",
        f.paths, (*probe)->num_steps(), f.maturity_weeks, f.rebalance_weeks, env_steps,
        env_steps / kHedgeStepsPerSecond, kHedgeStepsPerSecond / 1e6, kMaxHedgeEnvSteps,
        kMaxHedgeEnvSteps / kHedgeStepsPerSecond, paths_fitting)));
  }
  env::HedgePolicy policy = env::BsDeltaPolicy;
  std::shared_ptr<learn::PolicyRunner> runner;
  if (!baseline) {
    const env::EnvSpec& spec = (*probe)->spec();
    Result<std::unique_ptr<learn::PolicyRunner>> loaded = learn::PolicyRunner::Load(
        (fs::path(f.policy) / "final").string(), spec.obs_dim, spec.action);
    if (!loaded.ok()) return ReportError(loaded.status());
    runner = std::move(loaded).value();
    policy = [runner](const float* obs, int n, float* actions, bool first_step) {
      if (first_step) runner->ResetState();
      runner->Act(obs, n, actions, nullptr);
    };
  }
  Result<env::HedgeSimulation> sim =
      env::SimulateHedging(*options, static_cast<int>(f.paths), f.seed, policy);
  if (!sim.ok()) return ReportError(sim.status());
  if (f.json) {
    const nlohmann::json j = {{"bs_price", sim->bs_price},
                              {"mean_cost", sim->mean_cost},
                              {"sd_cost", sim->sd_cost},
                              {"sd_over_price", sim->sd_over_price}};
    fmt::print("{}\n", JsonText(j, 2));
    return 0;
  }
  fmt::print(
      "short call S={} K={} r={} mu={} vol={} T={} weeks, rebalanced every {} weeks, cost {}, "
      "{} paths, policy {}\n",
      f.spot, f.strike, f.rate, f.drift, f.vol, f.maturity_weeks, f.rebalance_weeks, f.cost,
      f.paths, f.policy);
  fmt::print("bs_price       {:.6f}\n", sim->bs_price);
  fmt::print("mean_cost      {:.6f}   (PV of the cost of hedging, premium not included)\n",
             sim->mean_cost);
  fmt::print("sd_cost        {:.6f}   (standard error of the mean {:.6f})\n", sim->sd_cost,
             sim->sd_cost / std::sqrt(static_cast<double>(f.paths)));
  fmt::print("sd_over_price  {:.4f}\n", sim->sd_over_price);
  if (baseline && f.cost == 0) {
    // Derman-Kamal / Hull: SD ~ sqrt(pi/4) vega sigma sqrt(dt/T), for comparison.
    pricing::OptionInputs in;
    in.spot = f.spot;
    in.strike = f.strike;
    in.rate = f.rate;
    in.vol = f.vol;
    in.time = f.maturity_weeks / 52;
    Result<pricing::Greeks> g = pricing::BsmGreeks(in);
    if (g.ok()) {
      const double theory =
          std::sqrt(M_PI / 4) * g->vega * f.vol * std::sqrt(f.rebalance_weeks / f.maturity_weeks);
      fmt::print("theory sd      {:.6f}   (sqrt(pi/4) vega sigma sqrt(dt/T); ratio {:.4f})\n",
                 theory, theory / sim->bs_price);
    }
  }
  return 0;
}

}  // namespace

void RegisterHedgeCommand(CLI::App& app, Action* action) {
  auto f = std::make_shared<HedgeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "hedge",
      "Monte Carlo delta hedging of a short call: BS price, mean and SD of the PV of the "
      "hedging cost");
  cmd->add_option("--spot", f->spot, "price of the underlying S")
      ->check(DecimalNumber())
      ->required();
  cmd->add_option("--strike", f->strike, "strike K")->check(DecimalNumber())->required();
  cmd->add_option("--rate", f->rate, "risk-free rate r per year, continuous (0.05 = 5%)")
      ->check(DecimalNumber())
      ->required();
  cmd->add_option("--drift", f->drift, "real-world drift mu of the underlying per year")
      ->check(DecimalNumber())
      ->required();
  cmd->add_option("--vol", f->vol, "volatility sigma per sqrt(year) (0.2 = 20%)")
      ->check(DecimalNumber())
      ->required();
  cmd->add_option("--maturity-weeks", f->maturity_weeks, "weeks to maturity W (52 a year)")
      ->check(DecimalNumber())
      ->required();
  cmd->add_option("--rebalance-weeks", f->rebalance_weeks, "weeks between rebalancings D")
      ->check(DecimalNumber())
      ->required();
  cmd->add_option("--paths", f->paths, "simulated paths N")->check(DecimalInteger())->required();
  cmd->add_option("--policy", f->policy,
                  "bs-delta (Black-Scholes delta) or RUN_DIR (a run trained on env hedging)")
      ->required();
  cmd->add_option("--cost", f->cost, "proportional transaction cost (0.001 = 0.1%)")
      ->check(DecimalNumber())
      ->capture_default_str();
  cmd->add_option("--seed", f->seed, "seed (path i uses seed + i)")
      ->check(DecimalInteger(/*allow_sign=*/false))
      ->capture_default_str();
  cmd->add_flag("--json", f->json, "print JSON: bs_price, mean_cost, sd_cost, sd_over_price");
  cmd->callback([f, action] { *action = [f] { return RunHedge(*f); }; });
}

}  // namespace rlt::cli
