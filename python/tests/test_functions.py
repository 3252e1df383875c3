"""rltrade.pricing, rltrade.indicators and rltrade.metrics against published values
(tests/fixtures: QuantLib/Haug option values, TA-Lib's regression outputs, empyrical's
metrics) and analytic identities."""

import csv
import math

import numpy as np
import pytest

import rltrade
from rltrade import indicators, metrics, pricing


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def option_args(row):
    return (row["type"], float(row["spot"]), float(row["strike"]), float(row["r"]),
            float(row["q"]), float(row["vol"]), float(row["t"]))


def test_bsm_prices_match_haug_vectorised_and_one_by_one(fixtures_dir):
    table = rows(fixtures_dir / "bsm_european.csv")
    for row in table:
        assert pricing.bsm_price(*option_args(row)) == pytest.approx(float(row["value"]), abs=1e-4)
    # The same rows as one vectorised call (arrays of every input, types as strings).
    cols = list(zip(*[option_args(r) for r in table]))
    prices = pricing.price(np.array(cols[0]), *[np.array(c) for c in cols[1:]])
    assert prices.shape == (len(table),)
    assert np.allclose(prices, [float(r["value"]) for r in table], atol=1e-4)


def test_bsm_greeks_match_haug(fixtures_dir):
    for row in rows(fixtures_dir / "bsm_greeks.csv"):
        args = (row["type"], float(row["spot"]), float(row["strike"]), float(row["r"]),
                float(row["q"]), float(row["vol"]), float(row["t"]))
        g = pricing.bsm_greeks(*args)
        assert g[row["greek"]] == pytest.approx(float(row["value"]), abs=1e-4), row


def test_american_models_match_their_published_values(fixtures_dir):
    for row in rows(fixtures_dir / "american.csv"):
        if row["method"] != "bjerksund_stensland":
            continue
        args = option_args(row)
        assert pricing.price(*args, model="bjerksund") == pytest.approx(
            float(row["value"]), abs=float(row["tolerance"]))
        for model in ("binomial", "baw"):
            value = pricing.price(*args, model=model, steps=2000)
            assert abs(value - float(row["value"])) < 0.05, model


def test_put_call_parity_broadcasting_and_implied_vol_round_trip():
    spot = np.linspace(80, 120, 9)[:, None]
    strike = np.array([90.0, 100.0, 110.0])[None, :]
    call = pricing.bsm_price("call", spot, strike, 0.03, 0.01, 0.25, 0.5)
    put = pricing.bsm_price("put", spot, strike, 0.03, 0.01, 0.25, 0.5)
    assert call.shape == (9, 3)
    parity = spot * math.exp(-0.01 * 0.5) - strike * math.exp(-0.03 * 0.5)
    assert np.allclose(call - put, parity, atol=1e-10)
    vol = pricing.implied_vol(call, "call", spot, strike, 0.03, 0.01, 0.5)
    assert np.allclose(vol, 0.25, atol=1e-8)


def test_bad_pricing_input_names_the_element():
    with pytest.raises(ValueError, match="vol"):
        pricing.bsm_price("call", [100, 100], 100, 0.0, 0.0, [0.2, -0.2], 1.0)
    with pytest.raises(ValueError, match="'straddle'"):
        pricing.bsm_price("straddle", 100, 100, 0.0, 0.0, 0.2, 1.0)
    with pytest.raises(ValueError, match="model"):
        pricing.price("call", 100, 100, 0.0, 0.0, 0.2, 1.0, model="heston")


def talib_cases(fixtures_dir):
    bars = rows(fixtures_dir / "talib_daily_252.csv")
    ohlc = {k: np.array([float(b[k]) for b in bars]) for k in ("high", "low", "close")}
    expected = rows(fixtures_dir / "talib_expected.csv")
    expected += rows(fixtures_dir / "talib_expected_stoch_stddev.csv")
    return ohlc, expected


# TA-Lib's parameter encodings in the expectation files -> our parameter names.
PARAMS = {
    "MACD": ("fast", "slow", "signal"),
    "BBANDS": ("period", "nbdevup", "nbdevdn"),
    "STOCH": ("fastk", "slowk", "slowd"),
    "STDDEV": ("period", "nbdev"),
}
OUTPUTS = {("MACD", "signal"): "macdsignal", ("MACD", "hist"): "macdhist",
           ("BBANDS", "upper"): "upperband", ("BBANDS", "middle"): "middleband",
           ("BBANDS", "lower"): "lowerband"}


