// rltrade paper: a trained run trading a bar stream (see paper.h).
#include "paper/paper.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "config/config.h"
#include "core/civil_time.h"
#include "core/file_io.h"
#include "core/json_text.h"
#include "core/options.h"
#include "env/envs/intraday.h"
#include "env/envs/intraday_book.h"
#include "eval/metrics_json.h"
#include "eval/outputs.h"
#include "evalrun/backtest.h"
#include "features/incremental.h"
#include "learn/inference.h"
#include "market/csv.h"
#include "market/date_range.h"
#include "market/sessions.h"
#include "market/synth.h"
#include "market/timezone.h"
#include "paper/feed.h"
#include "paper/journal.h"
#include "paper/risk.h"
#include "paper/tcp_broker.h"
#include "train/train.h"
#include "train/train_options.h"

namespace rlt::paper {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

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

std::string NowStamp() { return FormatPathStamp(static_cast<int64_t>(std::time(nullptr))); }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(k, v.size() - 1)];
}

int MinuteOfDay(const market::Bars& bars, size_t t) {
  const int64_t local = bars.time[t] + bars.utc_offset[t];
  return static_cast<int>(((local % 86400) + 86400) % 86400 / 60);
}

// What a live session expects of a session, from the run's own bars: its length in bars
// (the most common; ties: the longer), the local minute of its last bar (the most common)
// and the bar size (the median spacing within sessions).
struct SessionShape {
  int32_t bars = 0;
  int last_minute = 0;
  int64_t bar_seconds = 60;
};

template <typename T>
T Mode(const std::vector<T>& values) {
  std::map<T, int> counts;
  for (const T& v : values) ++counts[v];
  T best{};
  int n = 0;
  for (const auto& [v, c] : counts) {
    if (c >= n) {
      n = c;
      best = v;
    }
  }
  return best;
}

SessionShape ShapeOf(const market::Bars& bars) {
  SessionShape shape;
  std::vector<int32_t> sizes;
  std::vector<int> last;
  for (const market::Session& s : bars.sessions) {
    sizes.push_back(s.size());
    last.push_back(MinuteOfDay(bars, static_cast<size_t>(s.end - 1)));
  }
  shape.bars = Mode(sizes);
  shape.last_minute = Mode(last);
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < bars.size(); ++i) {
    if (bars.session[i] == bars.session[i - 1]) gaps.push_back(bars.time[i] - bars.time[i - 1]);
  }
  if (!gaps.empty()) {
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    shape.bar_seconds = std::max<int64_t>(1, gaps[gaps.size() / 2]);
  }
  return shape;
}

// Appends a live bar to `bars` with its session (by local date), as AssignSessions would.
void AppendBar(market::Bars& bars, const FeedBar& b, const market::TimeZone& tz) {
  const int32_t offset = tz.OffsetAt(b.time);
  const int32_t date = market::LocalDateKey(b.time, offset);
  const int32_t t = static_cast<int32_t>(bars.size());
  bars.time.push_back(b.time);
  bars.utc_offset.push_back(offset);
  bars.open.push_back(b.open);
  bars.high.push_back(b.high);
  bars.low.push_back(b.low);
  bars.close.push_back(b.close);
  bars.volume.push_back(b.volume);
  if (bars.sessions.empty() || bars.sessions.back().date != date) {
    bars.sessions.push_back(market::Session{date, t, t + 1});
  } else {
    bars.sessions.back().end = t + 1;
  }
  bars.session.push_back(static_cast<int32_t>(bars.sessions.size()) - 1);
  bars.bar_in_session.push_back(t - bars.sessions.back().begin);
  bars.last_in_session.push_back(0);
}

// SIGINT/SIGTERM end a session cleanly (its outputs are written); restored afterwards.
std::atomic<int> g_stop_signal{0};
void OnStopSignal(int sig) { g_stop_signal.store(sig); }
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal.store(0);
    old_int_ = std::signal(SIGINT, OnStopSignal);
    old_term_ = std::signal(SIGTERM, OnStopSignal);
  }
  ~StopSignals() {
    std::signal(SIGINT, old_int_);
    std::signal(SIGTERM, old_term_);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  void (*old_int_)(int) = SIG_DFL;
  void (*old_term_)(int) = SIG_DFL;
};

// An order sent to the tcp broker and not finished (no fill, reject or cancel yet).
struct OpenOrder {
  int64_t lots = 0;  // signed
  int32_t bar = 0;   // the bar it is meant to fill at
};

}  // namespace

