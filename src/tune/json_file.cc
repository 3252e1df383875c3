// rltrade tune: reading the study's JSON files (see json_file.h).
#include "tune/json_file.h"

#include <cctype>
#include <limits>

#include "core/json_parse.h"
#include "core/json_text.h"

namespace rlt::tune {
namespace {

using json = nlohmann::json;

std::string PointerToken(const std::string& key) {
  std::string t;
  for (char c : key) {
    if (c == '~') {
      t += "~0";
    } else if (c == '/') {
      t += "~1";
    } else {
      t += c;
    }
  }
  return t;
}

// The line (1-based, within `text`) of every object key and array element, by JSON
// pointer. `text` has parsed, so its structure is well formed.
std::map<std::string, int> KeyLines(const std::string& text) {
  struct Frame {
    bool object = false;
    std::string path;
    std::string key;        // object: the pointer of the last key read
    int index = 0;          // array: the element being read
    bool awaiting = false;  // array: the next non-blank character starts an element
  };
  std::map<std::string, int> lines;
  std::vector<Frame> stack;
  int line = 1;
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (!stack.empty() && !stack.back().object && stack.back().awaiting && c != ']') {
      lines.emplace(stack.back().path + "/" + std::to_string(stack.back().index), line);
      stack.back().awaiting = false;
    }
    if (c == '"') {
      std::string s;
      for (++i; i < n && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < n) {
          const char e = text[++i];
          // Keys the tune files use are plain; an escape other than \" \\ \/ is kept raw.
          s += (e == '"' || e == '\\' || e == '/') ? std::string(1, e) : std::string("\\") + e;
          continue;
        }
        s += text[i];
      }
      size_t j = i + 1;
      while (j < n && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (!stack.empty() && stack.back().object && j < n && text[j] == ':') {
        stack.back().key = stack.back().path + "/" + PointerToken(s);
        lines.emplace(stack.back().key, line);
      }
      continue;
    }
    if (c == '{' || c == '[') {
      std::string path;
      if (!stack.empty()) {
        path = stack.back().object ? stack.back().key
                                   : stack.back().path + "/" + std::to_string(stack.back().index);
      }
      Frame f;
      f.object = c == '{';
      f.path = path;
      f.awaiting = c == '[';
      stack.push_back(f);
      continue;
    }
    if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
      continue;
    }
    if (c == ',' && !stack.empty() && !stack.back().object) {
      ++stack.back().index;
      stack.back().awaiting = true;
    }
  }
  return lines;
}

std::string Shown(const json& v) {
  std::string t = JsonText(v);
  if (t.size() > 60) t = t.substr(0, 57) + "...";
  return t;
}

std::string KeyName(const std::string& pointer) {
  std::string k = pointer.empty() ? "(document)" : pointer.substr(1);
  for (char& c : k) {
    if (c == '/') c = '.';
  }
  return k;
}

}  // namespace

