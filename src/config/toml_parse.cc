// rltrade config: ParseToml (see toml_parse.h).
#include "config/toml_parse.h"

namespace rlt::config {

std::string TomlLine(const std::string& name, const toml::source_region& region) {
  return name + ":" + std::to_string(region.begin.line);
}

std::string TomlLineColumn(const std::string& name, const toml::source_region& region) {
  return TomlLine(name, region) + ":" + std::to_string(region.begin.column);
}

Result<toml::table> ParseToml(const std::string& text, const std::string& name) {
#if TOML_EXCEPTIONS
  try {
    return toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(TomlLineColumn(name, e.source()) + ": " +
                                   std::string(e.description()));
  }
#else
  toml::parse_result parsed = toml::parse(text, name);
  if (!parsed) {
    const toml::parse_error& e = parsed.error();
    return Status::InvalidArgument(TomlLineColumn(name, e.source()) + ": " +
                                   std::string(e.description()));
  }
  return std::move(parsed).table();
#endif
}

}  // namespace rlt::config
