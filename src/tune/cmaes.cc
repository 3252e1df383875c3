// rltrade tune: the CMA-ES search (see cmaes.h).
#include "tune/cmaes.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/rng.h"

namespace rlt::tune {
namespace {

using Matrix = std::vector<std::vector<double>>;

// Eigen-decomposition of the symmetric matrix a by cyclic Jacobi rotations: a = V diag(d) V^T
// (V's columns are the eigenvectors).
void SymmetricEigen(Matrix a, Matrix* v, std::vector<double>* d) {
  const size_t n = a.size();
  v->assign(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i) (*v)[i][i] = 1.0;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0, diag = 0.0;
    for (size_t i = 0; i < n; ++i) {
      diag += a[i][i] * a[i][i];
      for (size_t j = i + 1; j < n; ++j) off += a[i][j] * a[i][j];
    }
    if (off <= 1e-30 * std::max(diag, 1e-300)) break;
    for (size_t p = 0; p < n; ++p) {
      for (size_t q = p + 1; q < n; ++q) {
        if (a[p][q] == 0.0) continue;
        const double theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
        const double t =
            (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1.0 / std::sqrt(t * t + 1), s = t * c;
        for (size_t k = 0; k < n; ++k) {  // a = J^T a J
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (size_t k = 0; k < n; ++k) {
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (size_t k = 0; k < n; ++k) {
          const double vkp = (*v)[k][p], vkq = (*v)[k][q];
          (*v)[k][p] = c * vkp - s * vkq;
          (*v)[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  d->resize(n);
  for (size_t i = 0; i < n; ++i) (*d)[i] = a[i][i];
}

class CmaesSearch : public Search {
 public:
  CmaesSearch(const Space& space, std::vector<int> numeric, uint64_t seed)
      : space_(space),
        numeric_(std::move(numeric)),
        n_(static_cast<int>(numeric_.size())),
        seed_(seed) {
    Start(CmaesLambda(n_), std::vector<double>(n_, 0.5));
  }

  std::vector<double> Propose() override {
    const auto trial = static_cast<uint64_t>(points_.size());
    Rng rng((seed_ ^ 0xC3AULL) * 0x9E3779B97F4A7C15ULL + trial + 1);
    std::vector<double> u(space_.dims());
    for (double& x : u) x = rng.Uniform();  // choice keys keep theirs
    std::vector<double> x(n_);
    for (int tries = 0; tries < 100; ++tries) {
      std::vector<double> z(n_);
      for (double& zi : z) zi = rng.Normal();
      bool inside = true;
      for (int i = 0; i < n_; ++i) {
        double y = 0;
        for (int k = 0; k < n_; ++k) y += b_[i][k] * std::sqrt(std::max(d_[k], 0.0)) * z[k];
        x[i] = m_[i] + sigma_ * y;
        inside = inside && x[i] >= 0.0 && x[i] < 1.0;
      }
      if (inside) break;
    }
    for (int i = 0; i < n_; ++i) {
      x[i] = std::clamp(x[i], 0.0, std::nextafter(1.0, 0.0));
      u[numeric_[i]] = x[i];
    }
    points_.push_back({x, generation_});
    return u;
  }

  void Tell(double score) override {
    const Point& p = points_[told_++];
    if (p.generation != generation_) return;  // proposed before the last update
    results_.push_back({std::isnan(score) ? -HUGE_VAL : score, p.x});
    if (static_cast<int>(results_.size()) == lambda_) Update();
  }

 private:
  struct Point {
    std::vector<double> x;
    int64_t generation;
  };

  // A (re)start: population lambda from mean m with sigma0 and C = I.
  void Start(int lambda, std::vector<double> m) {
    lambda_ = lambda;
    mu_ = lambda / 2;
    w_.assign(mu_, 0.0);
    for (int i = 0; i < mu_; ++i) w_[i] = std::log((lambda + 1) / 2.0) - std::log(i + 1.0);
    const double sum = std::accumulate(w_.begin(), w_.end(), 0.0);
    for (double& w : w_) w /= sum;
    double sq = 0;
    for (double w : w_) sq += w * w;
    mueff_ = 1.0 / sq;
    const double n = n_;
    cs_ = (mueff_ + 2) / (n + mueff_ + 5);
    ds_ = 1 + 2 * std::max(0.0, std::sqrt((mueff_ - 1) / (n + 1)) - 1) + cs_;
    cc_ = (4 + mueff_ / n) / (n + 4 + 2 * mueff_ / n);
    c1_ = 2 / ((n + 1.3) * (n + 1.3) + mueff_);
    cmu_ = std::min(1 - c1_, 2 * (mueff_ - 2 + 1 / mueff_) / ((n + 2) * (n + 2) + mueff_));
    chin_ = std::sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n));
    m_ = std::move(m);
    sigma_ = kCmaesSigma0;
    c_.assign(n_, std::vector<double>(n_, 0.0));
    for (int i = 0; i < n_; ++i) c_[i][i] = 1.0;
    b_ = c_;
    d_.assign(n_, 1.0);
    pc_.assign(n_, 0.0);
    ps_.assign(n_, 0.0);
    updates_ = 0;
  }

  void Update() {
    std::stable_sort(results_.begin(), results_.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    const bool flat = results_.front().first == results_.back().first;
    std::vector<std::vector<double>> y(mu_, std::vector<double>(n_));
    std::vector<double> yw(n_, 0.0);
    for (int k = 0; k < mu_; ++k) {
      for (int i = 0; i < n_; ++i) {
        y[k][i] = (results_[k].second[i] - m_[i]) / sigma_;
        yw[i] += w_[k] * y[k][i];
      }
    }
    for (int i = 0; i < n_; ++i) m_[i] += sigma_ * yw[i];
    // C^{-1/2} yw = B D^{-1} B^T yw.
    std::vector<double> t(n_, 0.0), cy(n_, 0.0);
    for (int k = 0; k < n_; ++k) {
      for (int i = 0; i < n_; ++i) t[k] += b_[i][k] * yw[i];
      t[k] /= std::sqrt(std::max(d_[k], 1e-300));
    }
    for (int i = 0; i < n_; ++i) {
      for (int k = 0; k < n_; ++k) cy[i] += b_[i][k] * t[k];
    }
    double ps_norm = 0;
    for (int i = 0; i < n_; ++i) {
      ps_[i] = (1 - cs_) * ps_[i] + std::sqrt(cs_ * (2 - cs_) * mueff_) * cy[i];
      ps_norm += ps_[i] * ps_[i];
    }
    ps_norm = std::sqrt(ps_norm);
    ++updates_;
    const bool hs =
        ps_norm / std::sqrt(1 - std::pow(1 - cs_, 2.0 * updates_)) < (1.4 + 2.0 / (n_ + 1)) * chin_;
    for (int i = 0; i < n_; ++i) {
      pc_[i] = (1 - cc_) * pc_[i] + (hs ? std::sqrt(cc_ * (2 - cc_) * mueff_) : 0.0) * yw[i];
    }
    const double dh = (hs ? 0.0 : 1.0) * cc_ * (2 - cc_);
    for (int i = 0; i < n_; ++i) {
      for (int j = 0; j < n_; ++j) {
        double rank_mu = 0;
        for (int k = 0; k < mu_; ++k) rank_mu += w_[k] * y[k][i] * y[k][j];
        c_[i][j] =
            (1 - c1_ - cmu_) * c_[i][j] + c1_ * (pc_[i] * pc_[j] + dh * c_[i][j]) + cmu_ * rank_mu;
      }
    }
    sigma_ *= std::exp(cs_ / ds_ * (ps_norm / chin_ - 1));
    sigma_ = std::min(sigma_, 1.0);
    SymmetricEigen(c_, &b_, &d_);
    results_.clear();
    ++generation_;
    const double dmax = *std::max_element(d_.begin(), d_.end());
    const double dmin = *std::min_element(d_.begin(), d_.end());
    if (flat || sigma_ * std::sqrt(std::max(dmax, 0.0)) < 1e-6 || dmin <= 0 || dmax > 1e14 * dmin) {
      Rng rng((seed_ ^ 0x1907ULL) * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(generation_));
      std::vector<double> m(n_);
      for (double& x : m) x = rng.Uniform();
      Start(std::min(2 * lambda_, 1024), std::move(m));
    }
  }

  Space space_;
  std::vector<int> numeric_;  // the space's indices of the non-choice keys
  int n_;
  uint64_t seed_;
  std::vector<Point> points_;
  size_t told_ = 0;
  int64_t generation_ = 0;
  std::vector<std::pair<double, std::vector<double>>> results_;  // of this generation
  int lambda_ = 0, mu_ = 0, updates_ = 0;
  std::vector<double> w_, m_, pc_, ps_, d_;
  Matrix c_, b_;
  double mueff_ = 0, cs_ = 0, ds_ = 0, cc_ = 0, c1_ = 0, cmu_ = 0, chin_ = 0, sigma_ = 0;
};

}  // namespace

int CmaesLambda(int n) { return 4 + static_cast<int>(std::floor(3 * std::log(std::max(n, 1)))); }

Result<std::unique_ptr<Search>> MakeCmaesSearch(const Space& space, uint64_t seed) {
  std::vector<int> numeric;
  std::string choices;
  for (int j = 0; j < space.dims(); ++j) {
    if (space.params[j].kind != Param::Kind::kChoice) {
      numeric.push_back(j);
    } else {
      choices += (choices.empty() ? "" : ", ") + space.params[j].key;
    }
  }
  if (numeric.empty()) {
    return Status::Refused(
        "--method cmaes needs at least one uniform, log_uniform or int key; "
        "the space has only choice keys (" +
        choices + "): use --method tpe, random or sobol");
  }
  return std::unique_ptr<Search>(new CmaesSearch(space, std::move(numeric), seed));
}

}  // namespace rlt::tune
