// rltrade evalrun: `rltrade eval` as a library call — a trained run in, an out-of-sample
// backtest out.
//
// RunEvaluation() rebuilds the run's environment from RUN_DIR/config.toml with the
// run's stored feature normaliser (RUN_DIR/normalizer.json; never refitted), then:
//  - market envs (intraday): walks every session of the range in order (sequential =
//    true, one env, the run's [env] costs and execution rules) with a deterministic
//    policy, and writes RUN_DIR/eval/<name>/ per src/eval/outputs.h (summary.json,
//    equity.csv, daily_returns.csv, trades.csv; report.html by eval/report.h when built).
//    Returns are aggregated per session (daily) before any ratio; the benchmarks flat and
//    buy-and-hold are the same env walked with those policies.
//  - the hedging env on a listed chain ([env] chain_file): every contract first quoted in
//    the range once, in order (sequential = true), with the trained policy or bs-delta
//    and the Black-Scholes delta baseline beside it; summary.json (mean and std of the
//    returns and final P&L of both) and contracts.csv (one row per contract).
//  - episodic envs (cartpole, pendulum, example): `episodes` deterministic episodes with
//    the trained policy (learn::EvaluatePolicy, envs seeded run.seed + kEvalSeedOffset);
//    RUN_DIR/eval/episodes/summary.json holds mean_return, std_return, episodes.
// Output names (EvalOutputName): what was evaluated, so evaluations never overwrite one
// another:
//   <range>                    the trained policy (RUN_DIR/final) on the run's data
//   <range>.<policy>           --policy other than trained, ':' -> '-' (test.flat,
//                              test.buy-and-hold, test.rule-momentum5)
//   <range>.ckpt-<checkpoint>  the trained policy from --checkpoint other than RUN_DIR/final:
//                              RUN_DIR/checkpoints/step_500 -> test.ckpt-step_500; another
//                              run's RUN2/final -> test.ckpt-RUN2-final
//   <range>...set-<key>-<value> each --set env.KEY=VALUE (env_settings), in key order:
//                              test.set-cost_rate-0.0002
//   <range>...data-<stem>      --data FILE.csv, always last: test.data-SPY_2024,
//                              test.rule-momentum5.data-SPY_2024
// <range> is the [split] name, START_END for START:END, or "episodes". Characters outside
// [A-Za-z0-9_.+-] become '-'. summary.json records "policy", "data" ({"source", "file"} or
// {"source", "seed", "days"}) and, for the trained policy, "checkpoint"; the printed title
// names the policy, the checkpoint and the data file.
// Out-of-sample by construction: a range that overlaps anything recorded in
// RUN_DIR/training_ranges.json (every range and session training saw, whatever set it;
// train/training_ranges.h; merged with the evaluated checkpoint's copy) is refused with a
// message naming both ranges unless allow_in_sample, and is then labelled in-sample in
// summary.json ("in_sample": true) and in the printed table. A run without that record
// counts as in-sample for every range.
// Integrity: eval holds the run's lock (runlog::RunLock; a second writer is refused),
// removes staging leftovers under RUN_DIR/eval/, and verifies RUN_DIR/MANIFEST and the
// checkpoint's MANIFEST (and finite parameters) before using them.
// Reproducible: the same run, range and policy give a byte-identical summary.json (no
// timestamps or timings in it).
// The output directory is staged and renamed (runlog::StagingDir); an earlier evaluation
// of the same name (range, policy, checkpoint and data) is replaced.
//
// Policies: "trained" (RUN_DIR/final, or `checkpoint`), "flat" (no position ever),
// "buy-and-hold" (target exposure 1 every bar in target_position mode — which rebalances
// to 100 % each bar; in original mode a buy with amount 1 at each session's first
// decision, then hold until the closing flatten), "rule:NAME" (env/envs/intraday_rules.h).
// Trades (for num_trades, average_trade_pnl, profit_factor) are round trips from flat to
// flat; a round trip's PnL is the change in cash between the two flat points (net of all
// costs). trades.csv lists every fill.
//
// This header is LibTorch-free. Evaluations of different run directories may run at once
// in threads of one process (tune's parallel trials); each thread's LibTorch thread count
// is the one its training set.
#ifndef RLT_EVALRUN_EVALRUN_H_
#define RLT_EVALRUN_EVALRUN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::evalrun {

