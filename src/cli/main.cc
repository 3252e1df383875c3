// rltrade: the command-line entry point. Parses the command line with CLI11, runs the
// chosen command and returns its exit code (0 ok, 1 failure, 2 usage error).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"

namespace rlt::cli {
int ReportError(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return 1;
}
}  // namespace rlt::cli

int main(int argc, char** argv) {
  CLI::App app{
      "rltrade: train and evaluate trading agents fast and honestly.\n"
      "Run `rltrade COMMAND --help` for a command's options."};
  app.require_subcommand(1);
  rlt::cli::Action action;
  rlt::cli::RegisterDataCommands(app, &action);
  rlt::cli::RegisterFeatureCommands(app, &action);
  rlt::cli::RegisterBenchCommands(app, &action);
  rlt::cli::RegisterDemoCommand(app, &action);
  rlt::cli::RegisterTrainCommand(app, &action);
  rlt::cli::RegisterMetricsCommand(app, &action);
  rlt::cli::RegisterReportCommand(app, &action);
  rlt::cli::RegisterStatusCommand(app, &action);
  rlt::cli::RegisterEvalCommand(app, &action);
  rlt::cli::RegisterWalkforwardCommand(app, &action);
  rlt::cli::RegisterSignalCommand(app, &action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return action ? action() : 0;
}
