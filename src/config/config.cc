// rltrade config: TOML reading (toml++), overrides and TOML writing. See config.h.
//
// toml++ is used only to read; writing is done here so that sections and keys keep their
// order (toml::table is sorted by key).
#include "config/config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "config/toml_parse.h"
#include "core/file_io.h"

namespace rlt::config {
namespace {

std::string Place(const std::string& name, const toml::source_region& where) {
  return TomlLineColumn(name, where);
}

bool IsDecimalInteger(const std::string& text) {
  const size_t digits = (!text.empty() && text[0] == '-') ? 1 : 0;
  if (text.size() == digits) return false;
  return std::all_of(text.begin() + digits, text.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

bool IsBareKey(const std::string& key) {
  if (key.empty()) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if ((c >= 0 && c < 0x20) || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string TomlKey(const std::string& key) { return IsBareKey(key) ? key : Quoted(key); }

// A TOML float literal for `text`, or "" when `text` is not a number.
std::string TomlFloat(const std::string& text) {
  double v;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end) return "";
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string out = rlt::FormatValue(v);
  if (out.find_first_of(".eE") == std::string::npos) out += ".0";
  return out;
}

// A scalar written by kind; falls back to a quoted string when the text does not fit
// the kind (so the output is always valid TOML and reads back as the same text).
std::string TomlScalar(const std::string& text, ValueKind kind) {
  switch (kind) {
    case ValueKind::kBool:
      if (text == "true" || text == "false") return text;
      break;
    case ValueKind::kInteger:
      if (InferKind(text) == ValueKind::kInteger) return text;
      break;
    case ValueKind::kFloat: {
      std::string f = TomlFloat(text);
      if (!f.empty()) return f;
      break;
    }
    case ValueKind::kString:
    case ValueKind::kArray:
      break;
  }
  return Quoted(text);
}

std::string TomlValue(const ConfigValue& value) {
  if (value.kind != ValueKind::kArray) return TomlScalar(value.text, value.kind);
  Result<std::vector<std::string>> parts = SplitList(value.text);
  if (!parts.ok() || value.text.empty() || value.text.front() != '[') return Quoted(value.text);
  std::string out = "[";
  for (size_t i = 0; i < parts->size(); ++i) {
    const std::string& element = (*parts)[i];
    const ValueKind kind = InferKind(element);
    if (i > 0) out += ", ";
    out += kind == ValueKind::kArray ? Quoted(element) : TomlScalar(element, kind);
  }
  return out + "]";
}

// The text of a scalar node, or an error message ("" kind unused then).
bool ScalarText(const toml::node& node, std::string* text, ValueKind* kind) {
  std::ostringstream os;
  switch (node.type()) {
    case toml::node_type::string:
      *text = node.as_string()->get();
      *kind = ValueKind::kString;
      return true;
    case toml::node_type::integer:
      *text = std::to_string(node.as_integer()->get());
      *kind = ValueKind::kInteger;
      return true;
    case toml::node_type::floating_point:
      *text = rlt::FormatValue(node.as_floating_point()->get());
      *kind = ValueKind::kFloat;
      return true;
    case toml::node_type::boolean:
      *text = node.as_boolean()->get() ? "true" : "false";
      *kind = ValueKind::kBool;
      return true;
    case toml::node_type::date:
      os << node.as_date()->get();
      break;
    case toml::node_type::time:
      os << node.as_time()->get();
      break;
    case toml::node_type::date_time:
      os << node.as_date_time()->get();
      break;
    default:
      return false;
  }
  *text = os.str();
  *kind = ValueKind::kString;
  return true;
}

// A string that would not survive the "[a, b]" text form.
bool UnfitForList(const std::string& s) {
  return s.empty() || s.find_first_of(",[]") != std::string::npos || s.front() == ' ' ||
         s.back() == ' ' || s.front() == '\t' || s.back() == '\t';
}

Status ValueFromNode(const std::string& path, const toml::node& node, const std::string& where,
                     ConfigValue* out) {
  if (node.is_table()) {
    return Status::InvalidArgument(
        where + ": '" + path +
        "' is a table; a config holds only [section] headers with key = value pairs "
        "(no [section.sub] tables, dotted keys or inline tables)");
  }
  out->source = where;
  if (!node.is_array()) {
    ScalarText(node, &out->text, &out->kind);
    return Status::Ok();
  }
  const toml::array& array = *node.as_array();
  std::string text = "[";
  for (size_t i = 0; i < array.size(); ++i) {
    std::string element;
    ValueKind kind;
    if (!ScalarText(array[i], &element, &kind)) {
      return Status::InvalidArgument(where + ": '" + path + "': element " + std::to_string(i + 1) +
                                     " is an array or table; arrays may hold only numbers, "
                                     "booleans, strings and dates");
    }
    if (kind == ValueKind::kString && UnfitForList(element)) {
      return Status::InvalidArgument(
          where + ": '" + path + "': element " + std::to_string(i + 1) + " (" + Quoted(element) +
          ") cannot be a list element; strings in arrays may not be empty, contain ',', '[' "
          "or ']', or start or end with a space");
    }
    text += (i > 0 ? ", " : "") + element;
  }
  out->text = text + "]";
  out->kind = ValueKind::kArray;
  return Status::Ok();
}

struct Positioned {
  toml::source_position begin;
  std::string key;
  const toml::node* node;
  toml::source_region region;
};

// The children of `table` in file order.
std::vector<Positioned> InFileOrder(const toml::table& table) {
  std::vector<Positioned> out;
  for (auto&& [key, node] : table) {
    out.push_back({key.source().begin, std::string(key.str()), &node, key.source()});
  }
  std::stable_sort(out.begin(), out.end(), [](const Positioned& a, const Positioned& b) {
    return std::tie(a.begin.line, a.begin.column) < std::tie(b.begin.line, b.begin.column);
  });
  return out;
}

Status SectionFromTable(const std::string& name, const std::string& section_name,
                        const toml::table& table, Section* out) {
  for (const Positioned& child : InFileOrder(table)) {
    ConfigValue value;
    RLT_RETURN_IF_ERROR(ValueFromNode(section_name + "." + child.key, *child.node,
                                      Place(name, child.region), &value));
    out->entries.emplace_back(child.key, std::move(value));
  }
  return Status::Ok();
}

}  // namespace

const char* KindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kString:
      return "string";
    case ValueKind::kInteger:
      return "integer";
    case ValueKind::kFloat:
      return "float";
    case ValueKind::kBool:
      return "bool";
    case ValueKind::kArray:
      return "array";
  }
  return "?";
}

ValueKind InferKind(const std::string& text) {
  if (text == "true" || text == "false") return ValueKind::kBool;
  // "-0" is how FormatValue() writes the double -0.0; as a TOML integer it would read back
  // as 0 (found by fuzz/config_fuzz).
  if (text == "-0") return ValueKind::kFloat;
  if (IsDecimalInteger(text)) {
    int64_t v;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, v);
    return (ec == std::errc() && p == end) ? ValueKind::kInteger : ValueKind::kString;
  }
  double d;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, d);
  if (!text.empty() && ec == std::errc() && p == end) return ValueKind::kFloat;
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') return ValueKind::kArray;
  return ValueKind::kString;
}

