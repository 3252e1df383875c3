// rltrade paper: a trained intraday run trading a bar stream (issue 17), as a library call.
//
// RunPaper() loads RUN_DIR (config.toml, normalizer.json, the checkpoint), then takes the
// feed's bars one at a time, in time order:
//  1. features: features::IncrementalFeatures with the run's preset and stored normaliser,
//     one Push per bar, bit-identical to the batch features training and evaluation use
//     (features/incremental.h); the observation is the last nlags + 1 rows plus the
//     portfolio part, written by the environment's own layout code
//     (IntradayStockEnv::WriteObservationFromRows, ViewOf);
//  2. the order decided at the previous bar is filled by the broker;
//  3. at a session's last bar every position is flattened at the close (the environment's
//     rule), and the session's return is recorded;
//  4. otherwise one decision per bar: the policy's deterministic action (recurrent
//     policies start each session afresh, as in evaluation).
// Orders are sized and booked by env::IntradayBook, the code the environment uses: there
// is no second implementation of the sizing rules or the accounting.
//
// --start DATE: bars before DATE only warm up the features (no decisions); trading starts
// at the first session on or after DATE whose every bar has a full observation window,
// with the run's initial capital. Trading stops when net worth falls to [env]
// stop_fraction x capital, as the environment's episode does.
//
// Feeds: replay:FILE[@SPEED] (a bar CSV in any format `rltrade eval --data` reads, with the
// run's [data] timezone, symbol and on_bad_rows; SPEED x real time, or as fast as possible
// without @SPEED). Session lengths: a replayed file's own sessions. Brokers: sim (in
// process: an order decided after bar t fills at bar t+1's open, or its (h+l+c)/3 with
// [env] fill = "next_typical", with the run's costs; sized at that price, as the
// environment sizes it). With this feed and broker the session equals `rltrade eval`
// over the same dates: the same decisions, fills and daily returns (tested).
//
// JOURNAL (default RUN_DIR/paper/<UTC time>):
//   journal.jsonl   append-only JSON lines: {"type": "start", ...}; per bar {"type":
//                   "bar", "bar", "time", "open", ..., "volume"}; {"type": "decision",
//                   "bar", "time", "action", "latency_us"} (feature update + policy
//                   forward, from the bar's arrival); {"type": "order", "client_order_id",
//                   "bar", "side", "quantity"} and {"type": "fill", "client_order_id",
//                   "bar", "time", "side", "quantity", "price", "cost", "position_after",
//                   "cash_after"} (shares, price per share); {"type": "snapshot"} at each
//                   session's end (date, net_worth, cash, return, costs_paid); {"type":
//                   "end"}. Written through and fsync'd at every bar (--fsync bar) or at
//                   each session's end (--fsync session).
//   daily_returns.csv, trades.csv, equity.csv, summary.json: the evaluation's formats
//                   (eval/outputs.h; benchmarks flat and buy-and-hold walked beside the
//                   policy with the same code), so `rltrade metrics` and `rltrade report`
//                   apply. Written atomically at the end.
// Risk limits (--risk RISK.toml, paper/risk.h) apply to the policy's orders when they are
// sent (with the sim broker, at the bar they fill): a refused order is not sent and is
// journaled as {"type": "risk", "client_order_id", "rule", "detail"}; max_daily_loss and
// flatten_before_close send a flattening order ("b<bar>-risk") at the next bar and stop new
// decisions for the rest of the session; no decisions are taken outside trading_hours.
// The benchmarks are not limited. summary.json counts the refusals per rule
// ("risk_refusals").
// Restart: --journal DIR of a session that was killed (or finished) restarts it. The
// journal's finished lines are read back (a last line cut by the kill is cut off), the
// session must be the same (run, checkpoint, feed, broker, start; else Refused), and the
// session re-runs from the feed's first bar: features, decisions, orders and fills are
// recomputed — the sim broker is deterministic — and only the events not journaled yet are
// written (keyed by bar, or by client order id for orders and fills: an order id already
// journaled is never sent again). A {"type": "restart"} line marks each restart. The
// outputs are then those of an uninterrupted session (tested: 20 kills at random points).
// Not here yet (issue 17): feeds stdin and tcp:HOST:PORT with tick aggregation, the tcp
// broker (with it, a restart takes journaled fills from the journal and reconciles
// positions with the broker), risk limits, `rltrade status` on a session.
//
// This header is LibTorch-free (the policy comes through learn/inference.h).
#ifndef RLT_PAPER_PAPER_H_
#define RLT_PAPER_PAPER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::paper {

struct PaperRequest {
  std::string run_dir;
  std::string feed;            // replay:FILE[@SPEED]
  std::string broker = "sim";  // sim
  std::string start;           // YYYY-MM-DD; "" = trade from the first eligible session
  std::string journal_dir;     // "" = RUN_DIR/paper/<UTC time>
  std::string checkpoint;      // "" = RUN_DIR/final
  std::string fsync = "bar";   // bar | session
  std::string risk_path;       // RISK.toml (paper/risk.h); "" = no limits
  bool quiet = false;
};

struct PaperOutcome {
  std::string journal_dir;
  int64_t bars = 0, decisions = 0, fills = 0, sessions = 0;
  double final_net_worth = 0;
  double latency_p50_us = 0, latency_p99_us = 0, latency_max_us = 0;  // decision latency
  double wall_seconds = 0;
  std::string summary_json;
};

Result<PaperOutcome> RunPaper(const PaperRequest& request);

// `rltrade bench paper`: the decision latency of a paper session. In a scratch directory
// (removed afterwards): `days` synthetic sessions written as a bar file, a short training
// of `config` on its first 60% (with `overrides`; default preset fast22 and a 64-64
// policy), then a paper session replaying the whole file through the sim broker from the
// first day after the training range (--fsync session). JSON: config, preset, bars,
// decisions, latency_p50_us, latency_p99_us, latency_max_us, bars_per_second.
struct PaperBenchOptions {
  std::string config_path = "configs/intraday_ppo.toml";
  std::vector<std::string> overrides = {"features.preset=fast22", "policy.pi=[64, 64]",
                                        "policy.vf=[64, 64]"};
  int days = 30;
  std::string scratch = "runs";
};
Result<std::string> BenchPaper(const PaperBenchOptions& options);

}  // namespace rlt::paper

#endif  // RLT_PAPER_PAPER_H_
