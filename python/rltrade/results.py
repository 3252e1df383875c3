"""Evaluation results and training curves as pandas objects (plain Python without pandas).

:func:`load_eval` reads an evaluation directory (``RUN_DIR/eval/<name>/``, written by
``rltrade eval`` and :func:`rltrade.evaluate`) into an :class:`EvalResult`;
:func:`load_metrics` reads a run's training curves (``RUN_DIR/metrics.jsonl``).

With pandas importable the tables are DataFrames: a table whose first column is ``date``
(daily returns) or ``timestamp`` (equity) is indexed by it, dates and times are pandas
Timestamps (times in the data's time zone, ``settings["data.timezone"]`` of the summary,
else their own UTC offset), counters (``bar``, ``fold``, ``fills``, ``liquidations``,
``missing_quote_marks``) are int64 and every other numeric column float64, holding
exactly the values the CSV files print (read with ``float_precision="round_trip"``).
Without pandas a table is a dict of columns ``{name: list}`` in file order (dates as
``datetime.date``, times as aware ``datetime.datetime``, numbers as float or int) and the
metric tables are dicts of rows ``{row: {metric: value}}``; nothing else changes.
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import math
import pathlib
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union

if TYPE_CHECKING:
    import pandas

PathLike = Union[str, "pathlib.Path"]

_SUMMARY = "summary.json"
_DATE_COLUMNS = ("date", "session_date")
_TIME_COLUMNS = ("timestamp", "time")
_INT_COLUMNS = ("bar", "fold", "fills", "liquidations", "missing_quote_marks")
_TEXT_COLUMNS = ("side", "symbol")
_INDEX_COLUMNS = ("date", "timestamp")  # a first column of these names becomes the index


def _pandas():
    try:
        import pandas  # noqa: PLC0415 (optional dependency)
    except ImportError:
        return None
    return pandas


def _time_zone(summary):
    """The data's time zone named in the summary's settings, or None."""
    settings = summary.get("settings") if isinstance(summary, Mapping) else None
    name = settings.get("data.timezone") if isinstance(settings, Mapping) else None
    if not isinstance(name, str) or not name:
        return None
    try:
        import zoneinfo  # noqa: PLC0415

        return zoneinfo.ZoneInfo(name)
    except (ImportError, ValueError, KeyError, OSError):
        return None


def _number(text, column, path, line):
    if text == "" or text.lower() == "nan":
        return math.nan
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{path}:{line}: column {column!r}: {text!r} is not a number "
                         f"(the file is not one rltrade eval wrote; re-run the evaluation)") \
            from None


def _is_number(text):
    if text == "":
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_rows(path):
    """(header, rows of text) of a CSV file; every row must have the header's cells."""
    with open(path, newline="") as f:
        reader = csv.reader(f)
        try:
            header = next(reader)
        except StopIteration:
            raise ValueError(f"{path}: empty file, expected a header line") from None
        rows = []
        for row in reader:
            if len(row) != len(header):
                raise ValueError(f"{path}:{reader.line_num}: {len(row)} cells, expected "
                                 f"{len(header)} ({','.join(header)})")
            rows.append(row)
    return header, rows


def _plain_table(path, tz):
    """A CSV file as {column: list}, typed as the module docstring says."""
    header, rows = _read_rows(path)
    table = {}
    for k, name in enumerate(header):
        cells = [r[k] for r in rows]
        if name in _DATE_COLUMNS:
            table[name] = [_dt.date.fromisoformat(c) for c in cells]
        elif name in _TIME_COLUMNS:
            times = [_dt.datetime.fromisoformat(c.replace("Z", "+00:00")) for c in cells]
            table[name] = [t.astimezone(tz) for t in times] if tz is not None else times
        elif all(_is_number(c) for c in cells):
            values = [_number(c, name, path, i + 2) for i, c in enumerate(cells)]
            if name in _INT_COLUMNS and all(v == v and v.is_integer() for v in values):
                values = [int(v) for v in values]
            table[name] = values
        else:
            table[name] = cells
    return table


