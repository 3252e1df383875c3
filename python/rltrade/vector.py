"""Vector environments with Gymnasium 0.29's vector API (:func:`make_vec`), and their
registration with Gymnasium's registry (:func:`register_gymnasium`)."""

from __future__ import annotations

import datetime as _dt
import math
import os
import re
import tempfile
from typing import Any, Dict, List, Optional

import numpy as np

from . import _checks, _core
from . import spaces as _spaces

# Bounds of make_vec's own arguments: the engine's int sizes (the memory check of the
# environments comes after, in the core), seeds of 63 bits (env i gets seed + i).
_MAX_ENVS = 2**31 - 1
_MAX_THREADS = 4096
_MAX_SEED = 2**63 - 1

# Sections that take a dict in make_vec(...): the TOML sections of a training config.
_SECTIONS = ("data", "features", "split")


def _toml_text(value, where):
    """A Python value as the text a config value holds (what --set takes)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(value, str):
        return value
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_text(v, where) for v in value) + "]"
    raise TypeError(f"make_vec: {where} = {value!r}: expected a bool, number, string, date or list")


def _settings(options):
    settings = []
    for key, value in options.items():
        if key in _SECTIONS:
            if isinstance(value, str) and key == "data":
                value = {"source": "file", "file": value}
            if not isinstance(value, dict):
                raise TypeError(f"make_vec: {key}= expects a dict of [{key}] keys, e.g. "
                                f"{key}={{'...': ...}}")
            for k, v in value.items():
                settings.append((key, str(k), _toml_text(v, f"{key}['{k}']")))
        else:
            settings.append(("env", str(key), _toml_text(value, key)))
    return settings


_BAR_COLUMNS = ("open", "high", "low", "close", "volume")


def _bar_columns(bars):
    """(times as text, {column: float64 array}) from a DataFrame or a dict of arrays."""
    try:
        import pandas as pd  # noqa: PLC0415 (optional)
    except ImportError:
        pd = None
    if pd is not None and isinstance(bars, pd.DataFrame):
        frame = bars
        lower = {str(c).lower(): c for c in frame.columns}
        time_col = next((lower[k] for k in ("time", "timestamp", "datetime", "date")
                         if k in lower), None)
        times = frame[time_col] if time_col is not None else frame.index.to_series()
        times = pd.to_datetime(times)
        if getattr(times.dt, "tz", None) is not None:
            text = times.dt.tz_convert("UTC").dt.strftime("%Y-%m-%dT%H:%M:%SZ")
        else:
            text = times.dt.strftime("%Y-%m-%dT%H:%M:%S")
        missing = [c for c in _BAR_COLUMNS if c not in lower]
        if missing:
            raise ValueError(f"make_vec(bars=...): the DataFrame has no column {missing[0]!r} "
                             f"(needs {', '.join(_BAR_COLUMNS)} and a time column or index)")
        cols = {c: frame[lower[c]].to_numpy(dtype=np.float64) for c in _BAR_COLUMNS}
        return list(text), cols
    if not isinstance(bars, dict):
        raise TypeError("make_vec(bars=...): expected a pandas DataFrame or a dict of arrays "
                        "{'time', 'open', 'high', 'low', 'close', 'volume'}")
    missing = [c for c in ("time",) + _BAR_COLUMNS if c not in bars]
    if missing:
        raise ValueError(f"make_vec(bars=...): no {missing[0]!r} array (needs time, "
                         f"{', '.join(_BAR_COLUMNS)})")
    t = np.asarray(bars["time"])
    if np.issubdtype(t.dtype, np.datetime64):
        text = [str(x) + "Z" for x in t.astype("datetime64[s]")]  # datetime64 is UTC
    elif np.issubdtype(t.dtype, np.number):
        text = [str(x) + "Z" for x in t.astype(np.int64).astype("datetime64[s]")]  # epoch s
    else:
        text = [str(x) for x in t]
    cols = {c: np.asarray(bars[c], dtype=np.float64) for c in _BAR_COLUMNS}
    for c, a in cols.items():
        if a.shape != (len(text),):
            raise ValueError(f"make_vec(bars=...): '{c}' has shape {a.shape}, expected "
                             f"({len(text)},) like 'time'")
    return text, cols


def _write_bars(bars):
    """The bars as a CSV file that rltrade's bar reader validates like any other file."""
    times, cols = _bar_columns(bars)
    fd, path = tempfile.mkstemp(prefix="rltrade_bars_", suffix=".csv")
    with os.fdopen(fd, "w") as f:
        f.write("time,open,high,low,close,volume\n")
        rows = zip(times, *(cols[c] for c in _BAR_COLUMNS))
        f.writelines(f"{t},{o!r},{h!r},{l!r},{c!r},{v!r}\n" for t, o, h, l, c, v in rows)
    return path


