"""Observation and action spaces.

When Gymnasium is importable, :func:`box` and :func:`discrete` return real
``gymnasium.spaces`` objects; otherwise these small classes, which carry the same
attributes (``shape``, ``dtype``, ``low``, ``high`` and ``n``), so rltrade does not
require Gymnasium.
"""

import numpy as np


class Box:
    """A box of float values: ``shape``, ``dtype``, ``low`` and ``high`` arrays."""

    def __init__(self, low, high, shape, dtype=np.float32):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(int(s) for s in shape)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape).copy()

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))

    def sample(self, rng=None):
        """A uniform sample (standard normal on unbounded sides)."""
        rng = rng if rng is not None else np.random.default_rng()
        low = np.where(np.isfinite(self.low), self.low, -1.0)
        high = np.where(np.isfinite(self.high), self.high, 1.0)
        return rng.uniform(low, high).astype(self.dtype)

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


class Discrete:
    """The actions 0 .. n-1: ``n``, ``shape`` () and ``dtype`` int64."""

    def __init__(self, n):
        self.n = int(n)
        self.shape = ()
        self.dtype = np.dtype(np.int64)
        self.low = np.int64(0)
        self.high = np.int64(self.n - 1)

    def contains(self, x):
        return 0 <= int(x) < self.n and float(x) == int(x)

    def sample(self, rng=None):
        rng = rng if rng is not None else np.random.default_rng()
        return np.int64(rng.integers(self.n))

    def __repr__(self):
        return f"Discrete({self.n})"


def _gymnasium_spaces():
    try:
        from gymnasium import spaces as gym_spaces  # noqa: PLC0415 (optional dependency)
    except ImportError:
        return None
    return gym_spaces


def box(low, high, shape: tuple, dtype=np.float32):
    """A Box space: Gymnasium's when importable, else :class:`Box`."""
    gym_spaces = _gymnasium_spaces()
    if gym_spaces is not None:
        lo = np.broadcast_to(np.asarray(low, dtype=dtype), shape).copy()
        hi = np.broadcast_to(np.asarray(high, dtype=dtype), shape).copy()
        return gym_spaces.Box(lo, hi, shape=tuple(shape), dtype=dtype)
    return Box(low, high, shape, dtype)


def discrete(n: int):
    """A Discrete space: Gymnasium's when importable, else :class:`Discrete`."""
    gym_spaces = _gymnasium_spaces()
    if gym_spaces is not None:
        return gym_spaces.Discrete(int(n))
    return Discrete(n)
