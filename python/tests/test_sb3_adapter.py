"""Tests of rltrade.sb3.VecEnvAdapter against SB3's VecEnv method contract.

Needs neither Stable-Baselines3 nor the compiled rltrade module: the adapter file is loaded
directly, and a pure-NumPy counter env stands in for the engine (same-step auto-reset,
Gymnasium 0.29 vector infos, and views of buffers that every step overwrites).
"""

import abc
import importlib.util
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

SB3_PATH = Path(__file__).resolve().parent.parent / "rltrade" / "sb3.py"


def _load_adapter_module():
    spec = importlib.util.spec_from_file_location("rltrade_sb3", SB3_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sb3 = _load_adapter_module()


# ---------------------------------------------------------------------- stand-in engine


class Box:
    """Duck-typed box space."""

    def __init__(self, low, high, shape, dtype=np.float32):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.low = np.full(self.shape, low, dtype=self.dtype)
        self.high = np.full(self.shape, high, dtype=self.dtype)


class Discrete:
    """Duck-typed discrete space."""

    def __init__(self, n):
        self.n = n
        self.shape = ()
        self.dtype = np.dtype(np.int64)
        self.low = np.int64(0)
        self.high = np.int64(n - 1)


def _read_only(array):
    view = array.view()
    view.flags.writeable = False
    return view


class CounterVecEnv:
    """``num_envs`` counters: obs ``[t, i]`` (float32), reward ``1 + 0.5 i`` per step.

    Env i terminates when t reaches ``3 + i`` and truncates when t reaches
    ``truncate_at[i]``. Info ``net_worth`` = ``100 + t + 10 i``. Like the engine, it
    returns read-only views of buffers that it overwrites on every reset/step, and its
    ``final_observation`` entries are views of a buffer that the next step scribbles over.
    """

    metadata = {"autoreset_mode": "same-step"}

    def __init__(self, num_envs=3, truncate_at=None, discrete=True, episode_keys=True):
        n = num_envs
        self.num_envs = n
        self.spec_id = "counter"
        self.info_names = ["net_worth"]
        self.truncate_at = {1: 2} if truncate_at is None else dict(truncate_at)
        self.episode_keys = episode_keys
        self.single_observation_space = Box(-np.inf, np.inf, (2,))
        self.observation_space = Box(-np.inf, np.inf, (n, 2))
        if discrete:
            self.single_action_space = Discrete(2)
            self.action_space = Box(0, 1, (n,), np.int64)
        else:
            self.single_action_space = Box(-1.0, 1.0, (2,))
            self.action_space = Box(-1.0, 1.0, (n, 2))
        self._ids = np.arange(n)
        self._t = np.zeros(n, dtype=np.int64)
        self._returns = np.zeros(n, dtype=np.float64)
        self._obs = np.zeros((n, 2), dtype=np.float32)
        self._terminal = np.zeros((n, 2), dtype=np.float32)
        self._rewards = np.zeros(n, dtype=np.float32)
        self._terminated = np.zeros(n, dtype=bool)
        self._truncated = np.zeros(n, dtype=bool)
        self._net_worth = np.zeros(n, dtype=np.float64)
        self.reset_seeds = []
        self.actions = []
        self.pings = []
        self.closed = 0

    def _write(self):
        self._obs[:, 0] = self._t
        self._obs[:, 1] = self._ids
        self._net_worth[:] = 100.0 + self._t + 10.0 * self._ids

    def _infos(self):
        return {"net_worth": _read_only(self._net_worth),
                "_net_worth": np.ones(self.num_envs, dtype=bool)}

    def reset(self, seed=None):
        self.reset_seeds.append(seed)
        self._t[:] = 0
        self._returns[:] = 0.0
        self._write()
        return _read_only(self._obs), self._infos()

    def step(self, actions):
        self.actions.append(actions)
        self._terminal[:] = -1.0  # invalidates the previous step's final observations
        self._t += 1
        self._rewards[:] = 1.0 + 0.5 * self._ids
        self._returns += self._rewards
        self._terminated[:] = self._t == 3 + self._ids
        self._truncated[:] = [self._t[i] == self.truncate_at.get(i, -1)
                              for i in range(self.num_envs)]
        self._write()
        infos = self._infos()
        done = self._terminated | self._truncated
        if done.any():
            final_obs = np.empty(self.num_envs, dtype=object)
            final_info = np.empty(self.num_envs, dtype=object)
            for i in np.flatnonzero(done):
                self._terminal[i] = self._obs[i]
                final_obs[i] = self._terminal[i]
                final_info[i] = {"net_worth": float(self._net_worth[i])}
                if self.episode_keys:
                    final_info[i]["episode_return"] = self._returns[i]
                    final_info[i]["episode_length"] = np.int64(self._t[i])
                self._t[i] = 0
                self._returns[i] = 0.0
            self._write()  # the finished envs' rows start their next episode
            infos.update(final_observation=final_obs, _final_observation=done.copy(),
                         final_info=final_info, _final_info=done.copy())
        return (_read_only(self._obs), _read_only(self._rewards),
                _read_only(self._terminated), _read_only(self._truncated), infos)

    def ping(self, value, scale=1):
        self.pings.append((value, scale))
        return value * scale

    def close(self):
        self.closed += 1


@pytest.fixture
def no_sb3(monkeypatch):
    """Makes Stable-Baselines3 unimportable (the other tests run with it if installed)."""
    monkeypatch.setitem(sys.modules, "stable_baselines3", None)


def _adapter(**kwargs):
    env = CounterVecEnv(**kwargs)
    return sb3.VecEnvAdapter(env), env


ZEROS = np.zeros(3, dtype=np.int64)


# ---------------------------------------------------------------------- module


def test_module_imports_neither_sb3_nor_gymnasium():
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('rltrade_sb3', {str(SB3_PATH)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "assert hasattr(module, 'VecEnvAdapter')\n"
        "roots = ('stable_baselines3', 'gymnasium', 'gym', 'torch')\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in roots)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""


def test_plain_class_without_sb3(no_sb3):
    adapter, env = _adapter()
    assert type(adapter) is sb3.VecEnvAdapter
    assert isinstance(adapter, sb3.VecEnvAdapter)
    assert adapter.venv is env
    assert adapter.num_envs == 3
    assert adapter.observation_space is env.single_observation_space
    assert adapter.action_space is env.single_action_space
    assert adapter.render_mode is None
    assert adapter.metadata["render_modes"] == []


# ---------------------------------------------------------------------- reset / seed


def test_reset_returns_a_copy_of_shape_n_by_obs_dim():
    adapter, env = _adapter()
    obs = adapter.reset()
    assert isinstance(obs, np.ndarray)
    assert obs.shape == (3, 2) and obs.dtype == np.float32
    np.testing.assert_array_equal(obs, [[0, 0], [0, 1], [0, 2]])
    assert not np.shares_memory(obs, env._obs)
    adapter.step(ZEROS)
    np.testing.assert_array_equal(obs, [[0, 0], [0, 1], [0, 2]])
    assert adapter.reset_infos == [{"net_worth": 100.0}, {"net_worth": 110.0},
                                   {"net_worth": 120.0}]


def test_seed_then_reset_passes_the_seed_once():
    adapter, env = _adapter()
    assert adapter.seed(7) == [7, 8, 9]
    adapter.reset()
    assert env.reset_seeds == [7]
    adapter.reset()
    assert env.reset_seeds == [7, None]
    assert adapter.seed() == [None, None, None]
    adapter.reset()
    assert env.reset_seeds == [7, None, None]


# ---------------------------------------------------------------------- stepping


def test_step_returns_copies_and_sb3_dtypes():
    adapter, env = _adapter()
    adapter.reset()
    obs, rewards, dones, infos = adapter.step(ZEROS)
    assert obs.shape == (3, 2) and obs.dtype == np.float32
    assert rewards.dtype == np.float32 and rewards.shape == (3,)
    assert dones.dtype == np.bool_ and dones.shape == (3,)
    assert isinstance(infos, list) and len(infos) == 3
    np.testing.assert_array_equal(rewards, [1.0, 1.5, 2.0])
    assert not dones.any()
    for buffer, array in ((env._obs, obs), (env._rewards, rewards)):
        assert not np.shares_memory(buffer, array)
    kept = obs.copy(), rewards.copy()
    adapter.step(ZEROS)
    np.testing.assert_array_equal(obs, kept[0])
    np.testing.assert_array_equal(rewards, kept[1])
    for i, info in enumerate(infos):
        assert info == {"net_worth": 101.0 + 10 * i}
        assert type(info["net_worth"]) is float


def test_step_wait_dones_terminal_observation_and_truncation():
    adapter, env = _adapter()
    adapter.reset()
    adapter.step(ZEROS)  # t = 1 everywhere

    # Step 2: env 1 is truncated at t == 2.
    obs, _, dones, infos = adapter.step(ZEROS)
    np.testing.assert_array_equal(dones, [False, True, False])
    np.testing.assert_array_equal(obs, [[2, 0], [0, 1], [2, 2]])  # env 1 was auto-reset
    truncated_terminal = infos[1]["terminal_observation"]
    np.testing.assert_array_equal(truncated_terminal, [2, 1])
    assert truncated_terminal.dtype == np.float32
    assert infos[1]["TimeLimit.truncated"] is True
    assert infos[1]["net_worth"] == 112.0  # the finished episode's last info
    assert adapter.reset_infos[1] == {"net_worth": 110.0}  # the new episode's info
    for i in (0, 2):
        assert "terminal_observation" not in infos[i]
        assert "TimeLimit.truncated" not in infos[i]

    # Step 3: env 0 terminates at t == 3.
    obs, _, dones, infos = adapter.step(ZEROS)
    np.testing.assert_array_equal(dones, [True, False, False])
    np.testing.assert_array_equal(obs[0], [0, 0])
    terminated_terminal = infos[0]["terminal_observation"]
    np.testing.assert_array_equal(terminated_terminal, [3, 0])
    assert infos[0]["TimeLimit.truncated"] is False

    # Further steps overwrite the stand-in's terminal buffer; the adapter's copies stay.
    for _ in range(3):
        adapter.step(ZEROS)
    np.testing.assert_array_equal(truncated_terminal, [2, 1])
    np.testing.assert_array_equal(terminated_terminal, [3, 0])
    assert not np.shares_memory(truncated_terminal, env._terminal)


def test_terminated_and_truncated_together_is_not_a_time_limit():
    adapter, _ = _adapter(truncate_at={2: 5})
    adapter.reset()
    for _ in range(4):
        adapter.step(ZEROS)
    _, _, dones, infos = adapter.step(ZEROS)  # env 2: t == 5, terminated and truncated
    assert dones[2]
    np.testing.assert_array_equal(infos[2]["terminal_observation"], [5, 2])
    assert infos[2]["TimeLimit.truncated"] is False


def test_episode_entry_from_final_info():
    adapter, _ = _adapter()
    adapter.reset()
    adapter.step(ZEROS)
    _, _, _, infos = adapter.step(ZEROS)
    episode = infos[1]["episode"]
    assert episode["r"] == pytest.approx(3.0) and type(episode["r"]) is float
    assert episode["l"] == 2 and type(episode["l"]) is int
    assert episode["t"] >= 0.0
    assert "episode_return" not in infos[1] and "episode_length" not in infos[1]
    assert "episode" not in infos[0] and "episode" not in infos[2]


def test_no_episode_entry_without_episode_keys():
    adapter, _ = _adapter(episode_keys=False)
    adapter.reset()
    adapter.step(ZEROS)
    _, _, dones, infos = adapter.step(ZEROS)
    assert dones[1]
    assert "episode" not in infos[1]
    assert "terminal_observation" in infos[1]


def test_step_equals_step_async_then_step_wait():
    adapter, env = _adapter()
    adapter.reset()
    with pytest.raises(RuntimeError):
        adapter.step_wait()
    adapter.step_async(ZEROS)
    assert env.actions == []  # nothing happens until step_wait
    obs, _, _, _ = adapter.step_wait()
    assert len(env.actions) == 1
    np.testing.assert_array_equal(obs[:, 0], [1, 1, 1])
    with pytest.raises(RuntimeError):
        adapter.step_wait()  # the actions were used


def test_discrete_actions_pass_through_unchanged():
    adapter, env = _adapter(discrete=True)
    adapter.reset()
    actions = np.array([0, 1, 1], dtype=np.int64)
    adapter.step(actions)
    assert env.actions[-1] is actions
    assert env.actions[-1].dtype == np.int64 and env.actions[-1].shape == (3,)


def test_box_actions_pass_through_unchanged():
    adapter, env = _adapter(discrete=False)
    adapter.reset()
    actions = np.array([[0.5, -0.5], [0.0, 1.0], [-1.0, 0.25]], dtype=np.float32)
    adapter.step(actions)
    assert env.actions[-1] is actions
    adapter.step([[0, 0], [0, 0], [0, 0]])  # lists become arrays
    assert isinstance(env.actions[-1], np.ndarray) and env.actions[-1].shape == (3, 2)


# ---------------------------------------------------------------------- attributes


def test_get_attr_honours_indices():
    adapter, _ = _adapter()
    assert adapter.get_attr("spec_id") == ["counter"] * 3
    assert adapter.get_attr("spec_id", indices=[0, 2]) == ["counter"] * 2
    assert adapter.get_attr("spec_id", indices=1) == ["counter"]
    assert adapter.get_attr("info_names", indices=range(2)) == [["net_worth"]] * 2
    assert adapter.get_attr("render_mode") == [None] * 3
    with pytest.raises(AttributeError):
        adapter.get_attr("no_such_attribute")
    with pytest.raises(IndexError):
        adapter.get_attr("spec_id", indices=[3])


def test_set_attr_sets_on_the_shared_engine():
    adapter, env = _adapter()
    adapter.set_attr("speed", 5, indices=[1])
    assert env.speed == 5
    assert adapter.get_attr("speed", indices=[0, 1]) == [5, 5]
    adapter.set_attr("speed", 6)
    assert env.speed == 6
    with pytest.raises(IndexError):
        adapter.set_attr("speed", 7, indices=[-1])


def test_env_method_calls_once_per_index():
    adapter, env = _adapter()
    assert adapter.env_method("ping", 2, indices=[0, 2], scale=3) == [6, 6]
    assert env.pings == [(2, 3), (2, 3)]
    assert adapter.env_method("ping", 1) == [1, 1, 1]
    assert len(env.pings) == 5
    assert adapter.env_method("ping", 4, indices=1) == [4]


def test_env_is_wrapped_is_all_false():
    adapter, _ = _adapter()
    assert adapter.env_is_wrapped(object) == [False, False, False]
    assert adapter.env_is_wrapped(object, indices=[2]) == [False]


def test_render_get_images_and_close():
    adapter, env = _adapter()
    assert adapter.render() is None
    assert adapter.render("rgb_array") is None
    with pytest.raises(NotImplementedError):
        adapter.get_images()
    adapter.close()
    adapter.close()
    assert env.closed == 1


# ---------------------------------------------------------------------- SB3 base class


def _fake_sb3(monkeypatch):
    """Installs a stand-in ``stable_baselines3.common.vec_env.VecEnv`` (an ABC)."""

    class FakeVecEnv(abc.ABC):
        def __init__(self, num_envs, observation_space, action_space):
            self.init_args = (num_envs, observation_space, action_space)
            self.num_envs = num_envs
            self.render_mode = self.get_attr("render_mode")[0]

        @abc.abstractmethod
        def _abstract(self, *args, **kwargs):
            raise NotImplementedError

        reset = step_async = step_wait = close = _abstract
        get_attr = set_attr = env_method = env_is_wrapped = _abstract
        del _abstract

    package = types.ModuleType("stable_baselines3")
    common = types.ModuleType("stable_baselines3.common")
    vec_env = types.ModuleType("stable_baselines3.common.vec_env")
    vec_env.VecEnv = FakeVecEnv
    package.common, common.vec_env = common, vec_env
    monkeypatch.setitem(sys.modules, "stable_baselines3", package)
    monkeypatch.setitem(sys.modules, "stable_baselines3.common", common)
    monkeypatch.setitem(sys.modules, "stable_baselines3.common.vec_env", vec_env)
    return FakeVecEnv


def test_derives_from_sb3_vec_env_when_importable(monkeypatch):
    fake_base = _fake_sb3(monkeypatch)
    adapter, env = _adapter()
    assert isinstance(adapter, fake_base)
    assert isinstance(adapter, sb3.VecEnvAdapter)
    assert type(adapter).__name__ == "VecEnvAdapter"
    assert adapter.init_args == (3, env.single_observation_space, env.single_action_space)
    assert adapter.render_mode is None
    assert type(sb3.VecEnvAdapter(CounterVecEnv())) is type(adapter)  # class built once
    adapter.seed(3)
    assert adapter.reset().shape == (3, 2)
    assert env.reset_seeds == [3]
    _, _, dones, infos = adapter.step(ZEROS)
    assert len(infos) == 3 and not dones.any()


def test_isinstance_of_real_sb3_vec_env():
    vec_env = pytest.importorskip("stable_baselines3.common.vec_env")
    adapter, _ = _adapter()
    assert isinstance(adapter, vec_env.VecEnv)
    assert isinstance(adapter, sb3.VecEnvAdapter)
    assert adapter.reset().shape == (3, 2)
