// rltrade paper: the session journal — append-only JSON lines, written through and fsync'd,
// read back on a restart so that no event is written (and no order sent) twice.
//
// Events are keyed (KeyOf): a bar, a decision or a snapshot by its bar index; an order,
// ack, fill, reject or cancelled by its client order id; a risk refusal by id and rule; the
// start and the end by their type. Emit() appends an event only when its key is not
// journaled yet, so a restarted session that re-runs bars it had handled writes each event
// once. Notes ("restart", "reconcile", "broker", "feed") have no key: each is appended.
// Opening an existing journal reads back the lines a previous process finished (ParseJournal);
// a last line cut by a kill is cut off the file first, any other corrupt line is an error.
// Thread safety: none; one owner.
#ifndef RLT_PAPER_JOURNAL_H_
#define RLT_PAPER_JOURNAL_H_

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace rlt::paper {

// A journal's text read back: its finished lines, and the bytes they take (the rest is a
// last line a kill cut before its newline).
struct JournalText {
  std::vector<nlohmann::ordered_json> lines;
  size_t complete = 0;
};
// The one parser of a journal's text (`path` names it in messages). Only a last line
// without its newline that starts as every journal line does ({"type":) may be cut;
// any other line that is not a JSON object with a string "type" is an error naming
// path:line (DataError; Refused for the first line: the file is not a journal).
Result<JournalText> ParseJournal(std::string_view text, const std::string& path);

class Journal {
 public:
  using Json = nlohmann::ordered_json;
  // "" for a note (never deduplicated).
  static std::string KeyOf(const Json& line);

  static Result<Journal> Open(const std::string& path);
  Journal() = default;
  Journal(Journal&& o) noexcept;
  Journal& operator=(Journal&&) = delete;
  Journal(const Journal&) = delete;
  ~Journal();

  // The lines a previous process journaled (empty for a new journal).
  const std::vector<Json>& previous() const { return previous_; }
  bool Has(const std::string& key) const { return done_.count(key) != 0; }
  // Appends `line` unless its event is journaled already.
  Status Emit(const Json& line);
  Status Sync();
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
  std::vector<Json> previous_;
  std::set<std::string> done_;
};

}  // namespace rlt::paper

#endif  // RLT_PAPER_JOURNAL_H_
