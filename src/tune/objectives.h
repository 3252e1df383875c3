// rltrade tune: analytic test objectives for `rltrade tune --objective-fn NAME`, which
// replace training so that the search methods can be checked against known optima. The
// space's keys are x1, x2, ...; the function is minimised.
//  - branin(x1, x2) = (x2 - 5.1/(4 pi^2) x1^2 + 5/pi x1 - 6)^2 + 10 (1 - 1/(8 pi)) cos x1 + 10
//    (Branin 1972; the usual domain x1 in [-5, 10], x2 in [0, 15]); global minimum
//    0.397887... at (-pi, 12.275), (pi, 2.275) and (9.42478, 2.475).
//  - rosenbrock(x1..xn) = sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2 (n >= 2); minimum 0
//    at (1, ..., 1).
#ifndef RLT_TUNE_OBJECTIVES_H_
#define RLT_TUNE_OBJECTIVES_H_

#include <string>
#include <vector>

#include "core/status.h"
#include "tune/space.h"

namespace rlt::tune {

inline constexpr double kBraninMinimum = 0.397887357729738;

double Branin(double x1, double x2);
double Rosenbrock(const std::vector<double>& x);

// Checks that the space suits the function (keys x1..xn, n = 2 for branin, >= 2 for
// rosenbrock; numeric distributions only).
Status CheckObjectiveSpace(const std::string& fn, const Space& space);
// f at the space's values for unit point u.
double EvaluateObjective(const std::string& fn, const Space& space, const std::vector<double>& u);

}  // namespace rlt::tune

#endif  // RLT_TUNE_OBJECTIVES_H_
