"""Stable-Baselines3 adapter for rltrade's vector environments.

    import rltrade
    from rltrade.sb3 import VecEnvAdapter
    from stable_baselines3 import PPO

    venv = VecEnvAdapter(rltrade.make_vec("intraday", 16, seed=0))
    PPO("MlpPolicy", venv).learn(100_000)

:class:`VecEnvAdapter` turns a vector environment with Gymnasium 0.29's vector API
(``reset(seed) -> (obs, infos)``, ``step(actions) -> (obs, rewards, terminated, truncated,
infos)``, same-step auto-reset with ``final_observation`` / ``final_info``) into
Stable-Baselines3 2.x's ``VecEnv`` interface: ``reset() -> obs``, ``step_async`` /
``step_wait -> (obs, rewards, dones, infos)`` with a list of per-env info dicts that carry
``terminal_observation``, ``TimeLimit.truncated`` and a Monitor-style ``episode`` entry.

This module imports neither Stable-Baselines3 nor Gymnasium. When Stable-Baselines3 is
importable at construction time, ``VecEnvAdapter(env)`` returns an instance of a class
built on first use that derives from both :class:`VecEnvAdapter` and
``stable_baselines3.common.vec_env.VecEnv`` (so SB3 uses it directly instead of wrapping it
in a ``DummyVecEnv``, and ``isinstance(x, VecEnvAdapter)`` still holds); otherwise it is a
plain :class:`VecEnvAdapter`. SB3's policies require real ``gymnasium.spaces`` objects,
which rltrade provides whenever Gymnasium is installed.

The engine returns views of its buffers that the next step overwrites; the adapter copies
the observations, rewards and terminal observations it hands out.
"""

import time

import numpy as np

__all__ = ["VecEnvAdapter"]

# Keys of the engine's step infos that are not per-env info columns.
_FINAL_KEYS = ("final_observation", "final_info")
# Keys of a final_info dict that become SB3's Monitor-style "episode" entry.
_EPISODE_KEYS = ("episode_return", "episode_length")

# Adapter classes that also derive from SB3's VecEnv: {(class, sb3 base): derived class}.
_DERIVED = {}


def _sb3_vec_env_base():
    """SB3's ``VecEnv`` class, or None when Stable-Baselines3 is not importable."""
    try:
        from stable_baselines3.common.vec_env import VecEnv  # noqa: PLC0415 (optional)
    except ImportError:
        return None
    return VecEnv


def _derived_class(cls, base):
    """``cls`` combined with SB3's ``base`` (created once, then cached)."""
    key = (cls, base)
    if key not in _DERIVED:
        # type(base) is SB3's metaclass (ABCMeta): build the class with it.
        _DERIVED[key] = type(base)(cls.__name__, (cls, base), {
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__,
            "_sb3_base": base,
        })
    return _DERIVED[key]


