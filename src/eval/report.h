// rltrade eval: the HTML report of an evaluation (`report.html`).
//
// What it is: WriteReport() reads the files an evaluation wrote (summary.json, equity.csv,
// daily_returns.csv, trades.csv; their format is the contract in eval/outputs.h) and writes
// one self-contained page next to them. The page has no scripts, fonts, stylesheets or
// images from anywhere else: CSS is inline and every chart is an SVG drawn here in C++, so
// it opens offline and can be mailed or archived as one file.
//
// What it is not: it computes no metrics of its own (the metrics table shows
// summary.json's numbers as they are), and it does not run a backtest.
//
// The page, top to bottom:
//  - the title (run directory, range name and dates) and, when summary.in_sample is true,
//    a red IN-SAMPLE banner; the metrics table is then also labelled IN-SAMPLE. The word
//    "IN-SAMPLE" appears nowhere on an out-of-sample page.
//  - the metrics table: the strategy against flat (cash) and buy-and-hold.
//  - equity: net worth per bar against buy-and-hold's, over the whole range.
//  - drawdown of the strategy's net worth from its running peak (buy-and-hold's as a line).
//  - a histogram of the strategy's daily (per-session) returns.
//  - monthly returns: each calendar month's daily returns compounded, ∏(1 + r) − 1
//    (missing days skipped), with a yearly column; cells are tinted green/red.
//  - per-session charts for three chosen sessions: the best and the worst session by the
//    strategy's daily return and the last session of the range (duplicates shown once).
//    Best and worst show what the policy does when it is most right and most wrong; the
//    last is the most recent behaviour. Each chart draws the close per bar, shades the bars
//    held long (green) or short (red), and marks every fill of trades.csv in that session
//    with a triangle (BUY pointing up below the price, SELL pointing down above it).
//  - when the evaluated checkpoint is the run's best/ (summary.selection): the selection on
//    validation, its step, score, trials and deflated Sharpe ratio, and the validation
//    curve (score per evaluation against env steps) with the selected point circled.
//  - the run's settings (summary.settings), one row per key; "data.*" keys that do not
//    apply to settings["data.source"] (DataSettingApplies) are left out.
// The title names the policy, the checkpoint and the data (summary "policy", "checkpoint",
// "data"). Fills and round trips are told apart: the metrics table has "Round trips (flat
// to flat)" and "Fills (orders executed)"; the note above it counts both.
//
// Size: equity and drawdown series with more than 2000 points are downsampled to at most
// 2000 points per series: the bars are cut into 1000 equal buckets and each bucket keeps
// its lowest and highest value in time order, so peaks and troughs (the drawdowns) stay
// visible. Per-session charts draw every bar.
//
// All text from the input files is HTML-escaped.
#ifndef RLT_EVAL_REPORT_H_
#define RLT_EVAL_REPORT_H_

#include <string>

#include "core/status.h"

namespace rlt::eval {

// Reads the evaluation files in `eval_dir` and writes `eval_dir`/report.html under a
// temporary name, renamed into place when complete (an existing report is replaced).
// Errors (missing or malformed file, unwritable directory) come back as a Status naming
// the file, the line and what was expected.
Status WriteReport(const std::string& eval_dir);

// The report of an evaluation across the seeds of a multi-seed run
// (evalrun/seeds_eval.h): reads `dir`/summary.json, daily_returns.csv (the seed average)
// and seeds_daily_returns.csv, and writes `dir`/report.html: the across-seed metrics
// table (mean, std, min, max and every seed's value), the PSR of the seed average and the
// deflated Sharpe ratio of the best seed, and the growth of 1 of every seed, of the seed
// average and of the benchmarks (buy-and-hold, flat) on one chart.
Status WriteSeedsReport(const std::string& dir);
// The report of a run of several symbols' equal-weight portfolio (evalrun/symbols_eval.h):
// reads `dir`/summary.json, daily_returns.csv (the portfolio) and
// symbols_daily_returns.csv, and writes `dir`/report.html: the portfolio's metrics against
// flat and buy-and-hold with the significance notes, each symbol's key metrics, and the
// growth of 1 of every symbol, of the portfolio and of the benchmarks on one chart.
Status WriteSymbolsReport(const std::string& dir);

// The report of a walk-forward (evalrun/walkforward.h): reads `dir`/summary.json and
// `dir`/daily_returns.csv (date,return,buy_and_hold,flat,fold; folds numbered from 1) and
// writes `dir`/report.html: the concatenated out-of-sample metrics against flat and
// buy-and-hold, the growth of 1 of the three with each fold's test window a shaded band
// (<rect class="fold-band" data-fold="k" data-first="YYYY-MM-DD" data-last="YYYY-MM-DD">)
// bounded by a dashed line at its first session and labelled "fold k", and a table of the
// folds (windows, Sharpe ratio, cumulative return, max drawdown, benchmarks, run directory).
// Self-contained like WriteReport.
Status WriteWalkforwardReport(const std::string& dir);

// The report of a hyperparameter study (`rltrade tune`, evalrun/tune_run.h): reads
// `dir`/study.json, trials.jsonl and, when present, test_evaluation.json, and writes
// `dir`/report.html: the best trial (objective on the validation range, parameters; with
// successive halving its rung and steps), the out-of-sample figure apart (id
// "out-of-sample", only when the study evaluated the test range), the objective of every
// finished trial (rung) in the order it finished with the running best (successive
// halving: dots coloured by rung), one scatter of the objective against each parameter
// (a logarithmic axis when its values are positive and span more than a factor of 20; one
// column per value for text choices), and a table of the 15 best trials. Self-contained
// like WriteReport; a journal line cut by a kill ends the journal, as for --resume.
Status WriteTuneReport(const std::string& dir);

// Whether [data] key `key` applies to data of `source`: source, days, bar_minutes, seed and
// signal_to_noise only to "synthetic"; file, timezone, symbol, on_bad_rows and session
// only to "file"; any other key to both.
bool DataSettingApplies(const std::string& source, const std::string& key);

// "&", "<", ">", '"' and "'" replaced by their HTML entities.
std::string HtmlEscape(const std::string& text);

}  // namespace rlt::eval

#endif  // RLT_EVAL_REPORT_H_
