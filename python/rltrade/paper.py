"""Paper trading driven from Python, with the broker of your choice.

``Session`` is ``rltrade paper`` with the feed and the broker in your code: your feed calls
``session.on_bar(bar)`` (or ``session.on_tick(...)``); the session computes the run's
features, lets the policy decide, applies the risk limits, journals everything, and calls
your broker's ``submit(order)``; your broker answers with ``session.on_fill(...)`` or
``session.on_reject(...)``. The journal, the risk limits, the stale-feed rule, restarts
and the reconciliation of positions are the command line's own code.

    class MyBroker:
        def submit(self, order):          # an rltrade.paper.Order
            ...                           # place a market order; later, or at once:
            # session.on_fill(order.client_order_id, order.quantity, price, fee)
        def cancel(self, client_order_id):
            ...
        def positions(self):              # {symbol: signed shares held}
            return {}

    with rltrade.paper.Session("runs/intraday", broker=MyBroker(),
                               start="2024-03-01") as session:
        for bar in my_feed():
            session.on_bar(bar)
    # leaving the block writes daily_returns.csv, trades.csv, equity.csv, summary.json

When orders go out: the decision taken at a bar is sent when the next bar (or tick) arrives,
sized at that bar's open price, and the session's closing order at its last bar, priced at
the close: the moments the backtest fills them. A broker that fills every order at
``order.price`` and leaves the fee to the run's cost model (``fee=None``) therefore
reproduces ``rltrade eval`` byte for byte. Every order needs a fill or a reject before the
next bar; one fill per order, for its whole quantity.

docs/paper-trading.md ("From Python") shows the order of calls, what a disconnect does,
and a bridge skeleton (examples/python_broker_bridge.py).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import numbers
import os
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Protocol, Union

__all__ = [
    "Bar",
    "BadInput",
    "Broker",
    "BrokerError",
    "Order",
    "PaperError",
    "Session",
    "SessionStopped",
]


class PaperError(Exception):
    """Base class of the paper session's errors."""


class BadInput(PaperError, ValueError):
    """A bar or tick the session dropped (journaled as the command line's feeds do), or a
    report it refused. The session goes on."""


class SessionStopped(PaperError):
    """The session stopped: its journal is kept and consistent, status.json says failed,
    and every later call raises this again. Restart with the same ``journal``."""


class BrokerError(SessionStopped):
    """The broker raised, or left an order without an answer; the session stopped. The
    journal holds the order: a restart sends it again under the same client order id."""


@dataclass(frozen=True)
class Order:
    """A market order for the broker.

    ``client_order_id`` is unique in the session and the same on every restart (send it
    to the broker so that a repeated id is recognised); ``side`` is "BUY" or "SELL";
    ``quantity`` is in shares (> 0); ``bar`` and ``time`` (seconds since the epoch, UTC)
    name the bar it is meant to fill in; ``price`` is the price the session sized it at
    (the bar's open, or the close for a closing flatten); ``reason`` is decision, close,
    risk, stale or stop.
    """

    client_order_id: str
    symbol: str
    side: str
    quantity: float
    bar: int
    time: int
    price: float
    reason: str


@dataclass(frozen=True)
class Bar:
    """One bar: ``time`` is its timestamp (seconds since the epoch, a timezone-aware
    datetime, or a pandas Timestamp), then prices and volume."""

    time: Any
    open: float
    high: float
    low: float
    close: float
    volume: float = 0.0


class Broker(Protocol):
    """What the session needs of a broker. A broker may also have ``attach(session)``:
    the session calls it once, before its first call to the broker, so that the broker
    can report fills (a restart submits again, and asks positions, while it opens)."""

    def submit(self, order: Order) -> None:
        """Places the order (market); report with Session.on_fill / on_reject."""

    def cancel(self, client_order_id: str) -> None:
        """Withdraws a working order (the stale-feed rule); report the outcome."""

    def positions(self) -> Mapping[str, float]:
        """Signed shares held per symbol (absent: none)."""


