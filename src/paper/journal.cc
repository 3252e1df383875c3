// rltrade paper: the session journal (see journal.h).
#include "paper/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "core/file_io.h"
#include "core/json_parse.h"

namespace rlt::paper {
namespace {

// How every journal line starts: its type first (ordered_json, dumped compact).
constexpr std::string_view kLineStart = "{\"type\":";

// The fields a restart reads, typed as it reads them (a journal line with another type
// there was not written by a session).
Status CheckFieldTypes(const Journal::Json& line, const std::string& where) {
  static const char* const kStrings[] = {"client_order_id", "rule", "side"};
  static const char* const kIntegers[] = {"bar", "epoch", "seq"};
  static const char* const kNumbers[] = {"quantity", "price", "cost",  "open",
                                         "high",     "low",   "close", "volume"};
  auto bad = [&](const char* key, const char* expected) {
    return Status::DataError(where + ": corrupt journal line: \"" + key + "\" is " +
                             JsonSummary(line[key]) + ", expected " + expected +
                             "; restore the file, or start a new --journal");
  };
  for (const char* k : kStrings) {
    if (line.contains(k) && !line[k].is_string()) return bad(k, "a string");
  }
  for (const char* k : kIntegers) {
    if (line.contains(k) && !line[k].is_number_integer()) return bad(k, "an integer");
  }
  for (const char* k : kNumbers) {
    if (line.contains(k) && !line[k].is_number()) return bad(k, "a number");
  }
  return Status::Ok();
}

}  // namespace

std::string Journal::KeyOf(const Json& line) {
  const std::string type = line.value("type", "");
  if (type == "order" || type == "fill" || type == "ack" || type == "reject" ||
      type == "cancelled") {
    return type + ":" + line.value("client_order_id", "");
  }
  if (type == "risk") {
    return "risk:" + line.value("client_order_id", "") + ":" + line.value("rule", "") + ":" +
           std::to_string(line.value("bar", -1));
  }
  if (type == "bar" || type == "decision" || type == "snapshot") {
    return type + ":" + std::to_string(line.value("bar", -1));
  }
  if (type == "start" || type == "end") return type;
  return "";
}

Result<JournalText> ParseJournal(std::string_view text, const std::string& path) {
  JournalText out;
  int64_t line_no = 0;
  for (size_t begin = 0; begin < text.size();) {
    ++line_no;
    const size_t eol = text.find('\n', begin);
    const std::string where = path + ":" + std::to_string(line_no);
    if (eol == std::string_view::npos) {
      // No newline: the line a kill cut while it was written. Every journal line starts
      // with its type; anything else is not a journal's.
      const std::string_view rest = text.substr(begin);
      const size_t n = std::min(rest.size(), kLineStart.size());
      if (rest.substr(0, n) == kLineStart.substr(0, n)) break;
      return Status::DataError(where + ": not a journal line (every line of a paper journal " +
                               "starts with {\"type\":); the file is not a journal, or was " +
                               "edited: restore it, or start a new --journal");
    }
    // Depth-limited (core/json_parse.h): a line nested too deep is as corrupt as one that is
    // not JSON, and is never built.
    const Journal::Json line = ParseJsonOrDiscarded<Journal::Json>(text.substr(begin, eol - begin));
    if (line.is_discarded() || !line.is_object() || !line.contains("type") ||
        !line["type"].is_string()) {
      if (line_no == 1) {
        return Status::Refused(where + ": not a journal of `rltrade paper` (its first line " +
                               "is not a journal line); choose another --journal");
      }
      return Status::DataError(where + ": corrupt journal line (not a JSON object with a " +
                               "\"type\"); a journal is only ever appended to, so this line " +
                               "was changed after it was written: restore the file, or start a " +
                               "new --journal (the lines after it are kept)");
    }
    RLT_RETURN_IF_ERROR(CheckFieldTypes(line, where));
    out.lines.push_back(line);
    out.complete = eol + 1;
    begin = eol + 1;
  }
  return out;
}

Result<Journal> Journal::Open(const std::string& path) {
  Journal j;
  j.path_ = path;
  if (std::filesystem::exists(path)) {
    RLT_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    RLT_ASSIGN_OR_RETURN(JournalText parsed, ParseJournal(text, path));
    j.previous_ = std::move(parsed.lines);
    for (const Json& line : j.previous_) {
      const std::string key = KeyOf(line);
      if (!key.empty()) j.done_.insert(key);
    }
    if (parsed.complete != text.size()) {
      std::error_code ec;
      std::filesystem::resize_file(path, parsed.complete, ec);
      if (ec) return Status::IoError(path + ": cannot cut its unfinished last line");
    }
  }
  j.fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (j.fd_ < 0) return Status::IoError(path + ": cannot open the journal");
  return j;
}

Journal::Journal(Journal&& o) noexcept
    : fd_(o.fd_),
      path_(std::move(o.path_)),
      previous_(std::move(o.previous_)),
      done_(std::move(o.done_)) {
  o.fd_ = -1;
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

Status Journal::Emit(const Json& line) {
  const std::string key = KeyOf(line);
  if (!key.empty() && !done_.insert(key).second) return Status::Ok();
  const std::string text = line.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IoError(path_ + ": cannot append (disk full?)");
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status Journal::Sync() {
  if (::fdatasync(fd_) != 0) return Status::IoError(path_ + ": fdatasync failed");
  return Status::Ok();
}

}  // namespace rlt::paper
