// rltrade paper: the session's journal, its restart and the reconciliation with the broker
// (see session.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "core/civil_time.h"
#include "core/json_parse.h"
#include "paper/session.h"

namespace rlt::paper {

namespace fs = std::filesystem;

Status PaperSession::OpenJournal() {
  const fs::path dir(setup_.journal_dir);
  RLT_RETURN_IF_ERROR(CheckJournalDir());
  std::error_code ec;
  const bool existed = fs::exists(dir, ec), had_lock = fs::exists(dir / runlog::kLockFile, ec);
  const Status opened = OpenJournalIn(dir);
  if (!opened.ok() && !journal_) {  // nothing of this session left behind
    journal_lock_.reset();
    if (!existed) {
      fs::remove_all(dir, ec);
    } else if (!had_lock) {
      fs::remove(dir / runlog::kLockFile, ec);
    }
  }
  return opened;
}

Status PaperSession::OpenJournalIn(const std::filesystem::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError(dir.string() + ": " + ec.message());
  // One process per journal, as one writer per run directory.
  RLT_ASSIGN_OR_RETURN(runlog::RunLock lock, runlog::RunLock::Acquire(dir, "rltrade paper"));
  journal_lock_.emplace(std::move(lock));
  RLT_ASSIGN_OR_RETURN(Journal journal, Journal::Open((dir / "journal.jsonl").string()));
  const Json start_line = {
      {"type", "start"},       {"run_dir", r_.run_dir},   {"checkpoint", setup_.checkpoint},
      {"feed", r_.feed},       {"broker", r_.broker},     {"start", r_.start},
      {"account", r_.account}, {"symbol", bars_->symbol}, {"initial_capital", o_.initial_capital}};
  Json start = start_line;
  if (setup_.seed) start["seed"] = *setup_.seed;
  if (!setup_.ensemble_method.empty()) {
    start["ensemble"] = {{"method", setup_.ensemble_method}, {"seeds", setup_.ensemble_seeds}};
  }
  // The session's journal from here on (MarkFailed writes to it): not before it is known
  // to be this session's.
  if (!journal.previous().empty()) RLT_RETURN_IF_ERROR(CheckSameSession(journal, start));
  journal_.emplace(std::move(journal));
  if (!journal_->previous().empty()) {
    // A restart: the session re-runs the bars it had (a replay from the feed's first bar,
    // a live feed from the journal's bars) and journals only what the previous process
    // did not (no order id is sent twice); it must be the same session.
    RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "restart"},
                                        {"journaled_lines", journal_->previous().size()},
                                        {"time", FormatIso8601(std::time(nullptr), 0)}}));
    if (!r_.quiet) {
      std::fprintf(stderr, "restarting the session of %s from its %zu journaled events\n",
                   dir.c_str(), journal_->previous().size());
    }
  }
  RLT_RETURN_IF_ERROR(journal_->Emit(start));
  LoadJournaledOrders();
  return Status::Ok();
}

// --journal DIR: new, empty, or a journal of `rltrade paper` (its journal.jsonl, the
// session's outputs, its lock and hidden temporaries) — never a directory of other files,
// which the session's outputs would replace.
Status PaperSession::CheckJournalDir() const {
  std::error_code ec;
  const fs::path dir(setup_.journal_dir);
  if (!fs::exists(dir, ec)) return Status::Ok();
  if (!fs::is_directory(dir, ec)) {
    return Status::Refused("--journal " + dir.string() +
                           " is not a directory; choose a new or empty directory");
  }
  static const std::set<std::string> kOurs = {
      "journal.jsonl", "status.json",  "daily_returns.csv", "trades.csv",
      "equity.csv",    "summary.json", "report.html",       runlog::kLockFile};
  bool journal = false;
  std::string outputs;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name == "journal.jsonl") journal = true;
    if (kOurs.count(name) == 0 && name.rfind('.', 0) != 0) {
      return Status::Refused("--journal " + dir.string() + " is not a journal of `rltrade " +
                             "paper` (it holds " + name + "); choose a new or empty directory");
    }
    if (kOurs.count(name) != 0 && name != "journal.jsonl" && name != runlog::kLockFile) {
      outputs += (outputs.empty() ? "" : ", ") + name;
    }
  }
  if (!journal && !outputs.empty()) {
    return Status::Refused("--journal " + dir.string() + " is not a journal of `rltrade paper` " +
                           "(it holds " + outputs + " but no journal.jsonl): the session would " +
                           "replace them; choose a new or empty directory");
  }
  return Status::Ok();
}

namespace {

// A start line's value in a refusal: an ensemble by its method and seeds (so two are told
// apart), anything else as JsonSummary says it.
std::string StartValue(const nlohmann::ordered_json& line, const char* key) {
  if (!line.contains(key)) return "missing";
  const nlohmann::ordered_json& v = line[key];
  if (std::string(key) == "ensemble" && v.is_object() && v.contains("method") &&
      v["method"].is_string()) {
    const std::string seeds = v.contains("seeds") ? v["seeds"].dump() : std::string("?");
    return "method " + JsonSummary(v["method"]) + " of seeds " + seeds.substr(0, 200);
  }
  return JsonSummary(v);
}

}  // namespace

