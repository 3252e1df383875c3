// rltrade train: a run directory's files and --resume (see resume.h).
#include "train/resume.h"

#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/file_io.h"
#include "core/json_text.h"
#include "core/options.h"
#include "env/registry.h"
#include "runlog/manifest.h"
#include "runlog/run_dir.h"
#include "train/selection.h"

namespace rlt::train::internal {

namespace fs = std::filesystem;

namespace {

// Removes what killed writers left behind (staged checkpoints, temporary files).
// REQUIRES: the run's lock is held.
void RemoveStaleRunTemps(const fs::path& run_dir) {
  for (const fs::path& dir : {run_dir, run_dir / "checkpoints", run_dir / "eval"}) {
    std::error_code ec;
    if (fs::is_directory(dir, ec)) runlog::RemoveStaleTemps(dir.string());
  }
}

// The newest complete checkpoint (runlog/run_dir.h); NotFound when there is none.
Result<std::string> ResumeCheckpoint(const fs::path& run_dir) {
  std::string checkpoint = runlog::NewestCheckpoint(run_dir);
  if (checkpoint.empty()) {
    return Status::NotFound(run_dir.string() +
                            " has no complete checkpoint to resume from (checkpoints/step_<N>/ "
                            "or final/ with a FORMAT file); start a new run instead");
  }
  return checkpoint;
}

}  // namespace

Result<TrainingRanges> ReadRecordedRanges(const fs::path& run_dir) {
  const fs::path path = run_dir / kTrainingRangesFile;
  std::error_code ec;
  if (!fs::exists(path, ec)) return TrainingRanges{};
  RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(path.string()));
  return ParseTrainingRanges(text, path.string());
}

// config.toml, normalizer.json, training_ranges.json, data.json, then MANIFEST over them (last).
Status WriteRunFiles(const fs::path& run_dir, const Setup& s, bool write_config) {
  if (write_config) {
    RLT_RETURN_IF_ERROR(WriteFileAtomic((run_dir / "config.toml").string(), s.config.ToToml()));
  }
  if (!s.normalizer_json.empty()) {
    RLT_RETURN_IF_ERROR(WriteFileAtomic((run_dir / "normalizer.json").string(), s.normalizer_json));
  }
  if (!s.ranges_json.empty()) {
    RLT_RETURN_IF_ERROR(WriteFileAtomic((run_dir / kTrainingRangesFile).string(), s.ranges_json));
  }
  // A resumed run keeps the record of the data it started on.
  if (!s.data_json.empty() && (write_config || !fs::exists(run_dir / kDataRecordFile))) {
    RLT_RETURN_IF_ERROR(WriteFileAtomic((run_dir / kDataRecordFile).string(), s.data_json));
  }
  std::vector<std::string> present;
  for (const std::string& name : RunSetupFiles()) {
    if (fs::exists(run_dir / name)) present.push_back(name);
  }
  return runlog::WriteManifestOf(run_dir.string(), present);
}

namespace {

// Settings a resume may change without --allow-config-change: the run's length, thread
// count, checkpoint/evaluation cadence, when it stops early and the policy backend (the same
// policy either way). run.select_metric is not among them: best/ was chosen by the old one.
bool AlwaysAllowedOnResume(const std::string& key) {
  static const char* const kAllowed[] = {"run.total_steps", "run.threads",  "run.checkpoint_every",
                                         "run.eval_every",  "run.patience", "policy.backend"};
  for (const char* k : kAllowed) {
    if (key == k) return true;
  }
  return false;
}

std::map<std::string, std::string> FlatConfig(const config::Config& c) {
  std::map<std::string, std::string> out;
  for (const std::string& name : c.SectionNames()) {
    for (const auto& [key, value] : c.Find(name)->entries) out[name + "." + key] = value.text;
  }
  return out;
}

// "section.key" -> default value text of every options struct a run's config records:
// [run], [algo] (the run's algorithm), [policy], [data], [features] and the [env] options
// of `env_id`.
std::map<std::string, std::string> DefaultValues(const std::string& env_id,
                                                 const Algorithm& algorithm) {
  std::map<std::string, std::string> out;
  auto add = [&out](const std::string& section, const auto& rows) {
    for (const auto& row : rows) out[section + "." + row.key] = row.value;
  };
  add("run", DescribeOptions(RunOptions()));
  for (const auto& [key, value] : algorithm.DefaultRows()) out["algo." + key] = value;
  add("policy", DescribeOptions(learn::PolicyOptions()));
  add("data", DescribeOptions(DataOptions()));
  add("features", DescribeOptions(FeatureOptions()));
  Result<std::vector<std::pair<std::string, std::string>>> env_rows =
      env::EnvOptionValues(env_id, {});
  if (env_rows.ok()) {
    for (const auto& [key, value] : *env_rows) out["env." + key] = value;
  }
  return out;
}

}  // namespace

