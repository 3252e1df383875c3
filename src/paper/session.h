// rltrade paper: one paper-trading session as an object (RunPaper in paper.h is its driver).
//
// The flow of a bar: feed -> features -> decision -> orders -> journal.
//  - session.cc          construction, the bar (OnBar): features, the session's open and
//                        close, the in-process fills, the decision;
//  - session_orders.cc   orders and fills: sizing bounds, the risk gate, the tcp broker's
//                        orders, retries and fills, the stale feed;
//  - session_restart.cc  the journal: a restart's checks, its orders without an outcome, its
//                        bars and fills re-run, the positions reconciled with the broker;
//  - session_feeds.cc    the feeds' loops (replay, stdin, tcp) and live-bar admission;
//  - session_outputs.cc  status.json, summary.json and the evaluation's files;
//  - session_external.cc an outside broker (external_broker.h: the Python package's
//                        bridge): orders submitted as the in-process broker fills them,
//                        its fills and rejects, its positions on a (re)start.
// The policy comes through SessionPolicy, so the session is tested in process with a
// policy of the test's own (session_test.cc). Thread safety: none; one owner.
#ifndef RLT_PAPER_SESSION_H_
#define RLT_PAPER_SESSION_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "env/env.h"
#include "env/envs/intraday.h"
#include "env/envs/intraday_book.h"
#include "evalrun/backtest.h"
#include "features/incremental.h"
#include "market/bars.h"
#include "market/calendar.h"
#include "market/timezone.h"
#include "paper/external_broker.h"
#include "paper/feed.h"
#include "paper/journal.h"
#include "paper/paper.h"
#include "paper/risk.h"
#include "paper/status_file.h"
#include "paper/tcp_broker.h"
#include "runlog/manifest.h"

namespace rlt::paper {

// The decision maker: the run's checkpoint (RunPaper) or a test's.
class SessionPolicy {
 public:
  virtual ~SessionPolicy() = default;
  // One deterministic action for one observation.
  virtual void Act(const float* obs, float* action) = 0;
  virtual void ResetState() = 0;
  virtual bool recurrent() const = 0;
};

// What a live session expects of a session, from the run's own bars: its length in bars
// (the most common; ties: the longer), the local minute of its last bar (the most common),
// of its first bar (the earliest) and the bar size (the median spacing within sessions).
struct SessionShape {
  int32_t bars = 0;
  int last_minute = 0;
  int first_minute = 0;
  int64_t bar_seconds = 60;
};
SessionShape ShapeOf(const market::Bars& bars);

// What a session is set up from (RunPaper loads it from RUN_DIR).
struct SessionSetup {
  PaperRequest request;
  FeedSpec feed;
  std::string checkpoint;  // an ensemble's: its seeds' checkpoints, joined with ", "
  // A multi-seed run's policy: the seed traded, or the ensemble's method and seeds
  // (journaled in the start line, compared on a restart).
  std::optional<uint64_t> seed;
  std::string ensemble_method;
  std::vector<uint64_t> ensemble_seeds;
  // The run of every policy that trades (one, or every seed of an ensemble) and its
  // checkpoint directory.
  std::vector<std::string> policy_runs, policy_checkpoints;
  std::string journal_dir;
  env::IntradayOptions options;
  const market::Bars* data_bars = nullptr;  // the replayed file's bars; live: the run's
  market::TimeZone tz = market::TimeZone::Utc();
  int32_t start_date = 0;  // yyyymmdd; 0: none
  std::optional<RiskLimits> limits;
  bool in_sample = false;  // the traded dates overlap training (--allow-in-sample)
  // A run of several symbols trained with [features] symbol_id: the traded symbol's one-hot
  // columns, appended to every feature row as training appended them. Empty otherwise.
  std::vector<float> symbol_id;
  // [data] calendar: a live session ends at its own day's close (an early close), and a
  // bar of a day without a session is outside it. Null: every day has the run's usual hours.
  std::shared_ptr<const market::ExchangeCalendar> calendar;
  // An outside broker (the request's broker is then "python"): the session's orders go to
  // it when the in-process broker would fill them, sized the same way, and are booked when
  // it reports their fills. Null: the request's broker (sim or tcp).
  std::shared_ptr<ExternalBroker> external;
};

// The client order id of the order that fills at `bar`: "b<bar>" (suffixes follow it).
std::string OrderId(int32_t bar);

class PaperSession {
 public:
  using Json = nlohmann::ordered_json;
  using Clock = std::chrono::steady_clock;

