"""rltrade.load_eval, rltrade.evaluate's EvalResult and rltrade.load_metrics against the
files the command line writes, read independently here with the csv and json modules:
the values must be equal exactly (the CSV's printed number is the double)."""

import csv
import datetime as dt
import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

import rltrade
from conftest import three_symbol_config

SOURCE = pathlib.Path(os.environ.get("RLT_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
BINARY = os.environ.get("RLT_BINARY")
CONFIG = SOURCE / "configs" / "intraday_ppo.toml"
SETS = {"run.total_steps": 2048, "run.seed": 5, "run.threads": 1, "run.seeds": 1}

needs_binary = pytest.mark.skipif(not BINARY, reason="RLT_BINARY is set by CTest")

try:
    import pandas as pd
except ImportError:
    pd = None
needs_pandas = pytest.mark.skipif(pd is None, reason="pandas is not installed "
                                  "(apt-get install python3-pandas)")


def _sets(sets):
    return [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A small run trained and evaluated on its test range by the command line."""
    if not BINARY:
        pytest.skip("RLT_BINARY is set by CTest")
    run = tmp_path_factory.mktemp("results") / "run"
    subprocess.run([BINARY, "train", str(CONFIG), "--run-dir", str(run), "--quiet",
                    *_sets(SETS)], check=True)
    subprocess.run([BINARY, "eval", str(run), "--range", "test"], check=True,
                   capture_output=True)
    return run


def _csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def _same_number(value, text):
    expected = float(text) if text not in ("", "nan") else math.nan
    value = float(value)
    return value == expected or (math.isnan(value) and math.isnan(expected))


def _time(text):
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _check_frame(frame, path):
    """Every cell of `frame` (index included) is the CSV's, exactly."""
    header, rows = _csv(path)
    assert len(frame) == len(rows) > 0
    indexed = header[0] in ("date", "timestamp")
    if indexed:
        assert frame.index.name == header[0]
        assert list(frame.columns) == header[1:]
    else:
        assert list(frame.columns) == header
    for k, name in enumerate(header):
        cells = [r[k] for r in rows]
        values = list(frame.index) if indexed and k == 0 else list(frame[name])
        if name in ("date", "session_date"):
            assert all(isinstance(v, pd.Timestamp) for v in values)
            assert [v.date() for v in values] == [dt.date.fromisoformat(c) for c in cells]
            assert all(v == pd.Timestamp(c) for v, c in zip(values, cells))
        elif name in ("timestamp", "time"):
            assert all(isinstance(v, pd.Timestamp) and v.tzinfo is not None for v in values)
            assert values == [_time(c) for c in cells]  # the same instants
            # In the data's zone: the wall-clock times the file prints.
            assert [v.isoformat() for v in values] == [_time(c).isoformat() for c in cells]
        elif name == "side":
            assert values == cells
        else:
            dtype = frame[name].dtype
            assert dtype == ("int64" if name == "bar" else "float64"), (name, dtype)
            bad = [(i, v, c) for i, (v, c) in enumerate(zip(values, cells))
                   if not _same_number(v, c)]
            assert not bad, (path.name, name, bad[:3])


def _check_columns(table, path):
    """Without pandas: {column: list} equal to the CSV's cells."""
    header, rows = _csv(path)
    assert list(table) == header
    for k, name in enumerate(header):
        cells = [r[k] for r in rows]
        values = table[name]
        if name in ("date", "session_date"):
            assert values == [dt.date.fromisoformat(c) for c in cells]
        elif name in ("timestamp", "time"):
            assert values == [_time(c) for c in cells]
        elif name == "side":
            assert values == cells
        else:
            assert all(_same_number(v, c) for v, c in zip(values, cells)), name
            if name == "bar":
                assert all(type(v) is int for v in values)


def _same_metric(value, expected):
    if expected is None:
        return value is None or (isinstance(value, float) and math.isnan(value))
    return value == expected


@needs_pandas
def test_load_eval_reads_the_csv_files_exactly(run_dir):
    eval_dir = run_dir / "eval" / "test"
    result = rltrade.load_eval(eval_dir)
    assert result.eval_dir == eval_dir
    summary = json.loads((eval_dir / "summary.json").read_text())
    assert result == summary and type(result.summary) is dict and result.summary == summary
    for name in ("daily_returns", "equity", "trades"):
        frame = getattr(result, name)
        assert isinstance(frame, pd.DataFrame)
        _check_frame(frame, eval_dir / f"{name}.csv")
    assert isinstance(result.daily_returns.index, pd.DatetimeIndex)
    assert list(result.daily_returns.columns) == ["return", "buy_and_hold", "flat"]
    # The daily returns are those the metrics rest on.
    assert len(result.daily_returns) == summary["metrics"]["observations"]
    assert result.seeds is None and result.symbols is None
    assert result.table("costs") is None  # not written without --costs


@needs_pandas
def test_benchmarks_are_the_summarys_metrics(run_dir):
    result = rltrade.load_eval(run_dir / "eval" / "test")
    table = result.benchmarks
    assert list(table.index) == ["strategy", "flat", "buy_and_hold"]
    rows = {"strategy": result["metrics"], **result["benchmarks"]}
    for row, metrics in rows.items():
        for key, expected in metrics.items():
            assert _same_metric(table.loc[row, key], expected), (row, key)
    assert table["sharpe_ratio"].dtype == "float64"
    assert table["few_observations"].dtype == bool


@needs_binary
def test_evaluate_returns_the_summary_and_the_written_tables(run_dir):
    result = rltrade.evaluate(run_dir, range="test")
    assert isinstance(result, dict) and isinstance(result, rltrade.EvalResult)
    assert result.eval_dir == run_dir / "eval" / "test"
    assert result == json.loads((run_dir / "eval" / "test" / "summary.json").read_text())
    assert json.loads(json.dumps(result)) == result.summary
    flat = rltrade.evaluate(run_dir, range="test", policy="flat")
    assert flat.eval_dir == run_dir / "eval" / "test.flat"
    if pd is not None:
        assert (flat.daily_returns["return"] == 0).all()
        assert len(flat.trades) == 0  # flat never trades: a header-only trades.csv
        assert flat.trades["quantity"].dtype == "float64"
        assert list(flat.trades.columns) == _csv(flat.eval_dir / "trades.csv")[0]


def test_without_pandas_the_tables_are_dicts_of_columns(run_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ImportError
    eval_dir = run_dir / "eval" / "test"
    result = rltrade.load_eval(eval_dir)
    for name in ("daily_returns", "equity", "trades"):
        table = getattr(result, name)
        assert isinstance(table, dict)
        _check_columns(table, eval_dir / f"{name}.csv")
    rows = result.benchmarks
    assert rows["strategy"] == result["metrics"]
    assert rows["flat"] == result["benchmarks"]["flat"]
    metrics = rltrade.load_metrics(run_dir)
    with open(run_dir / "metrics.jsonl") as f:
        assert metrics == [json.loads(line) for line in f if line.strip()]
    evaluated = rltrade.evaluate(run_dir, range="test")
    assert evaluated == result and evaluated.eval_dir == eval_dir
    _check_columns(evaluated.daily_returns, eval_dir / "daily_returns.csv")


@needs_pandas
def test_load_metrics_is_metrics_jsonl(run_dir):
    frame = rltrade.load_metrics(run_dir)
    with open(run_dir / "metrics.jsonl") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    assert len(frame) == len(rows) > 0
    assert frame["step"].dtype == "int64"
    assert list(frame["step"]) == [r["step"] for r in rows]
    keys = [k for k in frame.columns if k != "step"]
    assert set(keys) == {k for r in rows for k in r} - {"step"}
    for k in keys:
        assert frame[k].dtype == "float64", k
        for value, row in zip(frame[k], rows):
            assert _same_metric(value, row.get(k)), (k, value, row.get(k))


@needs_binary
def test_a_multi_seed_runs_ensemble_result_has_the_per_seed_metrics(tmp_path):
    run = tmp_path / "seeds"
    subprocess.run([BINARY, "train", str(CONFIG), "--seeds", "2", "--run-dir", str(run),
                    "--quiet", *_sets({**SETS, "run.total_steps": 1024})], check=True)
    subprocess.run([BINARY, "eval", str(run), "--range", "test"], check=True,
                   capture_output=True)
    across = json.loads((run / "eval" / "test" / "summary.json").read_text())
    ensemble_dir = run / across["ensemble"]["eval_dir"]
    result = rltrade.load_eval(ensemble_dir)
    assert result["ensemble"]["method"] == across["ensemble"]["method"]
    seeds = result.seeds
    expected = {r["seed"]: r for r in across["runs"]}
    if pd is None:
        assert set(seeds) == set(expected)
        return
    assert list(seeds.index) == [r["seed"] for r in across["runs"]] == [5, 6]
    for seed, r in expected.items():
        assert seeds.loc[seed, "eval_dir"] == r["eval_dir"]
        for key, value in r["metrics"].items():
            assert _same_metric(seeds.loc[seed, key], value), (seed, key)
    _check_frame(result.seeds_daily_returns, run / "eval" / "test" / "seeds_daily_returns.csv")
    _check_frame(result.daily_returns, ensemble_dir / "daily_returns.csv")
    metrics = rltrade.load_metrics(run)
    assert list(metrics.columns[:2]) == ["seed", "step"]
    assert sorted(set(metrics["seed"])) == [5, 6]
    with open(run / "seed_6" / "metrics.jsonl") as f:
        six = [json.loads(line) for line in f if line.strip()]
    assert list(metrics[metrics["seed"] == 6]["step"]) == [r["step"] for r in six]


@needs_binary
def test_a_run_of_several_symbols_has_their_metrics_and_returns(tmp_path):
    config = three_symbol_config(tmp_path, BINARY)
    run = tmp_path / "run"
    subprocess.run([BINARY, "train", str(config), "--run-dir", str(run), "--quiet"], check=True)
    result = rltrade.evaluate(run)
    assert result.eval_dir == run / "eval" / "test"
    if pd is None:
        assert list(result.symbols) == ["SYN0", "SYN1", "SYN2"]
        return
    symbols = result.symbols
    assert list(symbols.index) == ["SYN0", "SYN1", "SYN2"]
    for s in result["symbols"]:
        assert symbols.loc[s["symbol"], "eval_dir"] == s["eval_dir"]
        for key, value in s["metrics"].items():
            assert _same_metric(symbols.loc[s["symbol"], key], value), (s["symbol"], key)
    _check_frame(result.symbols_daily_returns, result.eval_dir / "symbols_daily_returns.csv")
    _check_frame(result.daily_returns, result.eval_dir / "daily_returns.csv")
    for s in result["symbols"]:
        one = rltrade.load_eval(run / s["eval_dir"])
        # A file's data: the times are in its [data] timezone, as the file prints them.
        assert str(one.equity.index.tz) == "Asia/Kolkata"
        _check_frame(one.equity, one.eval_dir / "equity.csv")
        if len(one.trades):  # a symbol's policy may not trade at all
            _check_frame(one.trades, one.eval_dir / "trades.csv")


def test_missing_directories_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"missing/summary.json does not exist"):
        rltrade.load_eval(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match=r"missing/metrics.jsonl does not exist"):
        rltrade.load_metrics(tmp_path / "missing")


def test_a_table_row_of_the_wrong_width_is_named(tmp_path):
    (tmp_path / "summary.json").write_text('{"metrics": {}}')
    (tmp_path / "daily_returns.csv").write_text("date,return,buy_and_hold,flat\n"
                                                "2024-01-02,0.1,0.2,0\n2024-01-03,0.1\n")
    with pytest.raises(ValueError, match=r"daily_returns.csv:3: 2 cells, expected 4"):
        rltrade.load_eval(tmp_path).daily_returns