def _frame_table(pd, path, tz):
    """A CSV file as a DataFrame, typed and indexed as the module docstring says."""
    header, _ = _read_rows(path)  # checks the shape with a message naming the line
    frame = pd.read_csv(path, float_precision="round_trip",
                        dtype={c: str for c in _DATE_COLUMNS + _TIME_COLUMNS if c in header})
    for name in frame.columns:
        column = frame[name]
        if name in _DATE_COLUMNS:
            frame[name] = pd.to_datetime(column, format="%Y-%m-%d")
        elif name in _TIME_COLUMNS:
            times = pd.to_datetime(column, utc=True)
            if tz is None:
                offsets = {t.utcoffset() for t in
                           (_dt.datetime.fromisoformat(c.replace("Z", "+00:00"))
                            for c in column)}
                if len(offsets) == 1:
                    tz = _dt.timezone(offsets.pop())
            frame[name] = times.dt.tz_convert(tz) if tz is not None else times
        elif name in _TEXT_COLUMNS or pd.api.types.is_bool_dtype(column):
            continue
        elif len(frame) == 0:  # a header only (no fills): typed as the rows would be
            frame[name] = column.astype("int64" if name in _INT_COLUMNS else "float64")
        elif not pd.api.types.is_numeric_dtype(column):
            continue
        elif name in _INT_COLUMNS and pd.api.types.is_integer_dtype(column):
            frame[name] = column.astype("int64")
        else:
            frame[name] = column.astype("float64")
    if len(frame.columns) and frame.columns[0] in _INDEX_COLUMNS:
        frame = frame.set_index(frame.columns[0])
    return frame


def _metric_rows(rows, index_name, pd):
    """{row: {key: value}} as a DataFrame (numbers float64, NaN for null) or as given."""
    if pd is None:
        return rows
    keys = []
    for values in rows.values():
        keys.extend(k for k in values if k not in keys)
    columns = {}
    for key in keys:
        cells = [values.get(key) for values in rows.values()]
        present = [c for c in cells if c is not None]
        if present and all(isinstance(c, bool) for c in present):
            columns[key] = cells if len(present) == len(cells) else pd.array(cells, "boolean")
        elif all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in present):
            columns[key] = [math.nan if c is None else float(c) for c in cells]
        else:
            columns[key] = cells
    return pd.DataFrame(columns, index=pd.Index(list(rows), name=index_name))


