// rltrade cli: `rltrade walkforward CONFIG --folds K [--train-days N] [--test-days M]
// [--rolling] [--seeds N [--ensemble mean|median|vote]] [--out DIR] [--set section.key=value ...]
// [--quiet] [--json]`. Flag parsing only; the work is in evalrun/walkforward.h.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "dist/dist.h"
#include "evalrun/walkforward.h"

namespace rlt::cli {
namespace {

struct WalkforwardFlags {
  evalrun::WalkforwardRequest request;
  bool json = false;
};

int RunWalkforward(const WalkforwardFlags& f) {
  evalrun::WalkforwardRequest request = f.request;
  std::error_code ec;
  request.executable = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) request.executable = "/proc/self/exe";
  Result<evalrun::WalkforwardOutcome> out = evalrun::RunWalkforward(request);
  // Under mpirun every rank returns rank 0's verdict; rank 0 alone reports it.
  if (!out.ok()) return ReportErrorOnRankZero(out.status());
  if (dist::Rank() != 0) return out->exit_code;
  if (out->exit_code != 0) return out->exit_code;
  fmt::print("{}", f.json ? out->summary_json : out->table);
  fmt::print(stderr, "wrote {} (report: {}/report.html)\n", out->summary_dir, out->summary_dir);
  return 0;
}

}  // namespace

void RegisterWalkforwardCommand(CLI::App& app, Action* action) {
  auto f = std::make_shared<WalkforwardFlags>();
  CLI::App* cmd = app.add_subcommand(
      "walkforward",
      "Train and evaluate K walk-forward folds; report the concatenated out-of-sample returns");
  cmd->add_option("config", f->request.config_path, "CONFIG.toml (a market environment)")
      ->required();
  cmd->add_option("--folds", f->request.folds, "number of folds K (>= 1)")->required();
  // 0 stands for "not given" in the request: a given 0 is an error, not the default.
  cmd->add_option("--train-days", f->request.train_days,
                  "sessions in the first (rolling: every) training window (default half)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--test-days", f->request.test_days,
                  "sessions per test window (default: the rest split evenly into K)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_flag("--rolling", f->request.rolling,
                "train on the last --train-days sessions before each test window (default: "
                "every session before it)");
  cmd->add_option("--out", f->request.out_dir,
                  "output directory (default runs/<config>-walkforward-<time>)")
      ->check(CLI::Validator(
          [](std::string& v) { return v.empty() ? std::string("must not be empty") : ""; }, "DIR"));
  cmd->add_option("--set", f->request.overrides,
                  "override a config value for every fold: section.key=value (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--quiet", f->request.quiet, "no training progress output");
  cmd->add_option("--seeds", f->request.seeds,
                  "train N seeds per fold (run.seed .. run.seed+N-1); the folds' seed-averaged "
                  "returns are concatenated (overrides [run] seeds)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--ensemble", f->request.ensemble,
                  "with --seeds N: how each fold's ensemble of its seeds combines their actions, "
                  "evaluated beside the seed average: mean, median or vote (default: vote for "
                  "action_mode original, mean for target_position)");
  cmd->add_flag("--json", f->json, "print summary.json instead of the table");
  cmd->callback([f, action] { *action = [f] { return RunWalkforward(*f); }; });
}

}  // namespace rlt::cli
