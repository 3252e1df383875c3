// rltrade core: child processes of the same program (multi-seed runs, parallel tuning
// trials): start one with its output appended to a log file, wait for it, read the log's
// tail for a failure message.
#ifndef RLT_CORE_SPAWN_H_
#define RLT_CORE_SPAWN_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace rlt {

// Starts `executable args...` with stdin from /dev/null and stdout + stderr appended to
// `log`, in this process's environment minus an MPI launcher's variables (OMPI_*, PMIX_*,
// PMI_*, ...: a child of a rank is not a rank of the job). The child gets SIGKILL when the
// thread that started it ends (PR_SET_PDEATHSIG),
// so killing the parent, even with SIGKILL, kills its children too: call it from a
// thread that waits for the child. IoError when it cannot start (an exec failure shows as
// exit code 127).
Result<pid_t> SpawnLogged(const std::string& executable, const std::vector<std::string>& args,
                          const std::string& log);

// Waits for `pid`: its exit code, or 128 + the signal that ended it.
int WaitExitCode(pid_t pid);

// The last `lines` lines of a text file, each indented by four spaces ("" when unreadable).
std::string TailLines(const std::string& path, int lines);

// This program's executable (/proc/self/exe resolved; the link itself when unreadable).
std::string SelfExecutable();

}  // namespace rlt

#endif  // RLT_CORE_SPAWN_H_
