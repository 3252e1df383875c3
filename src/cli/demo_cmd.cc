// rltrade cli: `rltrade demo` — the main job on built-in data, end to end.
//
// Until the learner lands, the demo shows the pipeline a training run uses, with a
// rule-based policy in place of the agent:
//   1. generate the built-in synthetic intraday market (with a weak momentum component)
//      and write it as CSV; 2. read it back through the validating reader;
//   3. split sessions into train (first 80%) and held-out test (last 20%);
//   4. compute causal features once and fit the normaliser on train only;
//   5. walk every held-out session in order in the intraday environment with three
//      policies (the sign of the 5-bar return, flat, long) and print their results.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "core/civil_time.h"
#include "core/printable.h"
#include "env/envs/intraday.h"
#include "env/envs/intraday_rules.h"
#include "env/registry.h"
#include "env/vec_env.h"
#include "eval/metrics.h"
#include "market/date_range.h"
#include "market/market.h"

namespace rlt::cli {
namespace {

struct DemoFlags {
  std::string out = "build/demo";
  int days = 250;
  uint64_t seed = 7;
  double signal_to_noise = 0.08;
  double cost_rate = 0.0002;
  std::string data;  // a bar file to use instead of the synthetic market
  std::string timezone = "UTC";
  bool timezone_given = false;  // --timezone was passed
  std::string symbol;
  std::string preset = "scaled";
};

struct PolicyResult {
  std::string name;
  std::vector<double> session_returns;
  double final_worth = 0, costs = 0;
  int64_t trades = 0, steps = 0;
};

// Target exposure of each policy at bar t (causal: reads closes <= t only).
float Decide(const std::string& policy, const market::Bars& bars, int64_t t) {
  if (policy == "flat") return 0.0f;
  if (policy == "long") return 1.0f;
  return env::Momentum5Exposure(bars, t);
}

Result<PolicyResult> RunPolicy(const std::string& policy,
                               std::shared_ptr<const env::MarketDataset> data,
                               const market::DateRange& test, double cost_rate) {
  env::EnvContext ctx;
  ctx.market = data;
  ctx.settings = {{"action_mode", "target_position"},
                  {"sequential", "true"},
                  {"range", test.ToString() == "start:end" ? "" : test.ToString()},
                  {"cost_rate", fmt::format("{}", cost_rate)}};
  RLT_ASSIGN_OR_RETURN(auto envs, env::MakeEnvs("intraday", ctx, 1));
  env::VecEnv vec(std::move(envs), 1);
  vec.Reset(0);
  PolicyResult r;
  r.name = policy;
  double capital = 100000.0, last_worth = capital;
  int32_t date = static_cast<int32_t>(vec.info()[env::kInfoSessionDate]);
  for (;;) {
    const float a = Decide(policy, data->bars, static_cast<int64_t>(vec.info()[env::kInfoBar]));
    vec.Step(&a);
    ++r.steps;
    const double* info = vec.done(0) ? vec.terminal_info() : vec.info();
    const int32_t now = static_cast<int32_t>(info[env::kInfoSessionDate]);
    const bool session_closed = now != date || vec.done(0);
    if (session_closed) {  // the previous step flattened `date`'s session
      const double worth = info[env::kInfoNetWorth];
      r.session_returns.push_back(worth / last_worth - 1.0);
      last_worth = worth;
      date = now;
    }
    if (vec.done(0)) {
      r.final_worth = info[env::kInfoNetWorth];
      r.costs = info[env::kInfoCostsPaid];
      r.trades = static_cast<int64_t>(info[env::kInfoTrades]);
      break;
    }
  }
  return r;
}

int RunDemo(const DemoFlags& f) {
  using Clock = std::chrono::steady_clock;
  std::error_code ec;
  std::filesystem::create_directories(f.out, ec);
  if (ec) return ReportError(Status::IoError("cannot create '" + f.out + "': " + ec.message()));
  if (!f.data.empty() && f.days != DemoFlags().days) {
    return ReportError(Status::InvalidArgument("--days applies to the synthetic market only"));
  }
  std::string csv = f.data;
  market::CsvReadOptions ro;
  ro.timezone = f.timezone;
  ro.symbol = f.symbol;
  if (csv.empty()) {
    market::SynthOptions so;
    so.num_days = f.days;
    so.seed = f.seed;
    so.signal_to_noise = f.signal_to_noise;
    auto synth = market::GenerateSynthetic(so);
    if (!synth.ok()) return ReportError(synth.status());
    csv = f.out + "/synth_intraday.csv";
    if (Status s = market::WriteBarsCsv(csv, *synth); !s.ok()) return ReportError(s);
    ro.timezone = so.timezone;
  }
  market::DataReport report;
  auto md = market::ReadBarsCsv(csv, ro, &report);
  if (!md.ok()) return ReportError(md.status());
  if (report.naive_times && !f.timezone_given) {
    fmt::print(stderr, "{}\n", PrintableText(market::NaiveTimesNote(csv, ro.timezone)));
  }
  if (md->symbols.size() > 1) {
    return ReportError(Status::InvalidArgument(
        "'" + csv + "' holds " + std::to_string(md->symbols.size()) +
        " symbols; choose one with --symbol (e.g. --symbol " + md->symbols.front().symbol + ")"));
  }
  market::Bars bars = std::move(md->symbols.front());
  const auto& sessions = bars.sessions;
  if (sessions.size() < 5) {
    return ReportError(Status::InvalidArgument("'" + csv + "' has " +
                                               std::to_string(sessions.size()) +
                                               " sessions; the demo needs at least 5"));
  }
  const size_t n_train = sessions.size() * 4 / 5;
  const market::DateRange train{sessions.front().date, sessions[n_train - 1].date};
  const market::DateRange test{sessions[n_train].date, sessions.back().date};
  fmt::print("market   {} ({}): {} bars, {} sessions of {} bars, {} .. {}\n", csv, bars.symbol,
             bars.size(), sessions.size(), sessions.front().size(),
             FormatDate(sessions.front().date), FormatDate(sessions.back().date));
  fmt::print("split    train {} ({} sessions), test {} ({} sessions, held out)\n", train.ToString(),
             n_train, test.ToString(), sessions.size() - n_train);
  const auto t0 = Clock::now();
  env::DatasetOptions dopt;  // z-score fitted on train only
  dopt.preset = f.preset;
  auto data = env::PrepareMarketDataset(std::move(bars), dopt, train);
  if (!data.ok()) return ReportError(data.status());
  fmt::print("features {} x {} ('{}'), normaliser fitted on train, in {:.1f} ms\n",
             (*data)->features.rows, (*data)->features.cols, dopt.preset,
             std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  fmt::print(
      "\nheld-out backtest (target exposure, fills at next open, cost {:.2f} bp, "
      "flat at each close)\n",
      f.cost_rate * 1e4);
  fmt::print("{:<12} {:>10} {:>10} {:>8} {:>9} {:>8} {:>10}\n", "policy", "return", "sharpe",
             "max_dd", "fills", "steps", "costs");
  // Annualised and signed as `rltrade eval` does: periods per year from the session dates
  // (eval::PeriodsPerYearOf), drawdowns as negative fractions (eval::MaxDrawdown).
  std::vector<int32_t> dates;
  for (const market::Session& s : (*data)->bars.sessions) dates.push_back(s.date);
  const int periods = eval::PeriodsPerYearOf(dates);
  for (const std::string policy : {"momentum5", "flat", "long"}) {
    auto r = RunPolicy(policy, *data, test, f.cost_rate);
    if (!r.ok()) return ReportError(r.status());
    // A flat policy's returns have no spread: its Sharpe ratio is undefined, shown as "-".
    const double sharpe = eval::SharpeRatio(r->session_returns, eval::MetricsOptions{periods});
    fmt::print("{:<12} {:>9.2f}% {:>10} {:>7.2f}% {:>9} {:>8} {:>10.2f}\n", r->name,
               (r->final_worth / 100000.0 - 1) * 100,
               std::isfinite(sharpe) ? fmt::format("{:.2f}", sharpe) : std::string("-"),
               eval::MaxDrawdown(r->session_returns) * 100, r->trades, r->steps, r->costs);
  }
  fmt::print("\nmomentum5 = sign of the 5-bar return within the session");
  if (f.data.empty()) {
    fmt::print(" (the synthetic market has a weak\nmomentum component, signal-to-noise {})",
               f.signal_to_noise);
  }
  fmt::print(
      ".\nSharpe from per-session returns x sqrt({}); max_dd negative, as `rltrade eval` "
      "reports it.\n",
      periods);
  return 0;
}

}  // namespace

void RegisterDemoCommand(CLI::App& app, Action* action) {
  auto f = std::make_shared<DemoFlags>();
  CLI::App* demo = app.add_subcommand("demo", "Run the pipeline end to end on built-in data");
  demo->add_option("--out", f->out, "directory for the generated data")->capture_default_str();
  demo->add_option("--days", f->days, "synthetic sessions")->capture_default_str();
  demo->add_option("--seed", f->seed, "seed")->capture_default_str();
  demo->add_option("--signal-to-noise", f->signal_to_noise, "momentum strength in the market")
      ->capture_default_str();
  demo->add_option("--cost", f->cost_rate, "proportional cost")->capture_default_str();
  demo->add_option("--data", f->data, "bar file to use instead of the synthetic market");
  CLI::Option* tz =
      demo->add_option("--timezone", f->timezone, "IANA time zone of naive timestamps in --data")
          ->capture_default_str();
  demo->add_option("--symbol", f->symbol, "symbol to use from a multi-symbol --data file");
  demo->add_option("--preset", f->preset, "feature preset")->capture_default_str();
  demo->callback([f, tz, action] {
    f->timezone_given = tz->count() > 0;
    *action = [f] { return RunDemo(*f); };
  });
}

}  // namespace rlt::cli
