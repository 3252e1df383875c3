"""Stable-Baselines3 PPO on rltrade's intraday environment, through rltrade.sb3.VecEnvAdapter.

    PYTHONPATH=build/python:<site dir with stable_baselines3 and gymnasium> \\
        /usr/bin/python3 examples/sb3_ppo_intraday.py [--env intraday] [--num-envs 16] \\
        [--steps 100000] [--compare-cartpole]

Needs Stable-Baselines3 (2.x) and Gymnasium, which Debian does not package (README,
"Python": how to run it from source snapshots). Prints SB3's training speed (env steps/s
over the whole learn() call, rollouts and updates) through the adapter; with
--compare-cartpole also SB3 on Gymnasium's own CartPole-v1 (DummyVecEnv, same settings).
"""

import argparse
import time

import rltrade
from rltrade.sb3 import VecEnvAdapter


def train(venv, steps, seed):
    from stable_baselines3 import PPO  # noqa: PLC0415 (optional dependency)

    model = PPO("MlpPolicy", venv, seed=seed, verbose=0, device="cpu")
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    return steps / (time.perf_counter() - start), model


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="intraday")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare-cartpole", action="store_true")
    args = parser.parse_args()

    venv = VecEnvAdapter(rltrade.make_vec(args.env, args.num_envs, seed=args.seed))
    fps, _ = train(venv, args.steps, args.seed)
    print(f"SB3 PPO on rltrade {args.env} x{args.num_envs} via VecEnvAdapter: {fps:,.0f} "
          f"env steps/s")
    if args.compare_cartpole:
        from stable_baselines3.common.env_util import make_vec_env  # noqa: PLC0415

        ours = VecEnvAdapter(rltrade.make_vec("cartpole", args.num_envs, seed=args.seed))
        fps_ours, _ = train(ours, args.steps, args.seed)
        theirs = make_vec_env("CartPole-v1", n_envs=args.num_envs, seed=args.seed)
        fps_theirs, _ = train(theirs, args.steps, args.seed)
        print(f"SB3 PPO on rltrade cartpole x{args.num_envs} via VecEnvAdapter: "
              f"{fps_ours:,.0f} env steps/s")
        print(f"SB3 PPO on Gymnasium CartPole-v1 x{args.num_envs} (DummyVecEnv): "
              f"{fps_theirs:,.0f} env steps/s")


if __name__ == "__main__":
    main()
