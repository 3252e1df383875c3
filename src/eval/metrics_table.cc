// rltrade eval: the metrics table (see metrics_table.h).
#include "eval/metrics_table.h"

namespace rlt::eval {

StrategyMetrics ComputeStrategyMetrics(std::span<const double> session_returns,
                                       std::span<const double> round_trip_pnls,
                                       std::span<const double> exposures, double costs_paid,
                                       const MetricsOptions& options) {
  StrategyMetrics m;
  m.returns = ComputeReturnMetrics(session_returns, options);
  m.trades = ComputeTradeMetrics(round_trip_pnls);
  m.turnover = Turnover(exposures);
  m.exposure = Exposure(exposures);
  m.costs_paid = costs_paid;
  return m;
}

const std::vector<MetricInfo>& MetricTable() {
  using K = MetricKind;
  using S = const StrategyMetrics&;
  static const std::vector<MetricInfo> kTable = {
      {"sharpe_ratio", "Sharpe ratio", "annualised, sample std", K::kRatio, true,
       [](S m) { return m.returns.sharpe_ratio; }},
      {"sortino_ratio", "Sortino ratio", "annualised", K::kRatio, true,
       [](S m) { return m.returns.sortino_ratio; }},
      {"downside_risk", "Downside risk", "annualised", K::kPercent, true,
       [](S m) { return m.returns.downside_risk; }},
      {"annual_return", "Annual return (CAGR)", "CAGR", K::kPercent, true,
       [](S m) { return m.returns.annual_return; }},
      {"annual_volatility", "Annual volatility", "", K::kPercent, true,
       [](S m) { return m.returns.annual_volatility; }},
      {"max_drawdown", "Max drawdown", "of compounded wealth", K::kPercent, true,
       [](S m) { return m.returns.max_drawdown; }},
      {"max_drawdown_duration", "Max drawdown duration (periods)", "periods", K::kInteger, true,
       [](S m) { return static_cast<double>(m.returns.max_drawdown_duration); }},
      {"calmar_ratio", "Calmar ratio", "", K::kRatio, true,
       [](S m) { return m.returns.calmar_ratio; }},
      {"cum_returns_final", "Cumulative return", "", K::kPercent, true,
       [](S m) { return m.returns.cum_returns_final; }},
      {"win_rate", "Win rate (periods with return > 0)", "periods with return > 0", K::kPercent,
       true, [](S m) { return m.returns.win_rate; }},
      {"observations", "Observations (periods)", "non-missing periods", K::kInteger, true,
       [](S m) { return static_cast<double>(m.returns.observations); }},
      {"psr", "Probabilistic Sharpe (vs 0)", "P(true Sharpe > 0)", K::kRatio, true,
       [](S m) { return m.returns.psr; }},
      {"psr_observations", "PSR observations (periods)", "", K::kInteger, true,
       [](S m) { return static_cast<double>(m.returns.psr_observations); }},
      {"num_trades", "Round trips (flat to flat)", "closed round trips", K::kInteger, false,
       [](S m) { return static_cast<double>(m.trades.num_trades); }},
      {"average_trade_pnl", "Average round-trip PnL", "", K::kMoney, false,
       [](S m) { return m.trades.average_trade_pnl; }},
      {"profit_factor", "Profit factor", "gross profit / gross loss", K::kRatio, false,
       [](S m) { return m.trades.profit_factor; }},
      {"turnover", "Turnover (per bar)", "mean |position change| per bar", K::kRatio, false,
       [](S m) { return m.turnover; }},
      {"exposure", "Exposure (bars with a position)", "", K::kPercent, false,
       [](S m) { return m.exposure; }},
      {"costs_paid", "Costs paid", "", K::kMoney, false, [](S m) { return m.costs_paid; }},
  };
  return kTable;
}

}  // namespace rlt::eval
