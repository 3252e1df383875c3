// rltrade paper: the session's outputs — status.json, summary.json and the evaluation's
// files (see session.h).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>

#include "core/civil_time.h"
#include "core/file_io.h"
#include "core/json_text.h"
#include "eval/metrics_json.h"
#include "eval/outputs.h"
#include "eval/significance.h"
#include "paper/session.h"
#include "paper/status_file.h"

namespace rlt::paper {
namespace {

namespace fs = std::filesystem;

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(k, v.size() - 1)];
}

}  // namespace

// The status every write starts from: who runs, on what, since when.
PaperStatus PaperSession::BaseStatus(const std::string& state, const std::string& error) const {
  PaperStatus st;
  st.pid = static_cast<int64_t>(::getpid());
  st.state = state;
  st.run_dir = r_.run_dir;
  st.feed = r_.feed;
  st.broker = r_.broker;
  st.start_time = started_time_;
  st.updated_time = static_cast<int64_t>(std::time(nullptr));
  st.bars = bars_seen_;
  st.error = error;
  return st;
}

Status PaperSession::WriteStatus(int32_t t, const std::string& state, const std::string& error) {
  if (t < 0) return Status::Ok();
  const market::Bars& bars = *bars_;
  const Walker& w = walkers_[0];
  const double worth = w.book.NetWorth(bars.close[t] * lot_);
  PaperStatus st = BaseStatus(state, error);
  st.has_bar = true;
  st.last_bar = t;
  st.last_bar_time = evalrun::BarTime(bars, t);
  st.session_date = FormatDate(bars.sessions[bars.session[t]].date);
  st.trading = active_session_ == bars.session[t];
  st.position = shares(w.book.shares);
  st.cash = w.book.cash;
  st.net_worth = worth;
  st.pnl_today = worth - day_start_worth_;
  st.orders_today = orders_today_;
  for (const auto& [id, order] : open_orders_) st.open_orders.push_back(id);
  st.fills = static_cast<int64_t>(w.result.fills.size());
  st.halted = w.halted;
  st.stopped = w.stopped;
  st.stale_feed = stale_;
  st.refusals = refusals_;
  last_status_ = Clock::now();
  return WritePaperStatus(setup_.journal_dir, st);
}

void PaperSession::MarkFailed(const Status& error) {
  if (!journal_) return;  // nothing of the session on disk yet
  (void)journal_->Emit({{"type", "failed"}, {"error", error.message()}});
  (void)journal_->Sync();
  const int32_t t = static_cast<int32_t>(bars_->size()) - 1;
  if (t >= 0) {
    (void)WriteStatus(t, "failed", error.message());
    return;
  }
  (void)WritePaperStatus(setup_.journal_dir, BaseStatus("failed", error.message()));
}

// A live feed that delivered mostly bars no session can trade (bad, out of order, or bad
// lines) is not a session: an error with the counts (the outputs are written first).
Status PaperSession::CheckDropped() const {
  int64_t bad = dropped_bad_ + dropped_order_, received = received_;
  if (line_feed_) {
    const LineFeedStats& fs = line_feed_->stats();
    bad += fs.bad_lines + fs.out_of_order;
    received += fs.bad_lines + fs.out_of_order;
  }
  if (received == 0 || 2 * bad <= received) return Status::Ok();
  return Status::DataError("the feed " + r_.feed + " delivered mostly unusable bars: dropped " +
                           std::to_string(bad) + " of " + std::to_string(received) + " (" +
                           std::to_string(dropped_bad_) + " bad bars, " +
                           std::to_string(dropped_order_) + " out of order" +
                           (line_feed_ ? ", plus the feed's bad and out-of-order lines" : "") +
                           "; see the journal's feed notes): check the feed");
}

