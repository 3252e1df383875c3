// rltrade cli: `rltrade status RUN_DIR [--json]` — a running or finished run at a glance.
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
#include "runlog/manifest.h"
#include "train/proc_stats.h"

namespace rlt::cli {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) cells.push_back(cell);
  return cells;
}

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

// The checkpoint `train --resume` would pick (the newest checkpoints/step_<N>/ with a
// FORMAT file, else final/) if its MANIFEST verifies, or "" — so that status never
// suggests a resume that would fail.
std::string LoadableCheckpoint(const fs::path& run_dir) {
  std::vector<std::pair<int64_t, fs::path>> candidates;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run_dir / "checkpoints", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step_", 0) != 0) continue;
    char* end = nullptr;
    const long long step = std::strtoll(name.c_str() + 5, &end, 10);
    if (*end == '\0') candidates.emplace_back(step, entry.path());
  }
  std::sort(candidates.rbegin(), candidates.rend());
  candidates.emplace_back(-1, run_dir / "final");
  for (const auto& [step, dir] : candidates) {
    if (!fs::exists(dir / "FORMAT", ec)) continue;
    return runlog::VerifyManifest(dir.string(), /*complete=*/true).ok() ? dir.string() : "";
  }
  return "";
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-:--:--";
  const int64_t s = static_cast<int64_t>(std::ceil(seconds));
  return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}

int RunStatus(const std::string& run_dir, bool json) {
  const fs::path status_path = fs::path(run_dir) / "status.json";
  std::ifstream in(status_path);
  if (!in) {
    return ReportError(Status::NotFound(status_path.string() +
                                        " not found: not a run directory of this rltrade "
                                        "version (or training has not started yet)"));
  }
  nlohmann::json st = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (st.is_discarded() || !st.is_object()) {
    return ReportError(Status::DataError(status_path.string() + " is not valid JSON"));
  }
  const int64_t pid = st.value("pid", int64_t{0});
  const bool alive = train::IsRltradeProcessAlive(pid);
  std::string state = st.value("state", std::string("unknown"));
  if (state == "running" && !alive) state = "died";
  const int64_t steps = st.value("steps", int64_t{0}), total = st.value("total_steps", int64_t{0});
  const double fps = st.value("fps", 0.0);
  const double eta = alive && fps > 0 ? static_cast<double>(total - steps) / fps : NAN;
  const auto metrics = LastMetrics(fs::path(run_dir) / "metrics.csv");
  const std::string loadable = LoadableCheckpoint(run_dir);
  if (json) {
    nlohmann::json out = st;
    out["alive"] = alive;
    out["state"] = state;
    out["eta_seconds"] = std::isfinite(eta) ? nlohmann::json(eta) : nlohmann::json(nullptr);
    nlohmann::json m = nlohmann::json::object();
    for (const auto& [k, v] : metrics) {
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      m[k] = (end != v.c_str() && *end == '\0' && std::isfinite(d)) ? nlohmann::json(d)
                                                                    : nlohmann::json(v);
    }
    out["metrics"] = m;
    out["loadable_checkpoint"] =
        loadable.empty() ? nlohmann::json(nullptr) : nlohmann::json(loadable);
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("run          {}\n", run_dir);
  std::string hint;
  if (state == "died" || state == "interrupted") {
    hint = !loadable.empty() ? " (process gone; continue with rltrade train --resume " + run_dir +
                                   ", from " + loadable + ")"
                             : " (process gone; no loadable checkpoint to resume from: start a "
                               "new run)";
  }
  fmt::print("state        {}{}\n", state, hint);
  fmt::print("process      pid {} {}\n", pid, alive ? "alive" : "not running");
  fmt::print("steps        {} / {} ({:.1f}%)\n", steps, total,
             total > 0 ? 100.0 * static_cast<double>(steps) / static_cast<double>(total) : 0.0);
  fmt::print("fps          {:.0f}\n", fps);
  fmt::print("ETA          {}\n", FormatDuration(eta));
  fmt::print("checkpoint   {}\n", st.value("last_checkpoint", std::string("(none)")));
  const std::string message = st.value("message", std::string());
  if (!message.empty()) fmt::print("message      {}\n", message);
  if (!metrics.empty()) fmt::print("latest metrics:\n");
  for (const auto& [k, v] : metrics) fmt::print("  {:<28} {}\n", k, v);
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
