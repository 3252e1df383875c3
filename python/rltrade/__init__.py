"""rltrade from Python: fast vector environments, runs and their results, option pricing,
indicators and metrics.

    import rltrade
    env = rltrade.make_vec("intraday", 256, seed=0)
    obs, infos = env.reset()
    obs, rewards, terminated, truncated, infos = env.step(actions)

    result = rltrade.evaluate("runs/my_run", range="test")  # summary.json as a dict ...
    result.daily_returns                                     # ... and its tables (pandas)

The compiled core (``rltrade._core``) needs no LibTorch (nor does the rest: LibTorch is
only the optional torch backend's plug-in). ``rltrade.train`` and ``rltrade.evaluate`` run
the command line's training and evaluation; ``rltrade.load_eval`` and
``rltrade.load_metrics`` read what they wrote. ``rltrade.paper.Session`` paper-trades a
run with your feed and your broker. ``rltrade.bench_env`` times environment steps through
Python (also ``python3 -m rltrade.bench``); ``rltrade.sb3.VecEnvAdapter`` adapts a vector
environment to Stable-Baselines3. When Gymnasium (>= 1.0) is installed, importing rltrade
registers the environments with it: ``gymnasium.make_vec("rltrade/Intraday-v0",
num_envs=256)``. ``rltrade.__version__`` is the project's version.
"""

import importlib.util as _importlib_util
import warnings as _warnings

from . import indicators, metrics, paper, pricing, spaces
from ._core import __version__
from .results import EvalResult, load_eval, load_metrics
from .runs import evaluate, train
from .vector import VectorEnv, env_ids, gymnasium_id, make_vec, register_gymnasium


def bench_env(env_id: str = "intraday", num_envs: int = 256, seconds: float = 5.0,
              num_threads: int = 0, seed: int = 0, **options) -> dict:
    """Environment steps per second through Python (see :mod:`rltrade.bench`).

    Steps ``make_vec(env_id, num_envs, seed=seed, num_threads=num_threads, **options)``
    with random actions drawn in advance for ``seconds`` after 100 warm-up steps. Returns
    {"env", "num_envs", "threads", "steps", "seconds", "steps_per_sec"}.
    """
    from .bench import bench_env as run  # noqa: PLC0415 (python3 -m rltrade.bench runs it too)

    return run(env_id, num_envs, seconds, num_threads, seed, **options)


def _register_with_gymnasium():
    # Only when Gymnasium is installed: rltrade neither needs it nor imports it otherwise.
    if _importlib_util.find_spec("gymnasium") is None:
        return
    try:
        register_gymnasium()
    except Exception as e:  # noqa: BLE001 (a broken Gymnasium must not break import rltrade)
        _warnings.warn(f"rltrade: could not register the environments with Gymnasium: {e}",
                       stacklevel=2)


_register_with_gymnasium()

__all__ = [
    "EvalResult",
    "__version__",
    "VectorEnv",
    "bench_env",
    "env_ids",
    "evaluate",
    "gymnasium_id",
    "indicators",
    "load_eval",
    "load_metrics",
    "make_vec",
    "metrics",
    "paper",
    "pricing",
    "register_gymnasium",
    "spaces",
    "train",
]