class EvalResult(dict):
    """An evaluation: summary.json as a dict, and its tables as attributes.

    It *is* the summary (a ``dict`` subclass: ``result["metrics"]["sharpe_ratio"]``,
    ``result == json.load(...)`` and ``json.dumps(result)`` behave as on the dict
    :func:`rltrade.evaluate` used to return). The tables are read from ``eval_dir`` when
    first used; each is None when the evaluation did not write it:

    - ``daily_returns``: one row per session, indexed by date: ``return`` (the policy),
      ``buy_and_hold``, ``flat`` (the seed average for a multi-seed run's across-seed
      directory, the equal-weight portfolio for a run of several symbols; walk-forward
      adds ``fold``).
    - ``equity``: one row per bar, indexed by timestamp: ``session_date``, ``bar``,
      ``close``, ``position``, ``cash``, ``net_worth``, ``buy_and_hold_net_worth``.
    - ``trades``: one row per fill: ``time``, ``side`` (BUY/SELL), ``quantity``,
      ``price``, ``cost``, ``position_after``, ``cash_after``.
    - ``benchmarks``: the policy's metrics (row ``strategy``) beside the flat and
      buy-and-hold benchmarks' (rows ``flat``, ``buy_and_hold``), one column per metric,
      as ``rltrade eval`` prints them.
    - ``seeds``: a multi-seed run's per-seed metrics (index ``seed``; columns the metrics
      and ``eval_dir``), from the across-seed summary (found beside an ensemble's
      directory, so ``rltrade.evaluate(run).seeds`` has them).
    - ``symbols``: a run of several symbols: each symbol's metrics (index ``symbol``).
    - ``seeds_daily_returns``, ``symbols_daily_returns``, ``ensemble_daily_returns``:
      the per-seed, per-symbol and ensemble daily returns, indexed by date.
    - :meth:`table` reads any other CSV file of the directory (``costs``,
      ``costs_daily_returns``, ``portfolio`` of the options environment).

    ``summary`` is a plain dict copy; ``eval_dir`` the directory (a ``pathlib.Path``).
    """

    def __init__(self, summary: Mapping[str, Any], eval_dir: Optional[PathLike] = None):
        super().__init__(summary)
        self.eval_dir = pathlib.Path(eval_dir) if eval_dir is not None else None
        self._use_pandas = _pandas() is not None  # decided once: every table of one kind
        self._tables = {}

    @property
    def _pd(self):
        return _pandas() if self._use_pandas else None

    @property
    def summary(self) -> dict:
        """summary.json as a plain dict."""
        return dict(self)

    def table(self, name: str) -> "pandas.DataFrame | dict | None":
        """``eval_dir/<name>.csv`` as a DataFrame (dict of columns without pandas), or
        None when the evaluation did not write it."""
        if name not in self._tables:
            if self.eval_dir is None:
                raise FileNotFoundError(
                    "this result has no evaluation directory: load the tables with "
                    "rltrade.load_eval(RUN_DIR/eval/<name>)")
            path = self.eval_dir / f"{name}.csv"
            if not path.is_file():
                self._tables[name] = None
            elif self._pd is not None:
                self._tables[name] = _frame_table(self._pd, path, _time_zone(self))
            else:
                self._tables[name] = _plain_table(path, _time_zone(self))
        return self._tables[name]

    @property
    def daily_returns(self):
        """daily_returns.csv, indexed by date (see the class docstring)."""
        return self.table("daily_returns")

    @property
    def equity(self):
        """equity.csv, indexed by timestamp (see the class docstring)."""
        return self.table("equity")

    @property
    def trades(self):
        """trades.csv, one row per fill (see the class docstring)."""
        return self.table("trades")

    @property
    def seeds_daily_returns(self):
        """seeds_daily_returns.csv of a multi-seed run's across-seed directory."""
        return self._across_seeds_table("seeds_daily_returns")

    @property
    def ensemble_daily_returns(self):
        """ensemble_daily_returns.csv of a multi-seed run's across-seed directory."""
        return self._across_seeds_table("ensemble_daily_returns")

    @property
    def symbols_daily_returns(self):
        """symbols_daily_returns.csv of a run of several symbols (one column per symbol)."""
        return self.table("symbols_daily_returns")

    @property
    def benchmarks(self):
        """The policy's metrics (row ``strategy``) and the benchmarks' (``flat``,
        ``buy_and_hold``), one column per metric; None without metrics."""
        metrics = self.get("metrics")
        if not isinstance(metrics, Mapping):
            return None
        rows = {"strategy": dict(metrics)}
        for name, values in (self.get("benchmarks") or {}).items():
            rows[name] = dict(values)
        return _metric_rows(rows, "policy", self._pd)

    @property
    def seeds(self):
        """Per-seed metrics of a multi-seed run (index ``seed``), or None."""
        across = self._across_seeds()
        if across is None:
            return None
        rows = {r["seed"]: {**(r.get("metrics") or {}), "eval_dir": r.get("eval_dir")}
                for r in across["runs"]}
        return _metric_rows(rows, "seed", self._pd)

    @property
    def symbols(self):
        """Per-symbol metrics of a run of several symbols (index ``symbol``), or None."""
        listed = self.get("symbols")
        if not isinstance(listed, list):
            return None
        rows = {s["symbol"]: {**(s.get("metrics") or {}), "eval_dir": s.get("eval_dir")}
                for s in listed}
        return _metric_rows(rows, "symbol", self._pd)

    def _across_seeds(self):
        """The across-seed result: this one, or the one beside an ensemble's directory."""
        if isinstance(self.get("runs"), list):
            return self
        ensemble = self.get("ensemble")
        if self.eval_dir is None or not isinstance(ensemble, Mapping):
            return None
        name = self.eval_dir.name
        suffix = f".ensemble-{ensemble.get('method')}"
        if not name.endswith(suffix):
            return None
        sibling = self.eval_dir.parent / name[:-len(suffix)]
        path = sibling / _SUMMARY
        if not path.is_file():
            return None
        summary = json.loads(path.read_text())
        listed = (summary.get("ensemble") or {}).get("eval_dir")
        if not isinstance(summary.get("runs"), list) or listed is None or \
                pathlib.Path(listed).name != name:
            return None
        return EvalResult(summary, sibling)

    def _across_seeds_table(self, name):
        across = self._across_seeds()
        return across.table(name) if across is not None else None


