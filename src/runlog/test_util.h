// runlog tests: a scratch directory per test, small file helpers, and a runner for the
// independent TensorBoard reader testdata/read_tfevents.py. Test-only.
#ifndef RLT_RUNLOG_TEST_UTIL_H_
#define RLT_RUNLOG_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "testing/testing.h"

namespace rlt::runlog::testing_util {

// Generic helpers from testing/testing.h.
class ScratchDir : public rlt::testing::ScratchDir {
 public:
  ScratchDir() : rlt::testing::ScratchDir("rlt_runlog_") {}
};
inline std::string ReadFile(const std::string& path) { return rlt::testing::ReadFile(path); }
inline void WriteFile(const std::string& path, const std::string& bytes) {
  rlt::testing::WriteFile(path, bytes);
}

inline const std::string kReader =
    std::string(RLT_SOURCE_DIR) + "/src/runlog/testdata/read_tfevents.py";

inline bool HavePython() { return std::system("python3 --version >/dev/null 2>&1") == 0; }

struct CommandResult {
  int exit_code = -1;
  std::string stdout_text;
};

// Runs `python3 read_tfevents.py <arg>`; stderr goes to the test log.
inline CommandResult RunReader(const std::string& arg) {
  const rlt::testing::CommandResult r =
      rlt::testing::RunCommand("python3 '" + kReader + "' '" + arg + "'");
  return {r.exit_code, r.out};
}

inline std::vector<nlohmann::json> ParseJsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    out.push_back(nlohmann::json::parse(text.substr(start, end - start)));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace rlt::runlog::testing_util

#endif  // RLT_RUNLOG_TEST_UTIL_H_
