// rltrade config: run configuration files, `--set` overrides and the resolved config.
//
// What a config file is
// ---------------------
// A run is described by one TOML file made of sections, each a flat list of
// `key = value` pairs:
//
//   [run]
//   seed = 7
//   [data]
//   symbol = "SPY"
//   train_start = 2019-01-02
//   [env]
//   id = "intraday"
//   num_envs = 64
//   cost = 0.0005
//   [policy]
//   hidden = [64, 64]
//
// Each section maps 1:1 onto one options struct (docs/ARCHITECTURE.md, "Conventions"): the section
// [algo] onto PpoOptions, [env] onto the environment's Options, and so on. The caller
// binds a section with Config::Bind(), which applies every key through SetOption()
// (core/options.h). Keys the caller handles itself (e.g. `id` and `num_envs` in [env])
// are passed in `ignore`.
//
// Only two levels exist: section and key. A table nested inside a section
// (`[algo.ppo]`, `algo.ppo.clip = 0.2`, `net = { a = 1 }`), an array of tables
// (`[[run]]`), a key outside any section, or an array holding arrays or tables is an
// error naming the key path. Arrays of scalars are allowed (`hidden = [64, 64]`).
//
// Values are kept as text, the form SetOption() understands: strings unquoted, integers
// in decimal, floats in the shortest form that round-trips, booleans true/false, dates
// and times in ISO form (`2019-01-02`), arrays as "[a, b]". A string inside an array
// may not contain ',', '[' or ']' (the text form could not tell it apart). The TOML type
// is remembered as a ValueKind, used only to write the config back (ToToml); binding
// looks at the text alone, so `window = "5"` binds to an int field like `window = 5`.
//
// Errors
// ------
// Every value remembers where it came from (`configs/x.toml:12:1`, or
// `--set algo.lr=3e-4`). Errors name that place:
//   - a TOML syntax error:  "configs/x.toml:3:9: <the parser's message>"
//   - an unknown key:       "configs/x.toml:12: [algo] unknown key 'n_step'; did you mean
//                            'n_steps'?"
//   - a bad value:          "configs/x.toml:13: [algo] 'lr' = 'fast': expected a number"
//   - an unknown section:   "configs/x.toml:20:1: unknown section [polcy]; did you mean
//                            [policy]?" (CheckSections)
// Bind() and CheckSections() report every problem they find, one per line, not only the
// first.
//
// Overrides
// ---------
// `--set section.key=value` (ApplyOverride) replaces or adds one key after the file is
// read. The value is taken literally (the shell already removed quotes): `--set
// data.symbol=SPY`, `--set policy.hidden=[128,128]`. Its kind is inferred (InferKind).
//
// The resolved config
// -------------------
// After binding, the caller writes every effective value back with SetSection(section,
// options) (all of DescribeOptions(options), defaults included, source "resolved") and
// saves ToToml() beside the run's outputs, so a run can be repeated from its own
// directory. Reading that file back gives the same texts (values, not spellings: a
// `--set algo.lr=1e-3` comes back as 0.001).
//
// Paths
// -----
// A key that names a file (a FilePath field of its options struct, core/options.h) is
// resolved by ResolvePaths() once the file is read and the overrides applied: a relative
// path read from a config file is taken relative to that file's directory (as Cargo and
// CMake do), one given with `--set` relative to the current directory. The resolved
// config therefore records absolute paths, and a run's directory can be used from
// anywhere.
//
// Not here: choosing which options struct a section binds to (the CLI does that),
// merging several files, environment variables.
//
// Thread safety: a Config is a plain value; const methods may be called concurrently.
#ifndef RLT_CONFIG_CONFIG_H_
#define RLT_CONFIG_CONFIG_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/options.h"
#include "core/status.h"

namespace rlt::config {

// The TOML type a value is written back as.
enum class ValueKind { kString, kInteger, kFloat, kBool, kArray };

// "string", "integer", "float", "bool", "array".
const char* KindName(ValueKind kind);

// The kind of a value known only as text (from DescribeOptions() or `--set`). The rule,
// first match wins:
//   "true" / "false"                          -> kBool
//   "-0" (the double -0.0)                     -> kFloat
//   a decimal integer that fits int64_t        -> kInteger  ("-12"; not "+1", "0x10")
//   other digit strings (too large for int64)  -> kString   (written quoted, kept exact)
//   a number std::from_chars reads as double   -> kFloat    ("1e-3", "0.5", "inf", "nan")
//   "[...]" (starts with '[', ends with ']')   -> kArray    (elements inferred the same way)
//   anything else                              -> kString
ValueKind InferKind(const std::string& text);

// One value: its text (the form SetOption() understands), where it came from, its kind.
struct ConfigValue {
  std::string text;
  std::string source;  // "configs/x.toml:12:1", "--set run.seed=3" or "resolved"
  ValueKind kind = ValueKind::kString;
  // The directory a relative path in `text` is relative to (ResolvePaths): the absolute
  // directory of the file a value was read from (LoadFile); "" for a `--set` or a value
  // set by the program, which are relative to the current directory.
  std::string base_dir;
};

// One [section]: keys in file order (overrides of new keys are appended).
struct Section {
  std::string name;
  std::string source;  // where the section was opened ("configs/x.toml:4:1", "--set ...")
  std::vector<std::pair<std::string, ConfigValue>> entries;

