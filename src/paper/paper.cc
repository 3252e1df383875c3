// rltrade paper: a trained run trading a bar stream (see paper.h).
#include "paper/paper.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
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
#include "market/synth.h"
#include "paper/risk.h"
#include "train/train.h"
#include "train/train_options.h"

namespace rlt::paper {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

struct Feed {
  std::string file;
  double speed = 0;  // x real time; 0 = as fast as possible
};

Result<Feed> ParseFeed(const std::string& spec) {
  if (spec.rfind("replay:", 0) == 0) {
    Feed f;
    f.file = spec.substr(7);
    const size_t at = f.file.rfind('@');
    if (at != std::string::npos) {
      char* end = nullptr;
      const std::string speed = f.file.substr(at + 1);
      f.speed = std::strtod(speed.c_str(), &end);
      if (speed.empty() || end != speed.c_str() + speed.size() || !(f.speed > 0)) {
        return Status::InvalidArgument("--feed " + spec + ": the speed after '@' must be a " +
                                       "number > 0 (e.g. replay:bars.csv@60 for 60x real time)");
      }
      f.file.resize(at);
    }
    if (f.file.empty()) {
      return Status::InvalidArgument("--feed " + spec + ": replay needs a file, replay:FILE");
    }
    return f;
  }
  if (spec == "stdin" || spec.rfind("tcp:", 0) == 0) {
    return Status::InvalidArgument("--feed " + spec +
                                   ": this build replays bar files only; use replay:FILE[@SPEED]");
  }
  return Status::InvalidArgument("--feed " + spec + ": expected replay:FILE[@SPEED]");
}

// The key of a journal event: what a restart must not write twice (a bar, a decision, an
// order or a fill by its client order id, a session snapshot, the start and the end).
std::string KeyOf(const Json& line) {
  const std::string type = line.value("type", "");
  if (type == "order" || type == "fill") return type + ":" + line.value("client_order_id", "");
  if (type == "risk") {
    return "risk:" + line.value("client_order_id", "") + ":" + line.value("rule", "");
  }
  if (type == "bar" || type == "decision" || type == "snapshot") {
    return type + ":" + std::to_string(line.value("bar", -1));
  }
  return type;
}

// The journal: append-only JSON lines, written through (O_APPEND) and fsync'd by Sync().
// Opening an existing journal reads back the lines a previous process finished (a last
// line cut by a kill is cut off the file first); Emit() then writes only the events not
// journaled yet, so a restarted session that re-runs its bars writes each event once.
class Journal {
 public:
  static Result<Journal> Open(const fs::path& path) {
    Journal j;
    j.path_ = path.string();
    if (fs::exists(path)) {
      RLT_ASSIGN_OR_RETURN(std::string text, ReadFile(j.path_));
      size_t complete = 0;
      for (size_t begin = 0; begin < text.size();) {
        const size_t eol = text.find('\n', begin);
        if (eol == std::string::npos) break;  // no newline: cut by a kill
        const Json line = Json::parse(text.substr(begin, eol - begin), nullptr, false);
        if (line.is_discarded() || !line.is_object()) break;
        j.previous_.push_back(line);
        j.done_.insert(KeyOf(line));
        complete = eol + 1;
        begin = eol + 1;
      }
      if (complete != text.size()) {
        std::error_code ec;
        fs::resize_file(path, complete, ec);
        if (ec) return Status::IoError(j.path_ + ": cannot cut its unfinished last line");
      }
    }
    j.fd_ = ::open(j.path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (j.fd_ < 0) return Status::IoError(j.path_ + ": cannot open the journal");
    return j;
  }
  Journal() = default;
  Journal(Journal&& o) noexcept
      : fd_(o.fd_),
        path_(std::move(o.path_)),
        previous_(std::move(o.previous_)),
        done_(std::move(o.done_)) {
    o.fd_ = -1;
  }
  Journal& operator=(Journal&&) = delete;
  Journal(const Journal&) = delete;
  ~Journal() {
    if (fd_ >= 0) ::close(fd_);
  }
  const std::vector<Json>& previous() const { return previous_; }
  // Appends `line` unless its event is journaled already.
  Status Emit(const Json& line) {
    if (!done_.insert(KeyOf(line)).second && line.value("type", "") != "restart") {
      return Status::Ok();
    }
    const std::string text = line.dump() + "\n";
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::IoError(path_ + ": cannot append (disk full?)");
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }
  Status Sync() {
    if (::fdatasync(fd_) != 0) return Status::IoError(path_ + ": fdatasync failed");
    return Status::Ok();
  }

 private:
  int fd_ = -1;
  std::string path_;
  std::vector<Json> previous_;
  std::set<std::string> done_;
};

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

}  // namespace

Result<PaperOutcome> RunPaper(const PaperRequest& r) {
  RLT_ASSIGN_OR_RETURN(const Feed feed, ParseFeed(r.feed));
  if (r.broker != "sim") {
    return Status::InvalidArgument("--broker " + r.broker +
                                   ": this build has the in-process simulator only: --broker sim");
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
  // The run's settings, and the feed's bars read as the run reads its data (timezone,
  // symbol, on_bad_rows, sessions). Only the bars are used: features come from the stream.
  train::EnvSetupOverrides overrides;
  overrides.normalizer = &norm;
  overrides.data_file = feed.file;
  RLT_ASSIGN_OR_RETURN(train::EnvSetup setup, train::BuildEnvSetup(config, overrides));
  if (setup.id != "intraday") {
    return Status::InvalidArgument("rltrade paper trades the intraday environment; " + r.run_dir +
                                   " trained " + setup.id);
  }
  env::IntradayOptions o;
  RLT_RETURN_IF_ERROR(SetOptions(o, setup.context.settings, "[env]"));
  const market::Bars& bars = setup.context.market->bars;
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
  std::error_code ec;
  fs::create_directories(journal_dir, ec);
  if (ec) return Status::IoError(journal_dir.string() + ": " + ec.message());
  RLT_ASSIGN_OR_RETURN(Journal journal, Journal::Open(journal_dir / "journal.jsonl"));
  const Json start_line = {{"type", "start"},          {"run_dir", r.run_dir},
                           {"checkpoint", checkpoint}, {"feed", r.feed},
                           {"broker", r.broker},       {"start", r.start},
                           {"symbol", bars.symbol},    {"initial_capital", o.initial_capital}};
  if (!journal.previous().empty()) {
    // A restart: the session re-runs its bars from the feed's first and journals only
    // what the previous process did not (no order id is sent twice); it must be the same
    // session.
    const Json& was = journal.previous().front();
    for (const char* key : {"run_dir", "checkpoint", "feed", "broker", "start"}) {
      if (!was.contains(key) || was[key] != start_line[key]) {
        return Status::Refused((journal_dir / "journal.jsonl").string() + " is the journal of " +
                               "another session: its " + key + " is " +
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
  auto minute_of_day = [&bars](int32_t t) {
    const int64_t local = bars.time[t] + bars.utc_offset[t];
    return static_cast<int>(((local % 86400) + 86400) % 86400 / 60);
  };
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
  PaperOutcome out;
  int64_t orders_today = 0;     // the policy's orders in the current (or last) session
  double day_start_worth = c0;  // the policy's net worth when that session started
  out.journal_dir = journal_dir.string();
  auto shares = [lot](int64_t lots) { return static_cast<double>(lots) * lot; };
  // Client order ids: "b<bar>" for the decision order that fills at bar b, "b<bar>-close"
  // for the session's closing flatten, "b<bar>-risk" for a flatten the risk limits ordered
  // (unique, and the same on every run of the session).
  auto record_fill = [&](Walker& w, int32_t b, int64_t qty, double price, double cost,
                         double cash_before, bool is_policy, const char* suffix) -> Status {
    const evalrun::FillRow f{b, shares(qty), price, cost, shares(w.book.shares), w.book.cash};
    w.trips.Fill(f, cash_before, w.result.round_trip_pnls);
    w.result.fills.push_back(f);
    if (!is_policy) return Status::Ok();
    ++orders_today;
    const std::string id = "b" + std::to_string(b) + suffix;
    const char* side = qty > 0 ? "BUY" : "SELL";
    RLT_RETURN_IF_ERROR(journal.Emit({{"type", "order"},
                                      {"client_order_id", id},
                                      {"bar", b},
                                      {"side", side},
                                      {"quantity", std::fabs(f.quantity)}}));
    return journal.Emit({{"type", "fill"},
                         {"client_order_id", id},
                         {"bar", b},
                         {"time", evalrun::BarTime(bars, b)},
                         {"side", side},
                         {"quantity", std::fabs(f.quantity)},
                         {"price", price},
                         {"cost", cost},
                         {"position_after", f.position_after},
                         {"cash_after", f.cash_after}});
  };

  const auto wall_start = Clock::now();
  // JOURNAL/status.json for `rltrade status`: rewritten at most once a second of wall
  // time, at each session's end and at the end (atomically).
  const int64_t started_time = static_cast<int64_t>(std::time(nullptr));
  auto last_status = Clock::now() - std::chrono::hours(1);
  auto write_status = [&](int32_t t, const std::string& state) -> Status {
    const Walker& w = walkers[0];
    const double close_lot = bars.close[t] * lot;
    const double worth = w.book.NetWorth(close_lot);
    Json risk = {{"halted", w.halted}, {"stopped", w.stopped}};
    Json counts = Json::object();
    for (const auto& [rule, n] : refusals) counts[rule] = n;
    risk["refusals"] = counts;
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
                     {"fills", static_cast<int64_t>(w.result.fills.size())},
                     {"risk", risk}};
    last_status = Clock::now();
    return WriteFileAtomic((journal_dir / "status.json").string(), JsonText(st, 2) + "\n");
  };
  for (int32_t t = 0; t < static_cast<int32_t>(bars.size()); ++t) {
    if (feed.speed > 0 && t > 0) {  // replay paced at SPEED x real time
      const double gap = static_cast<double>(bars.time[t] - bars.time[t - 1]) / feed.speed;
      if (gap > 0)
        std::this_thread::sleep_for(std::chrono::duration<double>(std::min(gap, 3600.0)));
    }
    const auto arrived = Clock::now();
    RLT_RETURN_IF_ERROR(journal.Emit({{"type", "bar"},
                                      {"bar", t},
                                      {"time", evalrun::BarTime(bars, t)},
                                      {"open", bars.open[t]},
                                      {"high", bars.high[t]},
                                      {"low", bars.low[t]},
                                      {"close", bars.close[t]},
                                      {"volume", bars.volume[t]}}));
    RLT_ASSIGN_OR_RETURN(std::span<const float> row, stream.Push(features::StreamBarAt(bars, t)));
    if (first_valid < 0 && stream.warmed_up()) first_valid = t;
    std::copy(rows.begin() + cols, rows.end(), rows.begin());
    std::copy(row.begin(), row.end(), rows.end() - cols);
    ++out.bars;
    const int32_t si = bars.session[t];
    const market::Session& s = bars.sessions[si];
    const bool first_bar = t == s.begin, last_bar = bars.last_in_session[t] != 0;
    // A session is traded when it starts on or after --start with every bar observable.
    if (first_bar) {
      active_session = -1;
      if (s.date >= start_date && s.size() >= 2 && first_valid >= 0 &&
          s.begin >= first_valid + o.nlags) {
        active_session = si;
        orders_today = 0;
        day_start_worth = walkers[0].book.NetWorth(bars.close[t] * lot);
        for (Walker& w : walkers) {
          w.halted = w.flatten_next = false;
          if (w.stopped) continue;
          w.result.equity.push_back({t, 0, w.book.cash, w.book.NetWorth(bars.close[t] * lot)});
          w.result.exposures.push_back(0.0);
        }
        if (policy->recurrent()) policy->ResetState();
      }
    }
    if (active_session != si) continue;
    const double close_lot = bars.close[t] * lot;
    if (!first_bar) {
      // The broker fills the previous bar's decision at this bar's open (or typical price),
      // sized at that price by the environment's rules; the close flattens.
      const double fill = o.fill == "next_typical"
                              ? (bars.high[t] + bars.low[t] + bars.close[t]) / 3.0
                              : bars.open[t];
      for (int k = 0; k < 3; ++k) {
        Walker& w = walkers[k];
        if (w.stopped) continue;
        env::ActionKind kind;
        float a0 = 0;
        int64_t qty = w.pending.empty()
                          ? 0
                          : w.book.OrderQuantity(sizing, w.pending.data(), fill * lot, &kind, &a0);
        w.pending.clear();
        const char* suffix = "";
        if (w.flatten_next) {  // the risk limits' flatten replaces the decision
          w.flatten_next = false;
          qty = -w.book.shares;
          suffix = "-risk";
        }
        if (k == 0 && gate && qty != 0) {
          OrderCheck check;
          check.quantity = shares(qty);
          check.position = shares(w.book.shares);
          check.price = fill;
          check.last_price = bars.close[t - 1];
          check.net_worth = w.book.NetWorth(bars.close[t - 1] * lot);
          check.minute_of_day = minute_of_day(t);
          check.time = bars.time[t];
          std::string detail;
          const std::string rule = gate->Check(check, &detail);
          if (!rule.empty()) {
            RLT_RETURN_IF_ERROR(risk_line(t, "b" + std::to_string(t) + suffix, rule, detail));
            qty = 0;
          }
        }
        if (qty != 0) {
          const double cash_before = w.book.cash;
          const double cost = w.book.Execute(sizing, qty, fill * lot);
          RLT_RETURN_IF_ERROR(record_fill(w, t, qty, fill, cost, cash_before, k == 0, suffix));
        }
        const int64_t held = w.book.shares;
        if (last_bar && held != 0) {
          const double cash_before = w.book.cash;
          const double cost = w.book.Execute(sizing, -held, close_lot);
          RLT_RETURN_IF_ERROR(
              record_fill(w, t, -held, bars.close[t], cost, cash_before, k == 0, "-close"));
        }
        const double worth = w.book.NetWorth(close_lot);
        w.result.equity.push_back({t, shares(held), w.book.cash, worth});
        w.result.exposures.push_back(worth > 0 ? static_cast<double>(held) * close_lot / worth
                                               : 0.0);
        const bool stop = worth <= o.stop_fraction * c0;
        if (last_bar || stop) {
          w.result.session_dates.push_back(s.date);
          w.result.session_returns.push_back(worth / w.session_start_worth - 1.0);
          w.session_start_worth = worth;
        }
        if (stop) w.stopped = true;
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
      }
    }
    if (!last_bar) {
      // One decision: the policy's, and the benchmarks' fixed exposures.
      const bool may_decide = !walkers[0].stopped && !walkers[0].halted &&
                              (!gate || gate->limits().trading_start < 0 ||
                               gate->MayOpen(minute_of_day(t)) || walkers[0].book.shares != 0);
      if (may_decide) {
        const env::IntradayStockEnv::PortfolioView view =
            env::IntradayStockEnv::ViewOf(walkers[0].book, close_lot, c0);
        env::IntradayStockEnv::WriteObservationFromRows(
            rows.data(), cols, o.nlags, view, static_cast<double>(s.end - 1 - t) / (s.size() - 1),
            obs.data());
        policy->Act(obs.data(), 1, action.data(), nullptr);
        const double latency_us =
            std::chrono::duration<double, std::micro>(Clock::now() - arrived).count();
        latencies.push_back(latency_us);
        walkers[0].pending = action;
        ++decisions;
        Json a = Json::array();
        for (float v : action) a.push_back(v);
        RLT_RETURN_IF_ERROR(journal.Emit({{"type", "decision"},
                                          {"bar", t},
                                          {"time", evalrun::BarTime(bars, t)},
                                          {"action", a},
                                          {"latency_us", latency_us}}));
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
  }
  for (Walker& w : walkers) {
    w.result.costs_paid = w.book.costs;
    w.result.final_net_worth =
        w.result.equity.empty() ? w.book.cash : w.result.equity.back().net_worth;
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
  if (!bars.empty())
    RLT_RETURN_IF_ERROR(write_status(static_cast<int32_t>(bars.size()) - 1, "finished"));
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
