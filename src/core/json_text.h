// rltrade core: JSON text that never throws on the bytes it carries.
//
// nlohmann::json's dump() throws type_error 316 on a string that is not valid UTF-8 (a
// Latin-1 symbol from a CSV, a run directory whose name holds byte 0xFF). Every JSON
// rltrade writes or prints goes through JsonText(), which replaces each invalid byte by
// U+FFFD instead: the output stays valid JSON and the command completes. Templated on
// the JSON type, so core does not depend on the JSON library.
#ifndef RLT_CORE_JSON_TEXT_H_
#define RLT_CORE_JSON_TEXT_H_

#include <string>

namespace rlt {

// j.dump(indent) with invalid UTF-8 replaced (indent < 0: one line).
template <typename Json>
std::string JsonText(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace rlt

#endif  // RLT_CORE_JSON_TEXT_H_
