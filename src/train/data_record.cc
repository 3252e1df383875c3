// rltrade train: the record of a run's data and its check (see data_record.h).
#include "train/data_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/civil_time.h"
#include "core/file_io.h"
#include "core/json_parse.h"
#include "core/json_text.h"
#include "core/median.h"
#include "core/sha256.h"

namespace rlt::train {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kFormat = "rltrade-data-record 1";

void AppendLittleEndian(uint64_t bits, uint8_t* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(bits >> (8 * i));
}

uint64_t Bits(double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

int64_t MedianBarSeconds(const market::Bars& bars) {
  std::vector<double> gaps;
  for (const market::Session& s : bars.sessions) {
    for (int32_t t = s.begin + 1; t < s.end; ++t) {
      gaps.push_back(static_cast<double>(bars.time[t] - bars.time[t - 1]));
    }
  }
  return gaps.empty() ? 0 : static_cast<int64_t>(Median(std::move(gaps)));
}

std::string Iso(int64_t time, int32_t offset) { return FormatIso8601(time, offset, false); }

// "BPCL" or "BPCL, HDFCLIFE".
std::string JoinSymbols(const std::vector<std::string>& symbols) {
  std::string out;
  for (const std::string& s : symbols) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Sha256File, remembered per (path, size, modification time): trials and seeds of one
// process record the same file many times.
Result<FileDigest> CachedFileDigest(const std::string& path) {
  struct Key {
    std::string path;
    uintmax_t size;
    int64_t mtime;
    bool operator<(const Key& o) const {
      return std::tie(path, size, mtime) < std::tie(o.path, o.size, o.mtime);
    }
  };
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  const auto mtime = std::filesystem::last_write_time(path, ec);
  if (ec) return Sha256File(path);
  const Key key{path, size, static_cast<int64_t>(mtime.time_since_epoch().count())};
  static std::mutex mu;
  static std::map<Key, FileDigest> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  RLT_ASSIGN_OR_RETURN(FileDigest digest, Sha256File(path));
  std::lock_guard<std::mutex> lock(mu);
  cache[key] = digest;
  return digest;
}

}  // namespace

std::string SessionDigest(const market::Bars& bars, int32_t begin, int32_t end) {
  Sha256 h;
  uint8_t row[48];
  for (int32_t t = begin; t < end; ++t) {
    AppendLittleEndian(static_cast<uint64_t>(bars.time[t]), row);
    AppendLittleEndian(Bits(bars.open[t]), row + 8);
    AppendLittleEndian(Bits(bars.high[t]), row + 16);
    AppendLittleEndian(Bits(bars.low[t]), row + 24);
    AppendLittleEndian(Bits(bars.close[t]), row + 32);
    AppendLittleEndian(Bits(bars.volume[t]), row + 40);
    h.Update(row, sizeof row);
  }
  return h.Hex();
}

Result<DataRecord> RecordFileData(const std::string& file, const market::Bars& bars,
                                  const std::string& config_symbol, bool symbol_column,
                                  const std::vector<market::DateRange>& ranges) {
  DataRecord record;
  record.source = "file";
  FileRecord f;
  f.path = file;
  RLT_ASSIGN_OR_RETURN(const FileDigest digest, CachedFileDigest(file));
  f.size = digest.size;
  f.sha256 = digest.sha256;
  if (!config_symbol.empty()) {
    f.symbols = {config_symbol};
    f.symbol_source = "config";
  } else if (symbol_column) {
    f.symbols = {bars.symbol};
    f.symbol_source = "column";
  } else {
    f.symbol_source = "none";
  }
  if (!bars.empty()) {
    f.first_time = bars.time.front();
    f.last_time = bars.time.back();
    f.first_offset = bars.utc_offset.front();
    f.last_offset = bars.utc_offset.back();
  }
  f.bar_seconds = MedianBarSeconds(bars);
  f.timezone = bars.timezone;
  for (const market::DateRange& r : ranges) {
    f.training_range += (f.training_range.empty() ? "" : ", ") + r.ToString();
  }
  for (const market::Session& s : bars.sessions) {
    const bool inside = std::any_of(ranges.begin(), ranges.end(),
                                    [&](const market::DateRange& r) { return r.Contains(s.date); });
    if (!inside || s.size() == 0) continue;
    f.sessions.push_back(
        {s.date, bars.time[s.begin], s.size(), SessionDigest(bars, s.begin, s.end)});
  }
  record.files.push_back(std::move(f));
  return record;
}

DataRecord RecordSyntheticData() {
  DataRecord record;
  record.source = "synthetic";
  return record;
}

std::string DataRecordJson(const DataRecord& record) {
  Json j;
  j["format"] = kFormat;
  j["source"] = record.source;
  j["files"] = Json::array();
  for (const FileRecord& f : record.files) {
    Json jf;
    jf["path"] = f.path;
    jf["size"] = f.size;
    jf["sha256"] = f.sha256;
    jf["symbols"] = f.symbols;
    jf["symbol_source"] = f.symbol_source;
    jf["first_bar"] = Iso(f.first_time, f.first_offset);
    jf["last_bar"] = Iso(f.last_time, f.last_offset);
    jf["first_epoch"] = f.first_time;
    jf["last_epoch"] = f.last_time;
    jf["first_offset"] = f.first_offset;
    jf["last_offset"] = f.last_offset;
    jf["bar_seconds"] = f.bar_seconds;
    jf["timezone"] = f.timezone;
    jf["training_range"] = f.training_range;
    Json sessions = Json::array();
    for (const SessionRecord& s : f.sessions) {
      sessions.push_back({{"date", FormatDate(s.date)},
                          {"first_epoch", s.first_time},
                          {"bars", s.bars},
                          {"sha256", s.sha256}});
    }
    jf["sessions"] = std::move(sessions);
    j["files"].push_back(std::move(jf));
  }
  return JsonText(j, 1) + "\n";
}

namespace {

// Reads field `key` of `j` as T; errors name the file and the field.
template <typename T>
Status Field(const Json& j, const std::string& key, const std::string& where, T* out) {
  const auto it = j.find(key);
  if (it == j.end()) return Status::InvalidArgument(where + ": field '" + key + "' is missing");
  try {
    *out = it->template get<T>();
  } catch (const Json::exception&) {
    return Status::InvalidArgument(where + ": field '" + key + "' has the wrong type (" +
                                   it->type_name() + ")");
  }
  return Status::Ok();
}

Result<int32_t> ParseDateField(const std::string& text, const std::string& where) {
  Result<market::DateRange> r = market::DateRange::Parse(text + ":" + text);
  if (!r.ok()) {
    return Status::InvalidArgument(where + ": field 'date' = '" + text + "': expected YYYY-MM-DD");
  }
  return r->first;
}

Result<FileRecord> ParseFileRecord(const Json& jf, const std::string& where) {
  FileRecord f;
  if (!jf.is_object()) return Status::InvalidArgument(where + ": expected an object");
  RLT_RETURN_IF_ERROR(Field(jf, "path", where, &f.path));
  RLT_RETURN_IF_ERROR(Field(jf, "size", where, &f.size));
  RLT_RETURN_IF_ERROR(Field(jf, "sha256", where, &f.sha256));
  RLT_RETURN_IF_ERROR(Field(jf, "symbols", where, &f.symbols));
  RLT_RETURN_IF_ERROR(Field(jf, "symbol_source", where, &f.symbol_source));
  RLT_RETURN_IF_ERROR(Field(jf, "first_epoch", where, &f.first_time));
  RLT_RETURN_IF_ERROR(Field(jf, "last_epoch", where, &f.last_time));
  RLT_RETURN_IF_ERROR(Field(jf, "first_offset", where, &f.first_offset));
  RLT_RETURN_IF_ERROR(Field(jf, "last_offset", where, &f.last_offset));
  RLT_RETURN_IF_ERROR(Field(jf, "bar_seconds", where, &f.bar_seconds));
  RLT_RETURN_IF_ERROR(Field(jf, "timezone", where, &f.timezone));
  RLT_RETURN_IF_ERROR(Field(jf, "training_range", where, &f.training_range));
  Json sessions;
  RLT_RETURN_IF_ERROR(Field(jf, "sessions", where, &sessions));
  if (!sessions.is_array()) {
    return Status::InvalidArgument(where + ": field 'sessions' must be an array");
  }
  for (size_t i = 0; i < sessions.size(); ++i) {
    const std::string at = where + " sessions[" + std::to_string(i) + "]";
    if (!sessions[i].is_object()) return Status::InvalidArgument(at + ": expected an object");
    SessionRecord s;
    std::string date;
    RLT_RETURN_IF_ERROR(Field(sessions[i], "date", at, &date));
    RLT_ASSIGN_OR_RETURN(s.date, ParseDateField(date, at));
    RLT_RETURN_IF_ERROR(Field(sessions[i], "first_epoch", at, &s.first_time));
    RLT_RETURN_IF_ERROR(Field(sessions[i], "bars", at, &s.bars));
    RLT_RETURN_IF_ERROR(Field(sessions[i], "sha256", at, &s.sha256));
    f.sessions.push_back(std::move(s));
  }
  return f;
}

}  // namespace

Result<DataRecord> LoadDataRecord(const std::string& path) {
  RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  RLT_ASSIGN_OR_RETURN(const Json j, ParseJson<Json>(text, path));
  if (!j.is_object()) return Status::InvalidArgument(path + ": expected a JSON object");
  std::string format;
  RLT_RETURN_IF_ERROR(Field(j, "format", path, &format));
  if (format != kFormat) {
    return Status::InvalidArgument(path + ": field 'format' = '" + format + "': expected '" +
                                   kFormat + "' (written by another version of rltrade?)");
  }
  DataRecord record;
  record.origin = path;
  RLT_RETURN_IF_ERROR(Field(j, "source", path, &record.source));
  Json files;
  RLT_RETURN_IF_ERROR(Field(j, "files", path, &files));
  if (!files.is_array()) return Status::InvalidArgument(path + ": field 'files' must be an array");
  for (size_t i = 0; i < files.size(); ++i) {
    RLT_ASSIGN_OR_RETURN(FileRecord f,
                         ParseFileRecord(files[i], path + " files[" + std::to_string(i) + "]"));
    record.files.push_back(std::move(f));
  }
  return record;
}

Result<std::optional<DataRecord>> LoadRunDataRecord(const std::string& run_dir) {
  const std::string path = (std::filesystem::path(run_dir) / kDataRecordFile).string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<DataRecord>();
  RLT_ASSIGN_OR_RETURN(DataRecord record, LoadDataRecord(path));
  return std::optional<DataRecord>(std::move(record));
}

namespace {

Status CheckSymbol(const DataRecord& record, const market::Bars& bars, const std::string& file,
                   bool symbol_column, const RecordCheck& check, std::vector<std::string>* notes) {
  std::vector<std::string> symbols;  // every file entry's (several symbols: one entry each)
  for (const FileRecord& f : record.files) {
    symbols.insert(symbols.end(), f.symbols.begin(), f.symbols.end());
  }
  if (!symbol_column || symbols.empty() ||
      std::find(symbols.begin(), symbols.end(), bars.symbol) != symbols.end()) {
    return Status::Ok();
  }
  const std::string what = fmt::format("{} holds bars of '{}'; the run trained on '{}' ({})", file,
                                       bars.symbol, JoinSymbols(symbols), record.origin);
  if (check.allow_mismatch) {
    notes->push_back("note: " + what + "; used anyway (--allow-mismatch)");
    return Status::Ok();
  }
  return Status::Refused(what +
                         ": a policy trained on one symbol says nothing about another. Use a "
                         "run trained on that symbol, or pass --allow-mismatch to use these "
                         "bars anyway");
}

// The first recorded session the bars hold differently, as a message; "" when none.
std::string FirstChangedSession(const FileRecord& f, const market::Bars& bars) {
  std::map<int32_t, const market::Session*> by_date;
  for (const market::Session& s : bars.sessions) by_date[s.date] = &s;
  const int32_t first_date = bars.sessions.empty() ? 0 : bars.sessions.front().date;
  for (const SessionRecord& rec : f.sessions) {
    const auto it = by_date.find(rec.date);
    if (it == by_date.end()) continue;
    const market::Session& s = *it->second;
    // A file cut inside this session (its first session starts later than recorded).
    if (s.date == first_date && bars.time[s.begin] > rec.first_time) continue;
    if (s.size() != rec.bars) {
      return fmt::format("session {} has {} bars, the run trained on {}", FormatDate(rec.date),
                         s.size(), rec.bars);
    }
    if (SessionDigest(bars, s.begin, s.end) != rec.sha256) {
      return fmt::format(
          "session {} has other bars than the run trained on (a time or a price "
          "changed)",
          FormatDate(rec.date));
    }
  }
  return "";
}

}  // namespace

Status CheckAgainstRecord(const DataRecord& record, const market::Bars& bars,
                          const std::string& file, bool symbol_column, const RecordCheck& check,
                          std::vector<std::string>* notes) {
  if (record.source != "file" || record.files.empty()) return Status::Ok();
  // A run of several symbols records one file entry per symbol: the bars' symbol's.
  const FileRecord* match = &record.files.front();
  for (const FileRecord& f : record.files) {
    if (std::find(f.symbols.begin(), f.symbols.end(), bars.symbol) != f.symbols.end()) {
      match = &f;
      break;
    }
  }
  const FileRecord& f = *match;
  RLT_RETURN_IF_ERROR(CheckSymbol(record, bars, file, symbol_column, check, notes));
  const std::string changed = FirstChangedSession(f, bars);
  if (changed.empty()) return Status::Ok();
  const std::string what = fmt::format("{}: {} ({}, training range {}, recorded from {})", file,
                                       changed, record.origin, f.training_range, f.path);
  if (check.allow_data_change) {
    notes->push_back("note: " + what + "; used anyway (--allow-data-change)");
    return Status::Ok();
  }
  return Status::Refused(
      what +
      ": the data of the training range changed since the run trained (or is another "
      "market's), so the run's normaliser and policy describe other data. Use the bars the "
      "run trained on (eval and paper: --data FILE where the run's file moved), or pass "
      "--allow-data-change to use these anyway");
}

}  // namespace rlt::train
