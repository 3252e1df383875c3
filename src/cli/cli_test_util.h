// rltrade cli: the names the end-to-end tests use for the shared test helpers
// (testing/testing.h): running the `rltrade` binary (RLT_BINARY, set by CTest) and
// reading files.
#ifndef RLT_CLI_CLI_TEST_UTIL_H_
#define RLT_CLI_CLI_TEST_UTIL_H_

#include <string>

#include "testing/testing.h"

namespace rlt::cli::testing_util {

using CmdResult = rlt::testing::CommandResult;
using rlt::testing::ReadFile;

inline std::string Binary() { return rlt::testing::RltradeBinary(); }

// Runs `sh -c "<prefix> rltrade <args> 2><stderr_to>"`: stderr is merged into the output
// unless `stderr_to` names a file.
inline CmdResult RunCli(const std::string& args, const std::string& prefix = "",
                        const std::string& stderr_to = "&1") {
  return rlt::testing::RunRltrade(args, prefix, stderr_to);
}

// The small synthetic market, its train and test ranges and the intraday environment
// (without num_envs) the configs below share.
#define RLT_SMALL_INTRADAY_MARKET       \
  "\n"                                  \
  "[data]\n"                            \
  "source = \"synthetic\"\n"            \
  "days = 40\n"                         \
  "signal_to_noise = 0.08\n"            \
  "[split]\n"                           \
  "train = \"2023-01-02:2023-02-10\"\n" \
  "test = \"2023-02-13:2023-02-24\"\n"  \
  "[env]\n"                             \
  "id = \"intraday\"\n"                 \
  "action_mode = \"target_position\"\n"

// A small intraday training (synthetic market, 2,048 steps, seed 4, one thread: a couple
// of seconds) with train and test ranges, for the tests of multi-seed and multi-rank runs.
inline constexpr const char* kSmallIntradayConfig = R"(
[run]
total_steps = 2048
seed = 4
threads = 1)" RLT_SMALL_INTRADAY_MARKET R"(num_envs = 8
[algo]
n_steps = 64
batch_size = 256
n_epochs = 2
)";

// The same market and environment trained by evolution strategies: 256
// members of 74 steps per generation.
inline constexpr const char* kSmallIntradayEsConfig = R"(
[run]
total_steps = 300000
seed = 4
threads = 1
checkpoint_every = 0)" RLT_SMALL_INTRADAY_MARKET R"([algo]
name = "es"
population = 256
)";

}  // namespace rlt::cli::testing_util

#endif  // RLT_CLI_CLI_TEST_UTIL_H_
