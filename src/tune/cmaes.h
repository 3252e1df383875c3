// rltrade tune: the CMA-ES search.
//
// The (mu/mu_w, lambda) evolution strategy with covariance matrix adaptation as Hansen's
// tutorial ("The CMA Evolution Strategy: A Tutorial", 2016) sets it out, with its default
// parameters for n dimensions: lambda = 4 + floor(3 ln n), mu = floor(lambda / 2),
// positive recombination weights ln((lambda + 1) / 2) - ln i (no negative weights),
// c_sigma, d_sigma, c_c, c_1 and c_mu as in the tutorial's table 1, the h_sigma stall of
// the rank-one path, sigma updated by cumulative step-size adaptation.
//  - Coordinates: the unit cube of the space's uniform, log_uniform (already log scale) and
//    int keys; an int is read by its cell (space.h), so CMA-ES moves on it as on a
//    continuous value. Start: the centre of the cube, sigma0 = 1/6 (Optuna's default, a
//    sixth of the range, so the start's 3-sigma box is the cube).
//  - Bounds: a sample outside [0, 1) is drawn again (up to 100 times, then clamped into
//    the cube), so every evaluated point is inside and the update sees it as sampled.
//  - choice keys in a mixed space are drawn uniformly at random each trial (CMA-ES has no
//    categorical model); a space of choice keys only is refused, naming them.
//  - IPOP restart (Auger and Hansen 2005): when the step is below 1e-6 of the cube
//    (sigma times the largest sqrt eigenvalue of C), when a generation's scores are all
//    equal (flat: e.g. stuck in one int cell), or when C's condition number passes 1e14,
//    the strategy starts again at a random point with lambda doubled (at most 1024).
// Scores are maximised; a failed trial (NaN) ranks last. Parallel trials: a generation's
// points are drawn as trials are proposed; when more are proposed than lambda before the
// generation is complete, the extra ones come from the same distribution. The generation is
// updated with the first lambda of its trials to be told (in trial order); trials of an
// older generation told afterwards are not used.
#ifndef RLT_TUNE_CMAES_H_
#define RLT_TUNE_CMAES_H_

#include <cstdint>
#include <memory>

#include "core/status.h"
#include "tune/search.h"

namespace rlt::tune {

inline constexpr double kCmaesSigma0 = 1.0 / 6.0;

// Refused when the space has no uniform, log_uniform or int key.
Result<std::unique_ptr<Search>> MakeCmaesSearch(const Space& space, uint64_t seed);

// CMA-ES's default population for n dimensions: 4 + floor(3 ln n).
int CmaesLambda(int n);

}  // namespace rlt::tune

#endif  // RLT_TUNE_CMAES_H_
