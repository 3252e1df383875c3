// rltrade cli: `rltrade report EVAL_DIR` — regenerates EVAL_DIR/report.html.
//
// EVAL_DIR is an evaluation directory written by `rltrade eval` (RUN_DIR/eval/<name>,
// files as in eval/outputs.h), including the result across seeds and the portfolio of
// several symbols. The page is rebuilt from those files alone, so a report can
// be refreshed after the report code changes without re-running the backtest. Flag parsing
// only; the work is in eval/report.h.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "eval/outputs.h"
#include "eval/report.h"

namespace rlt::cli {

void RegisterReportCommand(CLI::App& app, Action* action) {
  auto eval_dir = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Regenerate the HTML report of an evaluation (RUN_DIR/eval/<name>)");
  cmd->add_option("EVAL_DIR", *eval_dir,
                  "evaluation directory with summary.json, equity.csv, daily_returns.csv "
                  "and trades.csv")
      ->required();
  cmd->callback([eval_dir, action] {
    *action = [eval_dir] {
      // The directory's files say which evaluation it is: a portfolio of several symbols,
      // the result across seeds, or one evaluation.
      std::error_code ec;
      const Status status = std::filesystem::exists(*eval_dir + "/symbols_daily_returns.csv", ec)
                                ? eval::WriteSymbolsReport(*eval_dir)
                            : std::filesystem::exists(*eval_dir + "/seeds_daily_returns.csv", ec)
                                ? eval::WriteSeedsReport(*eval_dir)
                                : eval::WriteReport(*eval_dir);
      if (!status.ok()) return ReportError(status);
      std::printf("wrote %s/%s\n", eval_dir->c_str(), eval::kReportFile);
      return 0;
    };
  });
}

}  // namespace rlt::cli