Result<PaperOutcome> RunPaper(const PaperRequest& r) {
  RLT_ASSIGN_OR_RETURN(const FeedSpec feed, ParseFeedSpec(r.feed));
  const bool live = feed.kind != FeedSpec::Kind::kReplay;
  const bool tcp_broker = r.broker != "sim";
  if (tcp_broker) {
    Result<BrokerAddress> parsed = ParseBrokerAddress(r.broker);
    if (!parsed.ok()) {
      return Status::InvalidArgument("--broker " + r.broker +
                                     ": expected sim or tcp:HOST:PORT (e.g. tcp:127.0.0.1:7001)");
    }
    const BrokerAddress& a = *parsed;
    if (feed.kind != FeedSpec::Kind::kTcp || a.host != feed.host || a.port != feed.port) {
      return Status::InvalidArgument("--broker " + r.broker +
                                     ": the tcp broker fills at the bars its server streams; " +
                                     "give the same server as the feed: --feed " + r.broker);
    }
  }
  if (r.fsync != "bar" && r.fsync != "session") {
    return Status::InvalidArgument("--fsync " + r.fsync + ": expected bar or session");
  }
  const fs::path run_dir(r.run_dir);
  RLT_ASSIGN_OR_RETURN(config::Config config,
                       config::Config::LoadFile((run_dir / "config.toml").string()));
  const std::string norm_path = (run_dir / "normalizer.json").string();
  if (!fs::exists(norm_path)) {
    return Status::InvalidArgument(r.run_dir +
                                   " has no normalizer.json: paper trading needs a run of a "
                                   "market environment (intraday)");
  }
  RLT_ASSIGN_OR_RETURN(features::Normalizer norm, features::Normalizer::LoadFile(norm_path));
  // The run's settings, and a replayed file's bars read as the run reads its data
  // (timezone, symbol, on_bad_rows, sessions); a live session reads the run's own bars
  // for the shape of a session. Features come from the stream.
  train::EnvSetupOverrides overrides;
  overrides.normalizer = &norm;
  if (!live) overrides.data_file = feed.file;
  RLT_ASSIGN_OR_RETURN(train::EnvSetup setup, train::BuildEnvSetup(config, overrides));
  if (setup.id != "intraday") {
    return Status::InvalidArgument("rltrade paper trades the intraday environment; " + r.run_dir +
                                   " trained " + setup.id);
  }
  env::IntradayOptions o;
  RLT_RETURN_IF_ERROR(SetOptions(o, setup.context.settings, "[env]"));
  const market::Bars& data_bars = setup.context.market->bars;
  market::Bars live_bars;  // a live feed's bars so far
  live_bars.symbol = data_bars.symbol;
  live_bars.timezone = data_bars.timezone;
  const market::Bars& bars = live ? live_bars : data_bars;
  const SessionShape shape = ShapeOf(data_bars);
  RLT_ASSIGN_OR_RETURN(const market::TimeZone tz, market::TimeZone::Load(data_bars.timezone));
  int32_t start_date = 0;
  if (!r.start.empty()) {
    RLT_ASSIGN_OR_RETURN(const market::DateRange d, market::DateRange::Parse(r.start + ":end"));
    start_date = d.first;
  }
  RLT_ASSIGN_OR_RETURN(features::IncrementalFeatures stream,
                       features::IncrementalFeatures::Create(setup.features.preset, &norm));
  const int64_t cols = stream.cols();
  const env::EnvSpec spec = env::IntradayStockEnv::MakeSpec(cols, o);
  const std::string checkpoint = r.checkpoint.empty() ? (run_dir / "final").string() : r.checkpoint;
  RLT_ASSIGN_OR_RETURN(
      std::unique_ptr<learn::PolicyRunner> policy,
      learn::PolicyRunner::Load(checkpoint, static_cast<int>(spec.obs_dim), spec.action));
  const fs::path journal_dir =
      r.journal_dir.empty() ? run_dir / "paper" / NowStamp() : fs::path(r.journal_dir);
  std::optional<RiskGate> gate;
  if (!r.risk_path.empty()) {
    RLT_ASSIGN_OR_RETURN(const RiskLimits limits, LoadRiskLimits(r.risk_path));
    gate.emplace(limits);
  }
  std::unique_ptr<LineFeed> line_feed;
  if (feed.kind == FeedSpec::Kind::kStdin) {
    market::CsvReadOptions ro;
    ro.timezone = data_bars.timezone;
    ro.symbol = setup.data.symbol;
    RLT_ASSIGN_OR_RETURN(ro.session,
                         market::ParseSessionHours(setup.data.session, "[data] session"));
    line_feed = std::make_unique<LineFeed>(STDIN_FILENO, "stdin", ro, shape.bar_seconds);
  }
  std::unique_ptr<TcpBroker> broker;
  if (feed.kind == FeedSpec::Kind::kTcp) {
    TcpBrokerOptions bo;
    bo.host = feed.host;
    bo.port = feed.port;
    bo.account = r.account;
    broker = std::make_unique<TcpBroker>(bo);
    // Connected (and the hello accepted: account, credential) before the journal is
    // created: a server that is down or refuses leaves nothing behind.
    RLT_RETURN_IF_ERROR(broker->Connect());
    const ServerHello& hello = broker->hello();
    if (std::find(hello.symbols.begin(), hello.symbols.end(), data_bars.symbol) ==
        hello.symbols.end()) {
      std::string listed;
      for (const std::string& sym : hello.symbols) listed += (listed.empty() ? "" : ", ") + sym;
      return Status::InvalidArgument("--feed " + r.feed + ": the server streams " + listed +
                                     ", not the run's symbol " + data_bars.symbol);
    }
  }
  std::error_code ec;
  fs::create_directories(journal_dir, ec);
  if (ec) return Status::IoError(journal_dir.string() + ": " + ec.message());
  RLT_ASSIGN_OR_RETURN(Journal journal, Journal::Open((journal_dir / "journal.jsonl").string()));
  const Json start_line = {
      {"type", "start"},      {"run_dir", r.run_dir},  {"checkpoint", checkpoint},
      {"feed", r.feed},       {"broker", r.broker},    {"start", r.start},
      {"account", r.account}, {"symbol", bars.symbol}, {"initial_capital", o.initial_capital}};
  const bool restarting = !journal.previous().empty();
  if (restarting) {
    // A restart: the session re-runs the bars it had (a replay from the feed's first bar,
    // a live feed from the journal's bars) and journals only what the previous process
    // did not (no order id is sent twice); it must be the same session.
    const Json& was = journal.previous().front();
    for (const char* key : {"run_dir", "checkpoint", "feed", "broker", "start", "account"}) {
      if (!was.contains(key) || was[key] != start_line[key]) {
        return Status::Refused(journal.path() + " is the journal of " + "another session: its " +
                               key + " is " +
                               (was.contains(key) ? was[key].dump() : std::string("missing")) +
                               ", this one's " + start_line[key].dump() +
                               "; restart it with its own arguments or choose another --journal");
      }
    }
    RLT_RETURN_IF_ERROR(journal.Emit({{"type", "restart"},
                                      {"journaled_lines", journal.previous().size()},
                                      {"time", FormatIso8601(std::time(nullptr), 0)}}));
    if (!r.quiet) {
      std::fprintf(stderr, "restarting the session of %s from its %zu journaled events\n",
                   journal_dir.c_str(), journal.previous().size());
    }
  }
  RLT_RETURN_IF_ERROR(journal.Emit(start_line));

  std::map<std::string, int64_t> refusals;  // rule -> refused orders
  auto minute_of_day = [&bars](int32_t t) { return MinuteOfDay(bars, static_cast<size_t>(t)); };
  auto risk_line = [&](int32_t b, const std::string& id, const std::string& rule,
                       const std::string& detail) -> Status {
    ++refusals[rule];
    return journal.Emit({{"type", "risk"},
                         {"bar", b},
                         {"time", evalrun::BarTime(bars, b)},
                         {"client_order_id", id},
                         {"rule", rule},
                         {"detail", detail}});
  };
  const env::IntradaySizing sizing = env::SizingOf(o);
  const bool target_mode = sizing.target_mode;
  const double lot = o.lot_size, c0 = o.initial_capital;
  const int window = o.nlags + 1;
  const int act_dim = static_cast<int>(spec.action.dim);
  // walkers[0]: the policy; [1]: flat; [2]: buy-and-hold (the evaluation's benchmarks).
  Walker walkers[3];
  for (Walker& w : walkers) {
    w.book.cash = c0;
    w.session_start_worth = c0;
  }
  std::vector<float> rows(static_cast<size_t>(window * cols), 0.0f);  // the last `window` rows
  std::vector<float> obs(spec.obs_dim), action(act_dim);
  std::vector<double> latencies;
  int64_t first_valid = -1, decisions = 0;
  int32_t active_session = -1;  // the session being traded, -1 between sessions
  bool session_open = false;    // the active session has not been closed yet
  PaperOutcome out;
  int64_t orders_today = 0;     // the policy's orders in the current (or last) session
  double day_start_worth = c0;  // the policy's net worth when that session started
  out.journal_dir = journal_dir.string();
  auto shares = [lot](int64_t lots) { return static_cast<double>(lots) * lot; };
  // Live sessions end at the run's usual last bar (its local minute); a replay's at the
  // file's own last bar of each session.
  auto is_last = [&](int32_t t) {
    return live ? minute_of_day(t) >= shape.last_minute : bars.last_in_session[t] != 0;
  };
  auto next_is_last = [&](int32_t t) {
    return minute_of_day(t) + static_cast<int>(shape.bar_seconds / 60) >= shape.last_minute;
  };
  // The observation's time left in the session: bars to its last, over its length - 1.
  auto time_left = [&](int32_t t, const market::Session& s) {
    if (!live) return static_cast<double>(s.end - 1 - t) / (s.size() - 1);
    const int32_t k = bars.bar_in_session[t];
    return static_cast<double>(std::max(0, shape.bars - 1 - k)) / (shape.bars - 1);
  };

  // ---- fills and orders ----
  // Client order ids: "b<bar>" for the decision order that fills at bar b, "b<bar>-close"
  // for the session's closing flatten, "b<bar>-risk" for a flatten the risk limits ordered,
  // "b<bar>-stale" for the stale feed's; a retry after a retryable reject adds "-r<n>"
  // (unique, and the same on every run of the session).
  auto record_fill = [&](Walker& w, int32_t b, int64_t qty, double price, double cost,
                         double cash_before, bool is_policy, const std::string& id,
                         const Json& extra) -> Status {
    const evalrun::FillRow f{b, shares(qty), price, cost, shares(w.book.shares), w.book.cash};
    w.trips.Fill(f, cash_before, w.result.round_trip_pnls);
    w.result.fills.push_back(f);
    if (!is_policy) return Status::Ok();
    const char* side = qty > 0 ? "BUY" : "SELL";
    if (!tcp_broker) {  // the in-process broker: the order is sent as it fills
      ++orders_today;
      RLT_RETURN_IF_ERROR(journal.Emit({{"type", "order"},
                                        {"client_order_id", id},
                                        {"bar", b},
                                        {"side", side},
                                        {"quantity", std::fabs(f.quantity)}}));
    }
    Json fill = {
        {"type", "fill"},
        {"client_order_id", id},
        {"bar", b},
        {"time", b < static_cast<int32_t>(bars.size()) ? evalrun::BarTime(bars, b) : std::string()},
        {"side", side},
        {"quantity", std::fabs(f.quantity)},
        {"price", price},
        {"cost", cost},
        {"position_after", f.position_after},
        {"cash_after", f.cash_after}};
    for (const auto& [k, v] : extra.items()) fill[k] = v;
    return journal.Emit(fill);
  };
  std::map<std::string, OpenOrder> open_orders;  // tcp broker
  std::set<std::string> unanswered;       // sent, no ack or reject yet: `ready` waits for them
  std::set<std::string> finished;         // ids with a fill, reject or cancel
  std::map<int64_t, int32_t> bar_of_seq;  // tcp feed: stream seq -> bar index
  for (const Json& line : journal.previous()) {  // a restart's orders without an outcome
    const std::string type = line.value("type", "");
    const std::string id = line.value("client_order_id", "");
    if (type == "order" && tcp_broker && !finished.count(id)) {
      const double q = line.value("quantity", 0.0) / lot;
      open_orders[id] = {
          static_cast<int64_t>(std::llround(line.value("side", "") == "BUY" ? q : -q)),
          line.value("bar", 0)};
    } else if (type == "fill" || type == "reject" || type == "cancelled") {
      finished.insert(id);
      open_orders.erase(id);
    }
  }
  // The journal's tcp fills, booked again (before the bar they filled at) on a restart.
  std::deque<Json> journaled_fills;
  if (tcp_broker) {
    for (const Json& line : journal.previous()) {
      if (line.value("type", "") == "fill") journaled_fills.push_back(line);
    }
  }
  // A fill the broker reported (or, from_journal, the journal holds): booked at its price
  // and fee. The broker may report an outcome again (idempotent re-sends): booked once.
  auto book_fill = [&](const std::string& id, int64_t lots, double price, double fee, int32_t b,
                       const Json& extra, bool from_journal) -> Status {
    if (!from_journal) unanswered.erase(id);
    if (!finished.insert(id).second && !from_journal) return Status::Ok();
    open_orders.erase(id);
    Walker& w = walkers[0];
    const double cash_before = w.book.cash;
    w.book.ExecuteAt(lots, price * lot, fee);
    return record_fill(w, b, lots, price, fee, cash_before, true, id, extra);
  };
  // The journal's fills up to bar `up_to`, booked again on a restart (tcp broker).
  auto book_journaled_fills = [&](int32_t up_to) -> Status {
    while (!journaled_fills.empty() && journaled_fills.front().value("bar", 0) <= up_to) {
      const Json f = journaled_fills.front();
      journaled_fills.pop_front();
      const double q = f.value("quantity", 0.0) / lot;
      const int64_t lots = std::llround(f.value("side", "") == "BUY" ? q : -q);
      RLT_RETURN_IF_ERROR(book_fill(f.value("client_order_id", ""), lots, f.value("price", 0.0),
                                    f.value("cost", 0.0), f.value("bar", up_to), Json::object(),
                                    true));
    }
    return Status::Ok();
  };
  auto send_order = [&](int32_t t, int64_t lots, const std::string& suffix) -> Status {
    const std::string id = "b" + std::to_string(t + 1) + suffix;
    if (lots == 0 || journal.Has("order:" + id)) return Status::Ok();  // sent before
    const char* side = lots > 0 ? "BUY" : "SELL";
    RLT_RETURN_IF_ERROR(journal.Emit({{"type", "order"},
                                      {"client_order_id", id},
                                      {"bar", t + 1},
                                      {"decided_bar", t},
                                      {"side", side},
                                      {"quantity", std::fabs(shares(lots))}}));
    open_orders[id] = {lots, t + 1};
    unanswered.insert(id);
    ++orders_today;
    // A send that fails (disconnected) is re-sent after the reconnect.
    (void)broker->SendOrder(
        NewOrder{id, bars.symbol, lots > 0 ? Side::kBuy : Side::kSell, std::fabs(shares(lots))});
    return Status::Ok();
  };
  // Risk limits on an order the policy (or a flatten) is about to send; 0 when refused.
  auto checked = [&](int32_t t, int64_t qty, const std::string& id, double price, double last_price,
                     int32_t order_bar) -> Result<int64_t> {
    if (!gate || qty == 0) return qty;
    const Walker& w = walkers[0];
    OrderCheck check;
    check.quantity = shares(qty);
    check.position = shares(w.book.shares);
    check.price = price;
    check.last_price = last_price;
    check.net_worth = w.book.NetWorth(last_price * lot);
    check.minute_of_day = minute_of_day(order_bar);
    check.time = bars.time[order_bar];
    std::string detail;
    const std::string rule = gate->Check(check, &detail);
    if (rule.empty()) return qty;
    RLT_RETURN_IF_ERROR(risk_line(t, id, rule, detail));
    return int64_t{0};
  };

  // ---- the stale feed ----
  bool stale = false;  // no bar for stale_feed_seconds: no new orders until the next bar
  auto last_arrival = Clock::now();
  auto on_stale = [&](int32_t t) -> Status {
    if (stale || !gate || t < 0 || !session_open) return Status::Ok();
    stale = true;
    Walker& w = walkers[0];
    const bool flatten = gate->limits().flatten_on_stale && w.book.shares != 0;
    RLT_RETURN_IF_ERROR(risk_line(t, "", "stale_feed",
                                  "no bar for " + evalrun::Num(gate->limits().stale_feed_seconds) +
                                      " s: no new orders" + (flatten ? ", flatten" : "")));
    if (tcp_broker) {  // working orders are cancelled; a flatten goes out now
      for (const auto& [id, order] : open_orders) (void)broker->CancelOrder(id);
      if (flatten) RLT_RETURN_IF_ERROR(send_order(t, -w.book.shares, "-stale"));
    } else if (flatten) {
      w.flatten_next = true;
    }
    return Status::Ok();
  };

  // ---- status.json ----
  const auto wall_start = Clock::now();
  const int64_t started_time = static_cast<int64_t>(std::time(nullptr));
  auto last_status = Clock::now() - std::chrono::hours(1);
  auto write_status = [&](int32_t t, const std::string& state) -> Status {
    if (t < 0) return Status::Ok();
    const Walker& w = walkers[0];
    const double close_lot = bars.close[t] * lot;
    const double worth = w.book.NetWorth(close_lot);
    Json risk = {{"halted", w.halted}, {"stopped", w.stopped}, {"stale_feed", stale}};
    Json counts = Json::object();
    for (const auto& [rule, n] : refusals) counts[rule] = n;
    risk["refusals"] = counts;
    Json open = Json::array();
    for (const auto& [id, order] : open_orders) open.push_back(id);
    const Json st = {{"kind", "paper"},
                     {"pid", static_cast<int64_t>(::getpid())},
                     {"state", state},
                     {"run_dir", r.run_dir},
                     {"feed", r.feed},
                     {"broker", r.broker},
                     {"start_time", started_time},
                     {"updated_time", static_cast<int64_t>(std::time(nullptr))},
                     {"bars", out.bars},
                     {"last_bar", t},
                     {"last_bar_time", evalrun::BarTime(bars, t)},
                     {"session_date", FormatDate(bars.sessions[bars.session[t]].date)},
                     {"trading", active_session == bars.session[t]},
                     {"position", shares(w.book.shares)},
                     {"cash", w.book.cash},
                     {"net_worth", worth},
                     {"pnl_today", worth - day_start_worth},
                     {"orders_today", orders_today},
                     {"open_orders", open},
                     {"fills", static_cast<int64_t>(w.result.fills.size())},
                     {"risk", risk}};
    last_status = Clock::now();
    return WriteFileAtomic((journal_dir / "status.json").string(), JsonText(st, 2) + "\n");
  };

  // ---- one bar ----
  // The end of bar t for walker k: the session's close flattens (in process; with the tcp
  // broker the policy's close order went out at the bar before), the equity is marked,
  // the session's return recorded, the risk limits' daily loss and flatten time checked.
  auto finish_bar = [&](int k, int32_t t, bool last_bar) -> Status {
    Walker& w = walkers[k];
    const market::Session& s = bars.sessions[bars.session[t]];
    const double close_lot = bars.close[t] * lot;
    const int64_t held = w.book.shares;  // marked as held over the bar (the evaluation's rule)
    if (last_bar && w.book.shares != 0) {
      if (k == 0 && tcp_broker) {
        RLT_RETURN_IF_ERROR(risk_line(
            t, "b" + std::to_string(t + 1) + "-close", "session_close",
            "the session ended with a position of " + evalrun::Num(shares(w.book.shares)) +
                " shares (its closing order did not fill): flatten at the next bar"));
        RLT_RETURN_IF_ERROR(send_order(t, -w.book.shares, "-close"));
      } else {
        const double cash_before = w.book.cash;
        const double cost = w.book.Execute(sizing, -held, close_lot);
        RLT_RETURN_IF_ERROR(record_fill(w, t, -held, bars.close[t], cost, cash_before, k == 0,
                                        "b" + std::to_string(t) + "-close", Json::object()));
      }
    }
    const double worth = w.book.NetWorth(close_lot);
    w.result.equity.push_back({t, shares(held), w.book.cash, worth});
    w.result.exposures.push_back(worth > 0 ? static_cast<double>(held) * close_lot / worth : 0.0);
    const bool stop = worth <= o.stop_fraction * c0;
    if (last_bar || stop) {
      w.result.session_dates.push_back(s.date);
      w.result.session_returns.push_back(worth / w.session_start_worth - 1.0);
      w.session_start_worth = worth;
    }
    if (stop) {
      w.stopped = true;
      if (k == 0 && tcp_broker && w.book.shares != 0) {
        RLT_RETURN_IF_ERROR(send_order(t, -w.book.shares, "-stop"));
      }
    }
    if (k == 0 && (last_bar || stop)) {
      ++out.sessions;
      RLT_RETURN_IF_ERROR(journal.Emit({{"type", "snapshot"},
                                        {"bar", t},
                                        {"date", FormatDate(s.date)},
                                        {"net_worth", worth},
                                        {"cash", w.book.cash},
                                        {"position", shares(w.book.shares)},
                                        {"return", w.result.session_returns.back()},
                                        {"costs_paid", w.book.costs},
                                        {"stopped", stop}}));
      if (r.fsync == "session") RLT_RETURN_IF_ERROR(journal.Sync());
    }
    if (k == 0 && gate && !last_bar && !stop && !w.halted) {
      const double loss = w.session_start_worth - worth;
      if (loss >= gate->limits().max_daily_loss) {
        w.halted = true;
        w.flatten_next = w.book.shares != 0;
        RLT_RETURN_IF_ERROR(
            risk_line(t, "b" + std::to_string(t + 1) + "-risk", "max_daily_loss",
                      "session loss " + evalrun::Num(loss) + ": flatten, no new orders today"));
      } else if (gate->MustFlatten(minute_of_day(t))) {
        w.halted = true;
        w.flatten_next = w.book.shares != 0;
        RLT_RETURN_IF_ERROR(risk_line(t, "b" + std::to_string(t + 1) + "-risk",
                                      "flatten_before_close",
                                      "flatten time reached: flatten, no new exposure"));
      }
    }
    return Status::Ok();
  };
  auto on_bar = [&](int32_t t, Clock::time_point arrived, int64_t seq) -> Status {
    // A bar that comes after stale_feed_seconds without one: the feed was stale.
    if (gate && t > 0 && session_open &&
        std::chrono::duration<double>(arrived - last_arrival).count() >
            gate->limits().stale_feed_seconds) {
      RLT_RETURN_IF_ERROR(on_stale(t - 1));
    }
    last_arrival = arrived;
    Json bar_line = {{"type", "bar"},
                     {"bar", t},
                     {"time", evalrun::BarTime(bars, t)},
                     {"epoch", bars.time[t]},
                     {"open", bars.open[t]},
                     {"high", bars.high[t]},
                     {"low", bars.low[t]},
                     {"close", bars.close[t]},
                     {"volume", bars.volume[t]}};
    if (seq >= 0) bar_line["seq"] = seq;
    RLT_RETURN_IF_ERROR(journal.Emit(bar_line));
    // A restart's journaled tcp fills of this bar (they came before it).
    RLT_RETURN_IF_ERROR(book_journaled_fills(t));
    RLT_ASSIGN_OR_RETURN(std::span<const float> row, stream.Push(features::StreamBarAt(bars, t)));
    if (first_valid < 0 && stream.warmed_up()) first_valid = t;
    std::copy(rows.begin() + cols, rows.end(), rows.begin());
    std::copy(row.begin(), row.end(), rows.end() - cols);
    ++out.bars;
    const int32_t si = bars.session[t];
    const market::Session& s = bars.sessions[si];
    const bool first_bar = bars.bar_in_session[t] == 0;
    const bool last_bar = is_last(t);
    if (live && last_bar) live_bars.last_in_session[t] = 1;
    if (first_bar) {
      if (session_open && t > 0) {
        // The previous session ended before its usual last bar (a half day, a feed that
        // stopped): it is closed at its last bar, as if that bar had been its last.
        for (int k = 0; k < 3; ++k) {
          Walker& w = walkers[k];
          if (w.stopped || w.result.equity.empty()) continue;
          w.result.equity.pop_back();
          w.result.exposures.pop_back();
          w.pending.clear();
          RLT_RETURN_IF_ERROR(finish_bar(k, t - 1, true));
        }
        session_open = false;
      }
      active_session = -1;
      const int32_t length = live ? shape.bars : s.size();
      if (s.date >= start_date && length >= 2 && first_valid >= 0 &&
          s.begin >= first_valid + o.nlags) {
        active_session = si;
        session_open = true;
        orders_today = 0;
        day_start_worth = walkers[0].book.NetWorth(bars.close[t] * lot);
        for (Walker& w : walkers) {
          w.halted = w.flatten_next = false;
          if (w.stopped) continue;
          w.result.equity.push_back(
              {t, shares(w.book.shares), w.book.cash, w.book.NetWorth(bars.close[t] * lot)});
          w.result.exposures.push_back(0.0);
        }
        if (policy->recurrent()) policy->ResetState();
      }
    }
    if (active_session != si) return Status::Ok();
    const double close_lot = bars.close[t] * lot;
    if (!first_bar) {
      // The in-process broker fills the previous bar's decision at this bar's open (or
      // typical price), sized at that price by the environment's rules; the tcp broker's
      // fills came before this bar.
      const double fill = o.fill == "next_typical"
                              ? (bars.high[t] + bars.low[t] + bars.close[t]) / 3.0
                              : bars.open[t];
      for (int k = 0; k < 3; ++k) {
        Walker& w = walkers[k];
        if (w.stopped) continue;
        if (k > 0 || !tcp_broker) {
          env::ActionKind kind;
          float a0 = 0;
          int64_t qty = w.pending.empty() ? 0
                                          : w.book.OrderQuantity(sizing, w.pending.data(),
                                                                 fill * lot, &kind, &a0);
          w.pending.clear();
          std::string suffix;
          if (w.flatten_next) {  // the risk limits' flatten replaces the decision
            w.flatten_next = false;
            qty = -w.book.shares;
            suffix = stale ? "-stale" : "-risk";
          }
          const std::string id = "b" + std::to_string(t) + suffix;
          if (k == 0 && stale && suffix.empty() && qty != 0 &&
              std::llabs(w.book.shares + qty) > std::llabs(w.book.shares)) {
            // Decided before the feed went stale: not sent (reducing orders pass).
            RLT_RETURN_IF_ERROR(risk_line(t, id, "stale_feed", "decided on a stale feed"));
            qty = 0;
          }
          if (k == 0) {
            RLT_ASSIGN_OR_RETURN(qty, checked(t, qty, id, fill, bars.close[t - 1], t));
          }
          if (qty != 0) {
            const double cash_before = w.book.cash;
            const double cost = w.book.Execute(sizing, qty, fill * lot);
            RLT_RETURN_IF_ERROR(
                record_fill(w, t, qty, fill, cost, cash_before, k == 0, id, Json::object()));
          }
        }
        RLT_RETURN_IF_ERROR(finish_bar(k, t, last_bar));
      }
      if (last_bar) session_open = false;
    }
    stale = false;  // a bar came: the feed is fresh again
    if (!last_bar) {
      // One decision: the policy's, and the benchmarks' fixed exposures.
      Walker& w = walkers[0];
      const bool may_decide = !w.stopped && !w.halted &&
                              (!gate || gate->limits().trading_start < 0 ||
                               gate->MayOpen(minute_of_day(t)) || w.book.shares != 0);
      if (may_decide) {
        const env::IntradayStockEnv::PortfolioView view =
            env::IntradayStockEnv::ViewOf(w.book, close_lot, c0);
        env::IntradayStockEnv::WriteObservationFromRows(rows.data(), cols, o.nlags, view,
                                                        time_left(t, s), obs.data());
        policy->Act(obs.data(), 1, action.data(), nullptr);
        const double latency_us =
            std::chrono::duration<double, std::micro>(Clock::now() - arrived).count();
        latencies.push_back(latency_us);
        w.pending = action;
        ++decisions;
        Json a = Json::array();
        for (float v : action) a.push_back(v);
        RLT_RETURN_IF_ERROR(journal.Emit({{"type", "decision"},
                                          {"bar", t},
                                          {"time", evalrun::BarTime(bars, t)},
                                          {"action", a},
                                          {"latency_us", latency_us}}));
      }
      if (tcp_broker && !w.stopped) {
        // The order goes out now, sized at this bar's close; the session's close order
        // at the bar before its last (it fills at the last bar's open).
        int64_t qty = 0;
        std::string suffix;
        if (w.flatten_next) {
          w.flatten_next = false;
          qty = -w.book.shares;
          suffix = "-risk";
        } else if (next_is_last(t)) {
          qty = -w.book.shares;
          suffix = "-close";
        } else if (may_decide) {
          env::ActionKind kind;
          float a0 = 0;
          qty = w.book.OrderQuantity(sizing, action.data(), close_lot, &kind, &a0);
        }
        w.pending.clear();
        const std::string id = "b" + std::to_string(t + 1) + suffix;
        RLT_ASSIGN_OR_RETURN(qty, checked(t, qty, id, bars.close[t], bars.close[t], t));
        RLT_RETURN_IF_ERROR(send_order(t, qty, suffix));
      }
      walkers[1].pending.assign(act_dim, 0.0f);  // flat: exposure 0 (inside the hold band)
      walkers[2].pending.assign(act_dim, 0.0f);
      walkers[2].pending[0] = target_mode || first_bar ? 1.0f : 0.0f;  // buy-and-hold
      if (!target_mode) {
        walkers[1].pending[1] = 1.0f;
        walkers[2].pending[1] = 1.0f;
      }
    }
    if (r.fsync == "bar") RLT_RETURN_IF_ERROR(journal.Sync());
    if (last_bar || Clock::now() - last_status > std::chrono::seconds(1)) {
      RLT_RETURN_IF_ERROR(write_status(t, "running"));
    }
    return Status::Ok();
  };

  // ---- the feed ----
  StopSignals stop_signals;
  std::string end_reason = "end_of_data";
  auto take_live_bar = [&](const FeedBar& b) -> Status {
    if (!live_bars.empty() && b.time <= live_bars.time.back()) return Status::Ok();  // had it
    AppendBar(live_bars, b, tz);
    const int32_t t = static_cast<int32_t>(live_bars.size()) - 1;
    if (b.seq >= 0) bar_of_seq[b.seq] = t;
    return on_bar(t, Clock::now(), b.seq);
  };
  int64_t last_seq = -1;  // tcp feed: the last stream seq handled
  if (!live) {
    for (int32_t t = 0; t < static_cast<int32_t>(bars.size()); ++t) {
      if (g_stop_signal.load() != 0) {
        end_reason = "signal";
        break;
      }
      if (feed.speed > 0 && t > 0) {  // replay paced at SPEED x real time
        const double gap = static_cast<double>(bars.time[t] - bars.time[t - 1]) / feed.speed;
        if (gap > 0)
          std::this_thread::sleep_for(std::chrono::duration<double>(std::min(gap, 3600.0)));
      }
      RLT_RETURN_IF_ERROR(on_bar(t, Clock::now(), -1));
    }
  } else {
    // A restart first re-runs the journal's bars (features, decisions, the journal's
    // fills); the feed then continues after them.
    for (const Json& line : journal.previous()) {
      if (line.value("type", "") != "bar") continue;
      FeedBar b;
      b.time = line.value("epoch", int64_t{0});
      b.open = line.value("open", 0.0);
      b.high = line.value("high", 0.0);
      b.low = line.value("low", 0.0);
      b.close = line.value("close", 0.0);
      b.volume = line.value("volume", 0.0);
      b.seq = line.value("seq", int64_t{-1});
      last_seq = std::max(last_seq, b.seq);
      RLT_RETURN_IF_ERROR(take_live_bar(b));
    }
    // Fills journaled after the last journaled bar came before the next bar: booked now,
    // before the positions are reconciled.
    RLT_RETURN_IF_ERROR(book_journaled_fills(std::numeric_limits<int32_t>::max()));
    const double stale_seconds = gate ? gate->limits().stale_feed_seconds : RiskLimits::kNone;
    auto check_stale = [&]() -> Status {
      if (std::chrono::duration<double>(Clock::now() - last_arrival).count() > stale_seconds) {
        return on_stale(static_cast<int32_t>(bars.size()) - 1);
      }
      return Status::Ok();
    };
    if (line_feed) {
      int64_t problems_shown = 0;
      while (true) {
        if (g_stop_signal.load() != 0) {
          end_reason = "signal";
          break;
        }
        RLT_ASSIGN_OR_RETURN(const LineFeed::Event e, line_feed->Next(200));
        if (e.kind == LineFeed::Event::Kind::kEnd) break;
        if (e.kind == LineFeed::Event::Kind::kBadLine) {
          RLT_RETURN_IF_ERROR(
              journal.Emit({{"type", "feed"}, {"event", "bad_line"}, {"detail", e.problem}}));
          if (!r.quiet && problems_shown++ < 20) {
            std::fprintf(stderr, "skipped: %s\n", e.problem.c_str());
          }
          continue;
        }
        if (e.kind == LineFeed::Event::Kind::kBar) {
          RLT_RETURN_IF_ERROR(take_live_bar(e.bar));
        } else {
          RLT_RETURN_IF_ERROR(check_stale());
        }
      }
      const LineFeedStats& fs = line_feed->stats();
      RLT_RETURN_IF_ERROR(journal.Emit({{"type", "feed"},
                                        {"event", "end"},
                                        {"lines", fs.lines},
                                        {"bad_lines", fs.bad_lines},
                                        {"out_of_order_bars", fs.out_of_order},
                                        {"ticks", fs.ticks},
                                        {"late_ticks", fs.late_ticks},
                                        {"bad_ticks", fs.bad_ticks}}));
    } else {
      // The tcp feed (and broker). After every (re)connect the session re-sends the
      // orders it has no outcome for (same ids: the server answers them again, never a
      // second fill), says which bar it handled last, and asks for positions; bars wait
      // until the positions came, and then must agree with the journal's fills.
      // `ready` for the last bar handled goes out once every order sent for it has its
      // ack or reject (and a rejected one's retry its own): in lockstep the server then
      // fills them all at the next bar's open.
      std::deque<FeedBar> waiting;
      bool awaiting_positions = false;
      int64_t ready_due = -1;
      auto resync = [&]() -> Status {
        for (const auto& [id, order] : open_orders) {
          unanswered.insert(id);
          (void)broker->SendOrder(NewOrder{id, bars.symbol,
                                           order.lots > 0 ? Side::kBuy : Side::kSell,
                                           std::fabs(shares(order.lots))});
        }
        ready_due = last_seq;
        awaiting_positions = broker->RequestPositions().ok();
        return Status::Ok();
      };
      const ServerHello& hello = broker->hello();
      RLT_RETURN_IF_ERROR(journal.Emit({{"type", "broker"},
                                        {"event", "connected"},
                                        {"session", hello.session},
                                        {"next_bar", hello.next_bar},
                                        {"lockstep", hello.lockstep}}));
      if (hello.next_bar > last_seq + 1) {
        RLT_RETURN_IF_ERROR(journal.Emit(
            {{"type", "feed"}, {"event", "gap"}, {"missed_bars", hello.next_bar - last_seq - 1}}));
      }
      RLT_RETURN_IF_ERROR(resync());
      auto reject_retry = [&](const Reject& rj) -> Status {
        RLT_RETURN_IF_ERROR(journal.Emit({{"type", "reject"},
                                          {"client_order_id", rj.client_order_id},
                                          {"reason", rj.reason},
                                          {"retryable", rj.retryable}}));
        finished.insert(rj.client_order_id);
        unanswered.erase(rj.client_order_id);
        auto it = open_orders.find(rj.client_order_id);
        if (it == open_orders.end()) return Status::Ok();
        const OpenOrder order = it->second;
        open_orders.erase(it);
        // A retryable reject is retried at once under a new id, up to 5 times.
        const std::string& id = rj.client_order_id;
        const size_t r_at = id.rfind("-r");
        int tries = 0;
        std::string base = id;
        if (r_at != std::string::npos && r_at + 2 < id.size() &&
            id.find_first_not_of("0123456789", r_at + 2) == std::string::npos) {
          tries = std::atoi(id.c_str() + r_at + 2);
          base = id.substr(0, r_at);
        }
        if (!rj.retryable || tries >= 5) {
          if (!r.quiet) {
            std::fprintf(stderr, "order %s rejected: %s\n", id.c_str(), rj.reason.c_str());
          }
          return Status::Ok();
        }
        const std::string retry = base + "-r" + std::to_string(tries + 1);
        if (journal.Has("order:" + retry)) return Status::Ok();
        RLT_RETURN_IF_ERROR(journal.Emit({{"type", "order"},
                                          {"client_order_id", retry},
                                          {"bar", order.bar},
                                          {"retry_of", id},
                                          {"side", order.lots > 0 ? "BUY" : "SELL"},
                                          {"quantity", std::fabs(shares(order.lots))}}));
        open_orders[retry] = order;
        unanswered.insert(retry);
        (void)broker->SendOrder(NewOrder{retry, bars.symbol,
                                         order.lots > 0 ? Side::kBuy : Side::kSell,
                                         std::fabs(shares(order.lots))});
        return Status::Ok();
      };
      while (true) {
        if (g_stop_signal.load() != 0) {
          end_reason = "signal";
          break;
        }
        while (!awaiting_positions && !waiting.empty()) {
          const FeedBar b = waiting.front();
          waiting.pop_front();
          if (b.seq > last_seq) {
            RLT_RETURN_IF_ERROR(take_live_bar(b));
            last_seq = b.seq;
          }
          ready_due = std::max(ready_due, b.seq);
        }
        if (ready_due >= 0 && unanswered.empty() && broker->connected()) {
          if (broker->Ready(ready_due).ok()) ready_due = -1;
        }
        RLT_ASSIGN_OR_RETURN(std::optional<BrokerEvent> ev, broker->Poll(200));
        if (!ev) {
          if (broker->ended()) break;
          RLT_RETURN_IF_ERROR(check_stale());
          continue;
        }
        if (ev->kind == BrokerEvent::Kind::kDisconnected) {
          RLT_RETURN_IF_ERROR(journal.Emit(
              {{"type", "broker"}, {"event", "disconnected"}, {"detail", ev->detail}}));
          continue;
        }
        if (ev->kind == BrokerEvent::Kind::kReconnected) {
          RLT_RETURN_IF_ERROR(journal.Emit({{"type", "broker"},
                                            {"event", "reconnected"},
                                            {"next_bar", broker->hello().next_bar}}));
          RLT_RETURN_IF_ERROR(resync());
          continue;
        }
        const ServerMessage& m = ev->message;
        if (const auto* bar = std::get_if<BarMessage>(&m)) {
          if (bar->symbol != bars.symbol) {
            (void)broker->Ready(bar->seq);  // another symbol's bar: nothing to do
            continue;
          }
          waiting.push_back(FeedBar{bar->epoch, bar->open, bar->high, bar->low, bar->close,
                                    bar->volume, bar->seq});
        } else if (const auto* ack = std::get_if<Ack>(&m)) {
          unanswered.erase(ack->client_order_id);
          RLT_RETURN_IF_ERROR(journal.Emit({{"type", "ack"},
                                            {"client_order_id", ack->client_order_id},
                                            {"order_id", ack->order_id}}));
        } else if (const auto* f = std::get_if<Fill>(&m)) {
          if (!tcp_broker || f->symbol != bars.symbol) continue;
          // The bar it filled at: handled, waiting (a bar sent again after a reconnect
          // comes before the re-sent order's fill), or still to come.
          int32_t b = static_cast<int32_t>(bars.size());
          if (const auto at = bar_of_seq.find(f->bar); at != bar_of_seq.end()) {
            b = at->second;
          } else {
            int64_t seen = last_seq;
            for (const FeedBar& w : waiting) {
              if (w.seq <= seen) continue;
              if (w.seq >= f->bar) break;
              seen = w.seq;
              ++b;
            }
          }
          const double q = std::llround(f->quantity / lot);
          const int64_t lots = static_cast<int64_t>(f->side == Side::kBuy ? q : -q);
          RLT_RETURN_IF_ERROR(book_fill(f->client_order_id, lots, f->price, f->fee, b,
                                        Json{{"seq", f->bar},
                                             {"order_id", f->order_id},
                                             {"time", FormatIso8601(f->epoch, tz.OffsetAt(f->epoch),
                                                                    /*utc_z=*/false)}},
                                        false));
        } else if (const auto* rj = std::get_if<Reject>(&m)) {
          if (rj->request == "cancel") continue;  // a cancel that came too late: it filled
          RLT_RETURN_IF_ERROR(reject_retry(*rj));
        } else if (const auto* c = std::get_if<Cancelled>(&m)) {
          unanswered.erase(c->client_order_id);
          finished.insert(c->client_order_id);
          open_orders.erase(c->client_order_id);
          RLT_RETURN_IF_ERROR(
              journal.Emit({{"type", "cancelled"}, {"client_order_id", c->client_order_id}}));
        } else if (const auto* p = std::get_if<Positions>(&m)) {
          if (!awaiting_positions) continue;
          awaiting_positions = false;
          double held = 0;
          for (const PositionLine& pl : p->positions) {
            if (pl.symbol == bars.symbol) held = pl.quantity;
          }
          const double booked = tcp_broker ? shares(walkers[0].book.shares) : held;
          RLT_RETURN_IF_ERROR(journal.Emit({{"type", "reconcile"},
                                            {"broker_position", held},
                                            {"journal_position", booked},
                                            {"match", held == booked}}));
          if (held != booked) {
            return Status::Refused(
                "the broker's position in " + bars.symbol + " is " + evalrun::Num(held) +
                " shares, but the fills in " + journal.path() + " give " + evalrun::Num(booked) +
                ": the account was traded outside this session, or a fill was lost. Flatten the "
                "account at the broker and start a new journal, or use another --account");
          }
        } else if (const auto* err = std::get_if<ErrorMessage>(&m)) {
          RLT_RETURN_IF_ERROR(
              journal.Emit({{"type", "broker"}, {"event", "error"}, {"detail", err->message}}));
          if (!r.quiet) std::fprintf(stderr, "broker: %s\n", err->message.c_str());
        } else if (const auto* end = std::get_if<End>(&m)) {
          end_reason = end->reason;
        }
      }
      // Bars that came before the end but after the last positions answer.
      while (!waiting.empty()) {
        const FeedBar b = waiting.front();
        waiting.pop_front();
        if (b.seq > last_seq) {
          RLT_RETURN_IF_ERROR(take_live_bar(b));
          last_seq = b.seq;
        }
      }
      broker->Close();
    }
  }
  // A live session's last session, when the feed ended before its usual last bar.
  if (live && session_open && !bars.empty()) {
    const int32_t t = static_cast<int32_t>(bars.size()) - 1;
    for (int k = 0; k < 3; ++k) {
      Walker& w = walkers[k];
      if (w.stopped || w.result.equity.empty()) continue;
      w.result.equity.pop_back();
      w.result.exposures.pop_back();
      RLT_RETURN_IF_ERROR(finish_bar(k, t, true));
    }
  }
  for (Walker& w : walkers) {
    w.result.costs_paid = w.book.costs;
    w.result.final_net_worth =
        w.result.equity.empty() ? w.book.cash : w.result.equity.back().net_worth;
    for (evalrun::FillRow& f : w.result.fills) {  // a fill at a bar that never came
      f.bar = std::min<int32_t>(f.bar, static_cast<int32_t>(bars.size()) - 1);
    }
  }
  const evalrun::BacktestResult& result = walkers[0].result;
  out.decisions = decisions;
  out.fills = static_cast<int64_t>(result.fills.size());
  out.final_net_worth = result.final_net_worth;
  out.latency_p50_us = Percentile(latencies, 0.50);
  out.latency_p99_us = Percentile(latencies, 0.99);
  out.latency_max_us = Percentile(latencies, 1.0);
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - wall_start).count();
  Json summary;
  summary["run_dir"] = r.run_dir;
  summary["checkpoint"] = checkpoint;
  summary["feed"] = r.feed;
  summary["broker"] = r.broker;
  summary["range"] = {
      {"first", result.session_dates.empty() ? "" : FormatDate(result.session_dates.front())},
      {"last", result.session_dates.empty() ? "" : FormatDate(result.session_dates.back())}};
  summary["policy"] = "trained";
  summary["metrics"] = evalrun::MetricsJson(result);
  summary["fills"] = {{"strategy", out.fills},
                      {"flat", static_cast<int64_t>(walkers[1].result.fills.size())},
                      {"buy_and_hold", static_cast<int64_t>(walkers[2].result.fills.size())}};
  summary["benchmarks"]["flat"] = evalrun::MetricsJson(walkers[1].result);
  summary["benchmarks"]["buy_and_hold"] = evalrun::MetricsJson(walkers[2].result);
  summary["final_net_worth"] = out.final_net_worth;
  if (gate) {
    Json counts = Json::object();
    for (const auto& [rule, n] : refusals) counts[rule] = n;
    summary["risk_refusals"] = counts;
  }
  summary["end"] = end_reason;
  if (line_feed) {
    const LineFeedStats& fs = line_feed->stats();
    summary["feed_stats"] = {
        {"lines", fs.lines}, {"bad_lines", fs.bad_lines},   {"out_of_order_bars", fs.out_of_order},
        {"ticks", fs.ticks}, {"late_ticks", fs.late_ticks}, {"bad_ticks", fs.bad_ticks}};
  }
  if (broker) {
    Json open = Json::array();
    for (const auto& [id, order] : open_orders) open.push_back(id);
    summary["broker_stats"] = {{"reconnects", broker->reconnects()}, {"open_orders", open}};
  }
  summary["decision_latency_us"] = {{"p50", out.latency_p50_us}, {"p99", out.latency_p99_us}};
  summary["wall_seconds"] = out.wall_seconds;
  eval::NullNonFinite(summary);
  out.summary_json = JsonText(summary, 2) + "\n";
  const std::pair<const char*, std::string> files[] = {
      {eval::kDailyReturnsFile, evalrun::DailyCsv(result, walkers[2].result, walkers[1].result)},
      {eval::kTradesFile, evalrun::TradesCsv(bars, result)},
      {eval::kEquityFile, evalrun::EquityCsv(bars, result, walkers[2].result)},
      {eval::kSummaryFile, out.summary_json}};
  for (const auto& [name, text] : files) {
    RLT_RETURN_IF_ERROR(WriteFileAtomic((journal_dir / name).string(), text));
  }
  RLT_RETURN_IF_ERROR(journal.Emit({{"type", "end"},
                                    {"bars", out.bars},
                                    {"decisions", decisions},
                                    {"fills", out.fills},
                                    {"final_net_worth", out.final_net_worth}}));
  RLT_RETURN_IF_ERROR(journal.Sync());
  if (!bars.empty()) {
    RLT_RETURN_IF_ERROR(write_status(static_cast<int32_t>(bars.size()) - 1,
                                     end_reason == "signal" ? "stopped" : "finished"));
  }
  return out;
}