def _bars_message(message, path):
    # "<tmp>:<line>" -> "bars row <i>" (line 1 is the header, so row i is on line i + 2).
    message = re.sub(re.escape(path) + r":(\d+)",
                     lambda m: f"bars row {int(m.group(1)) - 2}", message)
    return message.replace(path, "bars")


def env_ids() -> Dict[str, str]:
    """The environments :func:`make_vec` builds: {id: one-line summary}."""
    return dict(_core.env_ids())


class VectorEnv:
    """``num_envs`` environments stepped together (Gymnasium 0.29 vector API).

    ``reset(seed=None) -> (obs, infos)`` and ``step(actions) -> (obs, rewards, terminated,
    truncated, infos)``. An environment whose episode ends is reset in the same step: its
    row of ``obs`` holds the first observation of the next episode, and
    ``infos["final_observation"][i]`` / ``infos["final_info"][i]`` the last observation
    and info of the finished one (masks ``infos["_final_observation"]``,
    ``infos["_final_info"]``). ``final_info`` dicts also hold ``episode_return`` and
    ``episode_length``.

    Zero copy: ``obs``, ``rewards``, ``terminated``, ``truncated`` and the per-env info
    arrays are read-only views of the engine's buffers, valid until the next ``reset()``
    or ``step()`` overwrites them (copy what you keep, or build with ``copy=True``).
    The GIL is released while the environments step.
    """

    metadata = {"autoreset_mode": "same-step"}
    spec = None  # Gymnasium's make_vec sets its EnvSpec here

    def __init__(self, core, copy=False):
        self._core = core
        self._copy = bool(copy)
        spec = core.spec()
        self.spec_id = spec["env_id"]
        self.num_envs = int(spec["num_envs"])
        self.num_threads = int(spec["threads"])
        self.info_names = list(spec["info_names"])
        obs_dim = int(spec["obs_dim"])
        self.single_observation_space = _spaces.box(-np.inf, np.inf, (obs_dim,), np.float32)
        if spec["discrete"]:
            self.single_action_space = _spaces.discrete(spec["n"])
            self.action_space = _spaces.Box(0, spec["n"] - 1, (self.num_envs,), np.int64)
        else:
            dim = int(spec["action_dim"])
            low = np.asarray(spec["action_low"], dtype=np.float32)
            high = np.asarray(spec["action_high"], dtype=np.float32)
            self.single_action_space = _spaces.box(low, high, (dim,), np.float32)
            self.action_space = _spaces.box(np.broadcast_to(low, (self.num_envs, dim)),
                                            np.broadcast_to(high, (self.num_envs, dim)),
                                            (self.num_envs, dim), np.float32)
        self.observation_space = _spaces.box(-np.inf, np.inf, (self.num_envs, obs_dim),
                                             np.float32)
        self.closed = False

    @property
    def unwrapped(self) -> "VectorEnv":
        """The environment itself (Gymnasium's wrappers and make_vec look for it)."""
        return self

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        """Resets every environment; env i is seeded ``seed + i``.

        Without a seed, the first reset uses make_vec's seed and later ones fresh streams.
        """
        if seed is not None:
            seed = _checks.integer(seed, "reset(seed)", 0, _MAX_SEED)
        obs, infos = self._core.reset(seed)
        if self._copy:
            return obs.copy(), _copy_infos(infos)
        return obs, infos

    def step(self, actions):
        """Steps every environment once with ``actions`` (num_envs rows)."""
        out = self._core.step(np.asarray(actions))
        if self._copy:
            obs, rewards, terminated, truncated, infos = out
            return obs.copy(), rewards.copy(), terminated.copy(), truncated.copy(), _copy_infos(
                infos)
        return out

    def save_state(self) -> bytes:
        """The engine's complete state as bytes (continues bit for bit after load_state)."""
        return self._core.save_state()

    def load_state(self, state: bytes) -> None:
        """Restores save_state()'s bytes into an env made with the same arguments."""
        self._core.load_state(state)

    def close(self) -> None:
        """Closes the environments (later reset() and step() raise)."""
        self._core.close()
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"VectorEnv({self.spec_id!r}, num_envs={self.num_envs})"