PaperSession::Json PaperSession::SummaryJson(const PaperOutcome& out) const {
  const evalrun::BacktestResult& result = walkers_[0].result;
  Json summary;
  summary["run_dir"] = r_.run_dir;
  summary["checkpoint"] = setup_.checkpoint;
  if (setup_.seed) summary["seed"] = *setup_.seed;
  if (!setup_.ensemble_method.empty()) {
    summary["ensemble"] = {{"method", setup_.ensemble_method}, {"seeds", setup_.ensemble_seeds}};
  }
  summary["feed"] = r_.feed;
  summary["broker"] = r_.broker;
  summary["range"] = {
      {"first", result.session_dates.empty() ? "" : FormatDate(result.session_dates.front())},
      {"last", result.session_dates.empty() ? "" : FormatDate(result.session_dates.back())}};
  summary["policy"] = "trained";
  summary["in_sample"] = setup_.in_sample;
  // Annualised as eval annualises the same bars (eval::PeriodsPerYearOf).
  std::vector<int32_t> dates;
  for (const market::Session& s : bars_->sessions) dates.push_back(s.date);
  const int periods = bars_->around_the_clock ? 365 : eval::PeriodsPerYearOf(dates);
  summary["periods_per_year"] = periods;
  summary["metrics"] = evalrun::MetricsJson(result, periods);
  summary["fills"] = {{"strategy", out.fills},
                      {"flat", static_cast<int64_t>(walkers_[1].result.fills.size())},
                      {"buy_and_hold", static_cast<int64_t>(walkers_[2].result.fills.size())}};
  summary["benchmarks"]["flat"] = evalrun::MetricsJson(walkers_[1].result, periods);
  summary["benchmarks"]["buy_and_hold"] = evalrun::MetricsJson(walkers_[2].result, periods);
  summary["final_net_worth"] = out.final_net_worth;
  if (gate_) {
    Json counts = Json::object();
    for (const auto& [rule, n] : refusals_) counts[rule] = n;
    summary["risk_refusals"] = counts;
  }
  summary["end"] = end_reason_;
  if (live_) {
    summary["dropped_bars"] = {{"bad", dropped_bad_},
                               {"outside_session", dropped_hours_},
                               {"out_of_order", dropped_order_}};
  }
  if (line_feed_) {
    const LineFeedStats& fs = line_feed_->stats();
    summary["feed_stats"] = {
        {"lines", fs.lines}, {"bad_lines", fs.bad_lines},   {"out_of_order_bars", fs.out_of_order},
        {"ticks", fs.ticks}, {"late_ticks", fs.late_ticks}, {"bad_ticks", fs.bad_ticks}};
  }
  if (broker_) {
    Json open = Json::array();
    for (const auto& [id, order] : open_orders_) open.push_back(id);
    summary["broker_stats"] = {{"reconnects", broker_->reconnects()},
                               {"open_orders", open},
                               {"unknown_fills", unknown_fills_}};
  }
  summary["decision_latency_us"] = {{"p50", out.latency_p50_us}, {"p99", out.latency_p99_us}};
  summary["wall_seconds"] = out.wall_seconds;
  eval::NullNonFinite(summary);
  return summary;
}

Status PaperSession::WriteOutputs(PaperOutcome& out) {
  const evalrun::BacktestResult& result = walkers_[0].result;
  out.summary_json = JsonText(SummaryJson(out), 2) + "\n";
  const std::pair<const char*, std::string> files[] = {
      {eval::kDailyReturnsFile, evalrun::DailyCsv(result, walkers_[2].result, walkers_[1].result)},
      {eval::kTradesFile, evalrun::TradesCsv(*bars_, result)},
      {eval::kEquityFile, evalrun::EquityCsv(*bars_, result, walkers_[2].result)},
      {eval::kSummaryFile, out.summary_json}};
  for (const auto& [name, text] : files) {
    RLT_RETURN_IF_ERROR(WriteFileAtomic((fs::path(setup_.journal_dir) / name).string(), text));
  }
  return Status::Ok();
}

Result<PaperOutcome> PaperSession::Finish() {
  // A live session's last session, when the feed ended before its usual last bar.
  if (live_ && session_open_ && !bars_->empty()) {
    RLT_RETURN_IF_ERROR(CloseSessionEarly(static_cast<int32_t>(bars_->size()) - 1, false));
  }
  for (Walker& w : walkers_) {
    w.result.costs_paid = w.book.costs;
    w.result.final_net_worth =
        w.result.equity.empty() ? w.book.cash : w.result.equity.back().net_worth;
    for (evalrun::FillRow& f : w.result.fills) {  // a fill at a bar that never came
      f.bar = std::min<int32_t>(f.bar, static_cast<int32_t>(bars_->size()) - 1);
    }
  }
  PaperOutcome out;
  out.journal_dir = setup_.journal_dir;
  out.bars = bars_seen_;
  out.sessions = sessions_;
  out.decisions = decisions_;
  out.fills = static_cast<int64_t>(walkers_[0].result.fills.size());
  out.final_net_worth = walkers_[0].result.final_net_worth;
  out.latency_p50_us = Percentile(latencies_, 0.50);
  out.latency_p99_us = Percentile(latencies_, 0.99);
  out.latency_max_us = Percentile(latencies_, 1.0);
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - wall_start_).count();
  out.in_sample = setup_.in_sample;
  RLT_RETURN_IF_ERROR(WriteOutputs(out));
  RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "end"},
                                      {"bars", out.bars},
                                      {"decisions", decisions_},
                                      {"fills", out.fills},
                                      {"final_net_worth", out.final_net_worth}}));
  RLT_RETURN_IF_ERROR(journal_->Sync());
  if (!bars_->empty()) {
    RLT_RETURN_IF_ERROR(WriteStatus(static_cast<int32_t>(bars_->size()) - 1,
                                    end_reason_ == "signal" ? "stopped" : "finished"));
  }
  RLT_RETURN_IF_ERROR(CheckDropped());
  return out;
}

}  // namespace rlt::paper
