"""The vector environments' API: shapes, dtypes, bounds, seeding, auto-reset, terminal
observations, truncation vs termination, views and copies, and bad input."""

import numpy as np
import pytest

import rltrade


def random_actions(env, rng):
    space = env.single_action_space
    if hasattr(space, "n"):
        return rng.integers(space.n, size=env.num_envs)
    return rng.uniform(space.low, space.high, size=(env.num_envs,) + space.shape).astype(
        np.float32)


@pytest.mark.parametrize("env_id", ["intraday", "options", "hedging", "cartpole", "pendulum"])
def test_every_registered_env_steps_with_the_documented_shapes(env_id):
    env = rltrade.make_vec(env_id, 3, seed=4)
    assert env_id in rltrade.env_ids()
    obs, infos = env.reset()
    obs_dim = env.single_observation_space.shape[0]
    assert obs.shape == (3, obs_dim) and obs.dtype == np.float32
    assert np.isfinite(obs).all()
    for name in env.info_names:
        assert infos[name].shape == (3,) and infos["_" + name].all()
    rng = np.random.default_rng(0)
    for _ in range(20):
        obs, rewards, terminated, truncated, infos = env.step(random_actions(env, rng))
        assert obs.shape == (3, obs_dim) and obs.dtype == np.float32
        assert rewards.shape == (3,) and rewards.dtype == np.float32
        assert terminated.dtype == np.bool_ and truncated.dtype == np.bool_
        assert np.isfinite(obs).all() and np.isfinite(rewards).all()
    space = env.single_action_space
    if not hasattr(space, "n"):
        assert space.dtype == np.float32 and (space.low <= space.high).all()
    env.close()


def trajectory(env_id, seed, steps=60, **options):
    env = rltrade.make_vec(env_id, 4, seed=seed, **options)
    rng = np.random.default_rng(7)
    out = [env.reset()[0].copy()]
    for _ in range(steps):
        obs, rewards, *_ = env.step(random_actions(env, rng))
        out += [obs.copy(), rewards.copy()]
    return out


def test_the_same_seed_gives_the_same_trajectory_and_another_seed_differs():
    for env_id in ("intraday", "cartpole"):
        a, b, c = trajectory(env_id, 3), trajectory(env_id, 3), trajectory(env_id, 4)
        assert all(np.array_equal(x, y) for x, y in zip(a, b))
        assert not all(np.array_equal(x, y) for x, y in zip(a, c))
    # Thread count does not change results.
    single = trajectory("intraday", 3, steps=30)
    env = rltrade.make_vec("intraday", 4, seed=3, num_threads=2)
    assert env.num_threads == 2
    rng = np.random.default_rng(7)
    out = [env.reset()[0].copy()]
    for _ in range(30):
        obs, rewards, *_ = env.step(random_actions(env, rng))
        out += [obs.copy(), rewards.copy()]
    assert all(np.array_equal(x, y) for x, y in zip(single, out))


def test_reset_seed_seeds_env_i_with_seed_plus_i():
    env = rltrade.make_vec("cartpole", 3, seed=0)
    obs3, _ = env.reset(seed=10)
    obs3 = obs3.copy()
    other = rltrade.make_vec("cartpole", 1, seed=0)
    for i in range(3):
        single, _ = other.reset(seed=10 + i)
        assert np.array_equal(single[0], obs3[i])


def test_same_step_auto_reset_reports_the_finished_episode():
    env = rltrade.make_vec("cartpole", 2, seed=1)
    obs, _ = env.reset()
    last = obs.copy()
    length = np.zeros(2, dtype=int)
    seen = 0
    for _ in range(200):
        obs, rewards, terminated, truncated, infos = env.step(np.array([1, 1]))
        length += 1
        done = terminated | truncated
        if done.any():
            assert infos["_final_observation"].tolist() == done.tolist()
            for i in np.flatnonzero(done):
                final = infos["final_observation"][i]
                # CartPole ends when the pole falls: |theta| > 12 degrees or |x| > 2.4.
                assert abs(final[2]) > 0.2094 or abs(final[0]) > 2.4
                assert terminated[i] and not truncated[i]
                info = infos["final_info"][i]
                assert info["episode_length"] == length[i]
                assert info["episode_return"] == pytest.approx(float(length[i]))
                # The new episode starts near the upright state.
                assert np.abs(obs[i]).max() <= 0.05
                length[i] = 0
                seen += 1
            for i in np.flatnonzero(~done):
                assert infos["final_observation"][i] is None
        last = obs.copy()
    assert seen >= 4 and last.shape == (2, 4)


