"""rltrade from Python: fast vector environments, option pricing, indicators and metrics.

    import rltrade
    env = rltrade.make_vec("intraday", 256, seed=0)
    obs, infos = env.reset()
    obs, rewards, terminated, truncated, infos = env.step(actions)

The compiled core (``rltrade._core``) needs no LibTorch. ``rltrade.bench_env`` times
environment steps through Python (also ``python3 -m rltrade.bench``);
``rltrade.sb3.VecEnvAdapter`` adapts a vector environment to Stable-Baselines3.
``rltrade.train`` and ``rltrade.evaluate`` run the command line's training and evaluation;
``rltrade.paper.Session`` paper-trades a run with your feed and your broker.
"""

from . import indicators, metrics, paper, pricing, spaces
from ._core import __version__
from .runs import evaluate, train
from .vector import VectorEnv, env_ids, make_vec


def bench_env(env_id="intraday", num_envs=256, seconds=5.0, num_threads=0, seed=0, **options):
    """Environment steps per second through Python (see rltrade.bench)."""
    from .bench import bench_env as run  # noqa: PLC0415 (python3 -m rltrade.bench runs it too)

    return run(env_id, num_envs, seconds, num_threads, seed, **options)

__all__ = [
    "__version__",
    "VectorEnv",
    "bench_env",
    "env_ids",
    "evaluate",
    "indicators",
    "make_vec",
    "metrics",
    "paper",
    "pricing",
    "spaces",
    "train",
]
