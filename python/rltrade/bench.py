"""Environment steps per second through Python.

    python3 -m rltrade.bench --env intraday --num-envs 256 [--seconds 5] [--threads 0] [--json]

Times ``env.step(actions)`` from a Python loop, with actions drawn in advance (a pool of
64 random batches, so drawing them is not timed), after 100 warm-up steps. One env step
= one environment advanced once: a call steps ``--num-envs`` of them.
"""

import argparse
import json
import sys
import time

import numpy as np

from . import _checks
from .vector import make_vec


def bench_env(env_id: str = "intraday", num_envs: int = 256, seconds: float = 5.0,
              num_threads: int = 0, seed: int = 0, **options) -> dict:
    """Times ``make_vec(env_id, num_envs, ...)`` stepped from Python for ``seconds``.

    Returns {"env", "num_envs", "threads", "steps", "seconds", "steps_per_sec"}.
    """
    seconds = _checks.real(seconds, "bench_env: seconds", 0.01, 86400.0)
    env = make_vec(env_id, num_envs, seed=seed, num_threads=num_threads, **options)
    rng = np.random.default_rng(seed)
    space = env.single_action_space
    if hasattr(space, "n"):
        pool = [rng.integers(space.n, size=num_envs) for _ in range(64)]
    else:
        pool = [rng.uniform(space.low, space.high, size=(num_envs,) + space.shape)
                .astype(np.float32) for _ in range(64)]
    env.reset()
    for i in range(100):
        env.step(pool[i % 64])
    calls = 0
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds:
        for i in range(256):
            env.step(pool[i % 64])
        calls += 256
        elapsed = time.perf_counter() - start
    env.close()
    steps = calls * num_envs
    return {"env": env_id, "num_envs": num_envs, "threads": env.num_threads, "steps": steps,
            "seconds": elapsed, "steps_per_sec": steps / elapsed}


def main(argv: "list[str] | None" = None) -> int:
    """``python3 -m rltrade.bench``: the exit status."""
    parser = argparse.ArgumentParser(prog="python3 -m rltrade.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="intraday")
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--threads", type=int, default=0, help="0 = the cores available")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        r = bench_env(args.env, args.num_envs, args.seconds, args.threads, args.seed)
    except (ValueError, TypeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        print(f"env {r['env']}  envs {r['num_envs']}  threads {r['threads']}")
        print(f"{r['steps']} env steps in {r['seconds']:.2f} s = "
              f"{r['steps_per_sec'] / 1e6:.2f} million env steps/s through Python")
    return 0


if __name__ == "__main__":
    sys.exit(main())
