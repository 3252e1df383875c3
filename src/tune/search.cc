// rltrade tune: search methods (see search.h).
#include "tune/search.h"

#include <algorithm>
#include <cmath>

#include "tune/cmaes.h"
#include "tune/tpe.h"

namespace rlt::tune {
namespace {

class RandomSearch : public Search {
 public:
  RandomSearch(int dims, uint64_t seed) : dims_(dims), seed_(seed) {}
  std::vector<double> Propose() override { return RandomPoint(dims_, seed_, trial_++); }
  void Tell(double) override {}

 private:
  int dims_;
  uint64_t seed_;
  int64_t trial_ = 0;
};

class SobolSearch : public Search {
 public:
  SobolSearch(int dims, uint64_t seed) : sobol_(dims, true, seed) {}
  std::vector<double> Propose() override { return sobol_.Point(index_++); }
  void Tell(double) override {}

 private:
  Sobol sobol_;
  uint64_t index_ = 0;
};

class AnnealSearch : public Search {
 public:
  AnnealSearch(const Space& space, int trials, uint64_t seed)
      : space_(space),
        trials_(std::max(trials, 1)),
        rng_(seed * 0x9E3779B97F4A7C15ULL + 0xA11),
        std_(space.dims(), 0.15) {}

  std::vector<double> Propose() override {
    if (current_.empty()) {  // the start: a random point
      proposal_.resize(space_.dims());
      for (double& x : proposal_) x = rng_.Uniform();
      return proposal_;
    }
    const double t = Temperature(iteration_);
    proposal_ = current_;
    std::vector<int> moved;
    for (int j = 0; j < space_.dims(); ++j) {
      if (rng_.Bernoulli(0.3)) moved.push_back(j);
    }
    if (moved.empty()) moved.push_back(static_cast<int>(rng_.NextU64() % space_.dims()));
    for (int j : moved) {
      const Param& p = space_.params[j];
      if (p.kind == Param::Kind::kChoice) {
        const size_t n = p.choices.size();
        if (n < 2) continue;
        const size_t now = std::min(n - 1, static_cast<size_t>(current_[j] * n));
        size_t pick = rng_.NextU64() % (n - 1);
        if (pick >= now) ++pick;
        proposal_[j] = (static_cast<double>(pick) + 0.5) / static_cast<double>(n);
        continue;
      }
      double x = current_[j] + rng_.Normal() * std_[j] * t;
      // Reflect into [0, 1).
      for (int k = 0; k < 4 && (x < 0 || x >= 1); ++k) x = x < 0 ? -x : 2.0 - x;
      proposal_[j] = std::min(std::max(x, 0.0), std::nextafter(1.0, 0.0));
    }
    return proposal_;
  }

  void Tell(double score) override {
    if (current_.empty()) {
      if (std::isfinite(score)) {
        current_ = proposal_;
        current_score_ = score;
      }
      return;  // the start is not an annealing iteration
    }
    const double t = Temperature(iteration_);
    bool accept = false;
    if (std::isfinite(score)) {
      const double delta = score - current_score_;
      accept = delta >= 0 || rng_.Uniform() < std::exp(delta / t);
    }
    if (accept) {
      current_ = proposal_;
      current_score_ = score;
      ++accepted_;
    }
    ++iteration_;
    if (iteration_ % 5 == 0) {
      const double rate = accepted_ / 5.0;
      for (double& s : std_) {
        if (rate > 0.35) s = std::min(0.5, s * 1.3);
        if (rate < 0.15) s = std::max(0.01, s * 0.7);
      }
      accepted_ = 0;
    }
  }

 private:
  double Temperature(int i) const { return 0.1 + 0.9 * std::exp(-3.0 * i / trials_); }

  Space space_;
  int trials_;
  Rng rng_;
  std::vector<double> std_, current_, proposal_;
  double current_score_ = 0;
  int iteration_ = 0, accepted_ = 0;
};

}  // namespace

std::vector<double> RandomPoint(int dims, uint64_t seed, int64_t trial) {
  Rng rng(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(trial) + 1);
  std::vector<double> u(dims);
  for (double& x : u) x = rng.Uniform();
  return u;
}

bool LearnsInParallel(const std::string& method) { return method == "tpe" || method == "cmaes"; }

Result<std::unique_ptr<Search>> MakeSearch(const std::string& method, const Space& space,
                                           int trials, uint64_t seed) {
  if (method == "random") return std::unique_ptr<Search>(new RandomSearch(space.dims(), seed));
  if (method == "sobol") {
    if (space.dims() > kMaxSobolDims) {
      return Status::InvalidArgument("--method sobol: the space has " +
                                     std::to_string(space.dims()) + " parameters; at most " +
                                     std::to_string(kMaxSobolDims) +
                                     " are supported (use random or anneal)");
    }
    return std::unique_ptr<Search>(new SobolSearch(space.dims(), seed));
  }
  if (method == "anneal") return std::unique_ptr<Search>(new AnnealSearch(space, trials, seed));
  if (method == "tpe") return MakeTpeSearch(space, seed);
  if (method == "cmaes") return MakeCmaesSearch(space, seed);
  return Status::InvalidArgument("--method " + method +
                                 ": expected random, sobol, anneal, tpe, cmaes or asha");
}

}  // namespace rlt::tune
