// rltrade tune: the search methods, as proposers of points in the unit cube.
//
//  - random: independent uniform points (seeded by (seed, trial)).
//  - sobol: the scrambled Sobol sequence (sobol.h), point i for trial i.
//  - anneal: the replaced system's Metropolis search with simulated annealing, done as
//    specified: from a random start, each proposal perturbs every parameter with
//    probability 0.3 (at least one): numeric ones by a Gaussian step of std_j * T in the
//    unit cube (log scale for log_uniform, so the unit cube is already log space),
//    reflected at the bounds; choices are resampled uniformly among the other values. The
//    proposal is accepted when it scores better, else with probability exp(delta / T)
//    (delta = score difference, < 0), with T = 0.1 + 0.9 exp(-3 i / N) at iteration i of
//    N. Every 5 iterations each std_j is multiplied by 1.3 when the acceptance rate of
//    those 5 was above 35% and by 0.7 when below 15% (kept in [0.01, 0.5]).
//  - tpe: the Tree-structured Parzen Estimator (tpe.h).
//  - cmaes: CMA-ES in the unit cube (cmaes.h).
// Scores are maximised (an objective to minimise enters negated). Every method is a pure
// function of (seed, the scores told so far, the order of Propose and Tell calls):
// replaying a journal in the same order rebuilds its state. Proposals may run ahead of the
// scores (trials evaluated in parallel): Tell gives the score of the oldest proposal not
// told yet, so trials are told in trial order; tpe and cmaes take the proposed, untold
// trials into account (see their headers), the others ignore scores or run one at a time.
#ifndef RLT_TUNE_SEARCH_H_
#define RLT_TUNE_SEARCH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/status.h"
#include "tune/sobol.h"
#include "tune/space.h"

namespace rlt::tune {

class Search {
 public:
  virtual ~Search() = default;
  // The point of the next trial (anneal: the previous one's score was told).
  virtual std::vector<double> Propose() = 0;
  // The score of the oldest proposal not told yet; NaN = the trial failed or was rejected
  // (anneal treats it as a rejected proposal, tpe as a bad trial, cmaes as the worst).
  virtual void Tell(double score) = 0;
};

// The random method's point of trial `trial`: uniform, seeded by (seed, trial).
std::vector<double> RandomPoint(int dims, uint64_t seed, int64_t trial);

// Whether a method's proposals depend on the scores of earlier trials while others run
// (tpe, cmaes: a study records how many trials run ahead, see study.h).
bool LearnsInParallel(const std::string& method);

// method: random | sobol | anneal | tpe | cmaes. trials = N (anneal's schedule length).
// Refused: sobol beyond kMaxSobolDims, cmaes on a space of choice keys only.
Result<std::unique_ptr<Search>> MakeSearch(const std::string& method, const Space& space,
                                           int trials, uint64_t seed);

}  // namespace rlt::tune

#endif  // RLT_TUNE_SEARCH_H_
