"""Parity: trajectories stepped from Python equal the same trajectories stepped by the C++
harness (src/python/parity_harness.cc), bit for bit: observations, rewards, flags and
terminal observations, across auto-resets."""

import os
import subprocess

import numpy as np
import pytest

import rltrade

HARNESS = os.environ.get("RLT_PARITY_HARNESS")


@pytest.mark.skipif(not HARNESS, reason="RLT_PARITY_HARNESS is set by CTest")
@pytest.mark.parametrize("env_id,options", [
    ("intraday", {}),
    ("intraday", {"lot_size": 5, "initial_capital": 20000.0}),
    ("cartpole", {}),
    ("pendulum", {}),
    ("options", {}),
])
def test_python_steps_equal_the_cpp_harness_bit_for_bit(tmp_path, env_id, options):
    n, steps, seed = 5, 240, 11
    env = rltrade.make_vec(env_id, n, seed=0, **options)
    space = env.single_action_space
    rng = np.random.default_rng(3)
    if hasattr(space, "n"):
        actions = rng.integers(space.n, size=(steps, n)).astype(np.float32)[..., None]
    else:
        actions = rng.uniform(space.low, space.high, size=(steps, n) + space.shape)
        actions = actions.astype(np.float32)
    actions_file = tmp_path / "actions.bin"
    actions.tofile(actions_file)
    out_file = tmp_path / "cpp.bin"
    settings = [f"env.{k}={v}" for k, v in options.items()]
    subprocess.run([HARNESS, env_id, str(n), str(seed), str(steps), str(actions_file),
                    str(out_file), *settings], check=True)
    cpp = np.fromfile(out_file, dtype=np.uint8)
    obs_dim = env.single_observation_space.shape[0]
    at = 0

    def take(dtype, count):
        nonlocal at
        size = np.dtype(dtype).itemsize * count
        chunk = cpp[at:at + size].view(dtype)
        at += size
        return chunk

    obs, _ = env.reset(seed=seed)
    assert np.array_equal(take(np.float32, n * obs_dim).reshape(n, obs_dim), obs)
    finals = 0
    for t in range(steps):
        step_actions = actions[t] if not hasattr(space, "n") else actions[t, :, 0].astype(int)
        obs, rewards, terminated, truncated, infos = env.step(step_actions)
        assert np.array_equal(take(np.float32, n * obs_dim).reshape(n, obs_dim), obs), t
        assert np.array_equal(take(np.float32, n), rewards), t
        assert np.array_equal(take(np.uint8, n).astype(bool), terminated), t
        assert np.array_equal(take(np.uint8, n).astype(bool), truncated), t
        terminal = take(np.float32, n * obs_dim).reshape(n, obs_dim)
        for i in np.flatnonzero(terminated | truncated):
            assert np.array_equal(infos["final_observation"][i], terminal[i]), (t, i)
            finals += 1
    assert at == cpp.size
    if env_id in ("cartpole", "pendulum"):
        assert finals > 0  # the comparison crossed auto-resets