def test_every_talib_expectation_is_reproduced(fixtures_dir):
    ohlc, expected = talib_cases(fixtures_dir)
    checked = 0
    for row in expected:
        name = row["indicator"].lower()
        keys = PARAMS.get(row["indicator"], ("period",))
        params = {k: float(v) if "." in v else int(v)
                  for k, v in zip(keys, row["params"].split("-"))}
        spec = indicators.specs()[name]
        inputs = ((ohlc["close"],) if spec["inputs"] == "close"
                  else (ohlc["high"], ohlc["low"], ohlc["close"]))
        out = indicators.compute(name, *inputs, **params)
        output = OUTPUTS.get((row["indicator"], row["output"]), row["output"])
        if output not in out:
            output = "value" if "value" in out else output
        value = out[output][int(row["bar"])]
        assert value == pytest.approx(float(row["value"]), abs=0.01), row
        checked += 1
    assert checked >= 40
    # The named functions give the same arrays, with TA-Lib's defaults.
    macd, signal, hist = indicators.macd(ohlc["close"])
    assert np.array_equal(macd, indicators.compute("macd", ohlc["close"])["macd"], equal_nan=True)
    assert np.isnan(macd[:33]).all() and np.isfinite(macd[33:]).all()
    assert indicators.sma.__doc__.startswith("sma(close, period=30)")


def test_bad_indicator_input_is_a_clear_error():
    with pytest.raises(ValueError, match="did you mean 'rsi'"):
        indicators.compute("rsj", np.ones(10))
    with pytest.raises(ValueError, match="unknown parameter 'periods'"):
        indicators.rsi(np.ones(50), periods=3)
    with pytest.raises(ValueError, match="period"):
        indicators.rsi(np.ones(50), period=0)
    with pytest.raises(ValueError, match="same length"):
        indicators.atr(np.ones(5), np.ones(4), np.ones(5))
    with pytest.raises(TypeError, match="takes 3 input arrays"):
        indicators.atr(np.ones(5))


def test_metrics_match_empyrical(fixtures_dir):
    path = fixtures_dir / "empyrical_mixed.csv"
    with open(path) as f:
        line = next(l for l in f if l.startswith("# returns:"))
    returns = np.array([float(x) for x in line.split(":", 1)[1].split(",")])
    table = {r["metric"]: float(r["value"]) for r in rows(path)}
    tolerance = {"cum_returns_final": 5e-6}
    for name, value in table.items():
        got = getattr(metrics, name)(returns)
        assert got == pytest.approx(value, abs=tolerance.get(name, 1e-8)), name
    everything = metrics.return_metrics(returns)
    for name, value in table.items():
        assert everything[name] == pytest.approx(value, abs=tolerance.get(name, 1e-8)), name


def test_deflated_sharpe_reproduces_the_papers_worked_example():
    # Bailey & Lopez de Prado (2014): SR 2.5 annual over 1250 days, 100 trials, the
    # variance of the annualised trials' SR 0.5, skewness -3, kurtosis 10 -> DSR 0.9004.
    sr = 2.5 / math.sqrt(250)
    result = metrics.deflated_sharpe_from_moments(sr, 1250, -3.0, 10.0, 100, 0.5 / 250)
    assert result["dsr"] == pytest.approx(0.9004, abs=1e-4)


def test_trade_and_position_metrics():
    t = metrics.trade_metrics(np.array([10.0, -5.0, 20.0, np.nan]))
    assert t["num_trades"] == 3 and t["profit_factor"] == pytest.approx(6.0)
    assert metrics.exposure(np.array([0.0, 1.0, 1.0, 0.0])) == pytest.approx(0.5)
    assert metrics.turnover(np.array([0.0, 1.0, 1.0, 0.0])) == pytest.approx(0.5)


def test_the_package_maps_no_libtorch():
    rltrade.make_vec("cartpole", 1).reset()
    with open("/proc/self/maps") as f:
        maps = f.read()
    assert "_core" in maps
    assert "libtorch" not in maps and "libc10" not in maps
