// rltrade paper: a trained intraday run trading a bar stream, as a library call.
//
// RunPaper() loads RUN_DIR (config.toml, normalizer.json, the checkpoint), checked as
// `rltrade eval` checks it (MANIFEST; the traded dates against training_ranges.json:
// refused unless allow_in_sample, then labelled in_sample), and drives a PaperSession
// (session.h), which takes the feed's bars one at a time, in time order:
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
// Feeds (paper/feed.h): replay:FILE[@SPEED] (a bar CSV in any format `rltrade eval
// --data` reads, with the run's [data] timezone, symbol and on_bad_rows; SPEED x real
// time, or as fast as possible without @SPEED); stdin (CSV lines after a header: bars, or
// ticks aggregated into the run's bar size; a bad line is skipped and journaled); tcp:
// HOST:PORT (the bars of a broker-protocol server, protocol.h, e.g. `rltrade exchange-sim`).
// Sessions: a replayed file's own. A live feed (stdin, tcp) knows a session only as it
// comes: a bar on a new local date starts one, and a session's last bar is the first at
// or after the local minute of the run's usual last bar (the most common in its data);
// the observation's time left counts down from the run's usual session length. A session
// that ends before its usual last bar is closed at the last bar it had.
// Brokers: sim (in process: an order decided after bar t fills at bar t+1's open, or its
// (h+l+c)/3 with [env] fill = "next_typical", with the run's costs; sized at that price,
// as the environment sizes it); tcp:HOST:PORT (the same server as the feed: an order is
// sized at the decision bar's close and sent at once as a market order; fills are booked
// at the broker's price and fee; the session's closing order goes out at the bar before
// its last and fills at the last bar's open; after each bar the session says `ready`, so
// a lockstep server fills every order at the next bar's open; `ready` waits until every
// order of the bar has its ack or reject, and a rejected one's retry its own). With the replay feed
// and the sim broker the session equals `rltrade eval` over the same dates: the same decisions,
// fills and daily returns (tested); a live feed of the same bars with the sim broker too, when
// every session has the usual last bar. The tcp broker sizes at the close and closes at the last
// bar's open, so it differs from the evaluation by those. After every (re)connect the session
// re-sends the orders it has no outcome for (same ids: the server answers again, never fills
// twice), tells the server the last bar it handled, asks for positions and takes no bar until they
// came and agree with the journal's fills (else it stops: Refused, naming both). A retryable reject
// is retried at once under the id + "-r<n>" (5 times at most); the others are journaled and
// reported.
//
// JOURNAL (default RUN_DIR/paper/<UTC time>):
//   journal.jsonl   append-only JSON lines: {"type": "start", ...}; per bar {"type":
//                   "bar", "bar", "time", "epoch", "open", ..., "volume"} ("seq": the
//                   tcp stream's); {"type": "decision",
//                   "bar", "time", "action", "latency_us"} (feature update + policy
//                   forward, from the bar's arrival); {"type": "order", "client_order_id",
//                   "bar", "side", "quantity"} and {"type": "fill", "client_order_id",
//                   "bar", "time", "side", "quantity", "price", "cost", "position_after",
//                   "cash_after"} (shares, price per share; with the tcp broker the
//                   order line is written before the order is sent, with "decided_bar",
//                   and "ack", "reject", "cancelled" lines follow); notes: "broker"
//                   (connected, disconnected, reconnected, error), "reconcile" (the
//                   broker's and the journal's positions), "feed" (bad lines, gaps, the
//                   feed's counts at its end); {"type": "snapshot"} at each
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
// Restart: --journal DIR of a session that was killed (or finished) restarts it (one process
// per journal: the directory is locked). The journal's finished lines are read back (only a
// last line cut by the kill is cut off; another corrupt line is an error naming it), the
// session must be the same (run, checkpoint, the seed or ensemble of a multi-seed run,
// feed, broker, start, account; else Refused),
// and the session re-runs the bars it had: a replay from the feed's first bar, a live
// feed from the journal's bars, then the feed continues after them (the tcp feed by seq:
// in lockstep a bar the killed process had not readied comes again; stdin skips bars not
// after the last journaled one). Features, decisions and orders are recomputed —
// fills too with the sim broker, which is deterministic; the tcp broker's fills are taken
// from the journal — and only the events not journaled yet are written (keyed: journal.h):
// an order id already journaled is never sent again, only re-sent when its outcome is
// unknown. A {"type": "restart"} line marks each restart. The outputs are then those of
// an uninterrupted session (tested: 20 kills at random points, with either broker).
// Stale feed (RISK.toml stale_feed_seconds): no bar for that long while a session is
// traded: the decision taken before is not sent (orders that reduce the position pass),
// working orders at the tcp broker are cancelled, and with flatten_on_stale the position
// is flattened ("b<bar>-stale"); journaled as the rule stale_feed. The next bar ends it.
// SIGINT or SIGTERM ends a session cleanly: its outputs are written (summary.json "end":
// "signal"), and it can be restarted from its journal.
//
// This header is LibTorch-free (the policy comes through learn/inference.h).
#ifndef RLT_PAPER_PAPER_H_
#define RLT_PAPER_PAPER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::paper {

struct PaperRequest {
  std::string run_dir;
  std::string feed;                 // replay:FILE[@SPEED] | stdin | tcp:HOST:PORT
  std::string broker = "sim";       // sim | tcp:HOST:PORT (the feed's server)
  std::string start;                // YYYY-MM-DD; "" = trade from the first eligible session
  std::string journal_dir;          // "" = RUN_DIR/paper/<UTC time>
  std::string checkpoint;           // "" = RUN_DIR/best if any, else final; best|final|DIR
  std::string fsync = "bar";        // bar | session
  std::string risk_path;            // RISK.toml (paper/risk.h); "" = no limits
  std::string account = "rltrade";  // the tcp broker's account (hello)
  bool allow_in_sample = false;     // trade dates that overlap training (labelled in_sample)
  // The run's training data where it is now, when it moved ("" = where the run recorded
  // it): a live session reads it for the shape of a session; checked against RUN_DIR/
  // data.json (train/data_record.h) like the replay file.
  std::string data_file;
  bool allow_mismatch = false;     // bars of another symbol than the run's are traded
  bool allow_data_change = false;  // bars of the training range that changed are used
  // A run of several symbols ([data] symbols): the one symbol this session trades
  // (required for such a run); its normaliser and one-hot id are applied.
  std::string symbol;
  bool quiet = false;
  // A multi-seed run (train/seeds.h): `seed` trades that seed's policy; without it the
  // ENSEMBLE of its seeds trades (evalrun/ensemble.h), combined as `ensemble` says ("" =
  // the default for the run's action mode). The journal's start line records which
  // ("seed": S, or "ensemble": {"method", "seeds"}) and a restart with another is refused.
  std::optional<uint64_t> seed;
  std::string ensemble;
};

struct PaperOutcome {
  std::string journal_dir;
  int64_t bars = 0, decisions = 0, fills = 0, sessions = 0;
  double final_net_worth = 0;
  double latency_p50_us = 0, latency_p99_us = 0, latency_max_us = 0;  // decision latency
  double wall_seconds = 0;
  bool in_sample = false;
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
