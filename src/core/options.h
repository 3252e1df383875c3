// rltrade core: binding named settings onto option structs.
//
// Every component with more than three settings takes a `FooOptions` struct with
// documented defaults (docs/ARCHITECTURE.md). To let configs and `--set key=value` reach those
// structs without hand-written parsing, an options struct lists its fields once:
//
//   struct FooOptions {
//     int window = 5;            // bars in the window
//     std::string mode = "pnl";  // one of: pnl, shaped
//     template <typename V> void VisitFields(V& v) {
//       v("window", &window, "bars in the window");
//       v("mode", &mode, "reward mode", {"pnl", "shaped"});
//     }
//   };
//
// SetOptions() then applies string values by key, checking types and allowed values;
// an unknown key is an error naming the nearest valid key. DescribeOptions() lists keys,
// current values and docs (for --help texts and the resolved config); DocumentOptions()
// adds each field's type name and allowed values (the generated docs/config.md).
//
// Field types: double, float, int, int64_t, uint64_t, bool, std::string, FilePath (a
// string that names a file; see below), FilePaths (a list of them), and the lists
// std::vector<int>, std::vector<double> and std::vector<std::string>. A list is written "[64, 64]"
// or "64,64" (brackets optional, spaces around elements ignored); "" and "[]" are the empty list.
// FormatValue() prints lists as "[64, 64]". A value that fails to parse leaves the field
// unchanged.
#ifndef RLT_CORE_OPTIONS_H_
#define RLT_CORE_OPTIONS_H_

#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/status.h"

namespace rlt {

// A setting that names a file or directory: a std::string the configuration knows to be a
// path. A config file's relative path is resolved against that file's directory, a
// `--set` one against the current directory (config::Config::ResolvePaths), so a run's
// config.toml records absolute paths. For a FilePath field the `allowed` list of
// VisitFields names keywords accepted besides a path (e.g. {"synthetic"}), which are
// never resolved; any other value is a path (not checked against the list).
struct FilePath : std::string {
  FilePath() = default;
  FilePath(const char* s) : std::string(s) {}  // NOLINT: implicit on purpose
  explicit FilePath(const std::string& s) : std::string(s) {}
  explicit FilePath(std::string&& s) : std::string(std::move(s)) {}
  using std::string::operator=;
  // The text as a std::string (std::filesystem::path takes only exact string types).
  const std::string& str() const { return *this; }
};

// A list of paths (FilePath's rules for each element), written ["a.csv", "b.csv"].
struct FilePaths : std::vector<std::string> {
  using std::vector<std::string>::vector;
};

// True for the path types, whose values config::Config::ResolvePaths resolves.
template <typename T>
inline constexpr bool kIsPathType = std::is_same_v<T, FilePath> || std::is_same_v<T, FilePaths>;

// Levenshtein distance, for "did you mean" suggestions.
int EditDistance(const std::string& a, const std::string& b);
// The candidate nearest to `key` ("" when candidates is empty): fewest typos, counting an
// adjacent swap as one (optimal string alignment), ties broken by the longer common
// prefix.
std::string NearestName(const std::string& key, const std::vector<std::string>& candidates);

// Parses "key=value" into its parts; an error names the offending text.
Result<std::pair<std::string, std::string>> SplitAssignment(const std::string& text);

// The elements of a list value: "[a, b]" or "a,b" -> {"a", "b"}; "" and "[]" -> {}.
// Elements are trimmed of spaces and tabs. Brackets must be balanced ("[1, 2" is an
// error) and no element may be empty ("1,,2" is an error). No nesting and no quoting: an
// element runs to the next comma.
Result<std::vector<std::string>> SplitList(const std::string& text);

namespace internal {

inline Status ParseValue(const std::string& s, double* out) {
  const char* end = s.data() + s.size();
  double v;
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end) return Status::InvalidArgument("expected a number");
  // One rule for every numeric setting: NaN and infinities are never a valid value.
  if (!std::isfinite(v)) {
    return Status::InvalidArgument("'" + s + "' is not a finite number (expected a number)");
  }
  *out = v;
  return Status::Ok();
}
inline Status ParseValue(const std::string& s, float* out) {
  double d = 0.0;
  RLT_RETURN_IF_ERROR(ParseValue(s, &d));
  if (!std::isfinite(static_cast<float>(d))) {
    return Status::InvalidArgument("'" + s + "' is outside the range of a float (|x| <= 3.4e38)");
  }
  *out = static_cast<float>(d);
  return Status::Ok();
}
template <typename Int>
Status ParseInteger(const std::string& s, Int* out) {
  const char* end = s.data() + s.size();
  Int v;
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end) return Status::InvalidArgument("expected an integer");
  *out = v;
  return Status::Ok();
}
inline Status ParseValue(const std::string& s, int* out) { return ParseInteger(s, out); }
inline Status ParseValue(const std::string& s, int64_t* out) { return ParseInteger(s, out); }
inline Status ParseValue(const std::string& s, uint64_t* out) { return ParseInteger(s, out); }
inline Status ParseValue(const std::string& s, bool* out) {
  if (s == "true" || s == "1") {
    *out = true;
  } else if (s == "false" || s == "0") {
    *out = false;
  } else {
    return Status::InvalidArgument("expected true or false");
  }
  return Status::Ok();
}
inline Status ParseValue(const std::string& s, std::string* out) {
  *out = s;
  return Status::Ok();
}

