// rltrade testing: `rltrade exchange-sim` run in the background by end-to-end tests — its
// pid, the port it printed, and its stdout line by line.
#ifndef RLT_TESTING_EXCHANGE_SIM_PROCESS_H_
#define RLT_TESTING_EXCHANGE_SIM_PROCESS_H_

#include <gtest/gtest.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "testing/testing.h"

namespace rlt::testing {

class SimProcess {
 public:
  // `exec env ENV rltrade exchange-sim ARGS 2>ERR_FILE`; reads the pid and the port.
  SimProcess(const std::string& args, const std::string& env, const std::string& err_file) {
    const std::string cmd = "echo $$; exec env " + env + " " + RltradeBinary() + " exchange-sim " +
                            args + " 2>" + err_file;
    pipe_ = popen(cmd.c_str(), "r");
    EXPECT_NE(pipe_, nullptr);
    pid_ = std::atol(Line().c_str());
    const std::string listening = Line();
    const std::string prefix = "listening on 127.0.0.1:";
    EXPECT_EQ(listening.rfind(prefix, 0), 0u) << listening;
    if (listening.rfind(prefix, 0) == 0) port_ = std::atoi(listening.c_str() + prefix.size());
  }
  ~SimProcess() {
    if (pipe_ != nullptr) Finish();
  }
  SimProcess(const SimProcess&) = delete;
  SimProcess& operator=(const SimProcess&) = delete;
  std::string Line() {
    char buf[4096];
    if (pipe_ == nullptr || std::fgets(buf, sizeof buf, pipe_) == nullptr) return "";
    std::string s = buf;
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
  // The rest of stdout and the exit code.
  int Finish(std::string* rest = nullptr) {
    for (std::string line = Line(); !line.empty(); line = Line()) {
      if (rest != nullptr) *rest += line + "\n";
    }
    const int status = pclose(pipe_);
    pipe_ = nullptr;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  pid_t pid() const { return static_cast<pid_t>(pid_); }
  int port() const { return port_; }

 private:
  FILE* pipe_ = nullptr;
  long pid_ = 0;
  int port_ = 0;
};

}  // namespace rlt::testing

#endif  // RLT_TESTING_EXCHANGE_SIM_PROCESS_H_