Result<JsonDoc> JsonDoc::Parse(const std::string& text, const std::string& file, int first_line) {
  JsonDoc d;
  d.file_ = file;
  d.first_line_ = first_line;
  if (const size_t deep = JsonNestingBeyond(text, kMaxJsonDepth); deep != std::string::npos) {
    int line = first_line;
    for (size_t i = 0; i < deep; ++i) line += text[i] == '\n';
    return Status::DataError(file + ":" + std::to_string(line) + ": JSON nested more than " +
                             std::to_string(kMaxJsonDepth) +
                             " levels deep; no file rltrade writes nests that deep: restore it");
  }
  try {
    d.root_ = json::parse(text);
  } catch (const json::parse_error& e) {
    // The byte the parser stopped at, as line:column of the file.
    const size_t at = std::min(e.byte > 0 ? e.byte - 1 : 0, text.size());
    int line = first_line, column = 1;
    for (size_t i = 0; i < at; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string why = e.what();
    if (const size_t p = why.find("syntax error"); p != std::string::npos) why = why.substr(p);
    return Status::DataError(file + ":" + std::to_string(line) + ":" + std::to_string(column) +
                             ": not valid JSON (" + why + ")");
  }
  d.key_lines_ = KeyLines(text);
  return d;
}

const json* JsonDoc::Find(const std::string& pointer) const {
  try {
    const json::json_pointer p(pointer);
    if (!root_.contains(p)) return nullptr;
    return &root_.at(p);
  } catch (const json::exception&) {
    return nullptr;
  }
}

bool JsonDoc::Has(const std::string& pointer) const { return Find(pointer) != nullptr; }

std::string JsonDoc::Place(const std::string& pointer) const {
  std::string p = pointer;
  for (;;) {
    if (auto it = key_lines_.find(p); it != key_lines_.end()) {
      return file_ + ":" + std::to_string(first_line_ + it->second - 1);
    }
    const size_t slash = p.rfind('/');
    if (slash == std::string::npos || p.empty()) break;
    p.resize(slash);
  }
  return file_ + ":" + std::to_string(first_line_);
}

Status JsonDoc::Wrong(const std::string& pointer, const std::string& expected) const {
  const json* v = Find(pointer);
  return Status::DataError(Place(pointer) + ": '" + KeyName(pointer) + "' " +
                           (v == nullptr ? std::string("is missing") : "= " + Shown(*v)) +
                           ": expected " + expected);
}

Status JsonDoc::Object(const std::string& pointer) const {
  const json* v = Find(pointer);
  if (v == nullptr || !v->is_object()) return Wrong(pointer, "an object {...}");
  return Status::Ok();
}

Result<std::string> JsonDoc::String(const std::string& pointer) const {
  const json* v = Find(pointer);
  if (v == nullptr || !v->is_string()) return Wrong(pointer, "a string");
  return v->get<std::string>();
}

Result<std::string> JsonDoc::StringOr(const std::string& pointer,
                                      const std::string& fallback) const {
  if (!Has(pointer)) return fallback;
  return String(pointer);
}

Result<int64_t> JsonDoc::Int(const std::string& pointer, int64_t low, int64_t high) const {
  const std::string range =
      "a whole number from " + std::to_string(low) + " to " + std::to_string(high);
  const json* v = Find(pointer);
  if (v == nullptr || !v->is_number_integer()) return Wrong(pointer, range);
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        static_cast<int64_t>(u) > high || static_cast<int64_t>(u) < low) {
      return Wrong(pointer, range);
    }
    return static_cast<int64_t>(u);
  }
  const int64_t i = v->get<int64_t>();
  if (i < low || i > high) return Wrong(pointer, range);
  return i;
}

Result<int64_t> JsonDoc::IntOr(const std::string& pointer, int64_t low, int64_t high,
                               int64_t fallback) const {
  if (!Has(pointer)) return fallback;
  return Int(pointer, low, high);
}

Result<uint64_t> JsonDoc::Uint64(const std::string& pointer) const {
  const json* v = Find(pointer);
  if (v == nullptr || !v->is_number_unsigned()) {
    return Wrong(pointer, "a whole number from 0 to 18446744073709551615");
  }
  return v->get<uint64_t>();
}

Result<bool> JsonDoc::Bool(const std::string& pointer) const {
  const json* v = Find(pointer);
  if (v == nullptr || !v->is_boolean()) return Wrong(pointer, "true or false");
  return v->get<bool>();
}

Result<double> JsonDoc::NumberOrNull(const std::string& pointer) const {
  const json* v = Find(pointer);
  if (v != nullptr && v->is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (v == nullptr || !v->is_number()) return Wrong(pointer, "a number or null");
  return v->get<double>();
}

Result<std::vector<std::string>> JsonDoc::Strings(const std::string& pointer) const {
  const json* v = Find(pointer);
  if (v == nullptr || !v->is_array()) return Wrong(pointer, "an array of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) return Wrong(pointer + "/" + std::to_string(i), "a string");
    out.push_back((*v)[i].get<std::string>());
  }
  return out;
}

Result<std::vector<int64_t>> JsonDoc::Ints(const std::string& pointer, int64_t low,
                                           int64_t high) const {
  const json* v = Find(pointer);
  if (v == nullptr || !v->is_array()) return Wrong(pointer, "an array of whole numbers");
  std::vector<int64_t> out;
  for (size_t i = 0; i < v->size(); ++i) {
    RLT_ASSIGN_OR_RETURN(const int64_t x, Int(pointer + "/" + std::to_string(i), low, high));
    out.push_back(x);
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> JsonDoc::StringMap(
    const std::string& pointer) const {
  const json* v = Find(pointer);
  if (v == nullptr || !v->is_object()) return Wrong(pointer, "an object of strings");
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, value] : v->items()) {
    if (!value.is_string()) return Wrong(pointer + "/" + PointerToken(k), "a string");
    out.emplace_back(k, value.get<std::string>());
  }
  return out;
}

}  // namespace rlt::tune
