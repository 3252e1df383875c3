// rltrade evalrun: `rltrade signal` as a library call — a trained run and recent bars in,
// the policy's decision for the latest bar out.
//
// ComputeSignal() rebuilds the run's market data exactly as `rltrade eval --data FILE`
// does (train::BuildEnvSetup with the bars file and the run's stored normalizer.json, so
// features::ComputeFeatures and the stored transform, never refitted; the file is read
// with the run's [data] timezone, symbol and on_bad_rows), writes the observation of the
// latest bar with env::IntradayStockEnv::WriteObservationAt (the env's own layout code),
// and runs the policy deterministically (learn::PolicyRunner::Act).
//
// Portfolio-state assumption: the observation's portfolio part is
//   position fraction = `position` (default 0: flat),
//   unrealised PnL / C0 = 0 (as if any position had been opened at the latest close),
// which is exactly the env's state when flat. Session fraction left: the bars file
// normally ends inside a live session, so the session's length is taken as the most
// common length of the file's earlier sessions (the latest session's own length when it
// is already longer, or when the file holds one session only).
//
// Same market: the file must hold bars like the run's training data, else
// ComputeSignal refuses (Status::Refused, exit 2) naming the difference, unless
// allow_mismatch is set. Compared with the run's [data] (the training file read again, or
// the synthetic market regenerated):
//   - bar size: the median spacing of consecutive bars within a session;
//   - symbol: when both have a real symbol (a symbol column, [data] symbol, or the
//     synthetic market's), not one named after the file;
//   - time zone: the UTC offsets written in the file's timestamps must be the run's zone's
//     offsets at those bars (the file is read in the run's [data] timezone) or, when the
//     run's data carried offsets that zone does not have, offsets the training data had.
//     A file of naive times is read in the run's zone and cannot be compared.
//   - session: with [data] session, some bar of the file must start inside it.
// When the run's training file is no longer there, only the symbol from [data] symbol is
// compared.
//
// The session's closing bar: `session_closing` (the latest bar is the last of a session
// of session_bars bars). The environment flattens every position at that close and takes
// no decision there, so the signal is that flatten: SELL when `position` > 0, BUY when
// < 0, HOLD when flat, with target exposure 0 (target_position mode) or amount 1
// (original mode: all of it), and a note; `raw_action` keeps what the policy said.
//
// Bars needed: at least the feature warm-up + nlags + 1 (fewer is an InvalidArgument that
// names both numbers). Indicators with recursive smoothing (RSI, ATR, MACD, ADX) and the
// rolling_zscore normaliser depend on how much history precedes a bar, so a file that
// starts later than the training data gives values close to, not identical with, those of
// the full history; give a few hundred bars more than the minimum.
//
// Not thread-safe (the learner's thread counts are process-wide).
#ifndef RLT_EVALRUN_SIGNAL_H_
#define RLT_EVALRUN_SIGNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::evalrun {

struct SignalRequest {
  std::string run_dir;    // a run directory written by `rltrade train` (intraday env)
  std::string bars_file;  // recent bars, CSV (market/csv.h); the latest row is decided on
  // "" = RUN_DIR/best when the run has one, else RUN_DIR/final; "best", "final" or a
  // checkpoint directory (runlog::ChooseCheckpoint).
  std::string checkpoint;
  double position = 0.0;        // current exposure, shares x price / net worth (0 = flat)
  bool allow_mismatch = false;  // accept bars whose size, symbol or zone differ from the run's
  // accept bars whose sessions of the run's training range differ from the run's record of
  // them (train/data_record.h)
  bool allow_data_change = false;
  // A run of several symbols ([data] symbols): the symbol whose bars `bars_file` holds and
  // whose normaliser and one-hot id the policy sees (required for such a run).
  std::string symbol;
};

struct Signal {
  std::string time;  // the latest bar's time, ISO 8601 with its UTC offset
  std::string symbol;
  int64_t bars_used = 0;         // bars read from the file
  int32_t bar = 0;               // index of the latest bar
  std::string action_mode;       // "original" | "target_position"
  std::string action;            // BUY | SELL | HOLD (target mode: relative to `position`)
  double amount = 0.0;           // original mode: fraction of cash (BUY) or capacity (SELL); 0 HOLD
  double target_exposure = 0.0;  // target_position mode: clamped a[0], in [-1, 1]
  double value = 0.0;            // the critic's value estimate
  int32_t session_bars = 0;      // assumed bars in the latest bar's session
  bool session_closing = false;  // the latest bar closes its session: the decision is the
                                 // flatten the env does there (see above)
  std::vector<std::string> mismatches;  // differences from the run's data (allow_mismatch)
  std::vector<float> observation;       // what the policy saw (obs_dim)
  std::vector<float> raw_action;        // the policy's action (act_dim), before decoding
  std::string checkpoint;               // the checkpoint decided with (its directory)
  std::string json;                     // {"time", "action", "amount"|"target_exposure", "value",
                                        //  "symbol", "bars_used", "checkpoint"} + "\n"
  std::string text;                     // human-readable, for the terminal
  // A seed ensemble's signal (ComputeEnsembleSignal): the method, and every seed's own
  // signal in seed order (the fields above are then the ensemble's).
  std::string ensemble_method;
  std::vector<uint64_t> seed_ids;
  std::vector<Signal> seed_signals;
};

Result<Signal> ComputeSignal(const SignalRequest& request);

// `rltrade signal RUN` on a multi-seed run: every seed's signal (ComputeSignal on
// RUN/seed_<s>, checked as for one run) and the ensemble's decision (evalrun/ensemble.h),
// decoded from the seeds' combined raw actions as one policy's would be (value: the mean
// of the seeds' value estimates). request.run_dir is RUN; `method` "" = the default for
// the run's action mode. json: the ensemble's keys at the top level (as one run's, so
// consumers of one run's signal read the ensemble's decision) with "checkpoint":
// "ensemble", plus "ensemble": {"method", "seeds", "checkpoints"} and "seeds": [{"seed",
// "action", "target_exposure" | "amount", "value", "raw_action", "checkpoint"}].
Result<Signal> ComputeEnsembleSignal(const SignalRequest& request,
                                     const std::vector<uint64_t>& seeds,
                                     const std::vector<std::string>& seed_runs,
                                     const std::string& method);

}  // namespace rlt::evalrun

#endif  // RLT_EVALRUN_SIGNAL_H_
