// rltrade core: the one CSV line splitter (RFC 4180 quoting), used by every reader of a
// CSV file: bars, option chains, metrics, evaluation files, status.
//
// A field that starts with a double quote runs to the matching closing quote, with a
// doubled quote ("") standing for one quote inside it and commas taken literally; anything
// between the closing quote and the next comma is kept as written. A quote elsewhere in a
// field is an ordinary character. The line holds no line break (a trailing '\r' is part of
// the last field: callers strip it). Thread-safe (no state).
#ifndef RLT_CORE_CSV_LINE_H_
#define RLT_CORE_CSV_LINE_H_

#include <string>
#include <string_view>
#include <vector>

namespace rlt {

// The raw fields of `line` as views into it, quotes kept (UnquoteCsvField removes them);
// an empty line is one empty field. Returns false when a quoted field is never closed (it
// then runs to the end of the line). Reuses *fields' storage: for hot loops.
bool SplitCsvFields(std::string_view line, std::vector<std::string_view>* fields);

// A raw field with its quoting undone: "a,b" -> a,b and "say ""hi""" -> say "hi"; a field
// that does not start with a quote is returned as written.
std::string UnquoteCsvField(std::string_view field);

// The fields of `line`, unquoted. Returns false when a quoted field is never closed.
bool SplitCsvLine(std::string_view line, std::vector<std::string>* fields);
std::vector<std::string> SplitCsvLine(std::string_view line);

}  // namespace rlt

#endif  // RLT_CORE_CSV_LINE_H_
