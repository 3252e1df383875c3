"""Paper (or live) trading a trained rltrade run through your broker's Python SDK.

A SKELETON: everything here is tested (python/tests/test_broker_bridge.py runs it with a
fake SDK client) except the parts marked "YOUR SDK", which call your broker's library
(Zerodha Kite, Alpaca, Interactive Brokers, ...) and which you write. The bridge:

  - BridgeBroker is the session's broker: submit() places a market order through the SDK
    with the session's client order id; the SDK's execution and reject callbacks come back
    through on_execution() / on_order_rejected(), which add up partial fills and report
    each order's whole fill to the session (session.on_fill) once it is done;
  - run() feeds the SDK's bars to the session (session.on_bar) and calls session.idle()
    while there are none (the stale-feed rule of the risk limits needs it);
  - credentials come from environment variables only (BROKER_API_KEY, BROKER_API_SECRET):
    never from files in the repository or from the command line.

Order of calls: Session(...) opens (checks the run, takes the journal, asks positions());
then per bar: your feed -> session.on_bar(bar) -> broker.submit(order) for the previous
bar's decision, sized at this bar's open -> your SDK -> on_execution -> session.on_fill;
every order needs its fill or reject before the next bar. Leaving the `with` block writes
daily_returns.csv, trades.csv, equity.csv and summary.json into the journal directory.

On a disconnect: if the SDK raises in submit(), the session stops with BrokerError and
keeps its journal. Start the script again with the same --journal: the session re-runs the
journaled bars, sends every order that has no fill or reject again under the same client
order id (your broker must answer a known id with that order's outcome, not a second
order: most brokers refuse a duplicate client order id, so look the order up then), and
compares positions() with its fills before it trades on.

    BROKER_API_KEY=... BROKER_API_SECRET=... python3 examples/python_broker_bridge.py \\
        runs/intraday --symbol ACME --journal runs/intraday/live-journal --risk risk.toml
"""

import argparse
import os
import sys

import rltrade.paper


class BridgeBroker:
    """rltrade's broker on top of an SDK client (see FakeClient in the tests for the
    methods the client needs: place_market_order, cancel_order, positions)."""

    def __init__(self, client):
        self.client = client
        self.session = None
        self._early = []  # SDK events before the session was attached
        self._open = {}  # client order id -> [ordered, filled, notional, fee]

    def attach(self, session):
        """Called by the Session before its first call to the broker."""
        self.session = session
        early, self._early = self._early, []
        for event in early:
            event()

    # -- the session's calls ---------------------------------------------------------------

    def submit(self, order):
        self._open[order.client_order_id] = [order.quantity, 0.0, 0.0, 0.0, []]
        self.client.place_market_order(symbol=order.symbol, side=order.side,
                                       quantity=order.quantity,
                                       client_order_id=order.client_order_id)

    def cancel(self, client_order_id):
        self.client.cancel_order(client_order_id)

    def positions(self):
        return dict(self.client.positions())

    # -- the SDK's callbacks ---------------------------------------------------------------

    def on_execution(self, client_order_id, quantity, price, fee=None):
        """One execution (possibly partial) of an order; the session hears of the order
        once it is filled whole, at the executions' volume-weighted price."""
        if self.session is None:
            self._early.append(lambda: self.on_execution(client_order_id, quantity, price, fee))
            return
        state = self._open.get(client_order_id)
        if state is None:  # not an order of this process: the session decides (refuses it)
            self.session.on_fill(client_order_id, quantity, price, fee)
            return
        state[1] += quantity
        state[2] += quantity * price
        state[3] = None if fee is None or state[3] is None else state[3] + fee
        state[4].append(price)
        if state[1] + 1e-9 * state[0] < state[0]:
            return  # more to come
        del self._open[client_order_id]
        prices = state[4]
        vwap = prices[0] if all(p == prices[0] for p in prices) else state[2] / state[1]
        self.session.on_fill(client_order_id, state[1], vwap, state[3])

    def on_order_rejected(self, client_order_id, reason, retryable=False):
        if self.session is None:
            self._early.append(
                lambda: self.on_order_rejected(client_order_id, reason, retryable))
            return
        self._open.pop(client_order_id, None)
        self.session.on_reject(client_order_id, reason, retryable)


def run(run_dir, client, symbol, *, journal=None, start=None, risk=None, account="rltrade"):
    """Trades run_dir on the client's bars until they end (or Ctrl-C); returns summary.json."""
    broker = BridgeBroker(client)
    with rltrade.paper.Session(run_dir, broker, journal=journal, start=start, risk=risk,
                               account=account) as session:
        for bar in client.bars(symbol):
            if bar is None:  # nothing new: the stale-feed rule
                session.idle()
                continue
            try:
                session.on_bar(bar)
            except rltrade.paper.BadInput as why:  # a bad bar: dropped and journaled
                print(f"skipped: {why}", file=sys.stderr)
    return session.finish()


def connect_from_environment():
    """YOUR SDK: connect to your broker with credentials from the environment only."""
    key, secret = os.environ.get("BROKER_API_KEY"), os.environ.get("BROKER_API_SECRET")
    if not key or not secret:
        sys.exit("set BROKER_API_KEY and BROKER_API_SECRET in the environment (credentials "
                 "are never read from files or flags)")
    # YOUR SDK: e.g. client = YourBrokerSdk(api_key=key, api_secret=secret); return an
    # object with place_market_order(symbol, side, quantity, client_order_id),
    # cancel_order(client_order_id), positions() -> {symbol: shares} and bars(symbol)
    # yielding each closed bar as {"time", "open", "high", "low", "close", "volume"} (or
    # None while there is none), whose execution and reject callbacks call
    # BridgeBroker.on_execution / on_order_rejected.
    sys.exit("connect_from_environment: write the connection to your broker's SDK here")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--symbol", required=True)
    parser.add_argument("--journal")
    parser.add_argument("--start")
    parser.add_argument("--risk")
    parser.add_argument("--account", default="rltrade")
    args = parser.parse_args()
    summary = run(args.run_dir, connect_from_environment(), args.symbol, journal=args.journal,
                  start=args.start, risk=args.risk, account=args.account)
    print(summary.get("final_net_worth"))


if __name__ == "__main__":
    main()
