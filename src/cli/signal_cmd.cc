// rltrade cli: `rltrade signal RUN_DIR --bars FILE [--json] [--checkpoint best|final|DIR]
// [--position F] [--seed S | --ensemble mean|median|vote]`. Flag parsing only; the work is in
// evalrun/signal.h.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "core/printable.h"
#include "evalrun/ensemble.h"
#include "evalrun/signal.h"
#include "train/seeds.h"

namespace rlt::cli {
namespace {

struct SignalFlags {
  evalrun::SignalRequest request;
  bool json = false;
  std::optional<uint64_t> seed;  // one seed of a multi-seed run
  std::string ensemble;          // --ensemble mean|median|vote (multi-seed runs)
};

// A multi-seed run without --seed: its seeds' ensemble; else one run (or the seed --seed
// names).
Result<evalrun::Signal> Compute(const SignalFlags& f) {
  evalrun::SignalRequest request = f.request;
  RLT_ASSIGN_OR_RETURN(const std::optional<train::SeedsIndex> index,
                       train::ReadSeedsIndex(request.run_dir));
  RLT_RETURN_IF_ERROR(evalrun::CheckEnsembleFlags(f.ensemble, f.seed.has_value(), index.has_value(),
                                                  request.run_dir));
  if (index && !f.seed) {
    return evalrun::ComputeEnsembleSignal(request, index->seeds, index->SeedRuns(request.run_dir),
                                          f.ensemble);
  }
  RLT_ASSIGN_OR_RETURN(request.run_dir, train::ResolveSeedRun(request.run_dir, f.seed));
  return evalrun::ComputeSignal(request);
}

int RunSignal(const SignalFlags& f) {
  Result<evalrun::Signal> out = Compute(f);
  if (!out.ok()) return ReportError(out.status());
  fmt::print("{}", f.json ? out->json : PrintableText(out->text, size_t{1} << 20));
  return 0;
}

}  // namespace

void RegisterSignalCommand(CLI::App& app, Action* action) {
  auto f = std::make_shared<SignalFlags>();
  CLI::App* cmd = app.add_subcommand(
      "signal", "Print a trained run's decision for the latest of some recent bars");
  cmd->add_option("run_dir", f->request.run_dir, "run directory written by `rltrade train`")
      ->required();
  cmd->add_option("--bars", f->request.bars_file,
                  "bar CSV of recent bars (>= feature warm-up + nlags + 1 rows; more history "
                  "makes smoothed indicators match training)")
      ->required();
  cmd->add_flag("--json", f->json,
                "print JSON (time, symbol, action, amount | target_exposure, value, bars_used)");
  cmd->add_option("--checkpoint", f->request.checkpoint,
                  "the trained policy's checkpoint: best (RUN_DIR/best, selected on validation), "
                  "final (RUN_DIR/final) or a checkpoint directory (default: best when the run "
                  "has it, else final)");
  cmd->add_option("--position", f->request.position,
                  "current exposure, position value / net worth in [-1, 1] (default 0: flat; "
                  "unrealised PnL is taken as 0)");
  cmd->add_option_function<uint64_t>(
      "--seed", [f](const uint64_t& s) { f->seed = s; },
      "the seed whose policy decides, for a run trained with --seeds N (default: the ensemble "
      "of its seeds, each seed's decision printed too)");
  cmd->add_option("--ensemble", f->ensemble,
                  "a run trained with --seeds N: how its seeds' actions combine: mean, median or "
                  "vote (default: vote for action_mode original, mean for target_position)");
  cmd->add_option("--symbol", f->request.symbol,
                  "a run trained on several symbols ([data] symbols): the symbol of the bars "
                  "(its normaliser and one-hot id are applied)");
  cmd->add_flag("--allow-mismatch", f->request.allow_mismatch,
                "accept bars whose bar size, symbol or time zone differ from the run's data");
  cmd->add_flag("--allow-data-change", f->request.allow_data_change,
                "use bars whose sessions of the training range differ from the run's record");
  cmd->callback([f, action] { *action = [f] { return RunSignal(*f); }; });
}

}  // namespace rlt::cli
