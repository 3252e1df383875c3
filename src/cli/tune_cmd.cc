// rltrade cli: `rltrade tune [CONFIG] --space SPACE.toml
// [--method random|sobol|anneal|tpe|cmaes|asha] [--prune none|asha] [--trials N]
// [--objective METRIC] [--objective-fn branin|rosenbrock|hartmann6] [--out DIR] [--resume DIR]
// [--seed S] [--set section.key=value ...] [--json] [--quiet]`. Flag parsing only; the work
// is in evalrun/tune_run.h.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <memory>

#include "cli/commands.h"
#include "dist/dist.h"
#include "evalrun/tune_run.h"
#include "tune/study.h"

namespace rlt::cli {
namespace {

struct TuneFlags {
  evalrun::TuneRequest request;
  std::string seed;  // as given: parsed by ParseSeed
  bool json = false;
};

// --seed: a whole number in 0 .. 2^64 - 1, digits only (no sign: "-1" would wrap to the
// largest value, and a longer number would saturate to it).
Result<uint64_t> ParseSeed(const std::string& text) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, v);
  if (text.empty() || text[0] < '0' || text[0] > '9' || r.ec != std::errc() || r.ptr != end) {
    return Status::Refused("--seed " + text +
                           ": expected a whole number from 0 to 18446744073709551615");
  }
  return v;
}

int RunTune(TuneFlags& f) {
  if (!f.seed.empty()) {
    Result<uint64_t> seed = ParseSeed(f.seed);
    if (!seed.ok()) return ReportError(seed.status());
    f.request.seed = *seed;
  }
  Result<evalrun::TuneOutcome> out = evalrun::RunTune(f.request);
  if (!out.ok()) return ReportErrorOnRankZero(out.status());  // under mpirun, rank 0 reports
  if (dist::Rank() != 0) return 0;
  fmt::print("{}\n", out->json);
  if (!f.json) {
    fmt::print(stderr, "wrote {} (trials.jsonl, results.csv, best.json)\n", out->out_dir);
  }
  if (!out->test_report.empty()) fmt::print(stderr, "{}\n", out->test_report);
  return 0;
}

}  // namespace

void RegisterTuneCommand(CLI::App& app, Action* action) {
  auto f = std::make_shared<TuneFlags>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Search hyperparameters, scoring trials on the validation range only");
  cmd->add_option("config", f->request.config_path, "CONFIG.toml (not with --objective-fn)");
  cmd->add_option("--space", f->request.space_path,
                  "SPACE.toml: the search space (required unless --resume)");
  cmd->add_option("--method", f->request.method,
                  "random, sobol, anneal, tpe (tree-structured Parzen estimator), cmaes (CMA-ES), "
                  "or asha (asynchronous successive halving on training steps)")
      ->check(CLI::IsMember({"random", "sobol", "anneal", "tpe", "cmaes", "asha"}));
  cmd->add_option("--prune", f->request.prune,
                  "asha: successive halving on training steps with the method's points (the "
                  "method learns from each trial's first-rung score); none: every trial trains "
                  "the full budget")
      ->check(CLI::IsMember({"none", "asha"}));
  cmd->add_option("--trials", f->request.trials, "number of trials")
      ->check(CLI::Range(1, tune::kMaxTrials));
  cmd->add_option("--objective", f->request.objective,
                  "metric of the validation evaluation (default sharpe_ratio; mean_return for "
                  "episodic environments)");
  cmd->add_option("--objective-fn", f->request.objective_fn,
                  "an analytic function to minimise instead of training (keys x1, x2, ...); with "
                  "--prune asha a rung below the full budget sees it through noise that "
                  "shrinks with the budget (docs/tuning.md)")
      ->check(CLI::IsMember({"branin", "rosenbrock", "hartmann6"}));
  cmd->add_option("--out", f->request.out_dir, "output directory (default runs/tune-<time>)");
  cmd->add_option("--resume", f->request.resume_dir,
                  "continue a killed or finished-early study from its journal; its arguments "
                  "come from DIR/study.json");
  cmd->add_option("--seed", f->seed, "the search's seed (0 to 18446744073709551615)");
  cmd->add_option("--parallel", f->request.parallel,
                  "trials at once (0: cores / [run] threads; anneal: always 1; tpe, cmaes: "
                  "trial i is proposed when trials up to i - P have finished)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--eta", f->request.eta,
                  "asha: reduction factor; the top 1/eta of a rung climbs to eta x the steps")
      ->check(CLI::Range(2, 1000));
  cmd->add_option("--min-steps", f->request.min_steps,
                  "asha: training steps of the first rung (default [run] total_steps / eta^3)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 50));
  cmd->add_option("--set", f->request.overrides,
                  "override a config value for every trial: section.key=value (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--json", f->json, "print only the result JSON");
  cmd->add_flag("--quiet", f->request.quiet, "no per-trial lines");
  cmd->callback([f, action, cmd] {
    // Which arguments were given: a resume compares them with the study's, and a study
    // refuses flags it would not use.
    for (const char* name :
         {"config", "--space", "--method", "--prune", "--trials", "--objective", "--objective-fn",
          "--out", "--seed", "--eta", "--min-steps", "--set"}) {
      if (cmd->get_option(name)->count() > 0) f->request.given.insert(name);
    }
    *action = [f] { return RunTune(*f); };
  });
}

}  // namespace rlt::cli
