"""Hostile input from Python: every bad argument is a Python exception that names it.

Each case calls one entry point with one bad argument and expects the exception type and
a fragment of its message (the argument's name, what was expected). None may crash the
interpreter, hang, or allocate before it has checked the size. Cases of the compiled
core's own checks (the pricing inputs per element, the config keys behind make_vec) sit
beside the package's checks of its arguments.
"""

import math

import numpy as np
import pytest

import rltrade
from rltrade import indicators, metrics, pricing

R = np.array([0.01, -0.02, 0.015, 0.0, 0.005, -0.01, 0.02, 0.003])


def price(**kw):
    args = dict(option_type="call", spot=100.0, strike=100.0, rate=0.01, dividend=0.0, vol=0.2,
                time=1.0)
    args.update(kw)
    return pricing.price(**args)


PRICING = [
    # option_type: a wrapped int8 (257 -> 1) would price a call silently.
    (lambda: price(option_type=257), ValueError, "option_type 257"),
    (lambda: price(option_type=[1, 0]), ValueError, "option_type 0"),
    (lambda: price(option_type=np.nan), ValueError, "option_type nan"),
    (lambda: price(option_type=None), TypeError, "option_type"),
    (lambda: price(model="binomial", steps=1.5), ValueError, "steps must be an integer"),
    (lambda: price(model="binomial", steps=0), ValueError, "steps = 0 is outside [1, 100000]"),
    (lambda: price(model="binomial", steps=10**9), ValueError, "steps = 1000000000 is outside"),
    (lambda: price(model="binomial", steps=True), TypeError, "steps must be an integer"),
    (lambda: price(model="binomial", steps=math.inf), ValueError, "steps must be an integer"),
    (lambda: price(model=7), ValueError, "model 7"),
    (lambda: price(spot=[100.0, math.nan]), ValueError, "option 1 of 2: spot = nan"),
    (lambda: price(vol=math.inf), ValueError, "option 0 of 1: vol = inf"),
    (lambda: price(time="soon"), ValueError, "could not convert"),
    (lambda: price(spot=np.ones(3), strike=np.ones(4)), ValueError, "broadcast"),
    # 10^6 x 10^6 options would need ~90 TB: refused before NumPy materialises them.
    (lambda: price(spot=np.ones((10**6, 1)), strike=np.ones((1, 10**6))), MemoryError,
     "pricing 1000000000000 options"),
    (lambda: pricing.implied_vol(-1.0, "call", 100, 100, 0.0, 0.0, 1.0), ValueError,
     "element 0"),
    (lambda: pricing.greeks("put", 100, 100, 0.0, 0.0, 0.2, 1.0, model="baw", steps=-5),
     ValueError, "steps = -5"),
]

METRICS = [
    (lambda: metrics.sharpe_ratio(R, periods_per_year=0), ValueError,
     "periods_per_year = 0: expected an integer in [1, 31622400]"),
    (lambda: metrics.sharpe_ratio(R, periods_per_year=10**12), TypeError, "periods_per_year"),
    (lambda: metrics.sharpe_ratio(R, risk_free=math.nan), ValueError,
     "risk_free = nan: expected a finite number"),
    (lambda: metrics.sortino_ratio(R, risk_free=-1.0), ValueError, "risk_free = -1.0"),
    (lambda: metrics.annual_return(np.append(R, math.inf)), ValueError,
     "returns[8] is inf: expected a finite number (or NaN for a missing row)"),
    (lambda: metrics.max_drawdown(np.array([0.1, -math.inf])), ValueError, "values[1] is -inf"),
    (lambda: metrics.trade_metrics(np.array([1.0, math.inf])), ValueError, "trade_pnls[1] is inf"),
    (lambda: metrics.return_metrics(R, periods_per_year=-3), ValueError, "periods_per_year = -3"),
    (lambda: metrics.probabilistic_sharpe_ratio(R, math.inf), ValueError,
     "benchmark_sharpe_per_period = inf"),
    (lambda: metrics.deflated_sharpe_ratio(R, math.nan, 0.1), ValueError, "trials = nan"),
    (lambda: metrics.deflated_sharpe_ratio(R, math.inf, 0.1), ValueError, "trials = inf"),
    (lambda: metrics.deflated_sharpe_ratio(R, 0.5, 0.1), ValueError, "trials = 0.5"),
    (lambda: metrics.deflated_sharpe_ratio(R, 10, -0.1), ValueError, "sharpe_variance = -0.1"),
    (lambda: metrics.deflated_sharpe_from_moments(0.1, 1, 0.0, 3.0, 10, 0.1), ValueError,
     "observations = 1: expected at least 2"),
    (lambda: metrics.deflated_sharpe_from_moments(math.nan, 100, 0.0, 3.0, 10, 0.1), ValueError,
     "sharpe_per_period = nan"),
    (lambda: metrics.deflated_sharpe_from_moments(0.1, 100, math.inf, 3.0, 10, 0.1), ValueError,
     "skewness = inf"),
    (lambda: metrics.deflated_sharpe_from_moments(0.1, 100, 0.0, -3.0, 10, 0.1), ValueError,
     "kurtosis = -3.0"),
]