def load_eval(eval_dir: PathLike) -> EvalResult:
    """The evaluation in ``eval_dir`` (``RUN_DIR/eval/<name>/``) as an :class:`EvalResult`.

    Reads summary.json now and the CSV files when their attributes are first used
    (DataFrames with pandas, dicts of columns without; see :class:`EvalResult`).
    """
    eval_dir = pathlib.Path(eval_dir)
    path = eval_dir / _SUMMARY
    if not path.is_file():
        raise FileNotFoundError(
            f"load_eval: {path} does not exist: expected an evaluation directory "
            f"RUN_DIR/eval/<name>/ as rltrade eval writes it (list RUN_DIR/eval/)")
    try:
        summary = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None
    return EvalResult(summary, eval_dir)


def _jsonl_rows(path):
    rows = []
    with open(path) as f:
        for line_number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                if line_number > 1 and not line.endswith("\n"):
                    break  # a torn last line of a run that was killed while writing it
                raise ValueError(f"{path}:{line_number}: not valid JSON ({e.msg})") from None
    return rows


def load_metrics(run_dir: PathLike) -> "pandas.DataFrame | list[dict]":
    """A run's training curves, ``RUN_DIR/metrics.jsonl``: one row per logged step.

    A DataFrame with pandas (a ``step`` column, one float64 column per metric, NaN where
    a value was not finite or not logged), else a list of dicts (None for those). For a
    run trained with ``--seeds N`` (``RUN_DIR/seed_<s>/metrics.jsonl``) the seeds' rows
    follow one another with a ``seed`` column first.
    """
    run_dir = pathlib.Path(run_dir)
    path = run_dir / "metrics.jsonl"
    if path.is_file():
        rows = _jsonl_rows(path)
    else:
        seeds = sorted((int(p.parent.name[5:]), p) for p in run_dir.glob("seed_*/metrics.jsonl")
                       if p.parent.name[5:].isdigit())
        if not seeds:
            raise FileNotFoundError(
                f"load_metrics: {path} does not exist: expected a run directory written by "
                f"rltrade train (or a multi-seed run's, with seed_<s>/metrics.jsonl)")
        rows = [{"seed": seed, **row} for seed, p in seeds for row in _jsonl_rows(p)]
    pd = _pandas()
    if pd is None:
        return rows
    keys = []
    for row in rows:
        keys.extend(k for k in row if k not in keys)
    frame = pd.DataFrame({k: [row.get(k) for row in rows] for k in keys}, columns=keys)
    for k in keys:
        if k in ("step", "seed") and frame[k].notna().all():
            frame[k] = frame[k].astype("int64")
        elif all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                 for v in frame[k]):
            frame[k] = frame[k].astype("float64")
    return frame
