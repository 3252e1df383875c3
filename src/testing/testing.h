// rltrade testing: the one home of helpers that tests of every subsystem share.
//
// What it is: scratch directories with unique names (never a fixed path in /tmp, so tests
// can run in parallel and twice at once), whole-file read/write, CSV line splitting, and a
// runner for the `rltrade` binary and other commands (exit code + output). Header-only,
// test-only: nothing under src/ outside *_test.cc and test_util.h files includes it.
// Subsystem test_util.h files keep only what is specific to their subsystem (fixtures,
// domain builders) and take the generic helpers from here.
#ifndef RLT_TESTING_TESTING_H_
#define RLT_TESTING_TESTING_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace rlt::testing {

// A fresh directory `<gtest temp dir>/<prefix>XXXXXX` (mkdtemp), removed with everything
// in it on destruction. Unique per test and per process.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix = "rlt_test_") {
    std::string templ = ::testing::TempDir() + prefix + "XXXXXX";
    if (::mkdtemp(templ.data()) != nullptr) path_ = templ;
    EXPECT_FALSE(path_.empty()) << "cannot create a scratch directory under "
                                << ::testing::TempDir();
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::filesystem::path fs_path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A fresh, uniquely named directory `<gtest temp dir>/<prefix>XXXXXX` that the caller
// removes (for suites that share one directory across tests, in SetUpTestSuite).
inline std::filesystem::path NewScratchDir(const std::string& prefix) {
  std::string templ = ::testing::TempDir() + prefix + "XXXXXX";
  const bool made = ::mkdtemp(templ.data()) != nullptr;
  EXPECT_TRUE(made) << "cannot create a scratch directory under " << ::testing::TempDir();
  return templ;
}

// The whole file ("" when it cannot be read).
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  EXPECT_TRUE(out.good()) << "cannot write " << path;
}

// The number of (possibly overlapping) occurrences of `needle` in `haystack`.
inline size_t CountOf(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::vector<std::string> Cells(const std::string& line, char sep = ',') {
  std::vector<std::string> cells;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, sep);) cells.push_back(cell);
  return cells;
}

struct CommandResult {
  int exit_code = -1;  // -1 when the command did not exit normally (e.g. a signal)
  std::string out;     // what it wrote to stdout (and stderr, when merged)
};

// Runs `sh -c command` and collects its stdout.
inline CommandResult RunCommand(const std::string& command) {
  CommandResult r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The `rltrade` binary under test (CTest sets RLT_BINARY).
inline std::string RltradeBinary() {
  const char* bin = std::getenv("RLT_BINARY");
  EXPECT_NE(bin, nullptr) << "RLT_BINARY is set by CTest";
  return bin ? bin : "rltrade";
}

// Runs `<prefix> rltrade <args> 2><stderr_to>`: stderr is merged into the output unless
// `stderr_to` names a file.
inline CommandResult RunRltrade(const std::string& args, const std::string& prefix = "",
                                const std::string& stderr_to = "&1") {
  return RunCommand(prefix + " " + RltradeBinary() + " " + args + " 2>" + stderr_to);
}

}  // namespace rlt::testing

#endif  // RLT_TESTING_TESTING_H_
