"""Technical indicators on NumPy arrays, with TA-Lib's names, parameters and conventions.

One function per indicator, e.g. ``sma(close, period=30)``, ``macd(close, fast=12,
slow=26, signal=9) -> (macd, macdsignal, macdhist)``, ``atr(high, low, close,
period=14)``: inputs oldest first, outputs of the same length with NaN over the warm-up
(TA-Lib's lookback). ``compute(name, ...)`` returns a dict of the named outputs.
``specs()`` lists every indicator with its parameters (name, default, min, max).
"""

from __future__ import annotations

from typing import Dict

import numpy as np
from numpy.typing import ArrayLike

from . import _core

_SPECS = {s["name"]: s for s in _core.indicator_specs()}


def specs() -> Dict[str, dict]:
    """Every indicator: {name: {"description", "inputs", "params", "outputs"}}."""
    return dict(_SPECS)


def _array(x, name):
    a = np.ascontiguousarray(x, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    return a


def _params(name, params):
    spec = _SPECS[name]
    known = {p[0] for p in spec["params"]}
    out = {}
    for key, value in params.items():
        if key not in known:
            choices = ", ".join(sorted(known))
            raise ValueError(f"{name}: unknown parameter '{key}' (parameters: {choices})")
        out[key] = repr(value) if isinstance(value, float) else str(value)
    return out


def compute(name: str, *inputs: ArrayLike, **params: float) -> Dict[str, np.ndarray]:
    """Indicator ``name`` over ``close`` or ``high, low, close``: {output name: array}.

    ``params`` are its parameters by name (``specs()[name]["params"]``, TA-Lib's).
    """
    if name not in _SPECS:
        _core.indicator(name, np.empty(0), np.empty(0), np.empty(0), {})  # raises, naming it
    spec = _SPECS[name]
    if spec["inputs"] == "close":
        if len(inputs) != 1:
            raise TypeError(f"{name}(close, ...) takes 1 input array, got {len(inputs)}")
        empty = np.empty(0)
        high, low, close = empty, empty, _array(inputs[0], "close")
    else:
        if len(inputs) != 3:
            raise TypeError(f"{name}(high, low, close, ...) takes 3 input arrays, got "
                            f"{len(inputs)}")
        high, low, close = (_array(a, n) for a, n in zip(inputs, ("high", "low", "close")))
    names, outputs = _core.indicator(name, high, low, close, _params(name, params))
    return dict(zip(names, outputs))


def _make(name):
    spec = _SPECS[name]
    args = "close" if spec["inputs"] == "close" else "high, low, close"
    params = ", ".join(f"{p[0]}={p[1]:g}" for p in spec["params"])

    def indicator(*inputs, **params_given):
        out = compute(name, *inputs, **params_given)
        values = [out[o] for o in spec["outputs"]]
        return values[0] if len(values) == 1 else tuple(values)

    indicator.__name__ = name
    indicator.__qualname__ = name
    outputs = ", ".join(spec["outputs"])
    indicator.__doc__ = f"{name}({args}, {params}) -> {outputs}: {spec['description']}"
    return indicator


for _name in _SPECS:
    globals()[_name] = _make(_name)

__all__ = ["compute", "specs", *sorted(_SPECS)]