  // `stream` computes the run's features; `line_feed` (stdin) and `broker` (tcp) as the
  // feed needs. Creates no file.
  PaperSession(SessionSetup setup, features::IncrementalFeatures stream,
               std::unique_ptr<SessionPolicy> policy, std::unique_ptr<LineFeed> line_feed,
               std::unique_ptr<TcpBroker> broker);
  ~PaperSession();
  PaperSession(const PaperSession&) = delete;
  PaperSession& operator=(const PaperSession&) = delete;

  // Takes the journal directory (created if new; locked for the life of the session as run
  // directories are, runlog::RunLock), opens the journal, checks a restart's journal is
  // this session's and journals the start. Errors: a directory that is not a journal (other
  // files in it, a first line that is not a start line: Refused), a journal another
  // process holds (Refused), a corrupt line (naming file:line), another session's journal.
  Status OpenJournal();
  // Runs the feed to its end (or a stop signal), then Finish().
  Result<PaperOutcome> Run();
  // The session's outputs after the feed ended: the last session closed, the evaluation's
  // files and summary.json written, the end journaled.
  Result<PaperOutcome> Finish();
  // After an error: status.json says "failed", with the message (once the journal is open).
  void MarkFailed(const Status& error);

  // One bar of the stream (already appended to bars()): features, fills, decision.
  Status OnBar(int32_t t, Clock::time_point arrived, int64_t seq);
  // A live feed's bar (or, from_journal, a restart's journaled one): checked
  // (LiveBarProblem), appended and handled. A bar not after the last one is skipped (a
  // restart's feed repeating bars it had) or counted out of order; a bad bar is dropped,
  // counted and journaled as a feed note; a bar outside the run's session hours is
  // dropped and counted.
  Status TakeLiveBar(const FeedBar& b, bool from_journal = false);
  // "" when a live bar may be taken, else why not: a price that is not a positive finite
  // number, a high below the low, a negative volume, a price more than kMaxPriceJump times
  // off the last close (the run's last close before the first bar), a time more than a
  // day ahead of the wall clock. *outside_session: the bar is after the run's usual last
  // bar of a day or before its earliest first bar.
  std::string LiveBarProblem(const FeedBar& b, bool* outside_session) const;
  static constexpr double kMaxPriceJump = 100.0;
  static constexpr int64_t kMaxFutureSeconds = 86400;

  const market::Bars& bars() const { return *bars_; }
  const env::IntradayBook& book() const { return walkers_[0].book; }
  const evalrun::BacktestResult& result() const { return walkers_[0].result; }
  const Journal& journal() const { return *journal_; }
  const std::string& journal_dir() const { return setup_.journal_dir; }
  // Closes the journal and lets go of its directory's lock (a driven session that finished
  // or stopped: another session, e.g. its restart, may take the directory).
  void ReleaseJournal() {
    journal_.reset();
    journal_lock_.reset();
  }
  const SessionShape& shape() const { return shape_; }
  const market::TimeZone& timezone() const { return setup_.tz; }
  int64_t dropped_bad() const { return dropped_bad_; }
  int64_t dropped_outside_session() const { return dropped_hours_; }
  int64_t unknown_fills() const { return unknown_fills_; }
  // `lots` for `book` bounded by what the account can pay for: the position after the order, valued
  // at the higher of `lot_price` and the last trusted price (`trusted_lot_price`, the
  // previous bar's close), at most twice the net worth long, twice the net worth plus
  // max_short_value short. The environment's sizing stays well inside these, so the bound
  // only binds at a price no market makes. An order that reduces the position passes.
  int64_t BoundedLots(int64_t lots, double lot_price, double trusted_lot_price,
                      const env::IntradayBook& book) const;

