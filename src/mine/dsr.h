// rltrade mine: the multiple-testing side of mining — the Deflated Sharpe Ratio of the
// kept signals and the expected number of false discoveries.
//
// Deflated Sharpe Ratio: Bailey & López de Prado (2014), "The Deflated Sharpe Ratio:
// Correcting for Selection Bias, Backtest Overfitting and Non-Normality", Journal of
// Portfolio Management 40(5), eq. (2) and the expected maximum of section 3:
//   SR0 = √V · ((1 − γ) Φ⁻¹(1 − 1/N) + γ Φ⁻¹(1 − 1/(N e))),  γ = 0.5772… (Euler–Mascheroni)
//   DSR = Φ( (SR̂ − SR0) · √(T − 1) / √(1 − skew · SR̂ + (kurt − 1)/4 · SR̂²) )
// N = (signal, sign) pairs tried, V = variance of their per-unit Sharpe ratios, SR̂, skew,
// kurt (not excess) and T of the kept signal's training P&L, everything per unit (a
// (symbol, session)), never annualised. The arithmetic is eval's (eval/metrics.h
// DeflatedSharpeRatio); this file adds what mining needs around it.
//
// Expected false discoveries: under the null (no signal has skill) and with the trials'
// Sharpe ratios spread as observed, a kept signal's DSR is the probability its true Sharpe
// exceeds SR0's benchmark, which at the benchmark is (asymptotically) uniform, so
// P(DSR >= c) <= 1 − c for each kept signal and E[false discoveries] <= kept · (1 − c).
// That bound is what ExpectedFalseDiscoveries returns; it is conservative (skill-less
// trials have true Sharpe 0 <= SR0, and costs make it negative).
#ifndef RLT_MINE_DSR_H_
#define RLT_MINE_DSR_H_

#include <cstdint>
#include <span>

namespace rlt::mine {

// SR0: the expected maximum per-unit Sharpe of `trials` skill-less trials whose Sharpe
// ratios have variance `sharpe_variance`. 0 for trials <= 1.
double ExpectedMaxSharpe(double trials, double sharpe_variance);

struct Dsr {
  double dsr = 0;  // NaN when undefined (fewer than 2 units, no spread)
  double sr0 = 0;
  double sharpe = 0;  // SR̂ per unit
};
Dsr DeflatedSharpe(std::span<const double> pnl, double trials, double sharpe_variance);

// kept · (1 − threshold): see the header comment.
double ExpectedFalseDiscoveries(int64_t kept, double threshold);

// Per-unit Sharpe ratio mean / std (ddof = 1); 0 when std is 0 or fewer than 2 values.
double UnitSharpe(std::span<const double> pnl);

}  // namespace rlt::mine

#endif  // RLT_MINE_DSR_H_
