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

}  // namespace rlt::cli::testing_util

#endif  // RLT_CLI_CLI_TEST_UTIL_H_
