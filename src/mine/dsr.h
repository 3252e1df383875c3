// rltrade mine: the multiple-testing side of mining — the Deflated Sharpe Ratio of the
// kept signals and the expected number of false discoveries.
//
// Deflated Sharpe Ratio: Bailey & López de Prado (2014), "The Deflated Sharpe Ratio:
// Correcting for Selection Bias, Backtest Overfitting and Non-Normality", Journal of
// Portfolio Management 40(5), eq. (2) and the expected maximum of section 3:
//   SR0 = √V · ((1 − γ) Φ⁻¹(1 − 1/N) + γ Φ⁻¹(1 − 1/(N e))),  γ = 0.5772… (Euler–Mascheroni)
//   DSR = Φ( (SR̂ − SR0) · √(T − 1) / √(1 − skew · SR̂ + (kurt − 1)/4 · SR̂²) )
// N = (signal, sign) pairs tried; SR̂, skew, kurt (not excess) and T of the kept signal's
// training P&L, everything per unit (a (symbol, session)), never annualised. The arithmetic
// is eval's (eval/metrics.h DeflatedSharpeRatio); this file adds what mining needs around it.
//
// V, the variance of a skill-less trial's Sharpe estimate: 1 / (T − 1), the sampling
// variance of a Sharpe ratio estimated from T returns when the true Sharpe is 0 (Lo 2002,
// "The Statistics of Sharpe Ratios"; the same asymptotics give the DSR's denominator). The
// paper estimates V as the variance of the trials' Sharpe ratios, which assumes trials
// without skill; among 184 correlated candidates, a genuine effect that several of them
// carry (and the mirror image of each, the other sign) widens that variance and pushes SR0
// above the real signals themselves: on a synthetic market with a planted momentum the
// cross-sectional V is 0.85 per session (SR0 = 2.7) against 1/(T − 1) = 0.009 (SR0 = 0.28),
// and the planted signal's Sharpe is 1.5. The cross-sectional figure is still reported.
//
// Expected false discoveries: under the null each trial's SR̂·√(T − 1) is about standard
// normal, and a kept signal survives at DSR ≥ c when SR̂·√(T − 1) ≥ SR0·√(T − 1) + Φ⁻¹(c)
// (normal returns), so each kept signal — the better of its two signs — is a false
// discovery with probability at most 2·(1 − Φ(SR0·√(T − 1) + Φ⁻¹(c))), and
// E[false discoveries] is at most kept times that.
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

// 1 / (units − 1), the variance of a skill-less trial's per-unit Sharpe estimate (see the
// header comment); 0 for fewer than 2 units.
double NullSharpeVariance(int64_t units);

// kept · 2 · (1 − Φ(SR0·√(units − 1) + Φ⁻¹(threshold))): see the header comment.
double ExpectedFalseDiscoveries(int64_t kept, double threshold, double sr0, int64_t units);

// Per-unit Sharpe ratio mean / std (ddof = 1); 0 when std is 0 or fewer than 2 values.
double UnitSharpe(std::span<const double> pnl);

}  // namespace rlt::mine

#endif  // RLT_MINE_DSR_H_