Status PaperSession::CheckSameSession(const Journal& journal, const Json& start_line) const {
  const Json& was = journal.previous().front();
  if (was.value("type", "") != "start") {
    return Status::Refused(journal.path() + ":1: not a journal of `rltrade paper` (its " +
                           "first line is not a session's start); choose another --journal");
  }
  for (const char* key : {"run_dir", "checkpoint", "seed", "ensemble", "feed", "broker", "start",
                          "account", "symbol"}) {
    // "seed" and "ensemble" only of multi-seed runs: absent from both is the same.
    if (!was.contains(key) && !start_line.contains(key)) continue;
    if (!was.contains(key) || !start_line.contains(key) || was[key] != start_line[key]) {
      return Status::Refused(journal.path() + " is the journal of " + "another session: its " +
                             key + " is " + StartValue(was, key) + ", this one's " +
                             StartValue(start_line, key) +
                             "; restart it with its own arguments or choose another --journal");
    }
  }
  return Status::Ok();
}

// A restart's orders without an outcome (re-sent after the connect), and its tcp fills
// (booked again before the bar they filled at).
void PaperSession::LoadJournaledOrders() {
  for (const Json& line : journal_->previous()) {
    const std::string type = line.value("type", "");
    const std::string id = line.value("client_order_id", "");
    if (!id.empty() && type != "order" && !journal_->Has("order:" + id)) continue;  // not ours
    if (type == "order" && (tcp_broker_ || external_) && !finished_.count(id)) {
      open_orders_[id] = {JournaledLots(line), line.value("bar", 0), line.value("price", 0.0),
                          line.value("reason", "")};
    } else if (type == "fill" || type == "reject" || type == "cancelled") {
      finished_.insert(id);
      open_orders_.erase(id);
    }
  }
  if (tcp_broker_ || external_) {
    for (const Json& line : journal_->previous()) {
      const std::string id = line.value("client_order_id", "");
      if (line.value("type", "") == "fill" && journal_->Has("order:" + id)) {
        journaled_fills_.push_back(line);
      }
    }
  }
}

// A live feed's restart first re-runs the journal's bars (features, decisions, the
// journal's fills); the feed then continues after them.
Status PaperSession::ReplayJournaledBars() {
  for (const Json& line : journal_->previous()) {
    if (line.value("type", "") != "bar") continue;
    journal_last_time_ = std::max(journal_last_time_, line.value("epoch", int64_t{0}));
  }
  for (const Json& line : journal_->previous()) {
    if (line.value("type", "") != "bar") continue;
    FeedBar b;
    b.time = line.value("epoch", int64_t{0});
    b.open = line.value("open", 0.0);
    b.high = line.value("high", 0.0);
    b.low = line.value("low", 0.0);
    b.close = line.value("close", 0.0);
    b.volume = line.value("volume", 0.0);
    b.seq = line.value("seq", int64_t{-1});
    last_seq_ = std::max(last_seq_, b.seq);
    RLT_RETURN_IF_ERROR(TakeLiveBar(b, /*from_journal=*/true));
  }
  // Fills journaled after the last journaled bar came before the next bar: booked now,
  // before the positions are reconciled.
  return BookJournaledFills(std::numeric_limits<int32_t>::max());
}

// After every (re)connect: the orders without an outcome are re-sent (same ids: the server
// answers them again, never a second fill), the last bar handled is readied, and the
// positions are asked for (bars wait until they came).
Status PaperSession::Resync() {
  RLT_RETURN_IF_ERROR(ResendOpenOrders());
  ready_due_ = last_seq_;
  awaiting_positions_ = broker_->RequestPositions().ok();
  return Status::Ok();
}

int64_t PaperSession::JournaledLots(const Json& line) const {
  const double q = line.value("quantity", 0.0) / lot_;
  return std::llround(line.value("side", "") == "BUY" ? q : -q);
}

// A copy of the ids first: an outside broker may answer (and so finish an order) at once.
Status PaperSession::ResendOpenOrders() {
  const std::vector<std::pair<std::string, OpenOrder>> again(open_orders_.begin(),
                                                             open_orders_.end());
  for (const auto& [id, order] : again) {
    unanswered_.insert(id);
    RLT_RETURN_IF_ERROR(Transmit(id, order));
  }
  return Status::Ok();
}

// The broker's positions must agree with the journal's fills.
Status PaperSession::OnPositions(const Positions& p) {
  if (!awaiting_positions_) return Status::Ok();
  awaiting_positions_ = false;
  double held = 0;
  for (const PositionLine& pl : p.positions) {
    if (pl.symbol == bars_->symbol) held = pl.quantity;
  }
  const double booked = tcp_broker_ || external_ ? shares(walkers_[0].book.shares) : held;
  RLT_RETURN_IF_ERROR(journal_->Emit({{"type", "reconcile"},
                                      {"broker_position", held},
                                      {"journal_position", booked},
                                      {"match", held == booked}}));
  if (held != booked) {
    return Status::Refused(
        "the broker's position in " + bars_->symbol + " is " + evalrun::Num(held) +
        " shares, but the fills in " + journal_->path() + " give " + evalrun::Num(booked) +
        ": the account was traded outside this session, or a fill was lost. Flatten the "
        "account at the broker and start a new journal, or use another --account");
  }
  return Status::Ok();
}

}  // namespace rlt::paper
