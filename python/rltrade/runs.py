"""Training and evaluation runs from Python, through the command line's own code.

``train`` is ``rltrade train CONFIG``; ``evaluate`` is ``rltrade eval RUN_DIR``: the same
checks, the same run directories and files, and the same refusals (an evaluation range
that overlaps the training data is refused unless ``allow_in_sample=True``, which labels
the result in-sample). These load rltrade's learner (LibTorch) on first use; the rest of
the package does not need it.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any, Mapping, Optional, Union

from . import _checks
from .results import EvalResult

PathLike = Union[str, "pathlib.Path"]


def _runs():
    from . import _train  # noqa: PLC0415 (LibTorch is loaded only when runs are used)

    return _train


def _last_metrics(run_dir):
    path = pathlib.Path(run_dir) / "metrics.jsonl"
    if not path.exists():
        return {}
    last = None
    with open(path) as f:
        for line in f:
            if line.strip():
                last = line
    return json.loads(last) if last else {}


def train(config_path: Optional[PathLike], run_dir: Optional[PathLike] = None,
          overrides: Optional[Mapping[str, Any]] = None, *, resume: Optional[PathLike] = None,
          quiet: bool = True) -> dict:
    """Trains as ``rltrade train CONFIG [--set k=v ...] [--run-dir DIR]``.

    ``overrides``: {"section.key": value} (``--set``; bools, numbers, strings and lists).
    ``run_dir``: where the run goes (default ``runs/<config stem>-<UTC time>``).
    ``resume``: a run directory to continue (``--resume``). ``quiet``: no progress lines.
    Returns {"run_dir", "total_steps", "metrics"}, the metrics being the run's last row of
    metrics.jsonl (all rows: :func:`rltrade.load_metrics`). Ctrl-C saves a checkpoint and
    raises KeyboardInterrupt (resume with ``resume=run_dir``). Multi-seed configs
    (``[run] seeds > 1``) run from the command line (``rltrade train --seeds N``).
    """
    sets = []
    for key, value in (overrides or {}).items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            value = "[" + ",".join(str(v) for v in value) + "]"
        sets.append(f"{key}={value}")
    out_dir, total_steps, _ = _runs().train(str(config_path or ""), str(run_dir or ""), sets,
                                            str(resume or ""), bool(quiet))
    return {"run_dir": out_dir, "total_steps": total_steps, "metrics": _last_metrics(out_dir)}


def evaluate(run_dir: PathLike, range: str = "test", *, policy: str = "trained",
             allow_in_sample: bool = False, episodes: int = 10,
             checkpoint: Optional[PathLike] = None, data_file: Optional[PathLike] = None,
             allow_data_change: bool = False, allow_mismatch: bool = False,
             seed: Optional[int] = None, ensemble: Optional[str] = None,
             symbol: Optional[str] = None) -> EvalResult:
    """Evaluates as ``rltrade eval RUN_DIR --range RANGE``; returns an :class:`EvalResult`.

    The result is summary.json as a dict (a ``dict`` subclass, so code that used the
    dict this returned before keeps working) with the evaluation's tables as attributes:
    ``daily_returns``, ``equity``, ``trades``, ``benchmarks``, ``seeds``, ``symbols``
    (pandas DataFrames when pandas is importable; see :class:`rltrade.EvalResult`), and
    ``eval_dir``, the directory written.

    ``range``: a [split] name (test, validation, train) or "YYYY-MM-DD:YYYY-MM-DD".
    ``policy``: trained, flat, buy-and-hold, random or rule:NAME. ``episodes``: episodes
    of an episodic environment (cartpole, pendulum, example). ``checkpoint``: best, final
    or a checkpoint directory (default best when the run has one). The outputs are written under
    RUN_DIR/eval/ as the command writes them. ``data_file``: bars replacing the run's data,
    or the run's data where it is now if it moved; they are checked against the run's record
    of its data (RUN_DIR/data.json) and refused when the training range's sessions changed
    (unless ``allow_data_change``) or they are of another symbol (unless
    ``allow_mismatch``), as ``rltrade eval --data`` does.

    A run trained with ``--seeds N`` is one model: by default the ENSEMBLE of its seeds is
    evaluated (written to RUN_DIR/eval/<range>.ensemble-<method>/; the summary's
    "ensemble" names the method and seeds). ``ensemble``: "mean", "median" or "vote" (default:
    vote for action_mode original, mean for target_position; docs/evaluation.md). ``seed``:
    evaluate that one seed instead. Either on a single-seed run, or both, is an error.
    ``symbol``: for a run trained on several symbols, evaluate that one only (as
    ``--symbol``); by default every symbol and their equal-weight portfolio, whose summary
    this returns.
    """
    episodes = _checks.integer(episodes, "evaluate: episodes", 1, 1_000_000)
    if seed is not None:
        seed = _checks.integer(seed, "evaluate: seed", 0, 2**63 - 1)
    text, out_dir = _runs().evaluate(str(run_dir), str(range), str(policy),
                                     bool(allow_in_sample), episodes, str(checkpoint or ""),
                                     str(data_file or ""), bool(allow_data_change),
                                     bool(allow_mismatch), seed, str(ensemble or ""),
                                     str(symbol or ""))
    return EvalResult(json.loads(text), pathlib.Path(out_dir))
