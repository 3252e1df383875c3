#!/usr/bin/env python3
"""Writes rltrade's built-in exchange calendars (data/calendars/XNYS.csv, XNSE.csv).

XNYS is generated from the NYSE holiday and early-close rules (NYSE Rule 7.2 and its
annual holiday notices) plus the exchange's one-off closures, for 2010-2026.

XNSE lists the National Stock Exchange of India's trading holidays (weekdays without a
session) and its special sessions. The holiday dates are facts published each year in
NSE circulars; the list below was checked against the answer file of the exchange_calendars
project (tests/resources/xbom.csv, BSE and NSE share trading holidays) with --check-xnse.

--check-xnys FILE / --check-xnse FILE compare the generated days with an answer file of
the exchange_calendars project (columns: session, open, close in UTC) over the years both
cover, and exit non-zero on any difference. Run from the repository root:

  python3 scripts/calendars/make_calendars.py [--check-xnys xnys.csv] [--check-xnse xbom.csv]
"""
import argparse
import csv
import datetime as dt
import sys
from zoneinfo import ZoneInfo

FIRST_YEAR, LAST_YEAR = 2010, 2026


def nth_weekday(year, month, weekday, n):
    """The n-th (1-based; -1 = last) `weekday` (Mon=0) of the month."""
    if n > 0:
        d = dt.date(year, month, 1)
        d += dt.timedelta((weekday - d.weekday()) % 7)
        return d + dt.timedelta(7 * (n - 1))
    nxt = dt.date(year + (month == 12), month % 12 + 1, 1)
    d = nxt - dt.timedelta(1)
    return d - dt.timedelta((d.weekday() - weekday) % 7)