INDICATORS = [
    (lambda: indicators.sma(np.ones(50), period=math.nan), ValueError, "period"),
    (lambda: indicators.sma(np.ones(50), period=1e12), ValueError, "period"),
    (lambda: indicators.sma(np.ones(50), period=2.5), ValueError, "must be an integer"),
    (lambda: indicators.sma(np.ones(50), period="ten"), ValueError, "period"),
    (lambda: indicators.sma(np.ones((5, 5))), ValueError, "one-dimensional"),
    (lambda: indicators.bbands(np.ones(50), nbdevup=math.inf), ValueError, "nbdevup"),
]

VECTOR = [
    (lambda: rltrade.make_vec("cartpole", 1.5), ValueError, "num_envs must be an integer, got 1.5"),
    (lambda: rltrade.make_vec("cartpole", math.nan), ValueError, "num_envs must be an integer"),
    (lambda: rltrade.make_vec("cartpole", -4), ValueError, "num_envs = -4 is outside"),
    (lambda: rltrade.make_vec("cartpole", 2**40), ValueError, "num_envs = 1099511627776"),
    (lambda: rltrade.make_vec("cartpole", True), TypeError, "num_envs must be an integer"),
    (lambda: rltrade.make_vec("cartpole", "4"), TypeError, "num_envs must be an integer"),
    (lambda: rltrade.make_vec("cartpole", 2, seed=-1), ValueError, "seed = -1 is outside"),
    (lambda: rltrade.make_vec("cartpole", 2, seed=2**64), ValueError, "seed = 18446744073709551616"),
    (lambda: rltrade.make_vec("cartpole", 2, seed=0.5), ValueError, "seed must be an integer"),
    (lambda: rltrade.make_vec("cartpole", 2, num_threads=-1), ValueError, "num_threads = -1"),
    (lambda: rltrade.make_vec("intraday", 2, initial_capital=math.nan), ValueError,
     "initial_capital"),
    (lambda: rltrade.make_vec("intraday", 2, initial_capital=math.inf), ValueError,
     "initial_capital"),
    (lambda: rltrade.make_vec("intraday", 2, lot_size=1e300), ValueError, "lot_size"),
    (lambda: rltrade.make_vec("intraday", 2, initial_capital=object()), TypeError,
     "initial_capital"),
    (lambda: rltrade.bench_env("cartpole", 2, seconds=math.nan), ValueError,
     "seconds must be finite"),
]


def _cases():
    for group, cases in (("pricing", PRICING), ("metrics", METRICS),
                         ("indicators", INDICATORS), ("vector", VECTOR)):
        for k, case in enumerate(cases):
            yield pytest.param(*case, id=f"{group}-{k}")


@pytest.mark.parametrize("call, error, fragment", list(_cases()))
def test_bad_input_is_an_exception_naming_it(call, error, fragment):
    with pytest.raises(error) as e:
        call()
    assert fragment in str(e.value), str(e.value)


def test_a_stepped_environment_refuses_bad_calls_and_goes_on():
    env = rltrade.make_vec("cartpole", 2, seed=0)
    env.reset()
    bad = [
        (lambda: env.reset(seed=2**70), ValueError, "reset(seed) = 1180591620717411303424"),
        (lambda: env.reset(seed=1.5), ValueError, "reset(seed) must be an integer"),
        (lambda: env.step(np.array([0, np.inf])), ValueError, "env 1 has an infinite action"),
        (lambda: env.step(np.array([object(), 1])), TypeError, "numeric"),
        (lambda: env.step(np.array([0, 1, 0])), ValueError, "expected shape"),
        (lambda: env.load_state(b"not a state"), ValueError, "load_state(state)"),
        (lambda: env.load_state(b""), ValueError, "load_state(state)"),
    ]
    for call, error, fragment in bad:
        with pytest.raises(error) as e:
            call()
        assert fragment in str(e.value), str(e.value)
    # Nothing was changed by the refused calls: the env still steps.
    obs, rewards, terminated, truncated, infos = env.step(np.array([0, 1]))
    assert obs.shape == (2, 4) and np.isfinite(obs).all()
    env.close()


def test_evaluate_checks_episodes_before_loading_anything(tmp_path):
    for episodes, error, fragment in ((0, ValueError, "episodes = 0 is outside"),
                                      (2.5, ValueError, "episodes must be an integer"),
                                      ("10", TypeError, "episodes must be an integer")):
        with pytest.raises(error) as e:
            rltrade.evaluate(tmp_path / "no_run", episodes=episodes)
        assert fragment in str(e.value), str(e.value)