def test_pendulum_is_truncated_at_its_time_limit_not_terminated():
    env = rltrade.make_vec("pendulum", 2, seed=0)
    env.reset()
    for t in range(1, 201):
        _, _, terminated, truncated, infos = env.step(np.zeros((2, 1), dtype=np.float32))
        assert not terminated.any()
        assert truncated.all() == (t == 200)
    assert infos["final_observation"][0].shape == (3,)


def test_buffers_are_read_only_views_and_copy_true_gives_copies():
    env = rltrade.make_vec("cartpole", 2, seed=0)
    obs, _ = env.reset()
    with pytest.raises(ValueError):
        obs[0, 0] = 1.0
    before = obs.copy()
    obs2, *_ = env.step(np.array([0, 1]))
    assert obs2 is obs or np.shares_memory(obs2, obs)  # the same buffer, overwritten
    assert not np.array_equal(before, obs)
    copying = rltrade.make_vec("cartpole", 2, seed=0, copy=True)
    a, _ = copying.reset()
    b, *_ = copying.step(np.array([0, 1]))
    assert not np.shares_memory(a, b)
    assert np.array_equal(a, before)
    # A view outlives its environment object.
    env = rltrade.make_vec("cartpole", 2, seed=0)
    view, _ = env.reset()
    del env
    assert np.isfinite(view).all()


