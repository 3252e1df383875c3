"""Option pricing on NumPy arrays (broadcast like NumPy's arithmetic).

Conventions as ``rltrade price`` (README, "Option pricing"): rates and dividend yields
continuously compounded per year, volatility per sqrt(year), time in years; vega and rho
per 1.00 change, theta per year (``theta_per_day`` = theta / 365). ``option_type`` is
"call"/"put" (or +1/-1), scalar or array. Models: "bsm" (Black-Scholes-Merton, European),
"binomial" (Cox-Ross-Rubinstein tree, American, ``steps``), "baw" (Barone-Adesi-Whaley),
"bjerksund" (Bjerksund-Stensland 2002). Invalid inputs raise ValueError naming the element.
"""

from __future__ import annotations

from typing import Dict, Union

import numpy as np
from numpy.typing import ArrayLike

from . import _checks, _core

Values = Union[np.ndarray, float]  # an array, or a float for scalar inputs

_MODELS = {"bsm": "bsm", "binomial": "binomial", "baw": "baw", "bjerksund": "bjerksund"}


def _types(option_type):
    t = np.asarray(option_type)
    if t.dtype.kind in "US":
        lower = np.char.lower(t.astype(str))
        bad = ~np.isin(lower, ["call", "put", "c", "p"])
        if bad.any():
            raise ValueError(f"option_type {t[bad].flat[0]!r}: expected 'call' or 'put'")
        return np.where(np.isin(lower, ["call", "c"]), 1, -1).astype(np.int8)
    if t.dtype.kind not in "iuf":
        raise TypeError(f"option_type: expected 'call'/'put' or +1/-1, got dtype {t.dtype}")
    bad = (t != 1) & (t != -1)  # checked before the cast: int8(257) would be 1
    if np.any(bad):
        raise ValueError(f"option_type {t[bad].flat[0]!r}: expected 'call' or 'put' (or +1/-1)")
    return t.astype(np.int8)


def _steps(steps):
    return _checks.integer(steps, "steps", 1, _core.MAX_BINOMIAL_STEPS)


def _broadcast(option_type, *arrays):
    types = _types(option_type)
    values = [np.asarray(a, dtype=np.float64) for a in arrays]
    shape = np.broadcast_shapes(types.shape, *(v.shape for v in values))
    count = int(np.prod(shape, dtype=np.float64)) if shape else 1
    # The flattened inputs (8 bytes each, the type 1) and up to 9 output columns.
    _checks.fits_in_memory(count * (8 * len(values) + 1 + 9 * 8),
                           f"pricing {count} options (the broadcast shape {shape})")
    parts = np.broadcast_arrays(types, *values)
    flat = [np.ascontiguousarray(p).reshape(-1) for p in parts]
    return shape, flat


def _model(model):
    if model not in _MODELS:
        raise ValueError(f"model {model!r}: expected one of {sorted(_MODELS)}")
    return _MODELS[model]


def _shaped(values, shape):
    return values.reshape(shape) if shape else values[0]


def price(option_type: ArrayLike, spot: ArrayLike, strike: ArrayLike, rate: ArrayLike,
          dividend: ArrayLike, vol: ArrayLike, time: ArrayLike, *, model: str = "bsm",
          steps: int = 1000) -> Values:
    """Option prices (array, or a float for scalar inputs) by ``model``: "bsm", "binomial"
    (``steps`` tree steps), "baw" or "bjerksund"; the inputs broadcast together."""
    shape, (t, s, k, r, q, v, tt) = _broadcast(option_type, spot, strike, rate, dividend, vol,
                                               time)
    return _shaped(_core.price(_model(model), t, s, k, r, q, v, tt, _steps(steps)), shape)


def greeks(option_type: ArrayLike, spot: ArrayLike, strike: ArrayLike, rate: ArrayLike,
           dividend: ArrayLike, vol: ArrayLike, time: ArrayLike, *, model: str = "bsm",
           steps: int = 1000) -> Dict[str, Values]:
    """{"price", "delta", "gamma", "vega", "theta", "theta_per_day", "rho",
    "dividend_rho", "elasticity"} -> arrays (closed forms for bsm, finite differences of
    the price for the American models)."""
    shape, (t, s, k, r, q, v, tt) = _broadcast(option_type, spot, strike, rate, dividend, vol,
                                               time)
    out = _core.greeks(_model(model), t, s, k, r, q, v, tt, _steps(steps))
    return {name: _shaped(values, shape) for name, values in out.items()}


def implied_vol(option_price: ArrayLike, option_type: ArrayLike, spot: ArrayLike,
                strike: ArrayLike, rate: ArrayLike, dividend: ArrayLike, time: ArrayLike, *,
                model: str = "bsm", steps: int = 1000) -> Values:
    """The volatility at which ``model`` gives ``option_price`` (bracketed solver)."""
    shape, (t, p, s, k, r, q, tt) = _broadcast(option_type, option_price, spot, strike, rate,
                                               dividend, time)
    return _shaped(_core.implied_vol(_model(model), p, t, s, k, r, q, tt, _steps(steps)), shape)


def bsm_price(option_type: ArrayLike, spot: ArrayLike, strike: ArrayLike, rate: ArrayLike,
              dividend: ArrayLike, vol: ArrayLike, time: ArrayLike) -> Values:
    """Black-Scholes-Merton prices."""
    return price(option_type, spot, strike, rate, dividend, vol, time, model="bsm")


def bsm_greeks(option_type: ArrayLike, spot: ArrayLike, strike: ArrayLike, rate: ArrayLike,
               dividend: ArrayLike, vol: ArrayLike, time: ArrayLike) -> Dict[str, Values]:
    """Black-Scholes-Merton price and Greeks (closed forms)."""
    return greeks(option_type, spot, strike, rate, dividend, vol, time, model="bsm")


def binomial_price(option_type: ArrayLike, spot: ArrayLike, strike: ArrayLike, rate: ArrayLike,
                   dividend: ArrayLike, vol: ArrayLike, time: ArrayLike, *, steps: int = 1000) -> Values:
    """American prices on a Cox-Ross-Rubinstein tree of ``steps`` steps."""
    return price(option_type, spot, strike, rate, dividend, vol, time, model="binomial",
                 steps=steps)


def baw_price(option_type: ArrayLike, spot: ArrayLike, strike: ArrayLike, rate: ArrayLike,
              dividend: ArrayLike, vol: ArrayLike, time: ArrayLike) -> Values:
    """American prices by Barone-Adesi and Whaley's quadratic approximation (1987)."""
    return price(option_type, spot, strike, rate, dividend, vol, time, model="baw")
