// rltrade mine: the output directory of a mining run.
//
//   signals.csv   every candidate, ranked ones first (best first), then the constant ones:
//                 rank, name, kind, sign, cv_score, cv_score_other_sign, fold_1..fold_k,
//                 q_lo, q_hi (final thresholds), train_mean, train_sharpe (per unit),
//                 kept, cluster (the kept signal it correlates with), cluster_corr, dsr,
//                 val_mean, val_sharpe, val_total, val_units (empty without validation),
//                 status (kept | correlated | constant)
//   preset.toml   the kept list as `signals = [...]` (best first) and a [mine] table of
//                 provenance (how it was made)
//   report.html   self-contained page (inline SVG, no script, no network): the ranking with
//                 95 % intervals from the fold scores, the kept signals' correlation map
//   summary.json  the run's settings and figures (trials, V, SR0, survivors, expected
//                 false discoveries, the kept list)
// Written into a staging directory and renamed (runlog/atomic_dir.h): a reader sees all
// four files or none.
#ifndef RLT_MINE_OUTPUTS_H_
#define RLT_MINE_OUTPUTS_H_

#include <string>
#include <vector>

#include "core/status.h"
#include "mine/mine.h"

namespace rlt::mine {

struct Provenance {
  std::string command;     // the command line
  std::string source;      // input files (or the config)
  std::string candidates;  // where the candidates came from, e.g. "features preset scaled"
  std::vector<std::string> symbols;
};

std::string SignalsCsv(const MineResult& result, const MineOptions& options);
std::string PresetToml(const MineResult& result, const MineOptions& options,
                       const Provenance& provenance);
std::string SummaryJson(const MineResult& result, const MineOptions& options,
                        const Provenance& provenance);
std::string ReportHtml(const MineResult& result, const MineOptions& options,
                       const Provenance& provenance);

// Writes the four files into `dir` atomically. An existing `dir` is replaced only when it
// holds a previous mining run's files (signals.csv and preset.toml); otherwise an error.
Status WriteMineDir(const std::string& dir, const MineResult& result, const MineOptions& options,
                    const Provenance& provenance);

}  // namespace rlt::mine

#endif  // RLT_MINE_OUTPUTS_H_
