"""examples/python_broker_bridge.py with a fake SDK client: executions that come later and
in parts, a retryable reject, and bars with idle gaps — everything but the SDK calls."""

import importlib.util
import json
import os
import pathlib

import pytest

from test_paper_session import START, bar_of, journal_lines, market  # noqa: F401 (fixture)

SOURCE = pathlib.Path(os.environ.get("RLT_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
pytestmark = pytest.mark.skipif(not os.environ.get("RLT_BINARY"),
                                reason="RLT_BINARY is set by CTest")


def load_bridge():
    spec = importlib.util.spec_from_file_location(
        "python_broker_bridge", SOURCE / "examples" / "python_broker_bridge.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeClient:
    """An SDK client whose executions arrive before the next bar, in two parts, and which
    rejects the third order once (retryable)."""

    def __init__(self, rows):
        self.rows = rows
        self.bridge = None
        self.pending = []
        self.placed = []
        self.held = {}

    def place_market_order(self, symbol, side, quantity, client_order_id):
        self.placed.append(client_order_id)
        if len(self.placed) == 3:
            self.pending.append(("reject", client_order_id, "rate limited"))
            return
        half = quantity / 2
        self.pending.append(("exec", client_order_id, half, side, symbol))
        self.pending.append(("exec", client_order_id, quantity - half, side, symbol))

    def cancel_order(self, client_order_id):
        self.pending.append(("reject", client_order_id, "cancelled"))

    def positions(self):
        return {s: q for s, q in self.held.items() if q}

    def _deliver(self, price):
        while self.pending:  # a retry placed while delivering is answered too
            self._deliver_one(self.pending.pop(0), price)

    def _deliver_one(self, e, price):
        if e[0] == "reject":
            self.bridge.on_order_rejected(e[1], e[2], retryable=e[2] == "rate limited")
            return
        _, cid, qty, side, symbol = e
        self.held[symbol] = self.held.get(symbol, 0.0) + (qty if side == "BUY" else -qty)
        self.bridge.on_execution(cid, qty, price, fee=0.25)

    def bars(self, symbol):
        for i, row in enumerate(self.rows):
            b = bar_of(row)
            self._deliver(b.open)  # what was sent after the last bar fills at this open
            if i % 50 == 0:
                yield None  # a quiet moment: the bridge calls session.idle()
            yield b
        self._deliver(float(self.rows[-1]["close"]))


def test_the_bridge_trades_a_run_through_a_late_partial_filling_sdk(market, tmp_path):
    bridge_module = load_bridge()
    client = FakeClient(market["bars"])
    original = bridge_module.BridgeBroker.__init__

    def init(self, c):
        original(self, c)
        c.bridge = self

    bridge_module.BridgeBroker.__init__ = init
    journal = tmp_path / "journal"
    summary = bridge_module.run(market["run"], client, market["bars"][0]["symbol"],
                                journal=journal, start=START)
    assert summary["end"] == "end_of_data"
    lines = journal_lines(journal)
    orders = [l["client_order_id"] for l in lines if l["type"] == "order"]
    fills = [l for l in lines if l["type"] == "fill"]
    rejects = [l for l in lines if l["type"] == "reject"]
    assert len(rejects) == 1 and rejects[0]["client_order_id"] == client.placed[2]
    assert client.placed[3] == client.placed[2] + "-r1"  # the retry, at once
    filled = {f["client_order_id"] for f in fills}
    assert filled == set(orders) - {client.placed[2]}
    assert all(f["cost"] == 0.5 for f in fills)  # two executions of 0.25  # the broker's fee, not the run's
    # The session's book and the broker's account agree at the end.
    symbol = market["bars"][0]["symbol"]
    assert client.held.get(symbol, 0.0) == pytest.approx(fills[-1]["position_after"], abs=1e-9)
    assert (journal / "trades.csv").exists()
    status = json.loads((journal / "status.json").read_text())
    assert status["state"] == "finished"
