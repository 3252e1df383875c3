// rltrade train: [features] preset files and signal selections (feature_selection.h).
#include "train/feature_selection.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "config/toml_parse.h"
#include "core/file_io.h"
#include "core/printable.h"
#include "features/library.h"
#include "features/presets.h"
#include "features/registry.h"

namespace rlt::train {
namespace {

namespace fs = std::filesystem;

bool IsBuiltinPreset(const std::string& name) {
  for (const std::string& p : features::PresetNames()) {
    if (p == name) return true;
  }
  return false;
}

std::string PresetList() {
  std::string out;
  for (const std::string& p : features::PresetNames()) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

std::string FeatureKey(const FeatureOptions& f) {
  if (f.signals.empty()) return f.preset;
  std::string key = f.preset + ":";
  for (size_t i = 0; i < f.signals.size(); ++i) key += (i ? "," : "") + f.signals[i];
  return key;
}

Result<std::vector<std::string>> ReadPresetFile(const std::string& path) {
  RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  RLT_ASSIGN_OR_RETURN(const toml::table table, config::ParseToml(text, path));
  const toml::node* list = nullptr;
  const toml::node* signs = nullptr;
  for (const auto& [key, node] : table) {
    if (key.str() == "signals") {
      list = &node;
    } else if (key.str() == "signs") {
      signs = &node;
    } else if (key.str() != "mine") {
      return Status::InvalidArgument(fmt::format(
          "{}: unknown key '{}' in a preset file; it holds signals = [\"name\", ...], "
          "optionally signs = [1, -1, ...] and a [mine] table",
          config::TomlLine(path, node.source()), PrintableText(std::string(key.str()))));
    }
  }
  if (list == nullptr || !list->is_array()) {
    return Status::InvalidArgument(
        path +
        ": a preset file needs signals = [\"name\", ...] (library signal names, see "
        "docs/data.md; `rltrade mine` writes such a file)");
  }
  std::vector<std::string> names;
  std::set<std::string> seen;
  const std::vector<std::string> all = features::LibrarySignalNames();
  for (const toml::node& e : *list->as_array()) {
    const std::string place = config::TomlLine(path, e.source()) + ": signals";
    if (!e.is_string()) {
      return Status::InvalidArgument(place + ": expected a signal name in quotes");
    }
    const std::string name = e.as_string()->get();
    if (std::find(all.begin(), all.end(), name) == all.end()) {
      return Status::InvalidArgument(place + ": unknown signal '" + PrintableText(name) + "'" +
                                     features::NearestNameHint(name, all) +
                                     " (the library: docs/data.md, \"The signal library\")");
    }
    if (!seen.insert(name).second) {
      return Status::InvalidArgument(place + ": '" + name + "' is listed twice; list it once");
    }
    names.push_back(name);
  }
  // signs: the rule's sign of each signal (information from the miner; training uses the
  // signals' values, whatever their sign). Checked so that a hand-edited file stays coherent.
  if (signs != nullptr) {
    const toml::array* a = signs->as_array();
    bool ok = a != nullptr && a->size() == names.size();
    for (size_t i = 0; ok && i < a->size(); ++i) {
      const std::optional<int64_t> v = (*a)[i].value<int64_t>();
      ok = v.has_value() && (*v == 1 || *v == -1);
    }
    if (!ok) {
      return Status::InvalidArgument(
          config::TomlLine(path, signs->source()) + ": signs: expected one 1 or -1 per signal (" +
          std::to_string(names.size()) + "); fix the list or remove signs");
    }
  }
  if (names.empty()) {
    return Status::InvalidArgument(config::TomlLine(path, list->source()) +
                                   ": signals is empty (a mine run that kept no signal writes "
                                   "such a file); list at least one signal");
  }
  return names;
}

Status ResolveFeatureSelection(const config::Config& config, FeatureOptions* f) {
  const std::string preset_place = config::KeyPlace(config, "features", "preset");
  const std::string signals_place = config::KeyPlace(config, "features", "signals");
  if (!IsBuiltinPreset(f->preset)) {
    const fs::path p(f->preset.str());
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      if (f->preset.empty() || p.filename().empty()) {  // "" (resolved to a directory)
        return Status::InvalidArgument(preset_place +
                                       " names no preset (empty, or a directory); "
                                       "valid presets: " +
                                       PresetList() +
                                       ", or a preset file (.toml, e.g. written by rltrade mine)");
      }
      if (p.extension() != ".toml") {
        const std::string name = p.filename().string();
        return Status::InvalidArgument(preset_place + " = \"" + PrintableText(name) +
                                       "\": unknown preset" +
                                       features::NearestNameHint(name, features::PresetNames()) +
                                       "; valid presets: " + PresetList() +
                                       ", or a preset file (.toml, e.g. written by rltrade mine)");
      }
      return Status::InvalidArgument(preset_place + ": the preset file " +
                                     PrintableText(f->preset.str()) +
                                     " does not exist; check the path (relative to the config "
                                     "file's directory)");
    }
    if (!f->signals.empty()) {
      return Status::InvalidArgument(preset_place + " is a preset file and " + signals_place +
                                     " is set too: the file lists the signals; remove one");
    }
    RLT_ASSIGN_OR_RETURN(f->signals, ReadPresetFile(f->preset.str()));
    f->preset = "full184";
    return ResolveFeatureSelection(config, f);
  }
  if (!f->signals.empty()) {
    if (f->preset != "full184") {
      return Status::InvalidArgument(signals_place +
                                     " selects signals of the library: set [features] preset = "
                                     "\"full184\" (it is \"" +
                                     f->preset + "\")");
    }
    Result<std::vector<int>> which = features::ResolveLibrarySignals(f->signals);
    if (!which.ok())
      return Status::InvalidArgument(signals_place + ": " + which.status().message());
  }
  if (f->quantiles < 2) {
    return Status::InvalidArgument(config::KeyPlace(config, "features", "quantiles") + " = " +
                                   std::to_string(f->quantiles) +
                                   ": must be >= 2 (5 is coarse, 101 the default)");
  }
  if (f->quantiles_binary != 0 && f->quantiles_binary < 2) {
    return Status::InvalidArgument(config::KeyPlace(config, "features", "quantiles_binary") +
                                   " = " + std::to_string(f->quantiles_binary) +
                                   ": must be 0 (as quantiles) or >= 2 (e.g. 3)");
  }
  return Status::Ok();
}

}  // namespace rlt::train
