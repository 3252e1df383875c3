// rltrade train (internal): a run directory's files and --resume: the files MANIFEST
// covers, the checkpoint a resume continues from, the settings a resume may change (and the
// history line of those it changed), the ranges recorded so far.
#ifndef RLT_TRAIN_RESUME_H_
#define RLT_TRAIN_RESUME_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "runlog/runlog.h"
#include "train/setup.h"
#include "train/training_ranges.h"

namespace rlt::train::internal {

struct ConfigChange {
  std::string key;       // "section.key"
  std::string from, to;  // "" = absent
  bool allowed = false;
};

// Every range and session the run has trained on so far (empty when none is recorded).
Result<TrainingRanges> ReadRecordedRanges(const std::filesystem::path& run_dir);
// config.toml (when `write_config`), normalizer.json, training_ranges.json, then MANIFEST.
Status WriteRunFiles(const std::filesystem::path& run_dir, const Setup& s, bool write_config);

// The settings that differ between a run's stored config.toml and the resumed config
// (a key absent from `stored` and at its default in `now` is no change).
std::vector<ConfigChange> DiffConfigs(const config::Config& stored, const config::Config& now,
                                      const Algorithm& algorithm);
// Refused unless every change is allowed on resume, or `allow` (--allow-config-change).
Status CheckResumeChanges(const std::vector<ConfigChange>& changes, bool allow,
                          const std::filesystem::path& run_dir);
// One JSON line per resume that changed settings: RUN_DIR/history.jsonl.
Status AppendHistory(const std::filesystem::path& run_dir, const std::vector<ConfigChange>& changes,
                     const std::string& checkpoint, int64_t step, bool flag);

// A resume's first steps, before anything is read: RUN must exist; its lock is taken (one
// writer per run directory), leftover staging directories of a killed process removed, the
// newest complete checkpoint picked into `checkpoint` and the run's MANIFEST verified.
Status OpenResume(const std::filesystem::path& run_dir, std::optional<runlog::RunLock>& lock,
                  std::string& checkpoint);

}  // namespace rlt::train::internal

#endif  // RLT_TRAIN_RESUME_H_
