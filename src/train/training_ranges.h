// rltrade train: the dates a policy actually saw in training ("Honesty").
//
// What it is: RUN_DIR/training_ranges.json, written by `rltrade train` before the first
// update and merged (never shrunk) on every --resume, and the one check evaluation makes
// against it. It records, for market environments:
//   "ranges":   every range that fed training, each with where it came from — the
//               training envs' range ([env] range, whether from the config file, --set
//               env.range=... or the [split] train default) and the normaliser's fit range
//               ([split] train);
//   "sessions": every session date whose bars a training env could observe (the sessions
//               of the env range plus those reached by the nlags observation window before
//               each of them) or the normaliser was fitted on, sorted.
//   {"version": 1, "ranges": [{"source": "env.range (training envs)",
//     "range": "2023-01-02:2023-06-30"}, ...], "sessions": ["2023-01-02", ...]}
// (Evaluation during training, run.eval_every, walks [split] validation; it does not
// change the policy and is not recorded.)
//
// The rules built on it:
//  - train refuses (Status::Refused, exit 2) a setup whose recorded ranges or sessions
//    overlap [split] test, naming both ranges — whatever path set the range;
//  - eval checks the range it evaluates against this record (not against [split] train),
//    so a path that sets a training range some other way cannot leak either.
// LibTorch-free.
#ifndef RLT_TRAIN_TRAINING_RANGES_H_
#define RLT_TRAIN_TRAINING_RANGES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "env/market_dataset.h"
#include "market/date_range.h"
#include "train/train_options.h"

namespace rlt::train {

inline constexpr const char* kTrainingRangesFile = "training_ranges.json";

struct TrainingRanges {
  struct Named {
    std::string source;  // e.g. "env.range (training envs)"
    market::DateRange range;
  };
  std::vector<Named> ranges;
  std::vector<int32_t> sessions;  // yyyymmdd, sorted, unique
  bool empty() const { return ranges.empty() && sessions.empty(); }
};

// What the training envs and the normaliser of `setup` use (empty for envs without
// market data). Errors: an unparsable [env] range or nlags.
Result<TrainingRanges> TrainingRangesOf(const EnvSetup& setup);

// Status::Refused naming both ranges when a recorded range or session overlaps [split]
// test of `setup`; Ok without a test range.
Status CheckOutsideTest(const std::map<std::string, market::DateRange>& split,
                        const TrainingRanges& ranges);

// `a` plus everything of `b` not in it (ranges by source and range; sessions united).
TrainingRanges MergeTrainingRanges(const TrainingRanges& a, const TrainingRanges& b);

std::string TrainingRangesJson(const TrainingRanges& ranges);
// Errors name `path` and what is wrong.
Result<TrainingRanges> ParseTrainingRanges(const std::string& text, const std::string& path);

// "" when `dates` touches nothing recorded; otherwise a description of the first overlap,
// e.g. "env.range (training envs) 2023-02-20:2023-03-24" or "training session 2023-03-01".
std::string DescribeOverlap(const TrainingRanges& ranges, const market::DateRange& dates);

}  // namespace rlt::train

#endif  // RLT_TRAIN_TRAINING_RANGES_H_