def _copy_infos(infos):
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in infos.items()}


def make_vec(env_id: str, num_envs: int = 1, *, seed: int = 0, num_threads: int = 0,
             copy: bool = False, **options: Any) -> VectorEnv:
    """A :class:`VectorEnv` of ``num_envs`` environments ``env_id``.

    Arguments:

    - ``env_id``: one of :func:`env_ids`: ``intraday``, ``options``, ``hedging``,
      ``cartpole``, ``pendulum``, ``memory_cue``, ``example``.
    - ``num_envs``: environments stepped together, 1 .. 2**31 - 1.
    - ``seed``: env i is seeded ``seed + i`` at the first ``reset()`` (0 .. 2**63 - 1).
    - ``num_threads``: threads stepping them; 0 = the cores this process may use.
    - ``copy``: return copies of the observation, reward and info arrays instead of
      read-only views of the engine's buffers that the next step overwrites.
    - ``data``, ``features``, ``split``: dicts of the config's ``[data]``, ``[features]``
      and ``[split]`` keys (market environments), e.g. ``data={"source": "file", "file":
      "bars.csv", "timezone": "Asia/Kolkata"}``, ``features={"preset": "fast22"}``,
      ``split={"train": "2023-01-02:2023-06-30"}``; ``data="bars.csv"`` is short for
      ``data={"source": "file", "file": "bars.csv"}``. Without data, the market
      environments use the built-in synthetic market; without ``split``, a market
      environment's sessions are split 60/20/20 into train/validation/test and it steps
      the first 60%.
    - ``bars``: the bars themselves instead of a file: a pandas DataFrame (open, high, low,
      close, volume columns and a time column or index) or a dict of NumPy arrays (time as
      datetime64 in UTC, epoch seconds or timestamp strings); validated as a bar file is,
      an error names the row. Other ``data`` keys (timezone, session, ...) still apply.
    - every other keyword is a key of the config's ``[env]`` section for that environment,
      with the meaning, default and checks it has in a config (docs/config.md; an unknown
      key's error names the nearest one). Values: bool, number, string, date or list.

      intraday: nlags, initial_capital, lot_size, action_mode (original |
      target_position), buy_threshold, sell_threshold, min_amount, fill (next_open |
      next_typical), cost_rate, fixed_cost, max_short_value, episode_sessions, reward (pnl |
      shaped), turnover_penalty, drawdown_penalty, stop_fraction, sequential,
      flatten_at_close, funding_file, range.
      options: underlying, chain_file, missing_quote, range, synthetic_days,
      synthetic_start, synthetic_spot, synthetic_drift, synthetic_vol, synthetic_alpha,
      synthetic_beta, synthetic_seed, rate, dividend, chain_moneyness_min,
      chain_moneyness_max, chain_moneyness_step, chain_strike_increment,
      chain_monthly_expiries, chain_weekly_horizon_days, chain_rv_window,
      chain_initial_vol, chain_vol_multiplier, chain_term_slope, chain_skew, chain_smile,
      chain_min_vol, chain_max_vol, chain_iv_noise, chain_spread_fraction,
      chain_min_spread, chain_tick, chain_oi_scale, tenors, moneyness, max_position,
      multiplier, fee_per_contract, stock_cost, min_option_price, initial_cash,
      short_margin, min_margin, stock_margin, episode_days, random_start, reward
      (log_return | shaped), drawdown_penalty, turnover_penalty.
      hedging: option_type (call | put), spot, strike, rate, drift, vol, maturity_weeks,
      step_weeks, rebalance_every, quantity, cost, risk_aversion, paths (gbm | garch),
      garch_alpha, garch_beta, chain_file, contracts, min_days, range, sequential.
      cartpole: max_episode_steps. pendulum: g, max_episode_steps. memory_cue: length.
      example: window, persistence, max_steps, bound.

    Bad values raise before anything is built: TypeError or ValueError naming the
    argument, OSError for a missing data file. With Gymnasium >= 1.0 installed the same
    environments are ``gymnasium.make_vec("rltrade/Intraday-v0", num_envs=...)`` (see
    :func:`register_gymnasium`).
    """
    if not isinstance(env_id, str):
        raise TypeError(f"make_vec: env_id must be a string, got {type(env_id).__name__}")
    num_envs = _checks.integer(num_envs, "make_vec: num_envs", 1, _MAX_ENVS)
    seed = _checks.integer(seed, "make_vec: seed", 0, _MAX_SEED)
    num_threads = _checks.integer(num_threads, "make_vec: num_threads", 0, _MAX_THREADS)
    bars = options.pop("bars", None)
    if bars is None:
        core = _core.VecEnvCore(env_id, num_envs, seed, num_threads, _settings(options))
        return VectorEnv(core, copy=copy)
    if "data" in options and not isinstance(options["data"], dict):
        raise TypeError("make_vec: pass bars= or a data file, not both")
    data = dict(options.get("data") or {})
    if data.get("source", "file") != "file" or "file" in data:
        raise TypeError("make_vec: bars= replaces [data] source and file; leave them out")
    path = _write_bars(bars)
    try:
        data.update({"source": "file", "file": path})
        options["data"] = data
        try:
            core = _core.VecEnvCore(env_id, num_envs, seed, num_threads, _settings(options))
        except (ValueError, OSError) as e:
            raise type(e)(_bars_message(str(e), path)) from None
    finally:
        os.unlink(path)  # the bars are in the engine's memory now
    return VectorEnv(core, copy=copy)


