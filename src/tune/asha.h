// rltrade tune: asynchronous successive halving (ASHA), the scheduler.
//
// Li, Jamieson, Rostamizadeh, Gonina, Ben-tzur, Hardt, Recht, Talwalkar, "A System for
// Massively Parallel Hyperparameter Tuning" (MLSys 2020), Algorithm 2. Trials climb rungs
// 0..R-1 with a growing budget (rltrade: training steps, rung_steps[k] = min_steps * eta^k,
// the last rung the config's full [run] total_steps). Whenever a worker is free it asks
// for a job:
//   for k = R-2 down to 0: the candidates are the best floor(n_k / eta) of the n_k results
//   finished in rung k; the first of them (best first) not promoted yet is promoted: it
//   continues to rung k+1.
//   otherwise a new trial starts in rung 0, while fewer than max_trials have started;
//   otherwise the worker waits for a running job (kWait), or the study is over (kDone).
// Scores are maximised; a failed or rejected trial (NaN) ranks below every score and is
// never promoted. Ties rank the lower trial first. Nothing waits for a rung to fill: that
// is what makes the halving asynchronous, and why with several workers the order of
// promotions depends on which job finishes first.
//
// Resume: Replay() feeds the finished results of a journal in their order, then Next()
// continues. A trial whose rung-0 run was cut by a kill starts again before any new trial;
// a promotion cut by a kill is simply promoted again (its rung k+1 result is missing).
#ifndef RLT_TUNE_ASHA_H_
#define RLT_TUNE_ASHA_H_

#include <cstdint>
#include <deque>
#include <set>
#include <utility>
#include <vector>

namespace rlt::tune {

struct AshaJob {
  enum class Kind { kRun, kWait, kDone };
  Kind kind = Kind::kDone;
  int trial = -1;
  int rung = -1;
};

// The rungs' training steps: total / eta^(R-1-k) for k = 0..R-1 (integer division), with
// R the most rungs whose first budget is still >= min_steps (min_steps <= 0: total / eta^3,
// so 4 rungs). E.g. (100000, 3, 0) -> 3703, 11111, 33333, 100000. REQUIRES: total >= 1,
// eta >= 2.
std::vector<int64_t> RungSteps(int64_t total, int eta, int64_t min_steps);

class Asha {
 public:
  // REQUIRES: eta >= 2, rungs >= 1, max_trials >= 1.
  Asha(int eta, int rungs, int max_trials);

  // The next job; a kRun job counts as running until its Report().
  AshaJob Next();
  // The result of a job Next() handed out (score NaN = failed or rejected).
  void Report(int trial, int rung, double score);
  // A finished result from a journal (no Next() before it); call before any Next().
  void Replay(int trial, int rung, double score);

  int rungs() const { return rungs_; }
  // Finished results of rung k: (trial, score) in the order they finished.
  const std::vector<std::pair<int, double>>& results(int k) const { return results_[k]; }

 private:
  int eta_, rungs_, max_trials_;
  std::vector<std::vector<std::pair<int, double>>> results_;
  std::vector<std::set<int>> promoted_;  // promoted_[k]: trials sent from rung k to k + 1
  std::deque<int> restart_;  // resume: trials below the last started without a rung-0 result
  bool replay_done_ = false;
  int next_new_ = 0;
  int running_ = 0;
};

}  // namespace rlt::tune

#endif  // RLT_TUNE_ASHA_H_