  // An outside broker's session (session_external.cc). StartExternal(), after OpenJournal():
  // a restart's journaled bars re-run, its orders without an outcome submitted again, the
  // broker's positions reconciled with the journal's fills. OnExternalFill/OnExternalReject:
  // the broker's reports (during a call to the broker they wait until it returns, then
  // belong to the bar being handled; otherwise they are booked before the next bar). A fill
  // is the whole order's (quantity in shares; fee NaN: the run's cost model); an id this
  // session never sent is journaled and refused (Refused), as a quantity other than the
  // order's is (InvalidArgument). CheckAnswered(): every order of an earlier bar has a fill
  // or reject (else Unavailable, naming it).
  Status StartExternal();
  Status OnExternalFill(const std::string& id, double quantity, double price, double fee);
  Status OnExternalReject(const std::string& id, const std::string& reason, bool retryable);
  Status CheckAnswered() const;
  // "stale": the stale-feed rule, for a caller's feed that has no bar (the CLI's feeds
  // call it while they wait).
  Status CheckStaleNow() { return CheckStale(); }
  // Why the last live bar was dropped as bad ("" when it was taken).
  const std::string& last_bad_bar() const { return last_bad_bar_; }
  void set_end_reason(const std::string& reason) { end_reason_ = reason; }
  int64_t open_orders() const { return static_cast<int64_t>(open_orders_.size()); }
  // The outside broker is being called: its reports wait; the feed must not push bars.
  bool in_broker_call() const { return in_broker_call_; }

  // The tcp broker's messages (session_restart.cc, session_orders.cc).
  Status OnBrokerFill(const Fill& f, const std::deque<FeedBar>& waiting);
  Status OnReject(const Reject& rj);
  Status OnPositions(const Positions& p);

 private:
  // One portfolio walked through the sessions: the policy's, or a benchmark's.
  struct Walker {
    env::IntradayBook book;
    bool halted = false;        // risk: no new decisions for the rest of the session
    bool flatten_next = false;  // risk: flatten at the next bar
    evalrun::BacktestResult result;
    evalrun::RoundTrips trips;
    double session_start_worth = 0;
    std::vector<float> pending;  // the action decided at the previous bar; empty: none
    bool stopped = false;        // net worth fell to stop_fraction x capital
  };
  // An order sent to the tcp broker and not finished (no fill, reject or cancel yet).
  struct OpenOrder {
    int64_t lots = 0;  // signed
    int32_t bar = 0;   // the bar it is meant to fill at
    double price = 0;  // external broker: the price it was sized at
    std::string reason;
  };
  // An outside broker's report made during a call to it (booked when the call returned).
  struct ExternalReport {
    bool fill = true;
    std::string id, reason;
    int64_t lots = 0;
    double price = 0, fee = 0;
    bool retryable = false;
  };

  // session.cc
  int MinuteOfDay(int32_t t) const;
  bool IsLast(int32_t t) const;
  bool NextIsLast(int32_t t) const;
  int LastMinuteOf(int32_t t) const;
  double TimeLeft(int32_t t, const market::Session& s) const;
  double shares(int64_t lots) const { return static_cast<double>(lots) * lot_; }
  Status PushFeatures(int32_t t);
  Status OpenSessionAt(int32_t t);
  Status CloseSessionEarly(int32_t t, bool clear_pending);
  Status FillPending(int32_t t, bool last_bar);
  Status Decide(int32_t t, Clock::time_point arrived, bool first_bar);
  Status SendDecision(int32_t t, bool may_decide);
  Status FinishBar(int k, int32_t t, bool last_bar);
  Status EndOfBar(int k, int32_t t, bool last_bar, double worth);
  Status CheckDailyLimits(int32_t t, double worth);

  // session_orders.cc
  Status RiskLine(int32_t b, const std::string& id, const std::string& rule,
                  const std::string& detail);
  Status RecordFill(Walker& w, int32_t b, int64_t qty, double price, double cost,
                    double cash_before, bool is_policy, const std::string& id, const Json& extra);
  // fee NaN: the run's cost model (IntradaySizing::Cost), as the in-process broker charges.
  Status BookFill(const std::string& id, int64_t lots, double price, double fee, int32_t b,
                  const Json& extra, bool from_journal);
  Status BookJournaledFills(int32_t up_to);
  Status SendOrder(int32_t t, int64_t lots, const std::string& suffix);
  Result<int64_t> Checked(int32_t t, int64_t qty, const std::string& id, double price,
                          double last_price, int32_t order_bar);
  Status OnStale(int32_t t);
  Status CheckStale();

  // session_restart.cc
  Status CheckJournalDir() const;
  Status OpenJournalIn(const std::filesystem::path& dir);
  Status CheckSameSession(const Journal& journal, const Json& start_line) const;
  void LoadJournaledOrders();
  Status ReplayJournaledBars();
  Status Resync();

