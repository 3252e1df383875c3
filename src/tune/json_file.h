// rltrade tune: the one place the study's JSON files are read (OUT/study.json, each line of
// OUT/trials.jsonl, the command study.json records), so that every rule on what is
// accepted applies to all of them at once.
//
// A JsonDoc is a parsed document that remembers the line of each object key, so that a
// field of the wrong type or out of range is reported as "OUT/study.json:7: 'trials' = ...:
// expected ..." rather than as an exception. Fields are addressed by JSON pointers
// ("/trials", "/command/overrides"). Parse errors name file:line:column.
#ifndef RLT_TUNE_JSON_FILE_H_
#define RLT_TUNE_JSON_FILE_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::tune {

class JsonDoc {
 public:
  // `file` names the document in messages; `first_line` is the file's line the text
  // starts on (a journal line: its line number). Errors: DataError naming
  // file:line:column and the parser's reason.
  static Result<JsonDoc> Parse(const std::string& text, const std::string& file,
                               int first_line = 1);

  const nlohmann::json& root() const { return root_; }
  bool Has(const std::string& pointer) const;
  // "file:line" of the key `pointer` names (its parent's, or the document's first line,
  // when the key is absent).
  std::string Place(const std::string& pointer) const;

  // Typed fields. Errors (DataError) name file:line, the key, what was found and what was
  // expected. The *Or forms give `fallback` when the key is absent.
  Result<std::string> String(const std::string& pointer) const;
  Result<std::string> StringOr(const std::string& pointer, const std::string& fallback) const;
  Result<int64_t> Int(const std::string& pointer, int64_t low, int64_t high) const;
  Result<int64_t> IntOr(const std::string& pointer, int64_t low, int64_t high,
                        int64_t fallback) const;
  Result<uint64_t> Uint64(const std::string& pointer) const;
  Result<bool> Bool(const std::string& pointer) const;
  // A number, or NaN for null.
  Result<double> NumberOrNull(const std::string& pointer) const;
  Result<std::vector<std::string>> Strings(const std::string& pointer) const;
  Result<std::vector<int64_t>> Ints(const std::string& pointer, int64_t low, int64_t high) const;
  // An object whose values are all strings, in key order.
  Result<std::vector<std::pair<std::string, std::string>>> StringMap(
      const std::string& pointer) const;
  // Ok when the value is an object; the error says what it is instead.
  Status Object(const std::string& pointer) const;

 private:
  Status Wrong(const std::string& pointer, const std::string& expected) const;
  const nlohmann::json* Find(const std::string& pointer) const;

  nlohmann::json root_;
  std::string file_;
  int first_line_ = 1;
  std::map<std::string, int> key_lines_;  // JSON pointer of each object key -> line (1-based)
};

}  // namespace rlt::tune

#endif  // RLT_TUNE_JSON_FILE_H_
