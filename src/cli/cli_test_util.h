// rltrade cli: helpers shared by the end-to-end tests that run the `rltrade` binary
// (its path comes from RLT_BINARY, set by CTest).
#ifndef RLT_CLI_CLI_TEST_UTIL_H_
#define RLT_CLI_CLI_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rlt::cli::testing_util {

struct CmdResult {
  int exit_code = -1;
  std::string out;  // stdout (and stderr unless redirected elsewhere)
};

inline std::string Binary() {
  const char* bin = std::getenv("RLT_BINARY");
  EXPECT_NE(bin, nullptr) << "RLT_BINARY is set by CTest";
  return bin ? bin : "rltrade";
}

// Runs `sh -c "<prefix> rltrade <args> 2><stderr_to>"`: stderr is merged into the output
// unless `stderr_to` names a file.
inline CmdResult RunCli(const std::string& args, const std::string& prefix = "",
                        const std::string& stderr_to = "&1") {
  CmdResult r;
  const std::string cmd = prefix + " " + Binary() + " " + args + " 2>" + stderr_to;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace rlt::cli::testing_util

#endif  // RLT_CLI_CLI_TEST_UTIL_H_
