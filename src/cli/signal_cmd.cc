// rltrade cli: `rltrade signal RUN_DIR --bars FILE [--json] [--checkpoint DIR]
// [--position F]`. Flag parsing only; the work is in evalrun/signal.h.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/commands.h"
#include "evalrun/signal.h"

namespace rlt::cli {
namespace {

struct SignalFlags {
  evalrun::SignalRequest request;
  bool json = false;
};

int RunSignal(const SignalFlags& f) {
  Result<evalrun::Signal> out = evalrun::ComputeSignal(f.request);
  if (!out.ok()) return ReportError(out.status());
  fmt::print("{}", f.json ? out->json : out->text);
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
                  "checkpoint directory of the trained policy (default RUN_DIR/final)");
  cmd->add_option("--position", f->request.position,
                  "current exposure, position value / net worth in [-1, 1] (default 0: flat; "
                  "unrealised PnL is taken as 0)");
  cmd->callback([f, action] { *action = [f] { return RunSignal(*f); }; });
}

}  // namespace rlt::cli
