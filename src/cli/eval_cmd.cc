// rltrade cli: `rltrade eval RUN_DIR [--range test|train|validation|START:END] [--data FILE]
// [--policy trained|flat|buy-and-hold|rule:NAME] [--allow-in-sample] [--json]
// [--episodes N] [--checkpoint DIR]`. Flag parsing only; the work is in evalrun/evalrun.h.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/commands.h"
#include "evalrun/evalrun.h"

namespace rlt::cli {
namespace {

struct EvalFlags {
  evalrun::EvalRequest request;
  bool json = false;
};

int RunEval(const EvalFlags& f) {
  Result<evalrun::EvalOutcome> out = evalrun::RunEvaluation(f.request);
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
      "eval", "Backtest a trained run out of sample and write RUN_DIR/eval/<range>/");
  cmd->add_option("run_dir", f->request.run_dir, "run directory written by `rltrade train`")
      ->required();
  cmd->add_option("--range", f->request.range,
                  "a [split] name (test, train, validation) or START:END dates (default test)");
  cmd->add_option("--data", f->request.data_file,
                  "bar CSV replacing the run's data (same features and stored normaliser)");
  cmd->add_option("--policy", f->request.policy,
                  "trained, flat, buy-and-hold or rule:NAME (rule:momentum5)");
  cmd->add_flag("--allow-in-sample", f->request.allow_in_sample,
                "allow a range that overlaps training (outputs are labelled IN-SAMPLE)");
  cmd->add_option("--episodes", f->request.episodes,
                  "episodic environments: deterministic episodes (default 10)");
  cmd->add_option("--checkpoint", f->request.checkpoint,
                  "checkpoint directory of the trained policy (default RUN_DIR/final)");
  cmd->add_flag("--json", f->json, "print summary.json instead of the table");
  cmd->callback([f, action] { *action = [f] { return RunEval(*f); }; });
}

}  // namespace rlt::cli