def test_bad_input_raises_a_python_exception_naming_the_problem():
    env = rltrade.make_vec("intraday", 2, seed=0)
    env_box = env
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros((2, 2), dtype=np.float32))
    env.reset()
    with pytest.raises(ValueError, match=r"expected shape \(2, 2\), got \(3, 2\)"):
        env.step(np.zeros((3, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="env 1 has a NaN action"):
        env.step(np.array([[0, 0], [np.nan, 0]], dtype=np.float32))
    with pytest.raises(TypeError, match="numeric"):
        env.step(np.array([["a", "b"], ["c", "d"]]))
    cart = rltrade.make_vec("cartpole", 2, seed=0)
    cart.reset()
    with pytest.raises(ValueError, match="not one of the discrete actions 0..1"):
        cart.step(np.array([0, 2]))
    with pytest.raises(ValueError, match="not one of the discrete actions"):
        cart.step(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="did you mean 'intraday'"):
        rltrade.make_vec("intrady", 2)
    with pytest.raises(ValueError, match="lot_siz.*lot_size"):
        rltrade.make_vec("intraday", 2, lot_siz=5)
    with pytest.raises(ValueError, match="lot_size"):
        rltrade.make_vec("intraday", 2, lot_size=-1)
    with pytest.raises(ValueError, match="lower num_envs"):
        rltrade.make_vec("intraday", 2_000_000_000)
    with pytest.raises(ValueError, match=r"num_envs = 0 is outside \[1, "):
        rltrade.make_vec("cartpole", 0)
    with pytest.raises(TypeError, match="data= expects a dict"):
        rltrade.make_vec("intraday", 2, data=5)
    with pytest.raises(OSError, match="no_such_file.csv"):
        rltrade.make_vec("intraday", 2, data="no_such_file.csv")
    with pytest.raises(ValueError, match=r"expected shape \(2, 2\), got \(2, 2, 1\)"):
        env.step(np.zeros((2, 2, 1), dtype=np.float32))
    with pytest.raises(ValueError, match="expected shape"):
        env.step(np.float32(0.0))
    env_box.close()
    with pytest.raises(RuntimeError, match="closed"):
        env_box.reset()


def test_options_match_the_toml_keys():
    small = rltrade.make_vec("intraday", 1, seed=0, initial_capital=50000.0, lot_size=10)
    small.reset()
    assert small.reset()[1]["net_worth"][0] == pytest.approx(50000.0)
    synth = rltrade.make_vec("intraday", 1, seed=0, data={"days": 30, "seed": 3},
                             features={"preset": "fast22"})
    assert synth.single_observation_space.shape[0] > 0
    # The synthetic market starts on 2023-01-02.
    split = rltrade.make_vec("intraday", 1, seed=0,
                             split={"train": "start:2023-06-30", "test": "2023-07-01:end"})
    _, infos = split.reset()
    assert 20230102 <= infos["session_date"][0] <= 20230630
    with pytest.raises(ValueError, match=r"training range start:2020-03-31.*widen \[split\] train"):
        rltrade.make_vec("intraday", 1, split={"train": "start:2020-03-31"})


def test_state_round_trips_bit_for_bit():
    env = rltrade.make_vec("intraday", 3, seed=2)
    env.reset()
    rng = np.random.default_rng(1)
    for _ in range(10):
        env.step(random_actions(env, rng))
    state = env.save_state()
    acts = [random_actions(env, rng) for _ in range(15)]
    first = [env.step(a)[0].copy() for a in acts]
    other = rltrade.make_vec("intraday", 3, seed=99)
    other.load_state(state)
    second = [other.step(a)[0].copy() for a in acts]
    assert all(np.array_equal(x, y) for x, y in zip(first, second))


def synthetic_bars(days=30, per_day=75, seed=0):
    rng = np.random.default_rng(seed)
    day0 = np.datetime64("2024-01-02T14:30:00")
    days_list = [day0 + np.timedelta64(d, "D") for d in range(days * 7 // 5 + 7)
                 if (day0 + np.timedelta64(d, "D")).astype("datetime64[D]").item().weekday() < 5]
    times = np.array([d + np.timedelta64(5 * k, "m") for d in days_list[:days]
                      for k in range(per_day)])
    close = 100 * np.exp(np.cumsum(rng.normal(0, 0.002, times.size)))
    open_ = np.concatenate([[100.0], close[:-1]])
    high = np.maximum(open_, close) * (1 + rng.uniform(0, 0.001, times.size))
    low = np.minimum(open_, close) * (1 - rng.uniform(0, 0.001, times.size))
    volume = rng.integers(1000, 5000, times.size).astype(float)
    return {"time": times, "open": open_, "high": high, "low": low, "close": close,
            "volume": volume}


def steps_of(env, n=50):
    rng = np.random.default_rng(5)
    out = [env.reset()[0].copy()]
    for _ in range(n):
        out.append(env.step(random_actions(env, rng))[0].copy())
    return out


def test_bars_from_arrays_and_from_a_dataframe_give_the_same_environment(tmp_path):
    bars = synthetic_bars()
    from_arrays = steps_of(rltrade.make_vec("intraday", 2, seed=1, bars=bars))
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({k: v for k, v in bars.items() if k != "time"},
                         index=pd.DatetimeIndex(bars["time"]).tz_localize("UTC"))
    from_frame = steps_of(rltrade.make_vec("intraday", 2, seed=1, bars=frame))
    assert all(np.array_equal(a, b) for a, b in zip(from_arrays, from_frame))
    # A bar file with the same values: the same environment again.
    path = tmp_path / "bars.csv"
    with open(path, "w") as f:
        f.write("time,open,high,low,close,volume\n")
        for i, t in enumerate(bars["time"]):
            f.write(f"{t}Z," + ",".join(repr(float(bars[c][i])) for c in
                                        ("open", "high", "low", "close", "volume")) + "\n")
    from_file = steps_of(rltrade.make_vec("intraday", 2, seed=1, data=str(path)))
    assert all(np.array_equal(a, b) for a, b in zip(from_arrays, from_file))


def test_bad_bars_name_the_row_and_the_rule():
    bars = synthetic_bars()
    bars["high"][7] = bars["low"][7] * 0.5
    with pytest.raises(ValueError, match=r"bars row 7: column 'high': high<max\(open,close\)"):
        rltrade.make_vec("intraday", 1, bars=bars)
    short = synthetic_bars()
    short["close"] = short["close"][:-1]
    with pytest.raises(ValueError, match="'close' has shape"):
        rltrade.make_vec("intraday", 1, bars=short)
    with pytest.raises(TypeError, match="DataFrame or a dict"):
        rltrade.make_vec("intraday", 1, bars=[1, 2, 3])