const ConfigValue* Section::Find(const std::string& key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::vector<std::string> Section::Keys() const {
  std::vector<std::string> keys;
  for (const auto& entry : entries) keys.push_back(entry.first);
  return keys;
}

std::string MessagePlace(const std::string& source) {
  const size_t last = source.rfind(':');
  if (last == std::string::npos || last + 1 == source.size() || source.rfind("--set", 0) == 0) {
    return source;
  }
  const size_t prev = source.rfind(':', last - 1);
  if (prev == std::string::npos || prev + 1 == last) return source;
  auto digits = [&](size_t from, size_t to) {
    return std::all_of(source.begin() + from, source.begin() + to,
                       [](char c) { return c >= '0' && c <= '9'; });
  };
  return digits(prev + 1, last) && digits(last + 1, source.size()) ? source.substr(0, last)
                                                                   : source;
}

Status JoinErrors(const std::vector<std::string>& errors) {
  if (errors.empty()) return Status::Ok();
  std::string message;
  for (const auto& e : errors) message += (message.empty() ? "" : "\n") + e;
  return Status::InvalidArgument(message);
}

Result<Config> Config::LoadFile(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return Annotate(text.status(), "cannot read config: ");
  }
  RLT_ASSIGN_OR_RETURN(Config config, FromString(*text, path));
  std::error_code ec;
  const std::filesystem::path dir =
      std::filesystem::absolute(std::filesystem::path(path), ec).parent_path().lexically_normal();
  if (!ec) {
    for (Section& section : config.sections_) {
      for (auto& entry : section.entries) entry.second.base_dir = dir.string();
    }
  }
  return config;
}

void Config::ResolvePaths(
    const std::string& section,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& keys) {
  for (Section& s : sections_) {
    if (s.name != section) continue;
    for (auto& entry : s.entries) {
      // (A named reference, not a structured binding: clang cannot capture one.)
      const std::string& key = entry.first;
      ConfigValue& value = entry.second;
      const auto it =
          std::find_if(keys.begin(), keys.end(), [&](const auto& k) { return k.first == key; });
      if (it == keys.end() || value.text.empty()) continue;
      if (std::find(it->second.begin(), it->second.end(), value.text) != it->second.end()) {
        continue;
      }
      std::error_code ec;
      const std::filesystem::path base = value.base_dir.empty()
                                             ? std::filesystem::current_path(ec)
                                             : std::filesystem::path(value.base_dir);
      if (ec) continue;  // no current directory: the paths stay as written
      const auto resolve = [&base](const std::string& text) {
        const std::filesystem::path path(text);
        return path.is_absolute() ? text : (base / path).lexically_normal().string();
      };
      if (value.kind == ValueKind::kArray) {  // a list of paths: each element
        Result<std::vector<std::string>> elements = SplitList(value.text);
        if (!elements.ok()) continue;  // binding reports the malformed list
        std::string text = "[";
        for (const std::string& e : *elements) {
          text += (text.size() > 1 ? ", " : "") + resolve(e);
        }
        value.text = text + "]";
        continue;
      }
      value.text = resolve(value.text);
      value.kind = ValueKind::kString;
    }
  }
}

