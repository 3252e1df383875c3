"""rltrade.paper.Session: a paper session fed and filled from Python.

The equality: the replay of a file's bars through a Python broker that fills every order at
the price it was sized at (fee from the run's costs) writes the same daily_returns.csv,
trades.csv and equity.csv, byte for byte, as `rltrade eval --range test` and as `rltrade
paper --broker sim` on the same run. Then bad input from Python: wrong types, NaN prices, a
broker that raises, one that never answers, positions that disagree — each a Python
exception with a clear message, and a journal a restart continues from.
"""

import csv
import datetime as dt
import json
import os
import pathlib
import subprocess
import time

import pytest

import rltrade
from rltrade import paper

SOURCE = pathlib.Path(os.environ.get("RLT_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
BINARY = os.environ.get("RLT_BINARY")
START = "2023-03-06"
OUTPUTS = ("daily_returns.csv", "trades.csv", "equity.csv")

pytestmark = pytest.mark.skipif(not BINARY, reason="RLT_BINARY is set by CTest")


def run_cli(*args):
    done = subprocess.run([BINARY, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def market(tmp_path_factory):
    """60 synthetic sessions; a short PPO run on the first 35, its evaluation of the test
    range (from 2023-03-06), and the CLI's replay of the file through the sim broker."""
    d = tmp_path_factory.mktemp("paper")
    bars = d / "bars.csv"
    run_cli("data", "synth", "--days", "60", "--out", str(bars))
    run = d / "run"
    sets = ["data.source=file", f"data.file={bars}", "split.train=start:2023-02-17",
            "split.validation=2023-02-20:2023-03-03", f"split.test={START}:end",
            "run.total_steps=8192", "run.threads=1", "env.num_envs=16", "algo.n_steps=64",
            "algo.batch_size=256"]
    run_cli("train", str(SOURCE / "configs" / "intraday_ppo.toml"), "--quiet", "--run-dir",
            str(run), *[a for s in sets for a in ("--set", s)])
    run_cli("eval", str(run), "--range", "test")
    replay = d / "cli_replay"
    run_cli("paper", str(run), "--feed", f"replay:{bars}", "--broker", "sim", "--start", START,
            "--fsync", "session", "--quiet", "--journal", str(replay))
    with open(bars, newline="") as f:
        rows = list(csv.DictReader(f))
    return {"dir": d, "bars": rows, "run": run, "replay": replay,
            "eval": run / "eval" / "test"}


def bar_of(row):
    return paper.Bar(time=dt.datetime.fromisoformat(row["timestamp"].replace("Z", "+00:00")),
                     open=float(row["open"]), high=float(row["high"]), low=float(row["low"]),
                     close=float(row["close"]), volume=float(row["volume"]))


class NextOpenBroker:
    """Fills every order at once, at the price the session sized it at (the next bar's
    open; the close for a closing flatten), the fee left to the run's costs."""

    def __init__(self):
        self.session = None
        self.orders = []
        self.held = {}

    def attach(self, session):
        self.session = session

    def submit(self, order):
        self.orders.append(order)
        signed = order.quantity if order.side == "BUY" else -order.quantity
        self.held[order.symbol] = self.held.get(order.symbol, 0.0) + signed
        self.session.on_fill(order.client_order_id, order.quantity, order.price)

    def cancel(self, client_order_id):
        self.session.on_reject(client_order_id, "cancelled")

    def positions(self):
        return {s: q for s, q in self.held.items() if q != 0}


def open_session(market, broker, journal, **options):
    return paper.Session(market["run"], broker, journal=journal, start=START, fsync="session",
                         **options)


def read(path):
    return pathlib.Path(path).read_bytes()


def journal_lines(journal):
    return [json.loads(l) for l in (pathlib.Path(journal) / "journal.jsonl").read_text()
            .splitlines()]


def test_a_python_session_trades_as_the_evaluation_and_the_cli_replay(market, tmp_path):
    broker = NextOpenBroker()
    journal = tmp_path / "journal"
    with open_session(market, broker, journal) as session:
        for row in market["bars"]:
            session.on_bar(bar_of(row))
        assert session.journal_dir == str(journal)
    for name in OUTPUTS:
        assert read(journal / name) == read(market["eval"] / name), name
        assert read(journal / name) == read(market["replay"] / name), name
    summary = json.loads((journal / "summary.json").read_text())
    assert summary["end"] == "end_of_data"
    assert broker.orders, "the policy traded"
    assert all(o.symbol == broker.orders[0].symbol and o.quantity > 0 for o in broker.orders)
    # Every order has exactly one fill in the journal, under its own id.
    lines = journal_lines(journal)
    orders = [l["client_order_id"] for l in lines if l["type"] == "order"]
    fills = [l["client_order_id"] for l in lines if l["type"] == "fill"]
    assert orders == fills == [o.client_order_id for o in broker.orders]


def test_bars_as_mappings_tuples_and_epoch_seconds_are_the_same_bars(market, tmp_path):
    broker = NextOpenBroker()
    journal = tmp_path / "journal"
    with open_session(market, broker, journal) as session:
        for i, row in enumerate(market["bars"]):
            b = bar_of(row)
            if i % 3 == 0:
                session.on_bar({"time": int(b.time.timestamp()), "open": b.open, "high": b.high,
                                "low": b.low, "close": b.close, "volume": b.volume})
            elif i % 3 == 1:
                session.on_bar((b.time, b.open, b.high, b.low, b.close, b.volume))
            else:
                session.on_bar(b)
    for name in OUTPUTS:
        assert read(journal / name) == read(market["eval"] / name), name


def test_wrong_types_are_type_errors_that_name_the_field(market, tmp_path):
    with pytest.raises(TypeError, match="no submit"):
        paper.Session(market["run"], object(), journal=tmp_path / "j0", start=START)
    broker = NextOpenBroker()
    s = open_session(market, broker, tmp_path / "j1")
    with pytest.raises(TypeError, match="expected an rltrade.paper.Bar"):
        s.on_bar("2023-03-06,1,2,3")
    with pytest.raises(TypeError, match="on_bar: open must be a number, got str"):
        s.on_bar({"time": 1678111200, "open": "100", "high": 1.0, "low": 1.0, "close": 1.0})
    with pytest.raises(ValueError, match="has no timezone"):
        s.on_bar(paper.Bar(dt.datetime(2023, 3, 6, 9, 30), 1.0, 1.0, 1.0, 1.0))
    with pytest.raises(TypeError, match="the bar has no close"):
        s.on_bar({"time": 1678111200, "open": 1.0, "high": 1.0, "low": 1.0})
    with pytest.raises(TypeError, match="client_order_id must be a str"):
        s.on_fill(17, 1.0, 1.0)
    s.finish()
    with pytest.raises(ValueError, match="fsync must be"):
        paper.Session(market["run"], broker, journal=tmp_path / "j2", fsync="never")


def test_nan_and_impossible_bars_are_dropped_journaled_and_the_session_goes_on(market, tmp_path):
    broker = NextOpenBroker()
    journal = tmp_path / "journal"
    rows = market["bars"]
    with open_session(market, broker, journal) as session:
        for i, row in enumerate(rows):
            if i == len(rows) // 2:
                b = bar_of(row)
                with pytest.raises(paper.BadInput, match="not a positive finite number"):
                    session.on_bar(paper.Bar(b.time, float("nan"), b.high, b.low, b.close))
                with pytest.raises(paper.BadInput, match="a high below the low"):
                    session.on_bar(paper.Bar(b.time, b.open, b.low * 0.5, b.low, b.close))
            session.on_bar(bar_of(row))
    bad = [l for l in journal_lines(journal) if l["type"] == "feed" and l["event"] == "bad_bar"]
    assert len(bad) == 2
    # The good bars traded as the evaluation: the bad ones changed nothing.
    for name in OUTPUTS:
        assert read(journal / name) == read(market["eval"] / name), name


class RaisingBroker(NextOpenBroker):
    def __init__(self, fail_at):
        super().__init__()
        self.fail_at = fail_at

    def submit(self, order):
        if len(self.orders) == self.fail_at:
            self.orders.append(order)
            raise ConnectionError("the broker's gateway is down")
        super().submit(order)


def test_a_broker_that_raises_stops_the_session_with_its_exception_and_a_restart_resends(
        market, tmp_path):
    journal = tmp_path / "journal"
    broker = RaisingBroker(fail_at=3)
    session = open_session(market, broker, journal)
    with pytest.raises(paper.BrokerError, match="gateway is down") as info:
        with session:
            for row in market["bars"]:
                session.on_bar(bar_of(row))
    assert isinstance(info.value.__cause__, ConnectionError)
    failed = broker.orders[3]
    status = json.loads((journal / "status.json").read_text())
    assert status["state"] == "failed" and "gateway is down" in status["error"]
    lines = journal_lines(journal)
    assert [l["type"] for l in lines if l.get("client_order_id") == failed.client_order_id] == [
        "order", "broker"]
    with pytest.raises(paper.SessionStopped, match="stopped earlier"):
        session.on_bar(bar_of(market["bars"][-1]))
    # A restart with the same journal: the journaled bars re-run, the order without an
    # outcome goes out again under its id, the broker's positions agree, trading goes on.
    again = NextOpenBroker()
    again.held = dict(broker.held)
    with open_session(market, again, journal) as session:
        assert again.orders[0].client_order_id == failed.client_order_id
        for row in market["bars"]:
            session.on_bar(bar_of(row))
    fills = [l["client_order_id"] for l in journal_lines(journal) if l["type"] == "fill"]
    assert len(fills) == len(set(fills))  # each order booked once
    assert failed.client_order_id in fills
    summary = json.loads((journal / "summary.json").read_text())
    assert summary["end"] == "end_of_data"


class SilentBroker(NextOpenBroker):
    def submit(self, order):
        self.orders.append(order)


def test_a_broker_that_never_answers_stops_the_session_at_the_next_bar(market, tmp_path):
    journal = tmp_path / "journal"
    broker = SilentBroker()
    session = open_session(market, broker, journal)
    with pytest.raises(paper.BrokerError, match="has not answered order b[0-9]+"):
        for row in market["bars"]:
            session.on_bar(bar_of(row))
    assert len(broker.orders) == 1
    lines = journal_lines(journal)
    assert [l for l in lines if l["type"] == "order"][-1]["client_order_id"] == \
        broker.orders[0].client_order_id
    assert not [l for l in lines if l["type"] == "fill"]


def test_positions_that_disagree_with_the_journal_are_refused(market, tmp_path):
    broker = NextOpenBroker()
    broker.held = {market["bars"][0]["symbol"]: 100.0}
    with pytest.raises(PermissionError, match="traded outside this session"):
        open_session(market, broker, tmp_path / "journal")


def test_ctrl_c_writes_the_outputs_and_the_session_restarts_from_its_journal(market, tmp_path):
    journal = tmp_path / "journal"
    broker = NextOpenBroker()
    rows = market["bars"]
    cut = int(len(rows) * 0.8)
    with pytest.raises(KeyboardInterrupt):
        with open_session(market, broker, journal) as session:
            for i, row in enumerate(rows):
                if i == cut:
                    raise KeyboardInterrupt
                session.on_bar(bar_of(row))
    summary = json.loads((journal / "summary.json").read_text())
    assert summary["end"] == "signal"
    # Ending a live session flattens its position at the last bar it had (a real order):
    # the restart books that fill from the journal, and trades on from there.
    closes = [l for l in journal_lines(journal) if l["type"] == "order" and l["reason"] == "close"]
    with open_session(market, broker, journal) as session:
        for row in rows:
            session.on_bar(bar_of(row))
    assert json.loads((journal / "summary.json").read_text())["end"] == "end_of_data"
    lines = journal_lines(journal)
    fills = [l["client_order_id"] for l in lines if l["type"] == "fill"]
    assert len(fills) == len(set(fills))
    assert all(c["client_order_id"] in fills for c in closes)
    assert sum(o.quantity if o.side == "BUY" else -o.quantity for o in broker.orders) == 0
    # The sessions before the interrupted one are the evaluation's.
    interrupted = rows[cut]["timestamp"][:10]
    ours = (journal / "daily_returns.csv").read_text().splitlines()
    theirs = (market["eval"] / "daily_returns.csv").read_text().splitlines()
    assert len(ours) == len(theirs)
    before = [l for l in theirs[1:] if l[:10] < interrupted]
    assert before and ours[1:1 + len(before)] == before


def test_reports_for_orders_the_session_never_sent_are_refused(market, tmp_path):
    broker = NextOpenBroker()
    s = open_session(market, broker, tmp_path / "journal")
    with pytest.raises(paper.BadInput, match="never sent that order"):
        s.on_fill("b999999", 1.0, 100.0)
    with pytest.raises(paper.BadInput, match="never sent that order"):
        s.on_reject("nope")
    s.finish()
    assert rltrade.__version__


def test_ticks_are_aggregated_into_the_runs_bars(market, tmp_path):
    # Each bar as four trades: open, high, low, close (its volume on the last); the
    # session's bars are then the file's, and it trades as the evaluation.
    broker = NextOpenBroker()
    journal = tmp_path / "journal"
    with open_session(market, broker, journal) as session:
        for row in market["bars"]:
            b = bar_of(row)
            t = b.time.timestamp()
            session.on_tick(t, b.open, 0.0)
            session.on_tick(t + 60, b.high, 0.0)
            session.on_tick(t + 120, b.low, 0.0)
            session.on_tick(t + 299, b.close, b.volume)
        with pytest.raises(paper.BadInput, match="positive finite price"):
            session.on_tick(t + 299, float("nan"))
    for name in OUTPUTS:
        assert read(journal / name) == read(market["eval"] / name), name


def test_the_stale_feed_rule_flattens_through_the_broker_when_the_feed_goes_quiet(
        market, tmp_path):
    risk = tmp_path / "risk.toml"
    risk.write_text("stale_feed_seconds = 0.2\nflatten_on_stale = true\n")
    broker = NextOpenBroker()
    journal = tmp_path / "journal"
    rows = market["bars"]
    session = open_session(market, broker, journal, risk=risk)
    held = 0.0
    for i, row in enumerate(rows):
        session.on_bar(bar_of(row))
        held = sum(o.quantity if o.side == "BUY" else -o.quantity for o in broker.orders)
        if i > len(rows) // 2 and held != 0 and row["timestamp"][:10] == rows[i + 2]["timestamp"][:10]:
            break
    assert held != 0, "the policy holds a position to flatten"
    time.sleep(0.3)
    session.idle()
    stale = [o for o in broker.orders if o.reason == "stale"]
    assert len(stale) == 1 and stale[0].client_order_id.endswith("-stale")
    assert sum(o.quantity if o.side == "BUY" else -o.quantity for o in broker.orders) == 0
    rules = [l["rule"] for l in journal_lines(journal) if l["type"] == "risk"]
    assert "stale_feed" in rules
    session.finish()