// Lists: every element must parse as T; the field is assigned only when all do.
template <typename T>
Status ParseList(const std::string& s, std::vector<T>* out, const char* expected) {
  Result<std::vector<std::string>> parts = SplitList(s);
  if (!parts.ok()) return parts.status();
  std::vector<T> values(parts->size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (!ParseValue((*parts)[i], &values[i]).ok()) {
      return Status::InvalidArgument("element " + std::to_string(i + 1) + " ('" + (*parts)[i] +
                                     "'): expected " + expected + ", e.g. [64, 64]");
    }
  }
  *out = std::move(values);
  return Status::Ok();
}
inline Status ParseValue(const std::string& s, std::vector<int>* out) {
  return ParseList(s, out, "a list of integers");
}
inline Status ParseValue(const std::string& s, std::vector<double>* out) {
  return ParseList(s, out, "a list of numbers");
}
inline Status ParseValue(const std::string& s, std::vector<std::string>* out) {
  Result<std::vector<std::string>> parts = SplitList(s);
  if (!parts.ok()) return parts.status();
  *out = std::move(*parts);
  return Status::Ok();
}
inline Status ParseValue(const std::string& s, FilePaths* out) {
  Result<std::vector<std::string>> parts = SplitList(s);
  if (!parts.ok()) return parts.status();
  out->assign(parts->begin(), parts->end());
  return Status::Ok();
}

std::string FormatValue(double v);
inline std::string FormatValue(float v) { return FormatValue(static_cast<double>(v)); }
inline std::string FormatValue(int v) { return std::to_string(v); }
inline std::string FormatValue(int64_t v) { return std::to_string(v); }
inline std::string FormatValue(uint64_t v) { return std::to_string(v); }
inline std::string FormatValue(bool v) { return v ? "true" : "false"; }
inline std::string FormatValue(const std::string& v) { return v; }
template <typename T>
std::string FormatList(const std::vector<T>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ", ";
    out += FormatValue(v[i]);
  }
  return out + "]";
}
inline std::string FormatValue(const std::vector<int>& v) { return FormatList(v); }
inline std::string FormatValue(const std::vector<double>& v) { return FormatList(v); }
inline std::string FormatValue(const std::vector<std::string>& v) { return FormatList(v); }
inline std::string FormatValue(const FilePaths& v) {
  return FormatList(static_cast<const std::vector<std::string>&>(v));
}

}  // namespace internal

