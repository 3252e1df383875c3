// rltrade paper: a session driven from outside — the caller's feed pushes bars or ticks and
// the caller's broker (external_broker.h) fills the orders. The Python package's
// rltrade.paper.Session is this class; `rltrade paper` is RunPaper (paper.h).
//
// Open() loads and checks RUN_DIR as RunPaper does (the same request: start, journal, risk,
// checkpoint, seed or ensemble, symbol, account, fsync; feed and broker are "python" and
// journaled so) and takes the journal; Start() re-runs a restart's journaled bars, submits
// again the orders without an outcome and reconciles the broker's positions with the
// journal's fills. Everything after is PaperSession's code: the live-feed rules (bars checked, bad
// ones dropped and journaled, bars outside the session's hours dropped, sessions by local
// date), features, decisions, risk limits, the stale-feed rule (Idle()), the journal, the
// outputs (Finish()). An error that stops the session marks it failed (status.json), keeps
// the journal, and every later call returns it again; a bad bar or tick is dropped as the
// CLI's live feeds drop them and reported (DataError) without stopping the session.
// Thread safety: none; one owner (the Python binding holds the GIL throughout).
#ifndef RLT_PAPER_DRIVEN_H_
#define RLT_PAPER_DRIVEN_H_

#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "paper/external_broker.h"
#include "paper/feed.h"
#include "paper/paper.h"

namespace rlt::paper {

class PaperSession;

class DrivenSession {
 public:
  // Open() checks the run and takes the journal; Start() (once, before any bar) re-runs a
  // restart's journal, submits again its orders without an outcome and reconciles the
  // broker's positions — the first calls to the broker, which may report at once.
  static Result<std::unique_ptr<DrivenSession>> Open(PaperRequest request,
                                                     std::shared_ptr<ExternalBroker> broker);
  Status Start();
  ~DrivenSession();
  DrivenSession(const DrivenSession&) = delete;
  DrivenSession& operator=(const DrivenSession&) = delete;

  Status OnBar(const FeedBar& bar);
  // A trade (price, size) at time_ms (UTC): aggregated into the run's bars; a tick of a
  // later interval completes the open bar, which is then handled as OnBar's.
  Status OnTick(int64_t time_ms, double price, double size);
  Status OnFill(const std::string& client_order_id, double quantity, double price, double fee);
  Status OnReject(const std::string& client_order_id, const std::string& reason, bool retryable);
  // For a feed with nothing new: a tick bar whose interval ended over a second ago is
  // completed, and the stale-feed rule applied.
  Status Idle();
  // The outputs (daily_returns.csv, trades.csv, equity.csv, summary.json) written, the end
  // journaled; interrupted: summary.json's "end" is "signal" (Ctrl-C), as the CLI's.
  Result<PaperOutcome> Finish(bool interrupted);
  // Marks the session failed with `error` (status.json), as the CLI does on an error.
  void Fail(const Status& error);

  const std::string& journal_dir() const;
  bool finished() const;
  bool failed() const;  // an error stopped the session
  const PaperSession& session() const;

  struct Impl;

 private:
  explicit DrivenSession(std::unique_ptr<Impl> impl);
  Status Guard(Status s);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlt::paper

#endif  // RLT_PAPER_DRIVEN_H_