Result<Config> Config::FromString(const std::string& text, const std::string& name) {
  RLT_ASSIGN_OR_RETURN(const toml::table root, ParseToml(text, name));
  Config config;
  for (const Positioned& child : InFileOrder(root)) {
    const std::string where = Place(name, child.region);
    if (child.node->is_array_of_tables()) {
      return Status::InvalidArgument(where + ": '" + child.key + "' is an array of tables ([[" +
                                     child.key + "]]); a config holds only [section] tables");
    }
    if (!child.node->is_table()) {
      return Status::InvalidArgument(where + ": '" + child.key +
                                     "' is outside any section; put it under a [section] "
                                     "header such as [run]");
    }
    Section section;
    section.name = child.key;
    section.source = Place(name, child.node->source());
    RLT_RETURN_IF_ERROR(SectionFromTable(name, child.key, *child.node->as_table(), &section));
    config.sections_.push_back(std::move(section));
  }
  return config;
}

Status Config::ApplyOverride(const std::string& assignment) {
  const std::string expected = "expected SECTION.KEY=VALUE, e.g. --set run.seed=3";
  Result<std::pair<std::string, std::string>> kv = SplitAssignment(assignment);
  if (!kv.ok()) return Status::InvalidArgument("--set '" + assignment + "': " + expected);
  std::string path = kv->first;
  path.erase(0, path.find_first_not_of(" \t"));
  path.erase(path.find_last_not_of(" \t") + 1);
  const size_t dot = path.find('.');
  if (dot == std::string::npos) {
    return Status::InvalidArgument("--set '" + assignment + "': '" + path + "' names no section; " +
                                   expected);
  }
  const std::string section = path.substr(0, dot), key = path.substr(dot + 1);
  if (section.empty() || key.empty()) {
    return Status::InvalidArgument("--set '" + assignment + "': empty section or key in '" + path +
                                   "'; " + expected);
  }
  if (key.find('.') != std::string::npos) {
    return Status::InvalidArgument("--set '" + assignment + "': '" + path +
                                   "' is deeper than section.key; " + expected);
  }
  Set(section, key, kv->second, "--set " + assignment);
  return Status::Ok();
}

Section* Config::MutableSection(const std::string& name, const std::string& source) {
  for (auto& s : sections_) {
    if (s.name == name) return &s;
  }
  sections_.push_back(Section{name, source, {}});
  return &sections_.back();
}

void Config::Set(const std::string& section, const std::string& key, const std::string& text,
                 const std::string& source) {
  Section* s = MutableSection(section, source);
  ConfigValue value{text, source, InferKind(text), ""};
  for (auto& [k, v] : s->entries) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  s->entries.emplace_back(key, std::move(value));
}

const Section* Config::Find(const std::string& name) const {
  for (const auto& s : sections_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const ConfigValue* Config::Get(const std::string& section, const std::string& key) const {
  const Section* s = Find(section);
  return s == nullptr ? nullptr : s->Find(key);
}

std::vector<std::string> Config::SectionNames() const {
  std::vector<std::string> names;
  for (const auto& s : sections_) names.push_back(s.name);
  return names;
}

Status Config::CheckSections(const std::vector<std::string>& known) const {
  std::vector<std::string> errors;
  for (const auto& s : sections_) {
    if (std::find(known.begin(), known.end(), s.name) != known.end()) continue;
    std::string e = MessagePlace(s.source) + ": unknown section [" + s.name + "]";
    if (!known.empty()) e += "; did you mean [" + NearestName(s.name, known) + "]?";
    errors.push_back(e);
  }
  return JoinErrors(errors);
}

void Config::SetSectionValues(const std::string& section,
                              const std::vector<std::pair<std::string, std::string>>& rows,
                              const std::string& source) {
  Section* s = MutableSection(section, source);
  std::vector<std::pair<std::string, ConfigValue>> entries;
  for (auto& entry : s->entries) {
    const bool listed = std::any_of(rows.begin(), rows.end(),
                                    [&](const auto& row) { return row.first == entry.first; });
    if (!listed) entries.push_back(std::move(entry));
  }
  for (const auto& [key, text] : rows)
    entries.emplace_back(key, ConfigValue{text, source, InferKind(text), ""});
  s->entries = std::move(entries);
}

std::string Config::ToToml() const {
  std::string out;
  for (const auto& s : sections_) {
    if (!out.empty()) out += "\n";
    out += "[" + TomlKey(s.name) + "]\n";
    for (const auto& [key, value] : s.entries)
      out += TomlKey(key) + " = " + TomlValue(value) + "\n";
  }
  return out;
}

std::string KeyPlace(const Config& config, const std::string& section, const std::string& key) {
  const ConfigValue* v = config.Get(section, key);
  return (v != nullptr ? MessagePlace(v->source) + ": " : std::string()) + "[" + section + "] " +
         key;
}

}  // namespace rlt::config
