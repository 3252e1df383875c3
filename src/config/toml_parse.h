// rltrade config: the one TOML parse of every TOML file rltrade reads (run configs, risk
// limits, search spaces), with the one error form: "NAME:LINE:COLUMN: <the parser's
// description>" for a syntax error, and "NAME:LINE" for a place in the file.
// Includes toml++ (config.h does not): for the readers that walk a TOML table themselves.
#ifndef RLT_CONFIG_TOML_PARSE_H_
#define RLT_CONFIG_TOML_PARSE_H_

#include <toml++/toml.h>

#include <string>

#include "core/status.h"

namespace rlt::config {

// The table of `text`, read from `name` (a path, or "--set ..."); an InvalidArgument naming
// name:line:column and what the parser expected on a syntax error.
Result<toml::table> ParseToml(const std::string& text, const std::string& name);

// "name:line" and "name:line:column" of a region of that file.
std::string TomlLine(const std::string& name, const toml::source_region& region);
std::string TomlLineColumn(const std::string& name, const toml::source_region& region);

}  // namespace rlt::config

#endif  // RLT_CONFIG_TOML_PARSE_H_
