// rltrade core: the nesting scan and the error text of ParseJson (json_parse.h).
#include "core/json_parse.h"

namespace rlt {

size_t JsonNestingBeyond(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      // Below zero the text is invalid there, and the parser stops at or before this
      // byte: nothing after it is ever built.
      if (--depth < 0) return std::string_view::npos;
    }
  }
  return std::string_view::npos;
}

std::string JsonParseErrorMessage(const std::string& source, std::string_view message) {
  // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while
  // parsing value - invalid literal; last read: 'tru,'"
  if (!message.empty() && message.front() == '[') {
    const size_t close = message.find("] ");
    if (close != std::string_view::npos) message.remove_prefix(close + 2);
  }
  std::string out = source + ": not valid JSON: ";
  const std::string_view marker = "; last read: '";
  const size_t last = message.find(marker);
  if (last == std::string_view::npos) return out + PrintableText(message, 200);
  std::string_view excerpt = message.substr(last + marker.size());
  if (!excerpt.empty() && excerpt.back() == '\'') excerpt.remove_suffix(1);
  return out + PrintableText(message.substr(0, last), 200) + "; last read: '" +
         PrintableText(excerpt, 32) + "'";
}

}  // namespace rlt
