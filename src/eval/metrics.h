// rltrade eval: performance metrics of a return series and of a list of trades.
//
// What this is: plain functions over a span of per-period simple returns (fractions,
// 0.01 = +1 %), each a direct loop with the formula's source cited. NaN marks a missing
// period. The return-series metrics follow empyrical (quantopian/empyrical,
// empyrical/stats.py) exactly, including its conventions for missing values and edge
// cases, so that our numbers can be compared with pyfolio/empyrical output:
//  - "len" (the row count, NaN rows included) decides the short-series cut-offs and
//    the number of years in annual_return; every other statistic ignores NaN rows.
//  - compounding treats a NaN row as a 0 % period (it still takes up time).
//  - undefined results are NaN; a positive mean over a zero deviation is +inf (and a
//    negative one −inf), as IEEE division gives and empyrical returns.
// What this is not: no resampling (daily → monthly), no benchmark-relative metrics
// (alpha, beta), no I/O. Thread safety: all functions are pure and reentrant.
#ifndef RLT_EVAL_METRICS_H_
#define RLT_EVAL_METRICS_H_

#include <cstdint>
#include <span>

#include "eval/significance.h"

namespace rlt::eval {

struct MetricsOptions {
  // Periods per year used to annualise: 252 daily (trading sessions), 52 weekly,
  // 12 monthly. REQUIRES: > 0.
  int periods_per_year = 252;
  // Risk-free rate per period (not per year), subtracted from every return in the
  // Sharpe ratio and PSR, and the "required return" of the Sortino ratio and downside
  // risk (empyrical's required_return). Annual volatility, annual return, drawdowns
  // and cumulative return do not use it (as in empyrical).
  double risk_free = 0.0;
};

// All return-series metrics at once. Field comments give the definition; r are the
// returns, rf = MetricsOptions::risk_free, P = periods_per_year, len = rows including
// NaN rows, n = non-NaN rows. "std" is the sample standard deviation (ddof = 1).
struct ReturnMetrics {
  double sharpe_ratio;       // mean(r − rf) / std(r − rf) · √P; NaN if len < 2.
  double sortino_ratio;      // mean(r − rf) · P / downside_risk; NaN if len < 2.
  double downside_risk;      // √(mean(min(r − rf, 0)²)) · √P over all n; NaN if len < 1.
  double annual_return;      // CAGR: prod(1 + r)^(P / len) − 1; NaN if len < 1.
  double annual_volatility;  // std(r) · √P; NaN if len < 2.
  double max_drawdown;       // min over t of W_t / max_{s≤t} W_s − 1 (≤ 0); NaN if len < 1.
  double calmar_ratio;       // annual_return / |max_drawdown|; NaN if max_drawdown ≥ 0.
  double cum_returns_final;  // prod(1 + r) − 1; NaN if len < 1.
  double win_rate;           // #(r > 0) / n; NaN if n = 0.
  int64_t observations;      // n.
  // Longest time under water, in periods: see MaxDrawdownDuration().
  int64_t max_drawdown_duration;
  // Probabilistic Sharpe Ratio against SR* = 0 and the n it rests on: see
  // ProbabilisticSharpeRatio().
  double psr;
  int64_t psr_observations;
  // n < kMinRatioObservations (30, eval/significance.h): the ratios above (Sharpe, Sortino,
  // Calmar, PSR) rest on too few periods to be trusted; shown as "few_observations".
  bool few_observations;
};

// Computes every field of ReturnMetrics. REQUIRES: options.periods_per_year > 0.
ReturnMetrics ComputeReturnMetrics(std::span<const double> returns,
                                   const MetricsOptions& options = {});

// The same metrics one by one (definitions in ReturnMetrics).
double SharpeRatio(std::span<const double> returns, const MetricsOptions& options = {});
double SortinoRatio(std::span<const double> returns, const MetricsOptions& options = {});
double DownsideRisk(std::span<const double> returns, const MetricsOptions& options = {});
double AnnualReturn(std::span<const double> returns, const MetricsOptions& options = {});
double AnnualVolatility(std::span<const double> returns, const MetricsOptions& options = {});
double MaxDrawdown(std::span<const double> returns);
double CalmarRatio(std::span<const double> returns, const MetricsOptions& options = {});
double CumReturnsFinal(std::span<const double> returns);
double WinRate(std::span<const double> returns);
int64_t Observations(std::span<const double> returns);

// The longest drawdown, measured in periods rather than depth. The wealth path is
// W_0 = 1 (before the first period) and W_t = W_{t−1} · (1 + r_t), NaN rows counting as
// 0 %. A drawdown starts at a peak W_p (the running maximum) and ends at the first
// t > p with W_t ≥ W_p (recovery); its duration is t − p. A drawdown still open at the
// end lasts len − p. Returns the largest duration, 0 when wealth never falls below a
// previous peak (or for empty input). Example: returns +100 %, −50 %, +50 %, +100 %
// give W = 1, 2, 1, 1.5, 3: the peak at t = 1 is regained at t = 4, duration 3.
// This is the longest episode, which need not be the deepest one (max_drawdown).
int64_t MaxDrawdownDuration(std::span<const double> returns);

// Probabilistic Sharpe Ratio, Bailey & López de Prado (2012), "The Sharpe Ratio
// Efficient Frontier", Journal of Risk 15(2), eq. (11):
//   PSR(SR*) = Φ( (SR̂ − SR*) · √(n − 1) / √(1 − γ3 · SR̂ + (γ4 − 1)/4 · SR̂²) )
// the probability that the true Sharpe ratio exceeds SR* given n observations with
// skewness γ3 and (non-excess) kurtosis γ4. All quantities are per period, never
// annualised: SR̂ = mean(r − rf) / std(r − rf) with std the sample deviation (ddof = 1),
// i.e. SharpeRatio() / √P; γ3 = m3 / m2^{3/2} and γ4 = m4 / m2² from the central moments
// m_k = mean((x − mean)^k) (biased estimators, as the paper and scipy.stats.skew /
// kurtosis(fisher=False)); n counts non-NaN rows, which are the only rows used.
struct PsrResult {
  double psr;                // NaN if n < 2, zero deviation or a non-positive variance term.
  int64_t observations;      // n.
  double sharpe_per_period;  // SR̂.
  double skewness;           // γ3.
  double kurtosis;           // γ4 (3 for a normal distribution).
};
PsrResult ProbabilisticSharpeRatio(std::span<const double> returns,
                                   double benchmark_sharpe_per_period = 0.0,
                                   double risk_free = 0.0);

// The standard normal quantile Φ⁻¹(p) for p in (0, 1) (±inf at 0 and 1, NaN outside):
// Acklam's rational approximation refined by one Halley step on erfc, accurate to ~1e-15.
double NormalQuantile(double p);

// Deflated Sharpe Ratio, Bailey & López de Prado (2014), "The Deflated Sharpe Ratio:
// Correcting for Selection Bias, Backtest Overfitting and Non-Normality", Journal of
// Portfolio Management 40(5): the PSR (above) of the selected Sharpe ratio SR̂ against
// the Sharpe ratio expected from the best of N independent trials with no skill,
//   SR0 = √V[SR_n] · ((1 − γ) Φ⁻¹[1 − 1/N] + γ Φ⁻¹[1 − 1/(N e)]),  γ = 0.5772… (Euler),
//   DSR = Φ( (SR̂ − SR0) · √(T − 1) / √(1 − γ3 · SR̂ + (γ4 − 1)/4 · SR̂²) ).
// Everything per period (not annualised), as in PSR. With N = 1 (no selection) or
// V[SR_n] = 0, SR0 = 0 and the DSR is the PSR against zero.
struct DeflatedSharpeResult {
  double dsr;                // NaN when the PSR is undefined (see PsrResult)
  double sr0;                // SR0, per period
  double sharpe_per_period;  // SR̂
  int64_t observations;      // T
  double trials;             // N
  double skewness, kurtosis;
};
// From the moments directly (the paper's worked example gives these).
DeflatedSharpeResult DeflatedSharpeFromMoments(double sharpe_per_period, int64_t observations,
                                               double skewness, double kurtosis, double trials,
                                               double sharpe_variance);
// From the selected strategy's per-period returns (NaN rows skipped), the number of trials
// N >= 1 and the variance of the trials' per-period Sharpe ratios.
DeflatedSharpeResult DeflatedSharpeRatio(std::span<const double> returns, double trials,
                                         double sharpe_variance);

// Trade-level metrics over closed trades' profit and loss (any currency; NaN entries are
// ignored). profit_factor = gross_profit / gross_loss, where gross_profit sums the
// positive PnLs and gross_loss the absolute negative ones: +inf with profits and no
// losses, NaN with neither.
struct TradeMetrics {
  int64_t num_trades;        // non-NaN trades.
  double gross_profit;       // Σ max(pnl, 0).
  double gross_loss;         // Σ max(−pnl, 0), ≥ 0.
  double profit_factor;      // gross_profit / gross_loss.
  double average_trade_pnl;  // mean pnl; NaN if no trades.
  double win_rate;           // #(pnl > 0) / num_trades; NaN if no trades.
};
TradeMetrics ComputeTradeMetrics(std::span<const double> trade_pnls);

// Fraction of periods holding a non-zero position (positions: one per period, signed
// units or fractions of equity). NaN for empty input.
double Exposure(std::span<const double> positions);

// Mean absolute position change per period, starting flat: Σ_t |x_t − x_{t−1}| / len
// with x_{−1} = 0 (so entering counts; the final exit does not unless it is in the
// series). In the positions' units (fraction of equity → one-way turnover per period).
// NaN for empty input; a NaN position makes the result NaN.
double Turnover(std::span<const double> positions);

}  // namespace rlt::eval

#endif  // RLT_EVAL_METRICS_H_