struct EvalRequest {
  std::string run_dir;             // a run directory written by `rltrade train`
  std::string range = "test";      // a [split] name (test, train, validation) or START:END
  std::string data_file;           // bar CSV replacing the run's bars ("" = the run's data)
  std::string policy = "trained";  // trained | flat | buy-and-hold | rule:NAME
  bool allow_in_sample = false;    // allow a range that overlaps [split] train
  int episodes = 10;               // episodic envs: deterministic episodes
  std::string checkpoint;          // trained policy: checkpoint dir ("" = RUN_DIR/final)
  // Bars whose training-range sessions differ from the run's record (train/data_record.h),
  // or of another symbol than the run's: refused unless these are set.
  bool allow_data_change = false;
  bool allow_mismatch = false;
  // Periods per year that annualise the ratios (--periods); 0 = from the data's session
  // dates: 365 when a fifth of them fall on weekends, else 252 (eval::PeriodsPerYearOf).
  int periods_per_year = 0;
  // --set env.KEY=VALUE (ParseEvalSetting): execution settings of the intraday environment
  // that leave what the policy observes unchanged (kEvalSettableKeys), replacing the run's
  // [env] values; keys without the "env." prefix. Each one is recorded in summary.json
  // (settings "eval.set.env.KEY") and names the output (<range>...set-KEY-VALUE).
  std::map<std::string, std::string> env_settings;
  // --costs (ParseCostLevels): cost levels in basis points, increasing; when given, the
  // policy is walked once more per level (cost_rate = bps / 10,000, the other keys as the
  // run's or env_settings) and costs.csv and costs.json are written beside summary.json.
  std::vector<double> cost_levels_bps;
  // A run of several symbols ([data] symbols): the one symbol to evaluate (--symbol),
  // written to RUN_DIR/eval/<name>.symbol-<SYMBOL>/; "" = every symbol and their
  // equal-weight portfolio (evalrun/symbols_eval.h). Ignored for a run of one symbol.
  std::string symbol;
  // A seed ensemble (evalrun/ensemble.h) as the trained policy: the seeds' run directories
  // (RUN/seed_<s>, in seed order; run_dir must be the first of them: its config, data and
  // normaliser build the environment, and every seed's normalizer.json must equal it) and
  // --ensemble ("" = the default for the run's actions). Each seed acts with its own
  // checkpoint `checkpoint` names ("", best or final; a directory is refused).
  std::vector<std::string> ensemble_runs;
  std::vector<uint64_t> ensemble_seeds;  // the seeds of ensemble_runs, for the summary
  std::string ensemble;
  // Where eval/<name>/ is written: "" = run_dir (an ensemble's: RUN, the multi-seed run).
  std::string output_root;
};

// The [env] keys `eval --set` accepts: how orders are executed and charged, never what the
// policy observes (initial_capital scales the observation and is refused).
inline constexpr const char* kEvalSettableKeys[] = {"cost_rate", "fixed_cost", "fill", "lot_size"};

// Parses one `--set env.KEY=VALUE` into `settings`. Malformed text: InvalidArgument; a key
// of another section or one not in kEvalSettableKeys: Refused, naming the key, why and
// the keys accepted. The value itself is checked when the environment is built.
Status ParseEvalSetting(const std::string& text, std::map<std::string, std::string>& settings);

// Parses `--costs 0,1,2,5,10`: basis points, finite, >= 0, at most 10,000, increasing.
Result<std::vector<double>> ParseCostLevels(const std::string& text);

// The cost at which the total net return crosses zero (costs.json "break_even").
struct BreakEven {
  // "crossed": `bps` interpolated linearly between the two levels that bracket the first
  // change from > 0 to <= 0 (a level with exactly 0 is the break-even itself);
  // "above_largest": positive at every level; "at_or_below_smallest": <= 0 already at the
  // smallest level (below 0 bps when that level is 0). `bps` is NaN unless "crossed".
  std::string kind;
  double bps = 0;
};
// REQUIRES: bps increasing, net_returns of the same size, at least one level.
BreakEven BreakEvenCost(std::span<const double> bps, std::span<const double> net_returns);

// A custom intraday policy (tests; e.g. a cheat): writes the action for the current
// observation. obs: (obs_dim); info: (info_dim), named by IntradayStockEnv::InfoNames();
// action: (act_dim) in the run's action_mode.
using ActionFn = std::function<void(const float* obs, const double* info, float* action)>;

struct EvalOutcome {
  std::string out_dir;     // RUN_DIR/eval/<name>
  std::string name;        // <name>: EvalOutputName (the range name and suffixes)
  std::string range_name;  // <range>: the [split] name, START_END or "episodes"
  bool in_sample = false;
  bool episodic = false;
  std::string summary_json;  // the bytes of summary.json
  std::string table;         // human-readable summary for the terminal
  bool report_written = false;
  std::string ensemble_method;  // an ensemble's method (mean | median | vote); "" otherwise
};

Result<EvalOutcome> RunEvaluation(const EvalRequest& request);

// The directory name under RUN_DIR/eval/ of an evaluation of `policy_name` on range
// `range_name` (see "Output names" above).
std::string EvalOutputName(const EvalRequest& request, const std::string& range_name,
                           const std::string& policy_name);

// RunEvaluation with a custom intraday policy in place of request.policy; `policy_name`
// is written to summary.json.
Result<EvalOutcome> RunEvaluationWith(const EvalRequest& request, const std::string& policy_name,
                                      const ActionFn& policy);

// The checks evaluation makes of a run before it trades it, for the commands that trade a
// run's policy elsewhere (`rltrade paper`):
//  - VerifyRunFiles: config.toml, normalizer.json and training_ranges.json match the run's
//    MANIFEST (an edited file is refused, naming it);
//  - TrainingOverlap: "" when `dates` touches nothing the policy saw in training (the
//    run's and the checkpoint's training_ranges.json), else what it overlaps (a run without
//    the record overlaps "an unknown range");
//  - InSampleRefusal: evaluation's message refusing `label` (`dates`) for that overlap,
//    with `advice` and the flag that runs it anyway (every output then labelled in-sample).
Status VerifyRunFiles(const std::string& run_dir);
Result<std::string> TrainingOverlap(const std::string& run_dir, const std::string& checkpoint,
                                    int32_t first_date, int32_t last_date);
Status InSampleRefusal(const std::string& label, const std::string& dates,
                       const std::string& overlap, const std::string& advice);

}  // namespace rlt::evalrun

#endif  // RLT_EVALRUN_EVALRUN_H_