  // session_external.cc
  Status SubmitExternal(int32_t t, int64_t lots, double price, const std::string& id,
                        const std::string& reason);
  Status CallExternal(const ExternalOrder& order);
  Status DrainExternal(int32_t b, bool during_bar);
  Status BookExternalFill(const ExternalReport& r, int32_t b, bool during_bar);
  Status BookJournaledFillsOf(const std::string& id);
  Status Transmit(const std::string& id, const OpenOrder& order);
  // The orders without an outcome, sent again under their ids (after a (re)connect or a
  // restart).
  Status ResendOpenOrders();
  // A journaled order's or fill's signed quantity in lots (its "side" and "quantity").
  int64_t JournaledLots(const Json& line) const;

  // session_feeds.cc
  Status RunReplay();
  Status RunLineFeed();
  Status RunTcp();
  Status HandleBrokerEvent(const BrokerEvent& ev);
  Status TakeWaitingBars();
  bool Paced(int32_t t);

  // session_outputs.cc
  Status WriteStatus(int32_t t, const std::string& state, const std::string& error = "");
  PaperStatus BaseStatus(const std::string& state, const std::string& error) const;
  Status CheckDropped() const;
  Json SummaryJson(const PaperOutcome& out) const;
  Status WriteOutputs(PaperOutcome& out);

  SessionSetup setup_;
  const PaperRequest& r_;
  const env::IntradayOptions& o_;
  bool live_ = false, tcp_broker_ = false;
  SessionShape shape_;
  market::Bars live_bars_;    // a live feed's bars so far
  const market::Bars* bars_;  // the bars handled: the file's, or live_bars_
  features::IncrementalFeatures stream_;
  std::unique_ptr<SessionPolicy> policy_;
  std::unique_ptr<LineFeed> line_feed_;
  std::unique_ptr<TcpBroker> broker_;
  std::optional<RiskGate> gate_;
  std::optional<runlog::RunLock> journal_lock_;  // the journal directory's
  std::optional<Journal> journal_;

  env::IntradaySizing sizing_;
  double lot_ = 1, c0_ = 0;
  int64_t cols_ = 0;
  int window_ = 1, act_dim_ = 1;
  Walker walkers_[3];  // [0]: the policy; [1]: flat; [2]: buy-and-hold
  std::vector<float> rows_, obs_, action_;
  std::vector<double> latencies_;
  int64_t first_valid_ = -1, decisions_ = 0, bars_seen_ = 0, sessions_ = 0;
  int32_t active_session_ = -1;              // the session being traded, -1 between sessions
  bool session_open_ = false;                // the active session has not been closed yet
  int64_t orders_today_ = 0;                 // the policy's orders in the current (or last) session
  double day_start_worth_ = 0;               // the policy's net worth when that session started
  std::map<std::string, int64_t> refusals_;  // rule -> refused orders
  std::map<std::string, OpenOrder> open_orders_;  // tcp broker
  std::set<std::string> unanswered_;       // sent, no ack or reject yet: `ready` waits for them
  std::set<std::string> finished_;         // ids with a fill, reject or cancel
  std::map<int64_t, int32_t> bar_of_seq_;  // tcp feed: stream seq -> bar index
  std::deque<Json> journaled_fills_;       // a restart's tcp fills, booked again
  int64_t unknown_fills_ = 0;              // fills for ids this session never sent
  bool stale_ = false;  // no bar for stale_feed_seconds: no new orders until the next bar
  Clock::time_point last_arrival_, wall_start_, last_status_;
  int64_t started_time_ = 0;
  std::string end_reason_ = "end_of_data";
  int64_t last_seq_ = -1;  // tcp feed: the last stream seq handled
  // Live bars: received from the feed, dropped as bad, outside the session's hours, or out
  // of order; the last journaled bar's time (a restart's feed repeats bars up to it).
  int64_t received_ = 0, dropped_bad_ = 0, dropped_hours_ = 0, dropped_order_ = 0;
  int64_t journal_last_time_ = std::numeric_limits<int64_t>::min();
  // tcp loop state
  std::deque<FeedBar> waiting_;
  bool awaiting_positions_ = false;
  int64_t ready_due_ = -1;
  int64_t problems_shown_ = 0;
  // An outside broker
  bool external_ = false;
  bool in_broker_call_ = false;  // reports wait in external_reports_ until the call returns
  std::deque<ExternalReport> external_reports_;
  std::string last_bad_bar_;
};

}  // namespace rlt::paper

#endif  // RLT_PAPER_SESSION_H_