def easter(year):
    """Gregorian Easter Sunday (anonymous Gregorian algorithm)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = c // 4, c % 4
    l = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * l) // 451
    month = (h + l - 7 * m + 114) // 31
    day = (h + l - 7 * m + 114) % 31 + 1
    return dt.date(year, month, day)


def observed(d):
    """A fixed-date holiday on a weekend: Saturday -> Friday, Sunday -> Monday."""
    if d.weekday() == 5:
        return d - dt.timedelta(1)
    if d.weekday() == 6:
        return d + dt.timedelta(1)
    return d


def xnys_days():
    """{date: (open, close, note)}; open = close = '' for a weekday without a session."""
    days = {}
    for y in range(FIRST_YEAR, LAST_YEAR + 1):
        hol = {}
        # New Year's Day: a Saturday holiday is not moved to the Friday before (that
        # Friday closes the year's books), a Sunday one moves to Monday.
        ny = dt.date(y, 1, 1)
        if ny.weekday() != 5:
            hol[observed(ny)] = "New Year's Day"
        hol[nth_weekday(y, 1, 0, 3)] = "Martin Luther King Jr. Day"
        hol[nth_weekday(y, 2, 0, 3)] = "Washington's Birthday"
        hol[easter(y) - dt.timedelta(2)] = "Good Friday"
        hol[nth_weekday(y, 5, 0, -1)] = "Memorial Day"
        if y >= 2022:
            hol[observed(dt.date(y, 6, 19))] = "Juneteenth"
        hol[observed(dt.date(y, 7, 4))] = "Independence Day"
        hol[nth_weekday(y, 9, 0, 1)] = "Labor Day"
        thanksgiving = nth_weekday(y, 11, 3, 4)
        hol[thanksgiving] = "Thanksgiving Day"
        hol[observed(dt.date(y, 12, 25))] = "Christmas Day"
        for d, note in hol.items():
            days[d] = ("", "", note)
        # Early closes at 13:00: July 3 when it is Monday-Thursday, the day after
        # Thanksgiving, Christmas Eve when it is Monday-Thursday.
        j3 = dt.date(y, 7, 3)
        if j3.weekday() <= 3:
            days[j3] = ("09:30", "13:00", "day before Independence Day")
        days[thanksgiving + dt.timedelta(1)] = ("09:30", "13:00", "day after Thanksgiving")
        ce = dt.date(y, 12, 24)
        if ce.weekday() <= 3:
            days[ce] = ("09:30", "13:00", "Christmas Eve")
    for d, note in [
        ("2012-10-29", "Hurricane Sandy"),
        ("2012-10-30", "Hurricane Sandy"),
        ("2018-12-05", "National Day of Mourning for President George H. W. Bush"),
        ("2025-01-09", "National Day of Mourning for President Jimmy Carter"),
    ]:
        days[dt.date.fromisoformat(d)] = ("", "", note)
    return days


# NSE special sessions (weekend or evening), each a fact of an NSE circular. The Muhurat
# session's announced hour is kept where known; otherwise a window 17:00-20:00 that holds
# the announced evening hour (NSE has no other trading then, so no other bar falls in it).
XNSE_SPECIAL = [
    ("2010-11-05", "17:00", "20:00", "Muhurat trading (Diwali)"),
    ("2011-10-26", "17:00", "20:00", "Muhurat trading (Diwali)"),
    ("2012-11-13", "17:00", "20:00", "Muhurat trading (Diwali)"),
    ("2013-11-03", "17:00", "20:00", "Muhurat trading (Diwali)"),
    ("2014-10-23", "17:00", "20:00", "Muhurat trading (Diwali)"),
    ("2015-02-28", "09:15", "15:30", "special session: Union Budget"),
    ("2015-11-11", "17:00", "20:00", "Muhurat trading (Diwali)"),
    ("2016-10-30", "17:00", "20:00", "Muhurat trading (Diwali)"),
    ("2017-10-19", "17:00", "20:00", "Muhurat trading (Diwali)"),
    ("2018-11-07", "17:00", "20:00", "Muhurat trading (Diwali)"),
    ("2019-10-27", "17:00", "20:00", "Muhurat trading (Diwali)"),
    ("2020-02-01", "09:15", "15:30", "special session: Union Budget"),
    ("2020-11-14", "17:00", "20:00", "Muhurat trading (Diwali)"),
    ("2021-11-04", "18:15", "19:15", "Muhurat trading (Diwali)"),
    ("2022-10-24", "18:15", "19:15", "Muhurat trading (Diwali)"),
    ("2023-11-12", "18:15", "19:15", "Muhurat trading (Diwali)"),
    ("2024-01-20", "09:15", "15:30", "special session (replaces 2024-01-22)"),
    ("2024-03-02", "09:15", "12:30", "special session: disaster-recovery drill (09:15-10:00 and 11:30-12:30)"),
    ("2024-05-18", "09:15", "12:30", "special session: disaster-recovery drill (09:15-10:00 and 11:30-12:30)"),
    ("2024-11-01", "18:00", "19:00", "Muhurat trading (Diwali)"),
    ("2025-02-01", "09:15", "15:30", "special session: Union Budget"),
    ("2025-10-21", "13:45", "14:45", "Muhurat trading (Diwali)"),
]


def load_answers(path, zone):
    """exchange_calendars answer file -> {date: (open, close)} in local time of `zone`."""
    tz = ZoneInfo(zone)
    out = {}
    with open(path, newline="") as f:
        rows = csv.reader(f)
        next(rows)
        for r in rows:
            d = dt.date.fromisoformat(r[0][:10])
            o = dt.datetime.fromisoformat(r[1].replace("Z", "+00:00")).astimezone(tz)
            c = dt.datetime.fromisoformat(r[2].replace("Z", "+00:00")).astimezone(tz)
            out[d] = (o.strftime("%H:%M"), c.strftime("%H:%M"))
    return out


def sessions_of(days, regular, weekdays_only=True):
    """{date: (open, close)} for every session FIRST_YEAR..LAST_YEAR."""
    out = {}
    d = dt.date(FIRST_YEAR, 1, 1)
    while d <= dt.date(LAST_YEAR, 12, 31):
        if d in days:
            o, c, _ = days[d]
            if o:
                out[d] = (o, c)
        elif d.weekday() < 5:
            out[d] = regular
        d += dt.timedelta(1)
    return out


def compare(name, ours, answers, skip=()):
    lo, hi = max(min(answers), dt.date(FIRST_YEAR, 1, 1)), min(max(answers), dt.date(LAST_YEAR, 12, 31))
    bad = 0
    d = lo
    while d <= hi:
        a, b = ours.get(d), answers.get(d)
        if a != b and d not in skip:
            print(f"{name} {d}: ours {a}, answer file {b}", file=sys.stderr)
            bad += 1
        d += dt.timedelta(1)
    print(f"{name}: {lo}..{hi} compared, {bad} differences", file=sys.stderr)
    return bad


def write(path, header, days):
    with open(path, "w", newline="") as f:
        for line in header:
            f.write(f"# {line}\n")
        f.write("date,open,close,note\n")
        for d in sorted(days):
            o, c, note = days[d]
            f.write(f"{d.isoformat()},{o},{c},{note}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check-xnys")
    ap.add_argument("--check-xnse")
    ap.add_argument("--from-xbom", help="take XNSE's weekday holidays from this answer file")
    ap.add_argument("--out", default="data/calendars")
    args = ap.parse_args()

    nyse = xnys_days()
    write(f"{args.out}/XNYS.csv", [
        "rltrade exchange calendar",
        "name = XNYS",
        "timezone = America/New_York",
        "regular = 09:30-16:00",
        "weekdays = Mon-Fri",
        f"covers = {FIRST_YEAR}-01-01:{LAST_YEAR}-12-31",
        "source = NYSE holiday rules and early closes (13:00) with one-off closures;",
        "source = generated by scripts/calendars/make_calendars.py, checked against",
        "source = exchange_calendars' XNYS answer file for 2010-01-04..2023-01-13",
    ], nyse)

    nse = {}
    if args.from_xbom:
        answers = load_answers(args.from_xbom, "Asia/Kolkata")
        d = dt.date(FIRST_YEAR, 1, 1)
        last = dt.date(LAST_YEAR, 12, 31)
        while d <= last:
            if d.weekday() < 5 and d not in answers:
                nse[d] = ("", "", "trading holiday")
            d += dt.timedelta(1)
    else:
        with open(f"{args.out}/XNSE.csv") as f:
            for r in csv.reader(line for line in f if not line.startswith("#")):
                if r[0] != "date" and not r[1]:
                    nse[dt.date.fromisoformat(r[0])] = ("", "", r[3])
    for d, o, c, note in XNSE_SPECIAL:
        nse[dt.date.fromisoformat(d)] = (o, c, note)
    write(f"{args.out}/XNSE.csv", [
        "rltrade exchange calendar",
        "name = XNSE",
        "timezone = Asia/Kolkata",
        "regular = 09:15-15:30",
        "weekdays = Mon-Fri",
        f"covers = {FIRST_YEAR}-01-01:{LAST_YEAR}-12-31",
        "source = NSE trading-holiday circulars (weekday holidays as listed by the",
        "source = exchange_calendars project's XBOM answer file; NSE and BSE close on the",
        "source = same days) and NSE circulars for special sessions; Muhurat sessions",
        "source = whose hour is not recorded here use the window 17:00-20:00",
    ], nse)

    bad = 0
    if args.check_xnys:
        bad += compare("XNYS", sessions_of(nyse, ("09:30", "16:00")),
                       load_answers(args.check_xnys, "America/New_York"))
    if args.check_xnse:
        specials = {dt.date.fromisoformat(s[0]) for s in XNSE_SPECIAL}
        bad += compare("XNSE", sessions_of(nse, ("09:15", "15:30")),
                       load_answers(args.check_xnse, "Asia/Kolkata"), skip=specials)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
