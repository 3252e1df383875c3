// rltrade cli: `rltrade status RUN_DIR [--json]` — a running or finished run at a glance;
// also a paper session's journal directory (paper/paper.h: position, PnL today, orders,
// last bar, risk state).
// A multi-seed run (RUN/seeds.json, train/seeds.h) shows one row per seed; --json then
// prints {"run_dir", "seeds": N, "runs": [each seed's status object + "seed", "run_dir"]}.
//
// Reads RUN_DIR/status.json (written by the training loop: pid, start time, target steps,
// steps, fps, last checkpoint, state) and the last row of RUN_DIR/metrics.csv. The process
// counts as alive when kill(pid, 0) succeeds and /proc/<pid>/cmdline mentions rltrade; a
// "running" state whose process is gone is reported as "died" (killed or crashed: resume it
// with `rltrade train --resume RUN_DIR`; suggested only when a checkpoint with a verified
// MANIFEST exists). ETA = (total_steps - steps) / fps while alive.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "core/csv_line.h"
#include "core/file_io.h"
#include "core/json_parse.h"
#include "core/json_text.h"
#include "core/printable.h"
#include "core/proc_stats.h"
#include "paper/status_file.h"
#include "runlog/manifest.h"
#include "runlog/run_dir.h"
#include "train/seeds.h"