def _python_value(value):
    """An info value as a plain Python object (numbers as float, arrays copied)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


def _per_env_infos(infos, num_envs):
    """The vector infos' per-env columns as ``num_envs`` dicts of Python values.

    Keys starting with ``_`` are masks: an env whose mask entry is False gets no value for
    that key. ``final_observation`` / ``final_info`` are left out (see step_wait).
    """
    dicts = [{} for _ in range(num_envs)]
    for key, column in infos.items():
        if key.startswith("_") or key in _FINAL_KEYS:
            continue
        column = np.asarray(column)
        if column.shape[:1] != (num_envs,):
            continue  # not a per-env column
        mask = infos.get("_" + key)
        mask = [True] * num_envs if mask is None else np.asarray(mask, dtype=bool).tolist()
        if column.dtype.kind in "iuf":
            values = column.astype(np.float64).tolist()  # Python floats
        else:
            values = [_python_value(v) for v in column]
        for i in range(num_envs):
            if mask[i]:
                dicts[i][key] = values[i]
    return dicts


class VecEnvAdapter:
    """A Gymnasium 0.29 style vector env (``rltrade.make_vec``) as an SB3 2.x ``VecEnv``.

    ``VecEnvAdapter(venv)``; ``venv`` needs ``num_envs``, ``single_observation_space``,
    ``single_action_space``, ``reset(seed=None)``, ``step(actions)`` and ``close()``.

    Attributes: ``venv`` (the wrapped env), ``num_envs``, ``observation_space`` and
    ``action_space`` (the single-env spaces, SB3's convention), ``render_mode`` (None),
    ``metadata``, ``reset_infos`` (per-env info dicts of the last reset, and of the
    auto-resets of the last step).

    ``step_wait()`` returns ``(obs, rewards, dones, infos)``: ``dones`` is ``terminated |
    truncated``, ``infos`` a list of ``num_envs`` dicts holding the engine's per-env info
    values as Python floats. For an env whose episode ended in this step, ``obs`` holds the
    first observation of its next episode and its dict holds the finished episode's last
    info values (``final_info``, as SB3's ``DummyVecEnv`` reports the terminal step's info),
    ``"terminal_observation"`` (a copy), ``"TimeLimit.truncated"`` (truncated and not
    terminated) and, when ``final_info`` has ``episode_return`` / ``episode_length``,
    ``"episode": {"r": return, "l": length, "t": seconds since the adapter was made}``.

    The engine is one object for all envs: ``get_attr`` returns its attribute once per
    requested index, ``set_attr`` sets it on that object (for every env, whatever the
    indices), and ``env_method`` calls its method once per requested index. Reset options
    are not supported (the engine's reset takes a seed only).
    """

    # SB3's VecEnv when this class also derives from it (set on the derived class).
    _sb3_base = None

    def __new__(cls, *args, **kwargs):
        """An instance of ``cls``, or of ``cls`` + SB3's ``VecEnv`` when SB3 is importable."""
        base = _sb3_vec_env_base()
        if base is not None and not issubclass(cls, base):
            cls = _derived_class(cls, base)
        return object.__new__(cls)

    def __init__(self, venv):
        self.venv = venv
        num_envs = int(venv.num_envs)
        observation_space = venv.single_observation_space
        action_space = venv.single_action_space
        self.num_envs = num_envs
        self.observation_space = observation_space
        self.action_space = action_space
        if self._sb3_base is not None:
            # SB3's own bookkeeping (reset_infos, _seeds, _options, render_mode, metadata).
            self._sb3_base.__init__(self, num_envs, observation_space, action_space)
        self.render_mode = None
        self.metadata = dict(getattr(venv, "metadata", None) or {})
        self.metadata["render_modes"] = []
        self.reset_infos = [{} for _ in range(num_envs)]
        self._seed = None
        self._seeds = [None] * num_envs
        self._actions = None
        self._closed = False
        self._t_start = time.perf_counter()

    # ------------------------------------------------------------------ stepping

    def seed(self, seed=None):
        """Stores ``seed`` for the next :meth:`reset` (env i gets ``seed + i``).

        Returns the per-env seeds, ``[seed, seed + 1, ...]``, or ``[None] * num_envs``.
        """
        # Checked here, not with rltrade._checks: this module loads on its own (by path).
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not (
                    0 <= int(seed) < 2**63):
                raise ValueError(f"seed(seed={seed!r}): expected an integer in [0, 2**63 - 1]")
        self._seed = None if seed is None else int(seed)
        if self._seed is None:
            self._seeds = [None] * self.num_envs
        else:
            self._seeds = [self._seed + i for i in range(self.num_envs)]
        return list(self._seeds)

    def reset(self):
        """Resets every env and returns the observations, a ``(num_envs, obs_dim)`` copy.

        A seed stored by :meth:`seed` is passed to the engine's reset once, then cleared.
        """
        seed, self._seed = self._seed, None
        self._seeds = [None] * self.num_envs
        self._actions = None
        obs, infos = self.venv.reset(seed=seed)
        self.reset_infos = _per_env_infos(infos or {}, self.num_envs)
        return np.array(obs, copy=True)

    def step_async(self, actions):
        """Stores ``actions`` for :meth:`step_wait`, as a NumPy array (dtype unchanged)."""
        self._actions = np.asarray(actions)

    def step_wait(self):
        """Steps the engine with the stored actions: ``(obs, rewards, dones, infos)``."""
        if self._actions is None:
            raise RuntimeError("step_wait() called without a pending step_async(actions)")
        actions, self._actions = self._actions, None
        obs, rewards, terminated, truncated, infos = self.venv.step(actions)
        n = self.num_envs
        obs = np.array(obs, copy=True)
        rewards = np.array(rewards, dtype=np.float32, copy=True)
        terminated = np.asarray(terminated, dtype=bool)
        truncated = np.asarray(truncated, dtype=bool)
        dones = terminated | truncated
        infos = infos or {}
        env_infos = _per_env_infos(infos, n)
        final_obs = infos.get("final_observation")
        final_info = infos.get("final_info")
        for i in np.flatnonzero(dones).tolist():
            # The per-env columns of a finished env describe its new episode (reset info).
            self.reset_infos[i] = env_infos[i]
            info = dict(env_infos[i])
            last_info = final_info[i] if final_info is not None else None
            if last_info is not None:
                info = {k: _python_value(v) for k, v in last_info.items()
                        if k not in _EPISODE_KEYS}
                if all(k in last_info for k in _EPISODE_KEYS):
                    info["episode"] = {
                        "r": float(last_info["episode_return"]),
                        "l": int(last_info["episode_length"]),
                        "t": round(time.perf_counter() - self._t_start, 6),
                    }
            if final_obs is not None and final_obs[i] is not None:
                info["terminal_observation"] = np.array(final_obs[i], copy=True)
            info["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            env_infos[i] = info
        return obs, rewards, dones, env_infos

    def step(self, actions):
        """:meth:`step_async` then :meth:`step_wait`."""
        self.step_async(actions)
        return self.step_wait()

    def close(self):
        """Closes the engine (once)."""
        if not self._closed:
            self._closed = True
            self.venv.close()

    # ------------------------------------------------------------------ attributes

    def _indices(self, indices):
        """``indices`` (None = all, an int, or an iterable of ints) as a checked list."""
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            indices = [indices]
        out = [int(i) for i in indices]
        for i in out:
            if not 0 <= i < self.num_envs:
                raise IndexError(f"env index {i} out of range 0..{self.num_envs - 1}")
        return out

    def get_attr(self, attr_name, indices=None):
        """The engine's attribute ``attr_name``, once per requested env index.

        ``render_mode`` is None when the engine has no such attribute.
        """
        idx = self._indices(indices)
        if attr_name == "render_mode" and not hasattr(self.venv, attr_name):
            value = None
        else:
            value = getattr(self.venv, attr_name)
        return [value for _ in idx]

    def set_attr(self, attr_name, value, indices=None):
        """Sets ``attr_name`` on the engine, which is shared by every env index."""
        self._indices(indices)
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        """Calls the engine's method ``method_name`` once per requested env index.

        The engine is a single object, so each call acts on every env; the list holds the
        results of the calls in index order.
        """
        method = getattr(self.venv, method_name)
        return [method(*method_args, **method_kwargs) for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        """``[False, ...]``: the engine's envs are never wrapped by Gymnasium wrappers."""
        return [False for _ in self._indices(indices)]

    def get_images(self):
        """Not supported: the engine does not render."""
        raise NotImplementedError("rltrade environments do not render images")

    def render(self, mode=None):
        """Does nothing (the engine does not render); returns None."""
        return None

    def __repr__(self):
        return f"VecEnvAdapter({self.venv!r})"
