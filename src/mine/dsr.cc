#include "mine/dsr.h"

#include <cmath>

#include "eval/metrics.h"

namespace rlt::mine {

double ExpectedMaxSharpe(double trials, double sharpe_variance) {
  if (trials <= 1 || !(sharpe_variance > 0)) return 0;
  constexpr double kEulerGamma = 0.57721566490153286;
  return std::sqrt(sharpe_variance) *
         ((1 - kEulerGamma) * eval::NormalQuantile(1 - 1 / trials) +
          kEulerGamma * eval::NormalQuantile(1 - 1 / (trials * std::exp(1.0))));
}

Dsr DeflatedSharpe(std::span<const double> pnl, double trials, double sharpe_variance) {
  const eval::DeflatedSharpeResult r = eval::DeflatedSharpeRatio(pnl, trials, sharpe_variance);
  return Dsr{r.dsr, r.sr0, r.sharpe_per_period};
}

double NullSharpeVariance(int64_t units) {
  return units < 2 ? 0.0 : 1.0 / static_cast<double>(units - 1);
}

double ExpectedFalseDiscoveries(int64_t kept, double threshold, double sr0, int64_t units) {
  if (units < 2) return static_cast<double>(kept);
  const double z =
      sr0 * std::sqrt(static_cast<double>(units - 1)) + eval::NormalQuantile(threshold);
  const double tail = 0.5 * std::erfc(z / std::sqrt(2.0));  // 1 − Φ(z)
  return static_cast<double>(kept) * std::min(1.0, 2 * tail);
}

double UnitSharpe(std::span<const double> pnl) {
  const size_t n = pnl.size();
  if (n < 2) return 0;
  double mean = 0;
  for (double v : pnl) mean += v;
  mean /= static_cast<double>(n);
  double ss = 0;
  for (double v : pnl) ss += (v - mean) * (v - mean);
  const double sd = std::sqrt(ss / static_cast<double>(n - 1));
  return sd > 0 ? mean / sd : 0;
}

}  // namespace rlt::mine