namespace rlt::cli {
namespace {

namespace fs = std::filesystem;

// (column, value) of the last row of metrics.csv; empty when there is none.
std::vector<std::pair<std::string, std::string>> LastMetrics(const fs::path& csv) {
  std::ifstream in(csv);
  std::string header, line, last;
  if (!std::getline(in, header)) return {};
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  const std::vector<std::string> keys = SplitCsvLine(header), values = SplitCsvLine(last);
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < keys.size() && i < values.size(); ++i)
    out.emplace_back(keys[i], values[i]);
  return out;
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-:--:--";
  const int64_t s = static_cast<int64_t>(std::ceil(seconds));
  return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}

std::string Text(const nlohmann::json& j, const char* key, const std::string& fallback) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}
double Number(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

// What `status --json` prints for one run directory.
Result<nlohmann::json> StatusJson(const std::string& run_dir) {
  RLT_ASSIGN_OR_RETURN(const runlog::RunStatusRead st, runlog::ReadRunStatus(run_dir));
  const int64_t pid =
      std::isfinite(st.pid) && st.pid > 0 && st.pid < 4194305 ? static_cast<int64_t>(st.pid) : 0;
  const bool alive = pid > 0 && IsRltradeProcessAlive(pid);
  std::string state = st.state.empty() ? "unknown" : st.state;
  if (state == "running" && !alive) state = "died";
  const double eta = alive && st.fps > 0 && std::isfinite(st.total_steps - st.steps)
                         ? (st.total_steps - st.steps) / st.fps
                         : NAN;
  // Every key the file holds (a paper journal's too), then what status adds.
  nlohmann::json out = ParseJsonOrDiscarded<nlohmann::json>(st.text);
  out["alive"] = alive;
  out["state"] = state;
  out["eta_seconds"] = std::isfinite(eta) ? nlohmann::json(eta) : nlohmann::json(nullptr);
  nlohmann::json m = nlohmann::json::object();
  for (const auto& [k, v] : LastMetrics(fs::path(run_dir) / "metrics.csv")) {
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    m[k] = (end != v.c_str() && *end == '\0' && std::isfinite(d)) ? nlohmann::json(d)
                                                                  : nlohmann::json(v);
  }
  out["metrics"] = m;
  const std::string loadable = runlog::LoadableCheckpoint(run_dir);
  out["loadable_checkpoint"] =
      loadable.empty() ? nlohmann::json(nullptr) : nlohmann::json(loadable);
  return out;
}

void PrintOne(const std::string& run_dir, const nlohmann::json& st) {
  const std::string state = Text(st, "state", "unknown");
  const std::string loadable = Text(st, "loadable_checkpoint", "");
  const bool alive = st.contains("alive") && st["alive"].is_boolean() && st["alive"].get<bool>();
  fmt::print("run          {}\n", run_dir);
  std::string hint;
  if (state == "paused") {
    hint = " (stopped at a step budget; continue with rltrade train --resume " + run_dir + ")";
  } else if (state == "died" || state == "interrupted") {
    hint = !loadable.empty() ? " (process gone; continue with rltrade train --resume " + run_dir +
                                   ", from " + loadable + ")"
                             : " (process gone; no loadable checkpoint to resume from: start a "
                               "new run)";
  }
  const double steps = Number(st, "steps"), total = Number(st, "total_steps");
  fmt::print("state        {}{}\n", state, hint);
  const double pid = Number(st, "pid");
  fmt::print("process      pid {} {}\n", std::isfinite(pid) ? fmt::format("{:.0f}", pid) : "?",
             alive ? "alive" : "not running");
  fmt::print("steps        {:.0f} / {:.0f} ({:.1f}%)\n", steps, total,
             total > 0 ? 100.0 * steps / total : 0.0);
  fmt::print("fps          {:.0f}\n", Number(st, "fps"));
  fmt::print("ETA          {}\n", FormatDuration(Number(st, "eta_seconds")));
  // Text from files is printed through PrintableText (binary bytes escaped, long text cut).
  const std::string checkpoint = Text(st, "last_checkpoint", "");
  fmt::print("checkpoint   {}\n", checkpoint.empty() ? "(none)" : PrintableText(checkpoint, 300));
  const std::string metric = Text(st, "select_metric", "");
  if (!metric.empty()) {  // selection on validation (eval_every > 0): best/
    const double best_step = Number(st, "best_step");
    fmt::print("best         {}\n",
               std::isfinite(best_step) && best_step >= 0
                   ? fmt::format("validation {} {:.6g} at step {:.0f} (best/)",
                                 PrintableText(metric, 100), Number(st, "best_score"), best_step)
                   : "(no finite validation " + PrintableText(metric, 100) + " yet)");
  }
  const std::string message = Text(st, "message", "");
  if (!message.empty()) fmt::print("message      {}\n", PrintableText(message, 1000));
  const nlohmann::json& metrics = st["metrics"];
  if (!metrics.empty()) fmt::print("latest metrics:\n");
  for (const auto& [k, v] : metrics.items()) {
    fmt::print("  {:<28} {}\n", PrintableText(k, 100),
               PrintableText(v.is_string() ? v.get<std::string>() : JsonText(v), 100));
  }
}

// A multi-seed run (train/seeds.h): one row per seed.
int RunSeedsStatus(const std::string& run_dir, const train::SeedsIndex& index, bool json) {
  nlohmann::json runs = nlohmann::json::array();
  const std::vector<std::string> dirs = index.SeedRuns(run_dir);
  for (size_t i = 0; i < dirs.size(); ++i) {
    Result<nlohmann::json> st = StatusJson(dirs[i]);
    nlohmann::json row = st.ok() ? *st : nlohmann::json::object();
    if (!st.ok()) {
      row["state"] = fs::exists(dirs[i]) ? "unknown" : "not started";
      row["message"] = st.status().message();
    }
    row["seed"] = index.seeds[i];
    row["run_dir"] = dirs[i];
    runs.push_back(row);
  }
  if (json) {
    nlohmann::json out;
    out["run_dir"] = run_dir;
    out["seeds"] = index.seeds.size();
    out["runs"] = runs;
    fmt::print("{}\n", JsonText(out, 2));
    return 0;
  }
  fmt::print("run          {} ({} seeds)\n", run_dir, index.seeds.size());
  fmt::print("{:>6}  {:<12} {:>23}  {:>9}  {:>8}  {}\n", "seed", "state", "steps", "fps", "ETA",
             "ep_rew_mean");
  bool resumable = false;
  for (const nlohmann::json& r : runs) {
    const std::string state = Text(r, "state", "unknown");
    resumable = resumable || state == "died" || state == "interrupted" || state == "paused" ||
                state == "not started";
    const double steps = Number(r, "steps"), total = Number(r, "total_steps");
    const double reward = r.contains("metrics") ? Number(r["metrics"], "rollout/ep_rew_mean") : NAN;
    fmt::print("{:>6}  {:<12} {:>23}  {:>9}  {:>8}  {}\n", r["seed"].get<uint64_t>(), state,
               std::isfinite(total) ? fmt::format("{:.0f} / {:.0f}", steps, total) : "-",
               std::isfinite(Number(r, "fps")) ? fmt::format("{:.0f}", Number(r, "fps")) : "-",
               FormatDuration(Number(r, "eta_seconds")),
               std::isfinite(reward) ? fmt::format("{:.6g}", reward) : "-");
  }
  if (resumable) {
    fmt::print("continue the unfinished seeds with rltrade train --resume {}\n", run_dir);
  }
  fmt::print("one seed in detail: rltrade status {}\n", dirs.front());
  return 0;
}

// A paper session's journal directory (paper/status_file.h owns its status.json; `state`
// is StatusJson's, "died" for a running session whose process is gone).
void PrintPaper(const std::string& dir, const std::string& state, const paper::PaperStatus& st) {
  auto text = [](const std::string& s) { return s.empty() ? std::string("?") : s; };
  fmt::print("paper session {}\n", dir);
  fmt::print("state         {}{}\n", state,
             state == "died" ? " (process gone; restart it with rltrade paper ... --journal " +
                                   dir + ", same arguments)"
                             : "");
  fmt::print("run           {} (feed {}, broker {})\n", text(st.run_dir), text(st.feed),
             text(st.broker));
  if (!st.has_bar) {
    fmt::print("last bar      none yet ({} bars received)\n", st.bars);
  } else {
    fmt::print("last bar      {} (bar {}, {} bars), session {}{}\n", text(st.last_bar_time),
               st.last_bar, st.bars, text(st.session_date),
               st.trading ? "" : " (not trading: warm-up or before --start)");
    fmt::print("position      {:.6g} shares; cash {:.2f}; net worth {:.2f}\n", st.position, st.cash,
               st.net_worth);
    fmt::print("today         PnL {:+.2f}; {} orders ({} fills since the start)\n", st.pnl_today,
               st.orders_today, st.fills);
  }
  if (!st.open_orders.empty()) {
    std::string ids;
    for (const std::string& id : st.open_orders) {
      ids += (ids.empty() ? "" : ", ") + PrintableText(id, 80);
    }
    fmt::print("open orders   {}\n", ids);
  }
  std::string refused;
  for (const auto& [rule, n] : st.refusals) {
    refused += fmt::format("{}{} {}", refused.empty() ? "" : ", ", PrintableText(rule, 40), n);
  }
  fmt::print("risk          {}{}{}; refusals: {}\n", st.halted ? "halted for the session" : "ok",
             st.stopped ? ", stopped (net worth at the stop fraction)" : "",
             st.stale_feed ? ", feed stale (no new orders until the next bar)" : "",
             refused.empty() ? "none" : refused);
  if (!st.error.empty()) fmt::print("error         {}\n", PrintableText(st.error, 1000));
}

int RunStatus(const std::string& run_dir, bool json) {
  Result<std::optional<train::SeedsIndex>> index = train::ReadSeedsIndex(run_dir);
  if (!index.ok()) return ReportError(index.status());
  if (*index) return RunSeedsStatus(run_dir, **index, json);
  Result<nlohmann::json> st = StatusJson(run_dir);
  if (!st.ok()) return ReportError(st.status());
  if (json) {
    fmt::print("{}\n", JsonText(*st, 2));
  } else if (paper::IsPaperStatus(*st)) {
    PrintPaper(run_dir, Text(*st, "state", "unknown"), paper::PaperStatusFromJson(*st));
  } else {
    PrintOne(run_dir, *st);
  }
  return 0;
}

}  // namespace

void RegisterStatusCommand(CLI::App& app, Action* action) {
  auto run_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "status", "Steps, fps, ETA, latest metrics, last checkpoint and liveness of a run");
  cmd->add_option("RUN_DIR", *run_dir, "run directory")->required();
  cmd->add_flag("--json", *json, "print JSON");
  cmd->callback([run_dir, json, action] {
    *action = [run_dir, json] { return RunStatus(*run_dir, *json); };
  });
}

}  // namespace rlt::cli