// The name the configuration reference (DocumentOptions, docs/config.md) gives a field's
// type. Every field type above has one; a type of a component's own that brings its own
// ParseValue/FormatValue needs a specialisation wherever its struct is documented (a type
// without one does not compile there, so no field goes undocumented).
template <typename T>
struct OptionTypeName;
template <>
struct OptionTypeName<double> {
  static constexpr const char* kName = "float";
};
template <>
struct OptionTypeName<float> {
  static constexpr const char* kName = "float";
};
template <>
struct OptionTypeName<int> {
  static constexpr const char* kName = "int";
};
template <>
struct OptionTypeName<int64_t> {
  static constexpr const char* kName = "int";
};
template <>
struct OptionTypeName<uint64_t> {
  static constexpr const char* kName = "int >= 0";
};
template <>
struct OptionTypeName<bool> {
  static constexpr const char* kName = "bool";
};
template <>
struct OptionTypeName<std::string> {
  static constexpr const char* kName = "string";
};
template <>
struct OptionTypeName<FilePath> {
  static constexpr const char* kName = "path";
};
template <>
struct OptionTypeName<std::vector<int>> {
  static constexpr const char* kName = "list of int";
};
template <>
struct OptionTypeName<std::vector<double>> {
  static constexpr const char* kName = "list of float";
};
template <>
struct OptionTypeName<std::vector<std::string>> {
  static constexpr const char* kName = "list of string";
};
template <>
struct OptionTypeName<FilePaths> {
  static constexpr const char* kName = "list of path";
};

// One field as the configuration reference shows it.
struct OptionDoc {
  std::string key;
  std::string type;   // OptionTypeName
  std::string value;  // the field's value as FormatValue prints it (the default, for a
                      // default-constructed struct)
  std::string doc;    // the doc string as written in VisitFields
  std::vector<std::string> allowed;  // the allowed values; empty: any value of the type
};

namespace internal {

// Visitor that names each field's type (and collects its doc and allowed values).
struct TypeNamer {
  std::vector<OptionDoc> rows;
  template <typename T>
  void operator()(const char* name, T* field, const char* doc,
                  std::initializer_list<const char*> allowed = {}) {
    rows.push_back({name, OptionTypeName<T>::kName, FormatValue(*field), doc,
                    std::vector<std::string>(allowed.begin(), allowed.end())});
  }
};

// Visitor that applies one key's value.
struct Setter {
  const std::string& key;
  const std::string& value;
  bool found = false;
  Status status;
  std::vector<std::string> names;
  template <typename T>
  void operator()(const char* name, T* field, const char* /*doc*/,
                  std::initializer_list<const char*> allowed = {}) {
    names.emplace_back(name);
    if (found || key != name) return;
    found = true;
    if (allowed.size() > 0 && !kIsPathType<T>) {
      bool ok = false;
      std::string list;
      for (const char* a : allowed) {
        ok = ok || value == a;
        list += list.empty() ? a : std::string(", ") + a;
      }
      if (!ok) {
        status =
            Status::InvalidArgument("'" + key + "' = '" + value + "': expected one of: " + list);
        return;
      }
    }
    Status s = ParseValue(value, field);
    if (!s.ok()) {
      status = Status::InvalidArgument("'" + key + "' = '" + value + "': " + s.message());
    }
  }
};

struct Describer {
  struct Row {
    std::string key, value, doc;
  };
  std::vector<Row> rows;
  template <typename T>
  void operator()(const char* name, T* field, const char* doc,
                  std::initializer_list<const char*> allowed = {}) {
    std::string d = doc;
    if (allowed.size() > 0) {
      d += kIsPathType<T> ? " (a path, or one of:" : " (one of:";
      for (const char* a : allowed) d += std::string(" ") + a;
      d += ")";
    }
    rows.push_back({name, FormatValue(*field), d});
  }
};

// Finds whether `key` names a number or bool field (a config's quoted string is no value
// for one: `n_steps = "64"` is an error, not 64).
struct ArithmeticFieldFinder {
  const std::string& key;
  bool arithmetic = false;
  template <typename T>
  void operator()(const char* name, T* /*field*/, const char* /*doc*/,
                  std::initializer_list<const char*> /*allowed*/ = {}) {
    if (key == name) arithmetic = std::is_arithmetic_v<T>;
  }
};

// Collects the FilePath fields and their keywords.
struct PathFinder {
  std::vector<std::pair<std::string, std::vector<std::string>>> paths;
  template <typename T>
  void operator()(const char* name, T* /*field*/, const char* /*doc*/,
                  std::initializer_list<const char*> allowed = {}) {
    if (kIsPathType<T>) {
      paths.emplace_back(name, std::vector<std::string>(allowed.begin(), allowed.end()));
    }
  }
};

}  // namespace internal

