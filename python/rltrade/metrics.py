"""Performance metrics on NumPy arrays of per-period returns (as ``rltrade eval``).

Definitions follow empyrical (README, "Metrics"): ``sharpe_ratio``, ``sortino_ratio``,
``downside_risk``, ``annual_return`` (CAGR), ``annual_volatility``, ``calmar_ratio`` take
``periods_per_year`` (252) and ``risk_free`` (per period); ``max_drawdown``,
``max_drawdown_duration``, ``cum_returns_final``, ``win_rate``; ``exposure`` and
``turnover`` of a position series; ``trade_metrics`` of closed trades' PnL;
``probabilistic_sharpe_ratio`` and ``deflated_sharpe_ratio`` (Bailey & Lopez de Prado);
``return_metrics`` computes them all at once. NaN rows are skipped where empyrical skips them.
"""

from ._core import (  # noqa: F401  (re-exported)
    annual_return,
    annual_volatility,
    calmar_ratio,
    cum_returns_final,
    deflated_sharpe_from_moments,
    deflated_sharpe_ratio,
    downside_risk,
    exposure,
    max_drawdown,
    max_drawdown_duration,
    observations,
    probabilistic_sharpe_ratio,
    return_metrics,
    sharpe_ratio,
    sortino_ratio,
    trade_metrics,
    turnover,
    win_rate,
)

__all__ = [
    "annual_return", "annual_volatility", "calmar_ratio", "cum_returns_final",
    "deflated_sharpe_from_moments", "deflated_sharpe_ratio", "downside_risk", "exposure",
    "max_drawdown", "max_drawdown_duration", "observations", "probabilistic_sharpe_ratio",
    "return_metrics", "sharpe_ratio", "sortino_ratio", "trade_metrics", "turnover", "win_rate",
]
