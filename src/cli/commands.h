// rltrade cli: how subcommands plug into the `rltrade` binary.
//
// Each group of commands lives in one file (data_cmd.cc, features_cmd.cc, ...) and
// exposes one Register*() function. Registering adds CLI11 subcommands to the app; when
// the user picks one, its callback stores what to run in *action. main() runs it after
// parsing and returns its exit code: 0 success, 1 failure (bad input, I/O), 2 usage.
#ifndef RLT_CLI_COMMANDS_H_
#define RLT_CLI_COMMANDS_H_

#include <functional>

#include "core/status.h"

namespace CLI {
class App;
}

namespace rlt::cli {

using Action = std::function<int()>;

void RegisterDataCommands(CLI::App& app, Action* action);        // data check, data synth
void RegisterFeatureCommands(CLI::App& app, Action* action);     // indicator, features
void RegisterBenchCommands(CLI::App& app, Action* action);       // bench env|machine|train
void RegisterDemoCommand(CLI::App& app, Action* action);         // demo
void RegisterTrainCommand(CLI::App& app, Action* action);        // train
void RegisterMetricsCommand(CLI::App& app, Action* action);      // metrics
void RegisterReportCommand(CLI::App& app, Action* action);       // report
void RegisterStatusCommand(CLI::App& app, Action* action);       // status
void RegisterEvalCommand(CLI::App& app, Action* action);         // eval
void RegisterWalkforwardCommand(CLI::App& app, Action* action);  // walkforward
void RegisterSignalCommand(CLI::App& app, Action* action);       // signal
void RegisterMineCommand(CLI::App& app, Action* action);         // mine (mine/mine.h)
// price, iv, bench pricing. REQUIRES: RegisterBenchCommands ran first (adds to `bench`).
void RegisterPricingCommands(CLI::App& app, Action* action);
void RegisterChainCommands(CLI::App& app, Action* action);  // chain check, chain synth
void RegisterHedgeCommand(CLI::App& app, Action* action);   // hedge
// retrieval synth, retrieval train, retrieval eval
void RegisterRetrievalCommands(CLI::App& app, Action* action);
void RegisterTuneCommand(CLI::App& app, Action* action);   // tune
void RegisterPaperCommand(CLI::App& app, Action* action);  // paper
// checkpoint convert (learn/checkpoint.h ConvertCheckpoints)
void RegisterCheckpointCommands(CLI::App& app, Action* action);
// exchange-sim (paper/exchange_sim.h)
void RegisterExchangeSimCommand(CLI::App& app, Action* action);
// docs cli, docs config (cli/reference.h). REQUIRES: called last (it documents the whole
// command tree as registered when the command runs).
void RegisterDocsCommands(CLI::App& app, Action* action);

// Prints "error: <message>" to stderr and returns exit code 1 (2 for Status::Refused).
int ReportError(const Status& status);
// ReportError under mpirun, where rank 0 reports the job's errors: on the other ranks the
// message is handed to dist::DeferReport (printed only when this rank failed alone).
int ReportErrorOnRankZero(const Status& status);

// Flushes and closes stdout (std::cout and stdio); a failed write, flush or close prints
// an error and turns exit code 0 into 1. main() calls it after every command.
int FinishStdout(int exit_code);

}  // namespace rlt::cli

#endif  // RLT_CLI_COMMANDS_H_
