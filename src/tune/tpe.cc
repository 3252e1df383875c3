// rltrade tune: the TPE search (see tpe.h).
#include "tune/tpe.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <vector>

#include "core/rng.h"

namespace rlt::tune {
namespace {

// Optuna's default_weights: 1 each below 25 trials; else the 25 most recent weigh 1 and the
// m - 25 older ones ramp linearly from 1/m to 1. `n` trials in trial order.
std::vector<double> RecencyWeights(size_t n) {
  std::vector<double> w(n, 1.0);
  if (n < 25) return w;
  const size_t ramp = n - 25;
  for (size_t i = 0; i < ramp; ++i) {
    const double t = ramp == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(ramp - 1);
    w[i] = 1.0 / static_cast<double>(n) + t * (1.0 - 1.0 / static_cast<double>(n));
  }
  return w;
}

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// A mixture of Gaussians truncated to [0, 1]: the trials' coordinates and the prior.
struct Parzen {
  std::vector<double> mu, sigma, weight, mass;  // mass: of each component inside [0, 1]

  Parzen(const std::vector<double>& centres, const std::vector<double>& trial_weights) {
    const size_t k = centres.size() + 1;  // + the prior
    mu = centres;
    mu.push_back(0.5);
    weight = trial_weights;
    weight.push_back(1.0);  // Optuna's prior_weight
    const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
    for (double& w : weight) w /= total;
    std::vector<size_t> order(k);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return mu[a] < mu[b]; });
    sigma.assign(k, 1.0);
    std::vector<double> sorted(k + 2);
    sorted[0] = 0.0;
    sorted[k + 1] = 1.0;
    for (size_t i = 0; i < k; ++i) sorted[i + 1] = mu[order[i]];
    for (size_t i = 0; i < k; ++i) {
      double s = std::max(sorted[i + 1] - sorted[i], sorted[i + 2] - sorted[i + 1]);
      if (k >= 2 && i == 0) s = sorted[2] - sorted[1];
      if (k >= 2 && i == k - 1) s = sorted[k] - sorted[k - 1];
      sigma[order[i]] = s;
    }
    const double min_sigma = 1.0 / std::min(100.0, 1.0 + static_cast<double>(k));
    sigma.back() = 1.0;  // the prior spans the cube
    mass.resize(k);
    for (size_t i = 0; i < k; ++i) {
      sigma[i] = std::clamp(sigma[i], min_sigma, 1.0);
      mass[i] = NormalCdf((1.0 - mu[i]) / sigma[i]) - NormalCdf(-mu[i] / sigma[i]);
    }
  }

  double Sample(Rng& rng) const {
    double r = rng.Uniform();
    size_t c = 0;
    while (c + 1 < weight.size() && r >= weight[c]) r -= weight[c++];
    for (int tries = 0; tries < 100; ++tries) {
      const double x = mu[c] + sigma[c] * rng.Normal();
      if (x >= 0.0 && x < 1.0) return x;
    }
    return std::clamp(mu[c], 0.0, std::nextafter(1.0, 0.0));
  }

  // log density at x (cells = 0), or log mass of x's cell when the cube is cut in `cells`.
  double LogDensity(double x, int64_t cells) const {
    double sum = 0.0;
    for (size_t i = 0; i < mu.size(); ++i) {
      double p;
      if (cells > 0) {
        const double cell = std::floor(x * static_cast<double>(cells));
        const double a = cell / static_cast<double>(cells),
                     b = (cell + 1) / static_cast<double>(cells);
        p = NormalCdf((b - mu[i]) / sigma[i]) - NormalCdf((a - mu[i]) / sigma[i]);
      } else {
        const double z = (x - mu[i]) / sigma[i];
        p = std::exp(-0.5 * z * z) / (sigma[i] * std::sqrt(2.0 * std::numbers::pi));
      }
      sum += weight[i] * p / std::max(mass[i], 1e-300);
    }
    return std::log(std::max(sum, 1e-300));
  }
};

int64_t Cells(const Param& p) {
  if (p.kind == Param::Kind::kInt) return static_cast<int64_t>(p.high - p.low) + 1;
  if (p.kind == Param::Kind::kChoice) return static_cast<int64_t>(p.choices.size());
  return 0;
}

double CellCentre(double u, int64_t cells) {
  const double c =
      std::min(static_cast<double>(cells - 1), std::floor(u * static_cast<double>(cells)));
  return (c + 0.5) / static_cast<double>(cells);
}

