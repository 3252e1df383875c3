// rltrade tune: the Tree-structured Parzen Estimator (TPE) search.
//
// Bergstra, Bardenet, Bengio, Kegl, "Algorithms for Hyper-Parameter Optimization" (NIPS
// 2011), with the defaults Optuna documents for its TPESampler (univariate):
//  - the first kTpeStartup (10) trials are random points (the random method's);
//  - then the n trials known so far are ranked best first (failed trials, NaN, and pending
//    ones last) and split: the n_good = min(ceil(0.1 n), 25) best are "good" (only trials
//    with a score), the rest "bad";
//  - per parameter, each group gives a Parzen estimator in the unit cube (log_uniform is
//    already log scale there, see space.h): a mixture of Gaussians truncated to [0, 1], one
//    per trial at its coordinate plus a prior component N(0.5, 1) of weight 1. Trial
//    weights: 1 with fewer than 25 trials in the group, else the 25 most recent weigh 1 and
//    older ones ramp linearly from 1/m up (Optuna's default_weights). Bandwidths: each
//    component's sigma is the larger distance to its neighbours among the sorted centres
//    (prior centre included, 0 and 1 as outer neighbours; the outermost centres use their
//    inner gap), clipped to [1 / min(100, 1 + k), 1] for k components;
//  - int parameters are the same mixture, its mass integrated over the integer's cell of
//    the unit cube (a candidate is moved to its cell's centre); choice parameters are
//    categorical: weighted counts of each value plus the prior's weight spread evenly;
//  - 24 candidates per parameter are drawn from the good density and the one with the
//    largest l(x) / g(x) (good over bad density) is proposed. Parameters are independent.
// Pending trials (proposed, not finished: with --parallel P the P - 1 before the current)
// are counted by the constant liar as scoring the worst finished score, so they fall in
// the bad group: the next proposals move away from points already being evaluated.
#ifndef RLT_TUNE_TPE_H_
#define RLT_TUNE_TPE_H_

#include <cstdint>
#include <memory>

#include "tune/search.h"

namespace rlt::tune {

inline constexpr int kTpeStartup = 10;
inline constexpr int kTpeCandidates = 24;

std::unique_ptr<Search> MakeTpeSearch(const Space& space, uint64_t seed);

}  // namespace rlt::tune

#endif  // RLT_TUNE_TPE_H_
