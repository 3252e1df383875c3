// rltrade core: child processes (see spawn.h).
#include "core/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

extern char** environ;

namespace rlt {

Result<pid_t> SpawnLogged(const std::string& executable, const std::vector<std::string>& args,
                          const std::string& log) {
  // Everything the child uses is prepared before fork(): after it, only async-signal-safe
  // calls (prctl, dup2, execve, _exit) until the exec.
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(executable.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status::IoError(log + ": cannot open: " + std::strerror(errno));
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  // The child is a process of its own, never a rank of the MPI job that may have started
  // this one: the launcher's variables are left out (with them, its MPI_Init would try
  // to join the job as this rank).
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view v(*e);
    bool mpi = false;
    for (const char* prefix : {"OMPI_", "PMIX_", "PMI_", "OPAL_", "HYDRA_", "MPI_LOCALRANKID"}) {
      mpi = mpi || v.rfind(prefix, 0) == 0;
    }
    if (!mpi) env.push_back(*e);
  }
  env.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // The child dies with the thread that started it (a parent killed with SIGKILL
    // leaves no orphan training into a directory a resumed parent will reuse).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent is already gone
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execve(executable.c_str(), argv.data(), env.data());
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);
  if (pid < 0) {
    return Status::IoError("cannot start " + executable + ": " + std::strerror(fork_errno));
  }
  return pid;
}

int WaitExitCode(pid_t pid) {
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return 1;
}

std::string TailLines(const std::string& path, int lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  std::string line;
  while (std::getline(in, line)) all.push_back(line);
  std::string out;
  for (size_t i = all.size() > static_cast<size_t>(lines) ? all.size() - lines : 0; i < all.size();
       ++i) {
    out += "    " + all[i] + "\n";
  }
  return out;
}

std::string SelfExecutable() {
  std::error_code ec;
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  return ec ? std::string("/proc/self/exe") : exe;
}

}  // namespace rlt
