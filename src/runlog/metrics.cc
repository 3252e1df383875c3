// runlog/metrics: metrics.csv, metrics.jsonl and the TensorBoard scalars of a run.
#include "runlog/metrics.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/csv_line.h"
#include "core/file_io.h"
#include "core/json_parse.h"
#include "core/json_text.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace rlt::runlog {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// RFC 4180: quote a field holding ',' or '"', doubling the quotes.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  return out + "\"";
}

// Splits one CSV line (no newline) into fields, undoing RFC 4180 quoting.
Result<std::vector<std::string>> SplitCsvLine(std::string_view line, const std::string& where) {
  std::vector<std::string> fields;
  if (!rlt::SplitCsvLine(line, &fields)) return Status::DataError(where + ": unterminated quote");
  return fields;
}

std::string FormatValue(double v) { return fmt::format("{}", v); }

// One complete line of a metrics file: [begin, end) without the '\n'; `next` after it.
struct Line {
  std::string_view text;
  size_t next = 0;
  bool complete = false;  // ended by '\n' (a line without one is torn by a crash)
};

Line LineAt(const std::string& text, size_t begin) {
  const size_t newline = text.find('\n', begin);
  if (newline == std::string::npos) {
    return {std::string_view(text).substr(begin), text.size(), false};
  }
  return {std::string_view(text).substr(begin, newline - begin), newline + 1, true};
}

// What Resume keeps of one file: its first `keep_bytes` bytes.
struct KeptPrefix {
  size_t keep_bytes = 0;
  std::optional<int64_t> last_step;
  std::vector<std::string> header;  // CSV only; empty when there is no complete header
};

Result<int64_t> ParseStep(std::string_view text, const std::string& where) {
  int64_t step = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), step);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return Status::DataError(fmt::format("{}: expected an integer step, found '{}'", where, text));
  }
  return step;
}

Result<KeptPrefix> ScanCsv(const std::string& path, const std::string& text, int64_t resumed_step) {
  KeptPrefix kept;
  Line header = LineAt(text, 0);
  if (!header.complete) return kept;  // empty or torn header: start afresh
  RLT_ASSIGN_OR_RETURN(kept.header, SplitCsvLine(header.text, path + ":1"));
  if (kept.header.empty() || kept.header[0] != "step") {
    return Status::DataError(fmt::format(
        "{}:1: the header must start with 'step'; is this a metrics file written by rltrade?",
        path));
  }
  kept.keep_bytes = header.next;
  for (int line_no = 2; kept.keep_bytes < text.size(); ++line_no) {
    const Line line = LineAt(text, kept.keep_bytes);
    if (!line.complete) break;  // torn by a crash: cut
    const std::string where = fmt::format("{}:{}", path, line_no);
    RLT_ASSIGN_OR_RETURN(int64_t step, ParseStep(line.text.substr(0, line.text.find(',')), where));
    if (step > resumed_step) break;
    kept.last_step = step;
    kept.keep_bytes = line.next;
  }
  return kept;
}

Result<KeptPrefix> ScanJsonl(const std::string& path, const std::string& text,
                             int64_t resumed_step) {
  KeptPrefix kept;
  for (int line_no = 1; kept.keep_bytes < text.size(); ++line_no) {
    const Line line = LineAt(text, kept.keep_bytes);
    if (!line.complete) break;  // torn by a crash: cut
    const nlohmann::json row = ParseJsonOrDiscarded<nlohmann::json>(line.text);
    if (!row.is_object() || !row.contains("step") || !row["step"].is_number_integer()) {
      return Status::DataError(fmt::format(
          "{}:{}: expected a JSON object with an integer \"step\"; fix or remove the line", path,
          line_no));
    }
    const int64_t step = row["step"].get<int64_t>();
    if (step > resumed_step) break;
    kept.last_step = step;
    kept.keep_bytes = line.next;
  }
  return kept;
}

Status TruncateTo(const std::string& path, size_t size) {
  if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0) {
    return posix_io::ErrnoStatus("truncate", path, errno);
  }
  return Status::Ok();
}

}  // namespace

