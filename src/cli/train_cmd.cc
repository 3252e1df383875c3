// rltrade cli: `rltrade train CONFIG.toml [--set section.key=value ...] [--run-dir DIR]
// [--seeds N] [--resume DIR [--seed S]] [--quiet]`. Flag parsing only; the work is in
// train/train.h and train/seeds.h.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "dist/dist.h"
#include "train/seeds.h"
#include "train/train.h"

namespace rlt::cli {
namespace {

int RunTrain(const train::TrainRequest& request) {
  if (request.config_path.empty() && request.resume_dir.empty()) {
    return ReportError(Status::InvalidArgument("give a CONFIG.toml or --resume RUN_DIR"));
  }
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  const std::string executable = ec ? std::string("/proc/self/exe") : self;
  // Under mpirun the seeds of a run are spread over the ranks; rank 0 alone reports.
  Result<train::TrainOutcome> out = dist::Distributed()
                                        ? train::RunSeedsOnRanks(request, executable)
                                        : train::RunTrainCommand(request, executable);
  if (!out.ok()) return ReportErrorOnRankZero(out.status());
  if (dist::Rank() != 0) return out->exit_code;
  if (!request.quiet) {
    if (out->exit_code != 0) {
      fmt::print(stderr, "interrupted at step {}: checkpoint written; continue with --resume {}\n",
                 out->total_steps, out->run_dir);
    } else {
      fmt::print(stderr, "trained {} steps: {}\n", out->total_steps, out->run_dir);
    }
  }
  return out->exit_code;
}

}  // namespace

void RegisterTrainCommand(CLI::App& app, Action* action) {
  auto r = std::make_shared<train::TrainRequest>();
  CLI::App* cmd = app.add_subcommand("train", "Train an agent from a TOML config");
  cmd->add_option("config", r->config_path, "CONFIG.toml (see configs/)");
  cmd->add_option("--set", r->overrides, "override a config value: section.key=value (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--run-dir", r->run_dir, "run directory (default runs/<config>-<time>)")
      ->check(CLI::Validator(
          [](std::string& v) { return v.empty() ? std::string("must not be empty") : ""; }, "DIR"));
  cmd->add_option("--resume", r->resume_dir, "continue a run from its newest checkpoint");
  cmd->add_flag("--quiet", r->quiet, "no progress output");
  cmd->add_option("--seeds", r->seeds,
                  "train N seeds (run.seed .. run.seed+N-1) into RUN/seed_<seed>/, in parallel "
                  "where cores allow (overrides [run] seeds)")
      ->check(CLI::Range(1, train::kMaxSeeds));
  cmd->add_option("--parallel", r->parallel,
                  "with several seeds: at most P seeds train at once (default: as many as the "
                  "cores allow; each then gets its share of the cores)")
      ->check(CLI::Range(1, train::kMaxSeeds));
  cmd->add_option_function<uint64_t>(
      "--seed", [r](const uint64_t& s) { r->seed = s; },
      "with --resume of a multi-seed run: resume only this seed");
  cmd->add_flag("--allow-config-change", r->allow_config_change,
                "with --resume: accept --set changes beyond run.total_steps, run.threads, "
                "run.checkpoint_every, run.eval_every, policy.backend (logged in history.jsonl)");
  cmd->callback([r, action] { *action = [r] { return RunTrain(*r); }; });
}

}  // namespace rlt::cli
