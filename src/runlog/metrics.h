// runlog/metrics: the metric files of a training run.
//
// What it is: `MetricsLogger` appends one row per Log(step, values) to three files in the
// run directory:
//   metrics.csv    `step,<key1>,<key2>,...` — a header, then one row per Log. Values are
//                  printed in the shortest form that reads back to the same double
//                  ("0.1", "1e+30", "nan", "inf"). Keys containing ',' or '"' are quoted
//                  (RFC 4180).
//   metrics.jsonl  one JSON object per line: {"step": 2048, "<key1>": 0.5, ...}, keys in
//                  column order; NaN and ±Inf are written as null; missing keys are
//                  omitted.
//   events.out.tfevents.*  a TensorBoard file with one scalar per value (tag = key), unless
//                  MetricsLoggerOptions::tensorboard is false.
// What it is not: a metrics aggregator (means, smoothing) or a reader.
//
// Columns are fixed by the first Log of a fresh run (or by the existing CSV header when
// resuming). A later Log may omit keys (the CSV cell is left empty, the JSON key is left
// out) but must not introduce new ones: that is a bug in the caller and aborts through
// RLT_CHECK — list every key in the first Log (a NaN placeholder is fine). Steps must not
// decrease (RLT_CHECK).
//
// Durability: each line is written with one write(2) as soon as it is logged (no user-space
// buffering), so a crash loses at most the line being written. A torn last line is cut
// when the run is resumed.
//
// Resuming (--resume): Resume(run_dir, resumed_step) keeps the CSV header and every row up
// to the first one with step > resumed_step, cuts the rest (the resumed run recomputes
// those steps, so the files continue without duplicates), and appends from there. The
// TensorBoard data go to a new event file that starts with a SessionLog START at
// resumed_step + 1 (see EventFileWriter::AddSessionStart).
//
// Ownership and thread safety: owns its file descriptors; move-only; not thread-safe.
#ifndef RLT_RUNLOG_METRICS_H_
#define RLT_RUNLOG_METRICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/posix_io.h"
#include "core/status.h"
#include "runlog/tensorboard.h"

namespace rlt::runlog {

struct MetricsLoggerOptions {
  // Also write every value to a TensorBoard event file in the run directory.
  bool tensorboard = true;
};

class MetricsLogger {
 public:
  static constexpr const char* kCsvName = "metrics.csv";
  static constexpr const char* kJsonlName = "metrics.jsonl";

  // Starts the metric files of a new run in `run_dir` (created if absent; its parent must
  // exist). Refuses a directory that already holds metrics.csv or metrics.jsonl: that is a
  // previous run, to be continued with Resume() or left alone.
  static Result<MetricsLogger> Create(const std::string& run_dir,
                                      const MetricsLoggerOptions& options = {});
  // Continues the files of a run resumed from a checkpoint at `resumed_step` (see the file
  // comment). Missing files are started afresh. A malformed line other than a torn last
  // line is a DataError naming the file and line.
  static Result<MetricsLogger> Resume(const std::string& run_dir, int64_t resumed_step,
                                      const MetricsLoggerOptions& options = {});

  MetricsLogger(MetricsLogger&&) = default;
  MetricsLogger& operator=(MetricsLogger&&) = default;

  // Appends one row. REQUIRES: keys non-empty, not "step", without '\n'/'\r', unique
  // within the call and (after the first Log) among the columns; step >= the last step.
  Status Log(int64_t step, const std::vector<std::pair<std::string, double>>& values);

  // The value columns (without "step"); empty before the first Log of a fresh run.
  const std::vector<std::string>& keys() const { return keys_; }
  std::string csv_path() const { return run_dir_ + "/" + kCsvName; }
  std::string jsonl_path() const { return run_dir_ + "/" + kJsonlName; }
  // The event file, or "" when TensorBoard output is off.
  std::string tensorboard_path() const { return tensorboard_ ? tensorboard_->path() : ""; }

 private:
  MetricsLogger() = default;
  static Result<MetricsLogger> OpenFiles(const std::string& run_dir,
                                         const MetricsLoggerOptions& options);
  void SetKeys(std::vector<std::string> keys);

  std::string run_dir_;
  std::vector<std::string> keys_;
  std::unordered_map<std::string, size_t> column_of_key_;
  bool header_written_ = false;
  std::optional<int64_t> last_step_;
  posix_io::Fd csv_;
  posix_io::Fd jsonl_;
  std::optional<EventFileWriter> tensorboard_;
};

}  // namespace rlt::runlog

#endif  // RLT_RUNLOG_METRICS_H_
