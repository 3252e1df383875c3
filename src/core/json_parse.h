// rltrade core: parsing JSON that comes from outside (files, sockets, other processes).
//
// What it is: ParseJson(), the one way rltrade turns outside text into a JSON value, and
// JsonSummary(), the one way an error message shows a value it found there.
//  - Nesting is limited to kMaxJsonDepth arrays/objects. nlohmann::json parses deep text
//    without recursion, but dumping, comparing or copying the value recurses once per
//    level: a 1 MiB line of 400,000 '[' would overflow the stack the first time a
//    message printed it. The text is scanned before it is parsed, so such a value is
//    never built.
//  - Errors are Status values (never exceptions) naming the source, the line and column
//    and what was wrong; they quote at most a short printable excerpt of the text.
//  - JsonSummary() never walks a value: a scalar is shown (cut to a few dozen bytes), an
//    array or object only by its size.
// Templated on the JSON type (nlohmann::json, ordered_json), so core does not depend on
// the JSON library. Thread-safe (no shared state).
#ifndef RLT_CORE_JSON_PARSE_H_
#define RLT_CORE_JSON_PARSE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "core/json_text.h"
#include "core/printable.h"
#include "core/status.h"

namespace rlt {

// 128 levels: the recursion limit serde_json enforces by default; every JSON rltrade
// writes is less than 10 deep.
inline constexpr int kMaxJsonDepth = 128;

// The byte offset at which the arrays/objects of `text` (brackets inside strings do not
// count) first nest deeper than max_depth, or std::string_view::npos when they never do.
size_t JsonNestingBeyond(std::string_view text, int max_depth);

// "<source>: <why>" for a parse failure, from the library's message: the library's
// "[json.exception...]" prefix dropped and its "last read" excerpt cut short.
std::string JsonParseErrorMessage(const std::string& source, std::string_view library_message);

// The value of `text` (one JSON value, optional surrounding whitespace). Errors
// (InvalidArgument): nesting deeper than max_depth, or not valid JSON; the message starts
// with `source` (a file path, "status.json", "line 7 of FILE", ...).
template <typename Json>
Result<Json> ParseJson(std::string_view text, const std::string& source,
                       int max_depth = kMaxJsonDepth) {
  if (const size_t at = JsonNestingBeyond(text, max_depth); at != std::string_view::npos) {
    return Status::InvalidArgument(source + ": JSON nested more than " + std::to_string(max_depth) +
                                   " levels deep (at byte " + std::to_string(at + 1) +
                                   "); no file or message rltrade reads nests that deep");
  }
  try {
    return Json::parse(text);
  } catch (const typename Json::exception& e) {  // parse_error, and out_of_range for 1e999
    return Status::InvalidArgument(JsonParseErrorMessage(source, e.what()));
  }
}

// ParseJson for readers that treat every failure alike (a best-effort read, a journal
// line that ends the journal): the value, or a discarded one (is_discarded()) when the text
// nests too deep or is not valid JSON. Never throws.
template <typename Json>
Json ParseJsonOrDiscarded(std::string_view text, int max_depth = kMaxJsonDepth) {
  if (JsonNestingBeyond(text, max_depth) != std::string_view::npos) {
    return Json(Json::value_t::discarded);
  }
  return Json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// A value as an error message may show it: scalars as JSON text of at most max_bytes
// (more is cut with a note), arrays and objects by their size only.
template <typename Json>
std::string JsonSummary(const Json& value, size_t max_bytes = 80) {
  const std::string n = std::to_string(value.size());
  if (value.is_array()) return "an array of " + n + (value.size() == 1 ? " value" : " values");
  if (value.is_object()) return "an object of " + n + (value.size() == 1 ? " key" : " keys");
  return PrintableText(JsonText(value), max_bytes);
}

}  // namespace rlt

#endif  // RLT_CORE_JSON_PARSE_H_
