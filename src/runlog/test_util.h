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

namespace rlt::runlog::testing_util {

// Creates a fresh directory under the gtest temp dir; removes it on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::string templ = ::testing::TempDir() + "rlt_runlog_XXXXXX";
    if (mkdtemp(templ.data()) != nullptr) path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
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
  CommandResult result;
  const std::string command = "python3 '" + kReader + "' '" + arg + "'";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) result.stdout_text.append(buf, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
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
