// rltrade cli: `rltrade eval RUN_DIR [--range test|train|validation|START:END] [--data FILE]
// [--policy trained|flat|buy-and-hold|random|rule:NAME] [--allow-in-sample] [--json]
// [--episodes N] [--checkpoint best|final|DIR] [--periods N] [--seed S | --ensemble
// mean|median|vote] [--trials N] [--set env.KEY=VALUE] [--costs BPS,...]`. Flag parsing only;
// the work is in evalrun/evalrun.h, evalrun/seeds_eval.h and evalrun/ensemble.h.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "evalrun/ensemble.h"
#include "evalrun/evalrun.h"
#include "evalrun/seeds_eval.h"
#include "train/seeds.h"

namespace rlt::cli {
namespace {

struct EvalFlags {
  evalrun::EvalRequest request;
  bool json = false;
  std::optional<uint64_t> seed;   // one seed of a multi-seed run
  int trials = 0;                 // deflated Sharpe ratio: trials tried (0 = the seeds)
  std::vector<std::string> sets;  // --set env.KEY=VALUE
  std::string costs;              // --costs BPS,BPS,...
  bool costs_given = false;       // --costs was given (an empty list is an error)
  std::string ensemble;           // --ensemble mean|median|vote (multi-seed runs)
};

// A multi-seed run (RUN/seeds.json): every seed and the result across seeds, or the one
// seed --seed names.
Result<evalrun::EvalOutcome> Evaluate(const EvalFlags& f) {
  Result<std::optional<train::SeedsIndex>> index = train::ReadSeedsIndex(f.request.run_dir);
  if (!index.ok()) return index.status();
  RLT_RETURN_IF_ERROR(evalrun::CheckEnsembleFlags(f.ensemble, f.seed.has_value(),
                                                  index->has_value(), f.request.run_dir));
  if (*index && !f.seed && !f.request.cost_levels_bps.empty() && f.request.policy != "trained") {
    return Status::InvalidArgument(
        "--costs on a multi-seed run sweeps the seeds' ensemble (of "
        "--policy trained); give --seed S to sweep --policy " +
        f.request.policy + " on one seed's run");
  }
  if (!*index || f.seed) {
    evalrun::EvalRequest one = f.request;
    RLT_ASSIGN_OR_RETURN(one.run_dir, train::ResolveSeedRun(f.request.run_dir, f.seed));
    if (f.trials != 0) {
      return Status::InvalidArgument(
          "--trials applies to the evaluation of every seed of a multi-seed run");
    }
    return evalrun::RunEvaluation(one);
  }
  evalrun::SeedsEvalRequest request;
  request.eval = f.request;
  request.seeds = (*index)->seeds;
  request.trials = f.trials;
  request.ensemble = f.ensemble;
  return evalrun::RunSeedsEvaluation(request);
}

// --set and --costs into the request, checked before anything is read or written.
Status ParseSettings(EvalFlags& f) {
  for (const std::string& text : f.sets) {
    RLT_RETURN_IF_ERROR(evalrun::ParseEvalSetting(text, f.request.env_settings));
  }
  if (f.costs_given) {
    RLT_ASSIGN_OR_RETURN(f.request.cost_levels_bps, evalrun::ParseCostLevels(f.costs));
  }
  return Status::Ok();
}

int RunEval(EvalFlags f) {
  if (Status st = ParseSettings(f); !st.ok()) return ReportError(st);
  Result<evalrun::EvalOutcome> out = Evaluate(f);
  if (!out.ok()) return ReportError(out.status());
  if (f.json) {
    fmt::print("{}", out->summary_json);
  } else {
    fmt::print("{}", out->table);
  }
  fmt::print(stderr, "{}wrote {}\n", out->in_sample ? "IN-SAMPLE evaluation: " : "", out->out_dir);
  return 0;
}

}  // namespace

void RegisterEvalCommand(CLI::App& app, Action* action) {
  auto f = std::make_shared<EvalFlags>();
  CLI::App* cmd = app.add_subcommand(
      "eval", "Backtest a trained run out of sample and write RUN_DIR/eval/<name>/");
  cmd->add_option("run_dir", f->request.run_dir, "run directory written by `rltrade train`")
      ->required();
  cmd->add_option("--range", f->request.range,
                  "a [split] name (test, train, validation) or START:END dates (default test)");
  cmd->add_option("--data", f->request.data_file,
                  "bar CSV replacing the run's data (same features and stored normaliser), or the "
                  "run's data where it is now if it moved (checked against RUN_DIR/data.json)");
  cmd->add_flag("--allow-data-change", f->request.allow_data_change,
                "use bars whose sessions of the training range differ from the run's record");
  cmd->add_flag("--allow-mismatch", f->request.allow_mismatch,
                "use bars of another symbol than the run trained on");
  cmd->add_option(
      "--policy", f->request.policy,
      "trained, flat, buy-and-hold, random (uniform actions) or rule:NAME (rule:momentum5); "
      "the hedging env on a chain: trained or bs-delta");
  cmd->add_flag("--allow-in-sample", f->request.allow_in_sample,
                "allow a range that overlaps training (outputs are labelled IN-SAMPLE)");
  cmd->add_option("--episodes", f->request.episodes,
                  "episodic environments: deterministic episodes (default 10)");
  cmd->add_option("--checkpoint", f->request.checkpoint,
                  "the trained policy's checkpoint: best (RUN_DIR/best, selected on validation), "
                  "final (RUN_DIR/final) or a checkpoint directory (default: best when the run "
                  "has it, else final)");
  cmd->add_option("--periods", f->request.periods_per_year,
                  "periods per year that annualise the ratios (default from the data: 365 when "
                  "a fifth of the sessions fall on weekends, else 252)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--set", f->sets,
                  "env.KEY=VALUE, repeatable: an execution setting replacing the run's "
                  "(env.cost_rate, env.fixed_cost, env.fill, env.lot_size; nothing the policy "
                  "observes); names the output <range>...set-KEY-VALUE")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option_function<std::string>(
      "--costs",
      [f](const std::string& text) {
        f->costs = text;
        f->costs_given = true;
      },
      "cost levels in basis points, e.g. 0,1,2,5,10: the policy walked once per "
      "level (cost_rate = bps / 10,000), a table and the break-even cost, written "
      "to costs.csv and costs.json (a multi-seed run without --seed: the ensemble's)");
  cmd->add_option("--symbol", f->request.symbol,
                  "a run trained on several symbols ([data] symbols): evaluate only this one "
                  "(default: every symbol, and their equal-weight portfolio in "
                  "RUN/eval/<range>/)");
  cmd->add_flag("--json", f->json, "print summary.json instead of the table");
  cmd->add_option_function<uint64_t>(
      "--seed", [f](const uint64_t& s) { f->seed = s; },
      "a run trained with --seeds N: evaluate only this seed (default: every seed, the "
      "result across seeds in RUN/eval/<range>/ and the seeds' ensemble)");
  cmd->add_option("--ensemble", f->ensemble,
                  "a run trained with --seeds N: how the ensemble of its seeds combines their "
                  "actions, evaluated beside every seed: mean, median or vote (default: vote for "
                  "action_mode original, mean for target_position; docs/evaluation.md)");
  cmd->add_option("--trials", f->trials,
                  "deflated Sharpe ratio: the number of trials tried (every seed and "
                  "configuration; default the run's seeds)")
      ->check(CLI::Range(1, 1000000));
  cmd->callback([f, action] { *action = [f] { return RunEval(*f); }; });
}

}  // namespace rlt::cli
