// rltrade train: which features a run's [features] section selects.
//
// `preset` is a built-in preset ("scaled", "fast22", "full184": features/presets.h) or a
// preset FILE, a TOML file naming signals of the library (features/library.h), such as the
// preset.toml `rltrade mine` writes:
//
//   signals = ["dv", "qco", "rsi14"]   # required: library names, each once
//   signs = [1, -1, 1]                 # optional: the miner's rule sign of each (checked,
//                                      # not used: training sees the signals' values)
//   [mine]                             # optional: how the list was made (not read)
//
// A file's list is copied into the run: the resolved [features] reads preset = "full184"
// and signals = [the file's list], so the run's config.toml records the features it was
// trained on, and evaluation and paper trading never read the file again. `signals` set
// directly selects library signals by name with preset = "full184". Errors name the key's
// file:line (or the preset file's line) and say how to fix it.
#ifndef RLT_TRAIN_FEATURE_SELECTION_H_
#define RLT_TRAIN_FEATURE_SELECTION_H_

#include <string>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "train/train_options.h"

namespace rlt::train {

// The signal names of a preset file, in order. Errors (InvalidArgument): the file cannot
// be read; a TOML syntax error (file:line:column); no `signals` array; an element that is
// not a string, an unknown library name (with the nearest) or a repeated one (file:line);
// an unknown top-level key (file:line, listing the known ones).
Result<std::vector<std::string>> ReadPresetFile(const std::string& path);

// Resolves a preset file into preset = "full184" + signals, and checks [features]:
// signals only with "full184", every name a library signal, quantile counts in range.
Status ResolveFeatureSelection(const config::Config& config, FeatureOptions* features);

}  // namespace rlt::train

#endif  // RLT_TRAIN_FEATURE_SELECTION_H_
