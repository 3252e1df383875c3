// rltrade market: the manual of the market-data subsystem.
//
// What it is. The first stop of the data's way through the house: it turns price bars
// from a CSV file or from the synthetic generator into `Bars` (bars.h), one columnar
// OHLCV series per symbol with UTC timestamps, the exchange-local UTC offset of every
// bar, and its sessions (exchange-local calendar dates). Everything downstream
// (features/, env/, eval/) indexes bars by position in these arrays and never parses
// text or converts time zones again.
//
// The parts:
//   bars.h      the in-memory layout (plain data).
//   timezone.h  IANA time zones from the system tz database (TZif + POSIX footer rule):
//               UTC offset at an instant, local wall time -> UTC.
//   sessions.h  AssignSessions(): groups bars into sessions by local calendar date.
//   csv.h       ReadBarsCsv()/WriteBarsCsv(): column detection (aliases, Compustat
//               names), timestamp forms, multi-symbol long files, validation that reports
//               every problem with file:line, column, rule and fix; fail or drop policy.
//   date_range.h DateRange: an inclusive range of session dates (splits, env and eval
//               ranges), parsed from "YYYY-MM-DD:YYYY-MM-DD".
//   synth.h     GenerateSynthetic(): intraday/daily bars with GARCH volatility, an
//               intraday U-shape, overnight gaps, jumps and an optional weak predictable
//               component of known signal-to-noise ratio. Deterministic per seed.
//
// Typical use:
//   rlt::market::CsvReadOptions opts;
//   opts.timezone = "Asia/Kolkata";          // sessions are IST dates
//   rlt::market::DataReport report;
//   auto data = rlt::market::ReadBarsCsv(path, opts, &report);
//   if (!data.ok()) return data.status();     // message lists the problems and the fix
//   const rlt::market::Bars* bars = data->Find("TATASTEEL");
//
// Exchange calendars (calendar.h: XNYS, XNSE built in, or a file) give each date its own
// session hours, holidays and early closes; without one a session is simply a date that
// has bars (or a day cut at a boundary, for markets that never close).
//
// What it is not. No corporate-action adjustment, no resampling, no
// network downloads, and no feature computation (features/). It depends on core/ and
// fmt only; nothing here includes LibTorch or pybind11.
// Thread safety: functions are reentrant; results are plain values owned by the caller.
#ifndef RLT_MARKET_MARKET_H_
#define RLT_MARKET_MARKET_H_

#include "market/bars.h"
#include "market/calendar.h"
#include "market/csv.h"
#include "market/date_range.h"
#include "market/sessions.h"
#include "market/synth.h"
#include "market/timezone.h"

#endif  // RLT_MARKET_MARKET_H_