// A key the stored config lacks but `now` has at its default is no change: config.toml
// records every effective value, and a run written before a key was recorded (or existed)
// ran with its default.
std::vector<ConfigChange> DiffConfigs(const config::Config& stored, const config::Config& now,
                                      const Algorithm& algorithm) {
  const auto a = FlatConfig(stored), b = FlatConfig(now);
  const config::ConfigValue* id = now.Get("env", "id");
  const auto defaults = DefaultValues(id != nullptr ? id->text : "", algorithm);
  std::vector<ConfigChange> changes;
  auto add = [&changes](const std::string& key, const std::string& from, const std::string& to) {
    changes.push_back({key, from, to, AlwaysAllowedOnResume(key)});
  };
  for (const auto& [key, value] : a) {
    const auto it = b.find(key);
    if (it == b.end()) {
      add(key, value, "");
    } else if (it->second != value) {
      add(key, value, it->second);
    }
  }
  for (const auto& [key, value] : b) {
    const auto d = defaults.find(key);
    // An episodic env's run from before select_metric existed resolves it to episode_return.
    const bool resolved_default = key == "run.select_metric" && value == kEpisodeReturnMetric;
    if (!a.count(key) && !resolved_default && (d == defaults.end() || d->second != value)) {
      add(key, "", value);
    }
  }
  return changes;
}

Status CheckResumeChanges(const std::vector<ConfigChange>& changes, bool allow,
                          const fs::path& run_dir) {
  std::string refused;
  for (const ConfigChange& c : changes) {
    if (c.allowed || allow) continue;
    refused += (refused.empty() ? "" : ", ") + c.key + " (" + (c.from.empty() ? "unset" : c.from) +
               " -> " + (c.to.empty() ? "unset" : c.to) + ")";
  }
  if (refused.empty()) return Status::Ok();
  return Status::Refused(
      "--resume " + run_dir.string() +
      " with settings that differ from the run's config.toml: " + refused +
      ". A resumed run must continue the same experiment; only run.total_steps, run.threads, "
      "run.checkpoint_every, run.eval_every, run.patience and policy.backend may change freely. "
      "Pass "
      "--allow-config-change to resume anyway (the change is recorded in history.jsonl), or "
      "start a new run");
}

Status AppendHistory(const fs::path& run_dir, const std::vector<ConfigChange>& changes,
                     const std::string& checkpoint, int64_t step, bool flag) {
  nlohmann::ordered_json j;
  j["time"] = static_cast<int64_t>(std::time(nullptr));
  j["event"] = "resume";
  j["step"] = step;
  j["checkpoint"] = checkpoint;
  j["allow_config_change"] = flag;
  j["changes"] = nlohmann::ordered_json::array();
  for (const ConfigChange& c : changes) {
    j["changes"].push_back({{"key", c.key}, {"from", c.from}, {"to", c.to}});
  }
  const std::string path = (run_dir / "history.jsonl").string();
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << JsonText(j) << "\n";
  out.close();
  if (!out) return Status::IoError("cannot append to " + path + " (disk full?)");
  return Status::Ok();
}

Status OpenResume(const fs::path& run_dir, std::optional<runlog::RunLock>& lock,
                  std::string& checkpoint) {
  if (!fs::is_directory(run_dir)) {
    return Status::NotFound(run_dir.string() +
                            " does not exist: no complete checkpoint to resume from; start a "
                            "new run instead");
  }
  RLT_ASSIGN_OR_RETURN(lock, runlog::RunLock::Acquire(run_dir.string(), "rltrade train"));
  RemoveStaleRunTemps(run_dir);
  RLT_ASSIGN_OR_RETURN(checkpoint, ResumeCheckpoint(run_dir));
  return runlog::VerifyManifestFiles(run_dir.string(), RunSetupFiles());
}

}  // namespace rlt::train::internal
