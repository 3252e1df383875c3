// rltrade paper: a paper session's status.json in its journal directory — its one writer
// (PaperSession, after every bar at most once a second and at the end) and its one reader
// (`rltrade status JOURNAL`). The file sits where a training run keeps RUN/status.json
// (runlog/run_dir.h) and shares its pid/state/start_time/updated_time keys, so the same
// liveness check reads both; "kind": "paper" tells them apart.
//
// Keys, in the file's order: kind, pid, state (running, finished, interrupted, failed),
// run_dir, feed, broker, start_time, updated_time (Unix seconds), bars (bars received);
// once a bar has been seen: last_bar (its index), last_bar_time, session_date, trading
// (false during warm-up or before --start), position (shares), cash, net_worth, pnl_today,
// orders_today, open_orders (client order ids), fills, risk {halted, stopped, stale_feed,
// refusals {rule: count}}; error (a failed session's message) last.
#ifndef RLT_PAPER_STATUS_FILE_H_
#define RLT_PAPER_STATUS_FILE_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::paper {

inline constexpr const char* kPaperStatusFile = "status.json";

struct PaperStatus {
  int64_t pid = 0;
  std::string state;
  std::string run_dir, feed, broker;
  int64_t start_time = 0, updated_time = 0;
  int64_t bars = 0;
  // The last bar's account (present in the file when has_bar).
  bool has_bar = false;
  int64_t last_bar = 0;
  std::string last_bar_time, session_date;
  bool trading = false;
  double position = 0, cash = 0, net_worth = 0, pnl_today = 0;
  int64_t orders_today = 0, fills = 0;
  std::vector<std::string> open_orders;
  bool halted = false, stopped = false, stale_feed = false;
  std::map<std::string, int64_t> refusals;  // risk rule -> refused orders
  std::string error;                        // "" unless failed
};

// The file's JSON object (keys above).
nlohmann::ordered_json PaperStatusJson(const PaperStatus& status);
// Writes JOURNAL/status.json atomically (a reader never sees half a file).
Status WritePaperStatus(const std::filesystem::path& journal_dir, const PaperStatus& status);

// True when `j` is a paper session's status ("kind": "paper").
bool IsPaperStatus(const nlohmann::json& j);
// The status a JSON object holds: keys that are missing or of another type (a hand-edited
// or corrupt file) keep PaperStatus's defaults, so a reader never fails on them.
PaperStatus PaperStatusFromJson(const nlohmann::json& j);

}  // namespace rlt::paper

#endif  // RLT_PAPER_STATUS_FILE_H_
