// rltrade learn: schedules for learning rate, clip range and entropy coefficient.
//
// A Schedule maps training progress to a value. It is parsed from a string, so configs
// and `--set` can reach it:
//   "3e-4"                               constant
//   "linear(start, end)"                 start + (1 - progress_remaining) * (end - start),
//                                        Stable-Baselines3's get_linear_fn with
//                                        end_fraction = 1 (progress_remaining runs 1 -> 0)
//   "warmup_cosine(peak, warmup_updates, final_fraction)"
//                                        for update u = 1..U (1-based, U = total updates):
//                                          u <= W: peak * u / W  (linear warm-up from 0)
//                                          u >  W: peak * (f + (1 - f) * (1 + cos(pi p)) / 2),
//                                                  p = (u - W) / (U - W)
//                                        so the last update uses exactly f * peak.
// Progress follows SB3: before update k, progress_remaining = 1 - steps / total_steps
// where steps counts the environment steps collected so far (including this rollout).
// Plain value type; thread-compatible.
#ifndef RLT_LEARN_SCHEDULE_H_
#define RLT_LEARN_SCHEDULE_H_

#include <cstdint>
#include <string>

#include "core/status.h"

namespace rlt::learn {

// Where training stands when a schedule is read.
struct TrainingProgress {
  double progress_remaining = 1.0;  // 1 at the start, 0 at the end (SB3)
  int64_t update = 1;               // 1-based index of the update about to run
  int64_t total_updates = 1;        // updates in the whole run
};

class Schedule {
 public:
  enum class Kind { kConstant, kLinear, kWarmupCosine };

  Schedule(double value = 0.0) : kind_(Kind::kConstant), a_(value) {}  // NOLINT: implicit
  static Schedule Linear(double start, double end);
  static Schedule WarmupCosine(double peak, int64_t warmup_updates, double final_fraction);
  // Parses one of the forms above; errors say which form was expected.
  static Result<Schedule> Parse(const std::string& text);

  double Value(const TrainingProgress& progress) const;
  Kind kind() const { return kind_; }
  // The canonical text form, parseable by Parse().
  std::string ToString() const;

 private:
  Kind kind_;
  double a_ = 0, b_ = 0, c_ = 0;  // constant: a; linear: a -> b; warmup_cosine: a, b=W, c=f
};

// Option binding (found by argument-dependent lookup from core/options.h).
Status ParseValue(const std::string& text, Schedule* out);
std::string FormatValue(const Schedule& schedule);

}  // namespace rlt::learn

#endif  // RLT_LEARN_SCHEDULE_H_
