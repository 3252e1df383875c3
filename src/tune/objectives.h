// rltrade tune: analytic test objectives for `rltrade tune --objective-fn NAME`, which
// replace training so that the search methods can be checked against known optima. The
// space's keys are x1, x2, ...; the function is minimised.
//  - branin(x1, x2) = (x2 - 5.1/(4 pi^2) x1^2 + 5/pi x1 - 6)^2 + 10 (1 - 1/(8 pi)) cos x1 + 10
//    (Branin 1972; the usual domain x1 in [-5, 10], x2 in [0, 15]); global minimum
//    0.397887... at (-pi, 12.275), (pi, 2.275) and (9.42478, 2.475).
//  - rosenbrock(x1..xn) = sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2 (n >= 2); minimum 0
//    at (1, ..., 1).
//  - hartmann6(x1..x6) = -sum_i alpha_i exp(-sum_j A_ij (x_j - P_ij)^2) with the standard
//    constants (Hartmann 1973; as tabulated by Surjanovic and Bingham's Virtual Library of
//    Simulation Experiments), domain [0, 1]^6; global minimum -3.32237 at (0.20169,
//    0.150011, 0.476874, 0.275332, 0.311652, 0.6573).
#ifndef RLT_TUNE_OBJECTIVES_H_
#define RLT_TUNE_OBJECTIVES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "tune/space.h"

namespace rlt::tune {

inline constexpr double kBraninMinimum = 0.397887357729738;

double Branin(double x1, double x2);
double Rosenbrock(const std::vector<double>& x);
double Hartmann6(const std::vector<double>& x);  // REQUIRES: x.size() == 6
inline constexpr double kHartmann6Minimum = -3.32237;

// The function `fn` (branin | rosenbrock | hartmann6) at x (sized as CheckObjectiveSpace
// requires).
double EvaluateFunction(const std::string& fn, const std::vector<double>& x);

// Pruning an analytic objective (`--prune asha` or `--method asha` with --objective-fn):
// a trial's value at a rung of `steps` training steps out of the full budget `full_steps`
// is f(x) + NoiseScale(fn) (1 - steps / full_steps) z, z a standard normal drawn from
// (seed, trial, steps). The full budget gives f(x) exactly; lower rungs give a noisier view
// of it, as a shorter training run gives a noisier validation score, so pruning is
// exercised against a known optimum with the uncertainty it has in real use. The same
// trial at the same rung always draws the same z (resume and --parallel reproduce it).
double NoiseScale(const std::string& fn);  // branin 1, rosenbrock 1, hartmann6 0.1
double ValueAtBudget(const std::string& fn, double value, uint64_t seed, int trial, int64_t steps,
                     int64_t full_steps);

// Checks that the space suits the function (keys x1..xn, n = 2 for branin, >= 2 for
// rosenbrock, 6 for hartmann6; numeric distributions only).
Status CheckObjectiveSpace(const std::string& fn, const Space& space);
// f at the space's values for unit point u.
double EvaluateObjective(const std::string& fn, const Space& space, const std::vector<double>& u);

}  // namespace rlt::tune

#endif  // RLT_TUNE_OBJECTIVES_H_
