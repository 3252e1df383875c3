// rltrade: the command-line entry point. Parses the command line with CLI11, runs the
// chosen command and returns its exit code (0 ok, 1 failure, 2 usage error).
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <system_error>

#include "cli/commands.h"
#include "cli/version.h"
#include "core/printable.h"
#include "core/process_env.h"
#include "dist/dist.h"

namespace rlt::cli {
namespace {
// 2 for a refusal (bad input or a usage the command does not allow), 1 for a failure.
int ExitCodeOf(const Status& status) { return status.code() == Status::Code::kRefused ? 2 : 1; }
}  // namespace

int ReportError(const Status& status) {
  // Messages quote input: never echo binary bytes or a megabyte line (core/printable.h).
  std::fprintf(stderr, "error: %s\n", PrintableText(status.message()).c_str());
  return ExitCodeOf(status);
}

int ReportErrorOnRankZero(const Status& status) {
  if (dist::Rank() == 0) return ReportError(status);
  dist::DeferReport("error: rank " + std::to_string(dist::Rank()) + ": " +
                    PrintableText(status.message()));
  return ExitCodeOf(status);
}

int FinishStdout(int exit_code) {
  // Everything a command printed (fmt::print, printf, std::cout) must have reached its
  // destination: a full disk or a closed pipe behind stdout is a failure, not exit 0.
  errno = 0;
  std::cout.flush();
  const bool cout_failed = !std::cout.good();
  const bool flush_failed = std::fflush(stdout) != 0;
  const bool stream_failed = std::ferror(stdout) != 0;
  int err = errno;
  const bool close_failed = std::fclose(stdout) != 0;
  if (close_failed && err == 0) err = errno;
  if (!(cout_failed || flush_failed || stream_failed || close_failed)) return exit_code;
  std::fprintf(stderr, "error: writing to standard output failed: %s; the output is incomplete\n",
               err != 0 ? std::strerror(err) : "write error");
  return exit_code == 0 ? 1 : exit_code;
}
}  // namespace rlt::cli

// LibTorch's and OpenBLAS's pools must sleep when idle, which they only learn from the
// environment when they are loaded: this executable's getenv() supplies the defaults
// (core/process_env.h).
RLT_THREADING_ENVIRONMENT_DEFAULTS()

namespace {

// Under mpirun, the commands that spread their work over the ranks; the others would run
// K copies of the same job into the same directories, so they are refused.
bool RunsOnRanks(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {
    if (sub->get_name() == "walkforward" || sub->get_name() == "train" ||
        sub->get_name() == "tune") {
      return true;
    }
    if (sub->get_name() == "bench") {  // bench mpi, and bench train data-parallel
      for (const CLI::App* b : sub->get_subcommands()) {
        if (b->get_name() == "mpi" || b->get_name() == "train") return true;
      }
    }
  }
  return false;
}

int Main(int argc, char** argv) {
  CLI::App app{
      "rltrade: train and evaluate trading agents fast and honestly.\n"
      "Run `rltrade COMMAND --help` for a command's options."};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", [] { return rlt::cli::VersionText(); },
      "print the version, the commit, the build type and which optional parts "
      "(LibTorch backend, MPI) this build has, and exit");
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
  rlt::cli::RegisterMineCommand(app, &action);
  rlt::cli::RegisterPricingCommands(app, &action);  // after bench: adds `bench pricing`
  rlt::cli::RegisterChainCommands(app, &action);
  rlt::cli::RegisterHedgeCommand(app, &action);
  rlt::cli::RegisterRetrievalCommands(app, &action);
  rlt::cli::RegisterTuneCommand(app, &action);
  rlt::cli::RegisterPaperCommand(app, &action);
  rlt::cli::RegisterExchangeSimCommand(app, &action);
  rlt::cli::RegisterCheckpointCommands(app, &action);
  rlt::cli::RegisterDocsCommands(app, &action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (rlt::dist::Distributed() && !RunsOnRanks(app)) {
    if (rlt::dist::Rank() == 0) {
      std::fprintf(stderr,
                   "error: under mpirun (%d ranks) only `rltrade walkforward` (its folds), "
                   "`rltrade train` (its seeds, or one policy data-parallel) and `rltrade tune` "
                   "(its trials) spread their work over the ranks, and `rltrade bench mpi` / "
                   "`bench train` measure them; run this command without mpirun\n",
                   rlt::dist::Size());
    }
    return 2;
  }
  int code = 0;
  try {
    code = action ? action() : 0;
  } catch (const std::system_error& e) {  // fmt::print reports a failed fwrite by throwing
    std::fprintf(stderr, "error: writing output failed: %s\n", e.what());
    code = 1;
  } catch (const std::bad_alloc&) {
    // The last resort: inputs are validated and memory is estimated first,
    // so reaching this is a gap in those checks.
    std::fprintf(stderr,
                 "error: out of memory; lower the sizes in the config (env.num_envs, "
                 "algo.n_steps, policy.pi/vf) or the input's size\n");
    code = 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: internal error (please report it with the command): %s\n",
                 rlt::PrintableText(e.what(), 500).c_str());
    code = 1;
  }
  return rlt::cli::FinishStdout(code);
}

}  // namespace

int main(int argc, char** argv) {
  rlt::dist::Init(&argc, &argv);
  // Under mpirun a rank that refused or failed may have left the others working or
  // waiting for it in a collective: Finish ends the job with it (dist.h).
  const int code = rlt::dist::Finish(Main(argc, argv));
  rlt::dist::Finalize();
  return code;
}
