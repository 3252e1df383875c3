// Fuzzes the reader of a paper session's journal (paper/journal.h: ParseJournal, then
// Journal::KeyOf of every line), as a restart of `rltrade paper` reads journal.jsonl.
// Input: the journal's bytes. Promises checked: the finished lines end at a newline, are
// JSON objects with a string "type" and the fields a restart reads typed as it reads them;
// an error names the file and line.
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "paper/journal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = rlt::fuzz::AsText(data, size);
  rlt::Result<rlt::paper::JournalText> parsed = rlt::paper::ParseJournal(text, "journal.jsonl");
  if (!parsed.ok()) {
    FUZZ_REQUIRE(parsed.status().message().rfind("journal.jsonl:", 0) == 0,
                 "an error without file:line: " + parsed.status().message());
    return 0;
  }
  FUZZ_REQUIRE(parsed->complete <= size, "complete past the end");
  FUZZ_REQUIRE(parsed->complete == 0 || text[parsed->complete - 1] == '\n',
               "the finished lines do not end at a newline");
  size_t newlines = 0;
  for (size_t i = 0; i < parsed->complete; ++i) newlines += text[i] == '\n';
  FUZZ_REQUIRE(parsed->lines.size() == newlines, "a finished line was dropped or invented");
  for (const auto& line : parsed->lines) {
    FUZZ_REQUIRE(line.is_object() && line.contains("type") && line["type"].is_string(),
                 "a line without a string type: " + line.dump());
    (void)rlt::paper::Journal::KeyOf(line);  // reads client_order_id, rule, bar: must not throw
  }
  return 0;
}