def gymnasium_id(env_id: str) -> str:
    """The Gymnasium id of an environment: ``intraday`` -> ``rltrade/Intraday-v0``,
    ``memory_cue`` -> ``rltrade/MemoryCue-v0``."""
    return "rltrade/" + "".join(part.capitalize() for part in env_id.split("_")) + "-v0"


def register_gymnasium(gymnasium: Any = None) -> List[str]:
    """Registers every environment with Gymnasium's registry; returns their ids.

    ``import rltrade`` calls it when Gymnasium is installed, so
    ``gymnasium.make_vec("rltrade/Intraday-v0", num_envs=256, seed=0, cost_rate=0.001)``
    builds ``make_vec("intraday", 256, seed=0, cost_rate=0.001)``: each id's
    ``vector_entry_point`` is :func:`make_vec` with the env id in the spec's kwargs, and
    make_vec's keywords pass through. The ids have no single-environment ``entry_point``
    (rltrade's environments are vectorised in the engine), so ``gymnasium.make`` and
    make_vec's ``sync``/``async`` modes do not apply. Ids already registered are left as
    they are. ``gymnasium``: the module to register with (default: ``import gymnasium``).
    """
    if gymnasium is None:
        import gymnasium  # noqa: PLC0415 (optional dependency)
    registry = getattr(gymnasium, "registry", None)
    ids = []
    for env_id in env_ids():
        gym_id = gymnasium_id(env_id)
        ids.append(gym_id)
        if registry is not None and gym_id in registry:
            continue
        gymnasium.register(id=gym_id, vector_entry_point="rltrade.vector:make_vec",
                           kwargs={"env_id": env_id})
    return ids