class TpeSearch : public Search {
 public:
  TpeSearch(const Space& space, uint64_t seed) : space_(space), seed_(seed) {}

  std::vector<double> Propose() override {
    const int64_t trial = static_cast<int64_t>(points_.size());
    std::vector<double> u = RandomPoint(space_.dims(), seed_, trial);
    if (trial >= kTpeStartup) Suggest(trial, &u);
    points_.push_back(u);
    return u;
  }

  void Tell(double score) override { scores_.push_back(score); }

 private:
  // The good and bad trials (in trial order); pending and failed trials are bad.
  void Split(std::vector<size_t>* good, std::vector<size_t>* bad) const {
    const size_t n = points_.size();
    std::vector<size_t> finite;
    for (size_t i = 0; i < scores_.size(); ++i) {
      if (std::isfinite(scores_[i])) finite.push_back(i);
    }
    std::stable_sort(finite.begin(), finite.end(),
                     [&](size_t a, size_t b) { return scores_[a] > scores_[b]; });
    const size_t n_good = std::min(
        {static_cast<size_t>(std::ceil(0.1 * static_cast<double>(n))), size_t{25}, finite.size()});
    std::vector<bool> is_good(n, false);
    for (size_t i = 0; i < n_good; ++i) is_good[finite[i]] = true;
    for (size_t i = 0; i < n; ++i) (is_good[i] ? good : bad)->push_back(i);
  }

  void Suggest(int64_t trial, std::vector<double>* u) const {
    std::vector<size_t> good, bad;
    Split(&good, &bad);
    if (good.empty()) return;  // no trial scored yet: a random point
    Rng rng((seed_ ^ 0x7E5ULL) * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(trial) + 1);
    for (int j = 0; j < space_.dims(); ++j) {
      const Param& p = space_.params[j];
      const int64_t cells = Cells(p);
      if (p.kind == Param::Kind::kChoice) {
        (*u)[j] = SuggestChoice(j, cells, good, bad, rng);
        continue;
      }
      auto centres = [&](const std::vector<size_t>& group) {
        std::vector<double> c;
        for (size_t i : group)
          c.push_back(cells > 0 ? CellCentre(points_[i][j], cells) : points_[i][j]);
        return c;
      };
      const Parzen l(centres(good), RecencyWeights(good.size()));
      const Parzen g(centres(bad), RecencyWeights(bad.size()));
      double best = -std::numeric_limits<double>::infinity();
      for (int c = 0; c < kTpeCandidates; ++c) {
        double x = l.Sample(rng);
        if (cells > 0) x = CellCentre(x, cells);
        const double ratio = l.LogDensity(x, cells) - g.LogDensity(x, cells);
        if (ratio > best) {
          best = ratio;
          (*u)[j] = x;
        }
      }
    }
  }

  // A choice: categorical estimators (weighted counts plus the prior's weight 1 spread
  // evenly); the candidate with the best ratio among those drawn from the good one.
  double SuggestChoice(int j, int64_t cells, const std::vector<size_t>& good,
                       const std::vector<size_t>& bad, Rng& rng) const {
    auto probs = [&](const std::vector<size_t>& group) {
      std::vector<double> p(cells, 1.0 / static_cast<double>(cells));
      const std::vector<double> w = RecencyWeights(group.size());
      double total = 1.0;
      for (size_t k = 0; k < group.size(); ++k) {
        const auto c = static_cast<size_t>(CellCentre(points_[group[k]][j], cells) * cells);
        p[std::min(c, p.size() - 1)] += w[k];
        total += w[k];
      }
      for (double& x : p) x /= total;
      return p;
    };
    const std::vector<double> l = probs(good), g = probs(bad);
    size_t pick = 0;
    double best = -std::numeric_limits<double>::infinity();
    for (int c = 0; c < kTpeCandidates; ++c) {
      double r = rng.Uniform();
      size_t k = 0;
      while (k + 1 < l.size() && r >= l[k]) r -= l[k++];
      const double ratio = std::log(l[k]) - std::log(g[k]);
      if (ratio > best) {
        best = ratio;
        pick = k;
      }
    }
    return (static_cast<double>(pick) + 0.5) / static_cast<double>(cells);
  }

  Space space_;
  uint64_t seed_;
  std::vector<std::vector<double>> points_;  // every proposal, in trial order
  std::vector<double> scores_;               // the told ones (a prefix of points_)
};

}  // namespace

std::unique_ptr<Search> MakeTpeSearch(const Space& space, uint64_t seed) {
  return std::make_unique<TpeSearch>(space, seed);
}

}  // namespace rlt::tune