  // nullptr when the key is absent.
  const ConfigValue* Find(const std::string& key) const;
  std::vector<std::string> Keys() const;
};

// "configs/x.toml:12" for "configs/x.toml:12:1"; other sources unchanged.
std::string MessagePlace(const std::string& source);
// Ok when `errors` is empty, else InvalidArgument with the errors one per line.
Status JoinErrors(const std::vector<std::string>& errors);

class Config {
 public:
  Config() = default;

  // Reads and parses a TOML file. Errors: the file cannot be read (IoError) or its text
  // is not a valid config (see FromString).
  static Result<Config> LoadFile(const std::string& path);
  // Parses TOML text; `name` stands for the file in sources and messages. Values have no
  // base_dir (relative paths are then relative to the current directory).
  static Result<Config> FromString(const std::string& text, const std::string& name);

  // Applies "section.key=value" (the argument of `--set`). Adds the section and the key
  // when absent. Errors: no '=', no '.' before it, an empty section or key, or a key
  // path deeper than section.key.
  Status ApplyOverride(const std::string& assignment);

  // Sets one value, kind inferred from the text (see InferKind); adds section and key
  // when absent, keeps the key's position when present.
  void Set(const std::string& section, const std::string& key, const std::string& text,
           const std::string& source);

  // Makes the path keys of `section` absolute: each key of `keys` present with a value
  // that is not empty, not one of its keywords (the pair's second) and not already
  // absolute becomes base_dir / value (lexically normal; base_dir "" = the current
  // directory). Other keys and sections are untouched.
  void ResolvePaths(const std::string& section,
                    const std::vector<std::pair<std::string, std::vector<std::string>>>& keys);

  // nullptr when absent.
  const Section* Find(const std::string& name) const;
  const ConfigValue* Get(const std::string& section, const std::string& key) const;
  std::vector<std::string> SectionNames() const;

  // Applies every key of `section` (in order) onto `options` through SetOption(), except
  // the keys in `ignore`. An absent section leaves `options` at its values and is Ok.
  // Errors list every unknown key (with the nearest valid one) and every bad value, each
  // prefixed by "file:line: [section] ". Keys that did parse are applied even when
  // others fail.
  template <typename Options>
  Status Bind(const std::string& section, Options& options,
              const std::set<std::string>& ignore = {}) const;

  // An error naming every section not in `known`, with the nearest known name.
  Status CheckSections(const std::vector<std::string>& known) const;

  // Writes every effective value of `options` into `section` (DescribeOptions() order,
  // source "resolved", kinds inferred). Keys already in the section that `options` does
  // not list (those the caller handled itself, like [env] id) are kept, first.
  template <typename Options>
  void SetSection(const std::string& section, const Options& options);
  // The same from (key, text) rows.
  void SetSectionValues(const std::string& section,
                        const std::vector<std::pair<std::string, std::string>>& rows,
                        const std::string& source = "resolved");

  // The config as TOML text: sections and keys in order, values typed by their kind
  // (strings quoted and escaped, numbers and booleans bare, arrays as arrays). Parsing the
  // result with FromString() gives the same sections, keys and texts.
  std::string ToToml() const;

 private:
  Section* MutableSection(const std::string& name, const std::string& source);

  std::vector<Section> sections_;  // in file order
};

// ---------------------------------------------------------------------------------------
// Implementation of the templates.

template <typename Options>
Status Config::Bind(const std::string& section, Options& options,
                    const std::set<std::string>& ignore) const {
  const Section* s = Find(section);
  if (s == nullptr) return Status::Ok();
  std::vector<std::string> errors;
  for (const auto& [key, value] : s->entries) {
    if (ignore.count(key) > 0) continue;
    // A quoted number or boolean for a number/bool field (`n_steps = "64"`) is a type
    // error; a quoted digit string too large for a TOML integer (an unsigned seed above
    // 2^63-1, which InferKind keeps a string) is how such a value must be written.
    if (value.kind == ValueKind::kString && InferKind(value.text) != ValueKind::kString &&
        IsArithmeticOption(options, key)) {
      errors.push_back(MessagePlace(value.source) + ": [" + section + "] '" + key + "' = \"" +
                       value.text +
                       "\": expected a number or true/false, found a string (write it without "
                       "quotes)");
      continue;
    }
    Status status = SetOption(options, key, value.text);
    if (!status.ok()) {
      errors.push_back(MessagePlace(value.source) + ": [" + section + "] " + status.message());
    }
  }
  return JoinErrors(errors);
}

template <typename Options>
void Config::SetSection(const std::string& section, const Options& options) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& row : DescribeOptions(options)) rows.emplace_back(row.key, row.value);
  SetSectionValues(section, rows);
}

// "file:line: [section] key" when `config` sets the key, else "[section] key": the place a
// message about that key's value names.
std::string KeyPlace(const Config& config, const std::string& section, const std::string& key);

}  // namespace rlt::config

#endif  // RLT_CONFIG_CONFIG_H_
