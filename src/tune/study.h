// rltrade tune: a study — trials proposed by a search method, evaluated one after the
// other, journaled, resumable.
//
// OUT holds: study.json (method, seed, trials, objective, direction, the space's text:
// what a resume must match), trials.jsonl (append-only, one line per finished trial:
// trial, params {key: value text}, objective, status ok|rejected|failed, reason,
// seconds, run_dir), results.csv (one row per trial), best.json ({"best_objective",
// "best_params", "trials", "method"}, as `--json` prints). A resumed study replays the
// journal through the search (its state is a function of the scores told), checks that
// the replayed proposals equal the journaled parameters, and continues with the next
// trial: no finished trial runs twice. With parallel = P > 1 (random, sobol) P workers
// take the next trial as they free up; the journal still lists trials in trial order, so
// a study's files do not depend on P. With tpe and cmaes the proposals depend on the scores:
// trial i waits until trials 0 .. i - P have finished (see StudyOptions::lag), so the
// proposals, and the study's files, depend on P but not on timing. Successive halving (method
// "asha", asha.h) journals one line per finished rung (fields rung, steps), in the order they
// finish; P workers ask the scheduler for jobs as they free up, so with P > 1 the promotions depend
// on timing. Its trials' points are the random method's. Journal lines also hold steps (trained),
// train_seconds (in the training loop; the rest of seconds is the trial's overhead) and checkpoint.
#ifndef RLT_TUNE_STUDY_H_
#define RLT_TUNE_STUDY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "tune/json_file.h"
#include "tune/space.h"

namespace rlt::tune {

struct TrialResult {
  std::string status = "ok";  // ok | rejected (impossible settings) | failed
  std::string reason;         // for rejected / failed
  double objective = 0;       // valid when ok
  std::string run_dir;        // the trial's run directory, if any
  std::string checkpoint;     // the evaluated checkpoint, if any
  int64_t steps = 0;          // env steps trained (0: none, or no training)
  double train_seconds = -1;  // seconds in the training loop (< 0: no training)
  int rank = -1;              // under mpirun: the rank that ran it (journaled); -1 alone
};

// One job: trial `trial` (its parameters {key: value text}); with successive halving,
// rung `rung`, trained to `steps` env steps (0 = the config's total; other methods).
struct TrialJob {
  int trial = 0;
  int rung = 0;
  int64_t steps = 0;
  std::vector<std::pair<std::string, std::string>> params;
};

using TrialFn = std::function<TrialResult(const TrialJob&)>;

struct StudyOptions;
// Whether the study climbs ASHA rungs (method asha, or prune asha).
bool UsesRungs(const StudyOptions& o);

struct StudyOptions {
  std::string out_dir;
  std::string method = "random";
  int trials = 32;
  uint64_t seed = 0;
  std::string objective;  // the objective's name (a metric, or f for --objective-fn)
  bool minimize = false;
  bool resume = false;
  std::string space_text;  // recorded in study.json
  std::string command;     // {"config", "overrides", "objective_fn"}: JSON the caller needs
                           // to resume with `--resume OUT` alone (recorded, not compared)
  bool quiet = false;
  // Trials evaluated at once (TrialFn called from that many threads; it must be
  // thread-safe then). The annealing search is sequential: it always runs 1.
  int parallel = 1;
  // method "asha" (tune/asha.h): reduction factor and each rung's training steps
  // (increasing; the last is the full budget). Recorded in study.json.
  int eta = 3;
  std::vector<int64_t> rung_steps;
  // "asha": successive halving with the points of `method` (random, sobol, anneal, tpe or
  // cmaes; method "asha" is random with it, as studies recorded it before). The search is
  // told each trial's rung-0 score, in trial order: the one score every trial has, at the
  // same budget, so pruned and promoted trials are compared alike (a promoted trial's
  // higher rungs are not told). "none": every trial runs the full budget.
  std::string prune = "none";
  // tpe, cmaes (methods that learn from scores while trials run in parallel): trial i is
  // proposed once trials 0 .. i - 1 - lag have finished, with the scores of exactly those
  // (the lag trials in between are pending; tpe.h and cmaes.h say how each counts them).
  // A new study sets lag = parallel - 1 and records it in study.json; a resume uses the
  // recorded lag whatever --parallel says, so its proposals are those of the uninterrupted
  // study (with more workers than lag + 1, the extra ones wait).
  int lag = 0;
};

// The largest study `rltrade tune` runs (--trials), and the limits of what study.json may
// record for successive halving.
inline constexpr int kMaxTrials = 100000;
inline constexpr int kMaxEta = 1000;
inline constexpr int64_t kMaxRungSteps = int64_t{1} << 50;
inline constexpr size_t kMaxRungs = 64;
inline constexpr int kMaxLag = 1023;

// OUT/study.json of an existing study (what RunStudy wrote), parsed. Errors: no such file
// (NotFound), not JSON or not an object (DataError naming study.json:line:column).
Result<JsonDoc> ReadStudyHeader(const std::string& out_dir);
// The study's settings study.json records (method, seed, trials, objective, minimize,
// space; eta and rung_steps with asha), each checked: a field of the wrong type or out of
// range (trials above kMaxTrials, ...) is a DataError naming study.json:line and the field.
Result<StudyOptions> StudyOptionsFromHeader(const JsonDoc& header);

struct StudyResult {
  int trials = 0;                // finished trials (ok, rejected or failed)
  int ok = 0;                    // journal lines (trials; asha: rungs) with an objective
  int rejected = 0, failed = 0;  // journal lines with that status
  std::string first_reason;      // the first rejected or failed line's reason ("" if none)
  double best_objective = 0;     // NaN when no trial succeeded
  int best_trial = -1;
  std::vector<std::pair<std::string, std::string>> best_params;
  // asha: the best is taken in the highest rung any trial finished with a score.
  int best_rung = 0;
  std::string best_checkpoint;  // the checkpoint behind best_objective ("" if none)
};

// Runs (or resumes) the study. Errors: trials outside 1..kMaxTrials, OUT exists without
// resume, a journal line that is not what RunStudy writes (DataError naming
// trials.jsonl:line and the field; the journal is left as it was), a journal that does not
// match the study, I/O.
Result<StudyResult> RunStudy(const Space& space, const StudyOptions& options, const TrialFn& fn);

// {"best_objective", "best_params", "trials", "method"} (--json, best.json); with rungs,
// "best_rung" (and "prune" when the method is not asha itself).
std::string StudyJson(const StudyResult& r, const std::string& method, bool rungs = false);

}  // namespace rlt::tune

#endif  // RLT_TUNE_STUDY_H_
