"""Checks of the numbers a caller passes, before they reach the compiled core.

Every numeric argument is checked here or in the core: an integer argument must be an
integer (1.5 is not silently truncated to 1, True is not 1) within its range, a real one
finite and within its range, and the error is a ValueError or TypeError that names the
argument, says what was expected and what came.
"""

import math
import numbers

import numpy as np


def integer(value, name, low=None, high=None):
    """``value`` as an int in [low, high]: an int, a NumPy integer or an integral float."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got the bool {value!r}")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real):
        v = float(value)
        if not math.isfinite(v) or v != math.floor(v):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        out = int(v)
    else:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    if (low is not None and out < low) or (high is not None and out > high):
        raise ValueError(f"{name} = {out} is outside [{_bound(low)}, {_bound(high)}]")
    return out


def real(value, name, low=None, high=None):
    """``value`` as a finite float in [low, high]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v!r}")
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValueError(f"{name} = {v!r} is outside [{_bound(low)}, {_bound(high)}]")
    return v


def _bound(b):
    return "unbounded" if b is None else f"{b:g}" if isinstance(b, float) else str(b)


def _available_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def fits_in_memory(nbytes, what):
    """Refuses a computation whose arrays would need more than 80% of the available memory
    (an allocation the kernel would grant and later kill the interpreter for)."""
    available = _available_bytes()
    if available is not None and nbytes > 0.8 * available:
        raise MemoryError(f"{what} would need about {nbytes / 1e9:.2f} GB but only "
                          f"{available / 1e9:.2f} GB is available (MemAvailable); pass smaller "
                          f"arrays or work in parts")