def _epoch_seconds(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a time, got the bool {value!r}")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        v = float(value)
        if not math.isfinite(v) or v != math.floor(v):
            raise ValueError(f"{name} must be whole seconds since the epoch, got {value!r}")
        return int(v)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
            raise ValueError(f"{name} {value!r} has no timezone: pass an aware datetime "
                             "(e.g. datetime(..., tzinfo=timezone.utc)) or epoch seconds")
        return int(value.timestamp())
    to_ts = getattr(value, "timestamp", None)  # pandas Timestamp
    if callable(to_ts) and getattr(value, "tzinfo", None) is not None:
        return int(to_ts())
    if hasattr(value, "astype") and "datetime64" in str(getattr(value, "dtype", "")):
        return int(value.astype("datetime64[s]").astype("int64"))
    raise TypeError(f"{name} must be epoch seconds, an aware datetime or a pandas Timestamp, "
                    f"got {type(value).__name__} {value!r}")


def _number(value: Any, name: str) -> float:
    # NaN and infinities pass here: the session drops such a bar by the live-feed rules
    # (journaled) and BadInput says why.
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    return float(value)


def _bar_fields(bar: Any):
    if isinstance(bar, Bar):
        fields = (bar.time, bar.open, bar.high, bar.low, bar.close, bar.volume)
    elif isinstance(bar, Mapping) or hasattr(bar, "keys"):
        missing = [k for k in ("time", "open", "high", "low", "close") if k not in bar]
        if missing:
            raise TypeError(f"on_bar: the bar has no {', '.join(missing)} (expected keys time, "
                            "open, high, low, close and optionally volume)")
        fields = (bar["time"], bar["open"], bar["high"], bar["low"], bar["close"],
                  bar["volume"] if "volume" in bar else 0.0)
    elif isinstance(bar, (tuple, list)) and len(bar) in (5, 6):
        fields = tuple(bar) + ((0.0,) if len(bar) == 5 else ())
    else:
        raise TypeError("on_bar: expected an rltrade.paper.Bar, a mapping with time, open, "
                        "high, low, close[, volume] or a tuple in that order, got "
                        f"{type(bar).__name__}")
    names = ("time", "open", "high", "low", "close", "volume")
    time = _epoch_seconds(fields[0], "on_bar: time")
    return (time,) + tuple(_number(v, f"on_bar: {n}") for v, n in zip(fields[1:], names[1:]))


def _text(value: Optional[Any], name: str) -> str:
    if value is None:
        return ""
    if isinstance(value, (str, bytes)) or hasattr(value, "__fspath__"):
        return os.fsdecode(value)
    if isinstance(value, (_dt.date,)):
        return value.isoformat()[:10]
    raise TypeError(f"{name} must be a string or path, got {type(value).__name__} {value!r}")


class Session:
    """A paper-trading session of a trained run, fed and filled by your code.

    Arguments are ``rltrade paper``'s options: ``run_dir`` (written by rltrade train),
    ``broker`` (an object with submit, cancel and positions: see Broker), ``journal``
    (default RUN_DIR/paper/<UTC time>; an existing journal restarts its session),
    ``risk`` (RISK.toml), ``start`` (YYYY-MM-DD: earlier bars only warm up the features),
    ``checkpoint`` (best, final or a directory), ``account`` (journaled; a restart must
    give the same), ``fsync`` (bar or session), ``symbol`` (a run of several symbols: the
    one traded), ``seed`` / ``ensemble`` (a multi-seed run: one seed, or how the seeds
    combine), ``allow_in_sample``, ``data`` (the run's data where it is now, if it moved),
    ``allow_mismatch``, ``allow_data_change``, ``quiet``.

    If the broker has ``attach(session)``, it is called first. Opening checks the run as
    ``rltrade eval`` does (refusing dates the policy trained on
    unless allow_in_sample), takes the journal (one session per journal), re-runs a
    restart's journaled bars, submits again the orders without an outcome and compares
    ``broker.positions()`` with the journal's fills (a difference stops it: the account
    was traded outside the session). Use it as a context manager: leaving the block
    writes the outputs (``finish``); Ctrl-C (KeyboardInterrupt) writes them too, with
    summary.json's end "signal", and re-raises; another exception marks the session
    failed and keeps the journal for a restart.
    """

    def __init__(self, run_dir, broker: Broker, *, journal=None, risk=None, start=None,
                 checkpoint=None, account: str = "rltrade", fsync: str = "bar",
                 symbol: Optional[str] = None, seed: Optional[int] = None,
                 ensemble: Optional[str] = None, allow_in_sample: bool = False, data=None,
                 allow_mismatch: bool = False, allow_data_change: bool = False,
                 quiet: bool = True):
        for method in ("submit", "cancel", "positions"):
            if not callable(getattr(broker, method, None)):
                raise TypeError(f"Session: the broker has no {method}() method (a broker "
                                "needs submit(order), cancel(client_order_id) and positions())")
        if fsync not in ("bar", "session"):
            raise ValueError(f"Session: fsync must be 'bar' or 'session', got {fsync!r}")
        if seed is not None:
            from . import _checks  # noqa: PLC0415

            seed = _checks.integer(seed, "Session: seed", 0, 2**63 - 1)
        self._broker = broker
        self._broker_exception: Optional[BaseException] = None
        request = {
            "run_dir": _text(run_dir, "Session: run_dir"),
            "journal": _text(journal, "Session: journal"),
            "risk": _text(risk, "Session: risk"),
            "start": _text(start, "Session: start"),
            "checkpoint": _text(checkpoint, "Session: checkpoint"),
            "account": _text(account, "Session: account"),
            "fsync": fsync,
            "symbol": _text(symbol, "Session: symbol"),
            "ensemble": _text(ensemble, "Session: ensemble"),
            "data": _text(data, "Session: data"),
            "seed": seed,
            "allow_in_sample": bool(allow_in_sample),
            "allow_mismatch": bool(allow_mismatch),
            "allow_data_change": bool(allow_data_change),
            "quiet": bool(quiet),
        }
        from . import _train  # noqa: PLC0415 (the compiled paper trader)

        self._summary: Optional[Dict[str, Any]] = None
        self._core = _train.PaperSession(request, self._submit, self._cancel, self._positions)
        attach = getattr(broker, "attach", None)
        if callable(attach):  # the broker learns its session before the session calls it
            attach(self)
        code, message = self._core.start()
        if code != 0:
            exc, self._broker_exception = self._broker_exception, None
            if exc is not None:
                raise BrokerError(f"paper session: {message}") from exc
            kind = {_train.STATUS_REFUSED: PermissionError, _train.STATUS_IO_ERROR: OSError,
                    _train.STATUS_NOT_FOUND: FileNotFoundError}.get(code, ValueError)
            raise kind(f"paper session: {message}")

    # -- the broker's side, called by the session ------------------------------------------

    def _guarded(self, fn, *args):
        try:
            return fn(*args)
        except BaseException as exc:  # kept, so the caller gets the broker's own exception
            self._broker_exception = exc
            raise

    def _submit(self, order: Dict[str, Any]) -> None:
        self._guarded(self._broker.submit, Order(**order))

    def _cancel(self, client_order_id: str) -> None:
        self._guarded(self._broker.cancel, client_order_id)

    def _positions(self) -> Dict[str, float]:
        held = self._guarded(self._broker.positions)
        if not isinstance(held, Mapping):
            raise TypeError("broker.positions() must return a mapping of symbol to shares, "
                            f"got {type(held).__name__}")
        out = {}
        for symbol, shares in held.items():
            out[str(symbol)] = _number(shares, f"broker.positions()[{symbol!r}]")
        return out

    def _call(self, fn, what: str, *args) -> None:
        code, message = fn(*args)
        if code == 0:
            return
        exc = self._broker_exception
        self._broker_exception = None
        if not self._core.failed:
            raise BadInput(f"{what}: {message}") from exc
        if exc is not None or "broker" in message:
            raise BrokerError(f"{what}: {message}") from exc
        raise SessionStopped(f"{what}: {message}")

    # -- your feed's and broker's side -----------------------------------------------------

    def on_bar(self, bar: Union[Bar, Mapping[str, Any], tuple]) -> None:
        """Hands the session one bar (after it closed): features, the previous decision's
        order, the decision. Raises BadInput for a bar dropped by the live-feed rules (a
        price that is not a positive finite number, a high below the low, a jump of more
        than 100x, a time far in the future), journaled; bars not after the last one and
        bars outside the run's session hours are skipped silently, as the CLI skips them."""
        fields = _bar_fields(bar)
        self._call(self._core.on_bar, "on_bar", *fields)

    def on_tick(self, time: Any, price: float, size: float = 0.0) -> None:
        """Hands the session one trade; ticks are aggregated into the run's bar size, and a
        tick of a later interval completes the open bar (handled as on_bar). ``time``:
        epoch seconds (fractions allowed), an aware datetime or a pandas Timestamp."""
        if isinstance(time, numbers.Real) and not isinstance(time, (bool, numbers.Integral)):
            if not math.isfinite(float(time)):
                raise ValueError(f"on_tick: time must be finite, got {time!r}")
            ms = int(round(float(time) * 1000))
        elif isinstance(time, _dt.datetime) and time.tzinfo is not None:
            ms = int(round(time.timestamp() * 1000))
        else:
            ms = _epoch_seconds(time, "on_tick: time") * 1000
        self._call(self._core.on_tick, "on_tick", ms, _number(price, "on_tick: price"),
                   _number(size, "on_tick: size"))

    def on_fill(self, client_order_id: str, quantity: float, price: float,
                fee: Optional[float] = None) -> None:
        """The broker filled an order: its whole ``quantity`` (shares) at ``price`` per
        share, for ``fee`` (None: the run's cost model, [env] cost_rate and fixed_cost).
        May be called from inside ``submit`` (booked in that bar) or afterwards, before the
        next bar. A repeated report of the same order is booked once."""
        if not isinstance(client_order_id, str):
            raise TypeError(f"on_fill: client_order_id must be a str, got "
                            f"{type(client_order_id).__name__}")
        fee_value = math.nan if fee is None else _number(fee, "on_fill: fee")
        if fee is not None and math.isnan(fee_value):
            raise ValueError("on_fill: fee is NaN: pass a number, or None for the run's costs")
        self._call(self._core.on_fill, "on_fill", client_order_id,
                   _number(quantity, "on_fill: quantity"), _number(price, "on_fill: price"),
                   fee_value)

    def on_reject(self, client_order_id: str, reason: str = "",
                  retryable: bool = False) -> None:
        """The broker refused (or cancelled) an order. A retryable reject is sent again at
        once under ``<id>-r<n>`` (5 times at most), as the command line does."""
        if not isinstance(client_order_id, str):
            raise TypeError(f"on_reject: client_order_id must be a str, got "
                            f"{type(client_order_id).__name__}")
        self._call(self._core.on_reject, "on_reject", client_order_id, str(reason),
                   bool(retryable))

    def idle(self) -> None:
        """Call when your feed has nothing new (e.g. every second): completes a tick bar
        whose interval has ended and applies the stale-feed rule of the risk limits."""
        self._call(self._core.idle, "idle")

    def finish(self, interrupted: bool = False) -> Dict[str, Any]:
        """Ends the session: the last session closed, daily_returns.csv, trades.csv,
        equity.csv and summary.json written into the journal directory; returns the
        summary. ``interrupted``: summary.json's end is "signal" (as Ctrl-C)."""
        if self._summary is not None:
            return self._summary
        self._call(self._finish_core, "finish", bool(interrupted))
        self._summary = json.loads(self._finished_text)
        return self._summary

    def _finish_core(self, interrupted: bool):
        code, text = self._core.finish(interrupted)
        self._finished_text = text
        return code, text

    @property
    def journal_dir(self) -> str:
        """The journal directory (journal.jsonl, status.json and, at the end, the outputs)."""
        return self._core.journal_dir

    @property
    def state(self) -> Dict[str, Any]:
        """Bars handled, open orders, dropped bars, the position (lots) and cash."""
        return dict(self._core.counts())

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self._core.finished:
            return False
        if exc_type is None:
            self.finish()
        elif issubclass(exc_type, KeyboardInterrupt):
            self.finish(interrupted=True)
        elif not isinstance(exc, SessionStopped):
            self._core.fail(f"{exc_type.__name__}: {exc}")
        return False