// The text form of a value (FormatValue) and the parse of one (ParseValue) by the rules
// above: the public face of the binder's own conversions, for callers that read or print
// a single setting themselves.
using internal::FormatValue;
using internal::ParseValue;

// True when `key` names a field of a number or bool type.
template <typename Options>
bool IsArithmeticOption(Options& options, const std::string& key) {
  internal::ArithmeticFieldFinder finder{key};
  options.VisitFields(finder);
  return finder.arithmetic;
}

// The FilePath fields of `options`: (key, keywords that are not paths), in declaration
// order. What config::Config::ResolvePaths needs to know of a section.
template <typename Options>
std::vector<std::pair<std::string, std::vector<std::string>>> PathOptions(const Options& options) {
  internal::PathFinder finder;
  const_cast<Options&>(options).VisitFields(finder);
  return finder.paths;
}

// Applies one setting. `context` prefixes messages (e.g. "[env]" or a file:line).
template <typename Options>
Status SetOption(Options& options, const std::string& key, const std::string& value,
                 const std::string& context = "") {
  internal::Setter setter{key, value, false, Status::Ok(), {}};
  options.VisitFields(setter);
  const std::string where = context.empty() ? "" : context + ": ";
  if (!setter.found) {
    return Status::InvalidArgument(where + "unknown key '" + key + "'; did you mean '" +
                                   NearestName(key, setter.names) + "'?");
  }
  if (!setter.status.ok()) return Status::InvalidArgument(where + setter.status.message());
  return Status::Ok();
}

// Applies every key of `values` (in order).
template <typename Options>
Status SetOptions(Options& options, const std::map<std::string, std::string>& values,
                  const std::string& context = "") {
  for (const auto& [k, v] : values) RLT_RETURN_IF_ERROR(SetOption(options, k, v, context));
  return Status::Ok();
}

// (key, current value, doc) rows, in declaration order.
template <typename Options>
std::vector<internal::Describer::Row> DescribeOptions(const Options& options) {
  internal::Describer d;
  const_cast<Options&>(options).VisitFields(d);
  return d.rows;
}

// Visits the fields of `inner`, an options struct embedded in another, under the outer
// struct's own keys: each as `prefix` + its name, except the names in `skip` (which the
// outer struct sets itself). For use inside an outer VisitFields, e.g. the options
// environment's `chain_*` keys over market::ChainSynthOptions:
//   VisitPrefixed(v, chain, "chain_", {"rate", "dividend", "seed"});
// The prefixed name a visitor receives lives for that call only (every visitor here copies
// it).
namespace internal {

// VisitPrefixed's visitor: forwards each field to `v` under `prefix` + its name.
template <typename V>
struct Prefixer {
  V& v;
  const char* prefix;
  std::initializer_list<const char*> skip;
  template <typename T>
  void operator()(const char* name, T* field, const char* doc,
                  std::initializer_list<const char*> allowed = {}) {
    for (const char* s : skip) {
      if (std::string_view(s) == name) return;
    }
    const std::string full = std::string(prefix) + name;
    v(full.c_str(), field, doc, allowed);
  }
};

}  // namespace internal

template <typename V, typename Inner>
void VisitPrefixed(V& v, Inner& inner, const char* prefix,
                   std::initializer_list<const char*> skip = {}) {
  internal::Prefixer<V> prefixer{v, prefix, skip};
  inner.VisitFields(prefixer);
}

// (key, type name, current value, doc, allowed values) rows, in declaration order: what
// the configuration reference prints. Reads the fields only.
template <typename Options>
std::vector<OptionDoc> DocumentOptions(const Options& options) {
  internal::TypeNamer namer;
  const_cast<Options&>(options).VisitFields(namer);
  return namer.rows;
}

}  // namespace rlt

#endif  // RLT_CORE_OPTIONS_H_