Result<std::string> BenchPaper(const PaperBenchOptions& b) {
  if (b.days < 10) return Status::InvalidArgument("bench paper needs --days >= 10");
  RLT_ASSIGN_OR_RETURN(const ScratchDirectory scratch,
                       ScratchDirectory::Create(b.scratch, "bench-paper-"));
  const std::string dir = scratch.path();
  market::SynthOptions so;
  so.num_days = b.days;
  RLT_ASSIGN_OR_RETURN(market::MarketData md, market::GenerateSynthetic(so));
  const market::Bars& synth = md.symbols.front();
  const int32_t cut = synth.sessions[synth.sessions.size() * 6 / 10].date;
  const std::string bars = dir + "/bars.csv";
  RLT_RETURN_IF_ERROR(market::WriteBarsCsv(bars, md));
  train::TrainRequest tr;
  tr.config_path = b.config_path;
  tr.overrides = b.overrides;
  for (const std::string& s :
       {std::string("data.source=file"), "data.file=" + bars, std::string("run.total_steps=4096"),
        std::string("run.threads=1"), std::string("env.num_envs=8"), std::string("algo.n_steps=64"),
        std::string("algo.batch_size=256")}) {
    tr.overrides.push_back(s);
  }
  // [split]: train on the sessions before the cut, trade from the cut on (a config with a
  // validation range gets it overridden by --set split.validation=...).
  const int32_t last_train = synth.sessions[synth.sessions.size() * 6 / 10 - 1].date;
  tr.overrides.push_back("split.train=start:" + FormatDate(last_train));
  tr.overrides.push_back("split.test=" + FormatDate(cut) + ":end");
  tr.run_dir = dir + "/run";
  tr.quiet = true;
  RLT_ASSIGN_OR_RETURN(train::TrainOutcome trained, train::RunTraining(tr));
  if (trained.exit_code != 0)
    return Status::IoError("bench paper: training was interrupted by a signal");
  PaperRequest pr;
  pr.run_dir = tr.run_dir;
  pr.feed = "replay:" + bars;
  pr.start = FormatDate(cut);
  pr.journal_dir = dir + "/journal";
  pr.fsync = "session";
  pr.quiet = true;
  RLT_ASSIGN_OR_RETURN(PaperOutcome o, RunPaper(pr));
  RLT_ASSIGN_OR_RETURN(config::Config config,
                       config::Config::LoadFile((fs::path(tr.run_dir) / "config.toml").string()));
  const config::ConfigValue* preset = config.Get("features", "preset");
  Json j = {{"config", b.config_path},
            {"preset", preset != nullptr ? preset->text : std::string()},
            {"bars", o.bars},
            {"decisions", o.decisions},
            {"latency_p50_us", o.latency_p50_us},
            {"latency_p99_us", o.latency_p99_us},
            {"latency_max_us", o.latency_max_us},
            {"bars_per_second", static_cast<double>(o.bars) / o.wall_seconds}};
  return JsonText(j, 2);
}

}  // namespace rlt::paper
