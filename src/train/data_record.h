// rltrade train: the record of the data a run trained on (RUN_DIR/data.json), and the check
// that the data a later command reads is that data.
//
// What a run records (RecordTrainingData, written by `rltrade train` beside config.toml
// and listed in its MANIFEST): for a [data] file, its absolute path, size and SHA-256;
// the symbols it holds (from its symbol column or [data] symbol; none for a file with
// neither, whose identity is then its fingerprint only); its first and last bar, bar size
// (the median spacing within sessions) and time zone; and, for every session of the
// training range ([split] train, and the training envs' range), its date, first bar,
// number of bars and a SHA-256 of its bars (time and OHLCV as read, 48 bytes per bar).
// Synthetic data records its generator settings only (it is rebuilt from them).
//
// The check (CheckAgainstRecord), run by eval, signal, paper and the Python API whenever
// they read bars for a run that has a record:
//  - symbol: bars from a file with a symbol column must be of a recorded symbol, unless
//    allow_mismatch;
//  - data change: every recorded session that the bars hold must hash as recorded; the
//    first that does not (a bar changed, added or removed) is refused, naming the file and
//    the session, unless allow_data_change. Sessions the bars do not hold are not
//    compared (a file of later dates, a live file that starts after training), nor is a
//    file's first session when it starts after the recorded first bar of that date (a
//    file cut inside a session). Bars appended after the recorded last bar are fine: live
//    data grows.
// The whole-file SHA-256 is a record for people and tools (`sha256sum` prints the same);
// the per-session hashes are what is checked, so appended data passes.
#ifndef RLT_TRAIN_DATA_RECORD_H_
#define RLT_TRAIN_DATA_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "market/bars.h"
#include "market/date_range.h"

namespace rlt::train {

inline constexpr const char* kDataRecordFile = "data.json";

struct SessionRecord {
  int32_t date = 0;        // yyyymmdd, local
  int64_t first_time = 0;  // the first bar's time, seconds since epoch UTC
  int32_t bars = 0;        // bars in the session
  std::string sha256;      // SessionDigest of the session's bars
};

struct FileRecord {
  std::string path;  // absolute
  uint64_t size = 0;
  std::string sha256;                         // of the whole file
  std::vector<std::string> symbols;           // real symbols; empty: the file names none
  std::string symbol_source;                  // "column", "config" ([data] symbol) or "none"
  int64_t first_time = 0, last_time = 0;      // first and last bar read (seconds UTC)
  int32_t first_offset = 0, last_offset = 0;  // their UTC offsets (for printing)
  int64_t bar_seconds = 0;                    // median spacing of bars within sessions
  std::string timezone;
  std::string training_range;  // the ranges the sessions below cover
  std::vector<SessionRecord> sessions;
};

struct DataRecord {
  std::string source;             // "file" or "synthetic"
  std::vector<FileRecord> files;  // source = file: one per file read
  // Where the record was read from (messages): RUN_DIR/data.json.
  std::string origin;
};

// The SHA-256 (hex) of bars [begin, end): per bar, the time (int64) and open, high, low,
// close, volume (IEEE doubles), little-endian.
std::string SessionDigest(const market::Bars& bars, int32_t begin, int32_t end);

// The record of a file source: `file` read into `bars` (the bars as training read them,
// the [data] session applied); `config_symbol` is [data] symbol; `symbol_column` says
// whether the file has a symbol column; sessions inside any of `ranges` are hashed.
// Errors: the file cannot be read for its SHA-256.
Result<DataRecord> RecordFileData(const std::string& file, const market::Bars& bars,
                                  const std::string& config_symbol, bool symbol_column,
                                  const std::vector<market::DateRange>& ranges);
// The record of synthetic data.
DataRecord RecordSyntheticData();

std::string DataRecordJson(const DataRecord& record);
// Reads RUN_DIR/data.json; errors name the file and the field.
Result<DataRecord> LoadDataRecord(const std::string& path);

// RUN_DIR/data.json when the run has one; std::nullopt for a run without (trained before
// runs recorded their data, or of an environment without market data).
Result<std::optional<DataRecord>> LoadRunDataRecord(const std::string& run_dir);

struct RecordCheck {
  bool allow_data_change = false;
  bool allow_mismatch = false;
};

// Checks bars read from `file` (with its symbol column or not) against `record` as the
// file comment says. Refused (exit 2) with a message that names the file, what differs
// and the flag that accepts it. Notes of what was accepted under an allow flag go to
// *notes.
Status CheckAgainstRecord(const DataRecord& record, const market::Bars& bars,
                          const std::string& file, bool symbol_column, const RecordCheck& check,
                          std::vector<std::string>* notes);

}  // namespace rlt::train

#endif  // RLT_TRAIN_DATA_RECORD_H_