Result<MetricsLogger> MetricsLogger::OpenFiles(const std::string& run_dir,
                                               const MetricsLoggerOptions& options) {
  if (::mkdir(run_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return posix_io::ErrnoStatus("create the run directory", run_dir, errno);
  }
  MetricsLogger logger;
  logger.run_dir_ = run_dir;
  RLT_ASSIGN_OR_RETURN(logger.csv_, posix_io::OpenForAppend(logger.csv_path()));
  RLT_ASSIGN_OR_RETURN(logger.jsonl_, posix_io::OpenForAppend(logger.jsonl_path()));
  if (options.tensorboard) {
    RLT_ASSIGN_OR_RETURN(EventFileWriter writer, EventFileWriter::Open(run_dir));
    logger.tensorboard_.emplace(std::move(writer));
  }
  return logger;
}

Result<MetricsLogger> MetricsLogger::Create(const std::string& run_dir,
                                            const MetricsLoggerOptions& options) {
  for (const char* name : {kCsvName, kJsonlName}) {
    const std::string path = run_dir + "/" + name;
    if (Exists(path)) {
      return Status::InvalidArgument(fmt::format(
          "'{}' exists: the run directory holds a previous run; pass --resume to continue it "
          "or choose another --run-dir",
          path));
    }
  }
  return OpenFiles(run_dir, options);
}

Result<MetricsLogger> MetricsLogger::Resume(const std::string& run_dir, int64_t resumed_step,
                                            const MetricsLoggerOptions& options) {
  const std::string csv = run_dir + "/" + kCsvName;
  const std::string jsonl = run_dir + "/" + kJsonlName;
  KeptPrefix csv_kept;
  if (Exists(csv)) {
    RLT_ASSIGN_OR_RETURN(std::string text, ReadFile(csv));
    RLT_ASSIGN_OR_RETURN(csv_kept, ScanCsv(csv, text, resumed_step));
    RLT_RETURN_IF_ERROR(TruncateTo(csv, csv_kept.keep_bytes));
  }
  KeptPrefix jsonl_kept;
  if (Exists(jsonl)) {
    RLT_ASSIGN_OR_RETURN(std::string text, ReadFile(jsonl));
    RLT_ASSIGN_OR_RETURN(jsonl_kept, ScanJsonl(jsonl, text, resumed_step));
    RLT_RETURN_IF_ERROR(TruncateTo(jsonl, jsonl_kept.keep_bytes));
  }
  RLT_ASSIGN_OR_RETURN(MetricsLogger logger, OpenFiles(run_dir, options));
  if (!csv_kept.header.empty()) {
    logger.SetKeys(std::vector<std::string>(csv_kept.header.begin() + 1, csv_kept.header.end()));
    logger.header_written_ = true;
  }
  logger.last_step_ = csv_kept.last_step;
  if (jsonl_kept.last_step && (!logger.last_step_ || *jsonl_kept.last_step > *logger.last_step_)) {
    logger.last_step_ = jsonl_kept.last_step;
  }
  if (logger.tensorboard_) {
    RLT_RETURN_IF_ERROR(logger.tensorboard_->AddSessionStart(resumed_step + 1, WallTimeNow()));
    RLT_RETURN_IF_ERROR(logger.tensorboard_->Flush());
  }
  return logger;
}

void MetricsLogger::SetKeys(std::vector<std::string> keys) {
  keys_ = std::move(keys);
  column_of_key_.clear();
  for (size_t i = 0; i < keys_.size(); ++i) {
    const std::string& key = keys_[i];
    RLT_CHECK_MSG(!key.empty() && key != "step", "metric keys must be non-empty and not 'step'");
    RLT_CHECK_MSG(key.find_first_of("\r\n") == std::string::npos,
                  "metric key '" + key + "' contains a line break");
    RLT_CHECK_MSG(column_of_key_.emplace(key, i).second, "metric key '" + key + "' repeated");
  }
}

Status MetricsLogger::Log(int64_t step, const std::vector<std::pair<std::string, double>>& values) {
  RLT_CHECK_MSG(csv_.valid(), "MetricsLogger used after being moved from");
  RLT_CHECK_MSG(!last_step_ || step >= *last_step_,
                fmt::format("metrics step {} after step {}; steps must not decrease", step,
                            last_step_.value_or(0)));
  const bool first = !header_written_;
  if (first) {
    std::vector<std::string> keys;
    for (const auto& kv : values) keys.push_back(kv.first);
    SetKeys(std::move(keys));
  }
  // (columns): the value of each column in this row, if given.
  std::vector<std::optional<double>> row(keys_.size());
  for (const auto& [key, value] : values) {
    const auto it = column_of_key_.find(key);
    RLT_CHECK_MSG(it != column_of_key_.end(),
                  "metric key '" + key +
                      "' was not in the first Log(); the CSV columns are fixed by it — list "
                      "every key there (NaN as a placeholder)");
    RLT_CHECK_MSG(!row[it->second], "metric key '" + key + "' given twice in one Log()");
    row[it->second] = value;
  }

  std::string csv_text;
  if (first) {
    csv_text = "step";
    for (const std::string& key : keys_) {
      csv_text += ',';
      csv_text += CsvField(key);
    }
    csv_text += "\n";
  }
  csv_text += std::to_string(step);
  nlohmann::ordered_json json;
  json["step"] = step;
  for (size_t i = 0; i < keys_.size(); ++i) {
    csv_text += ",";
    if (!row[i]) continue;
    csv_text += FormatValue(*row[i]);
    json[keys_[i]] = std::isfinite(*row[i]) ? nlohmann::ordered_json(*row[i]) : nullptr;
  }
  csv_text += "\n";
  RLT_RETURN_IF_ERROR(posix_io::WriteAll(csv_.get(), csv_text, csv_path()));
  header_written_ = true;
  last_step_ = step;
  RLT_RETURN_IF_ERROR(posix_io::WriteAll(jsonl_.get(), JsonText(json) + "\n", jsonl_path()));
  if (tensorboard_) {
    const double now = WallTimeNow();
    for (const auto& [key, value] : values) {
      RLT_RETURN_IF_ERROR(tensorboard_->AddScalar(key, step, static_cast<float>(value), now));
    }
    RLT_RETURN_IF_ERROR(tensorboard_->Flush());
  }
  return Status::Ok();
}

}  // namespace rlt::runlog
