// rltrade dist: the MPI job this process belongs to — one binary that runs alone
// or as one rank of `mpirun -np K rltrade ...`, on one machine or a cluster.
//
// What it is: Init() starts MPI only when the process was launched by an MPI launcher
// (mpirun/mpiexec set OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK) and the build has MPI
// (RLT_WITH_MPI, the default when Debian's OpenMPI is installed); otherwise the process is
// rank 0 of a job of 1 and every call below is the single-process case (a gather returns
// its own value). So `rltrade` never needs mpirun, and a build without MPI still runs
// every command. The calls are collectives: every rank of the job must make them in the
// same order (a rank that skips one hangs the others, so callers reach them on errors too).
// WorldCollective() is the job as a core/collective.h Collective, for the data-parallel
// learner (sums of flat float/double buffers with MPI_Allreduce, gathers), with a
// watchdog that ends the job when a rank dies or hangs.
// Thread safety: call from the main thread only (MPI_THREAD_FUNNELED).
#ifndef RLT_DIST_DIST_H_
#define RLT_DIST_DIST_H_

#include <memory>
#include <string>
#include <vector>

#include "core/collective.h"

namespace rlt::dist {

// Starts MPI when launched by an MPI launcher; call once, at the start of main.
void Init(int* argc, char*** argv);
// Ends MPI (a no-op for a single process); call once, before main returns.
void Finalize();
// Ends every rank of the job at once (MPI_Abort), or exits this process. What this
// process has written is flushed first and given a moment to reach mpirun, so that a
// refusal printed just before comes out above OpenMPI's "MPI_ABORT was invoked" banner.
[[noreturn]] void Abort(int exit_code);
// The end of this process's command, with its exit code; returns the job's exit code
// (the largest over the ranks) when every rank ends alike. A rank that fails (`code` != 0)
// waits at most kFinishWaitSeconds for the others to end too (the same refusal reaches
// every rank at about the same time); when they do not, it is the only one that failed
// and the others are working or waiting for it in a collective, so it prints its
// deferred report (below) and ends the job (Abort). A rank that succeeded waits for the
// others without limit, as MPI_Finalize would. For a single process: `code`.
inline constexpr double kFinishWaitSeconds = 5.0;
int Finish(int code);
// For a rank other than 0, whose commands leave the reporting to rank 0: the error this
// rank would have printed. Finish prints it when rank 0 cannot have reported it (this
// rank failed alone, or rank 0 succeeded); otherwise rank 0 printed the shared error and
// it is dropped, so a refusal every rank reaches is printed once.
void DeferReport(const std::string& text);

int Rank();  // 0..Size()-1
int Size();  // 1 without MPI
inline bool Distributed() { return Size() > 1; }
// Whether this build can run under mpirun (RLT_WITH_MPI).
bool Built();

// Every rank's string, in rank order, at rank 0 (other ranks get an empty vector).
std::vector<std::string> Gather(const std::string& mine);
// Rank 0's `value` on every rank.
std::string Broadcast(const std::string& value);
void Barrier();
// A barrier that waits asleep (polling every millisecond) instead of spinning: for a rank
// that waits long while another measures alone, so the waiting core stays idle.
void IdleBarrier();

// Point to point, for a dispatcher on rank 0 that hands out work to the other ranks (tune
// trials). Blocking; from the main thread only. `tag` >= 0.
void SendText(int to, int tag, const std::string& text);
struct Message {
  int source = 0, tag = 0;
  std::string text;
};
// The next message from `from` (kAnySource: any rank), waiting for it.
inline constexpr int kAnySource = -1;
Message ReceiveText(int from);
// Whether a message from `from` (kAnySource: any rank) is waiting, without taking it.
bool MessageWaiting(int from);

// The job as a Collective (LocalCollective's behaviour for a job of 1). Every call is
// watched: when one has not completed after `timeout_seconds` (another rank died, hangs,
// was stopped, or the network is gone), this process prints the call it waited in, the
// rank and the advice, and exits with code 3 from the watchdog thread; mpirun then ends
// the other ranks. So a job never hangs silently.
class WatchedCollective : public Collective {
 public:
  // Named in the timeout message with the call, e.g. "update 12"; set by the caller.
  virtual void set_context(const std::string& context) = 0;
};
std::unique_ptr<WatchedCollective> WorldCollective(double timeout_seconds);

}  // namespace rlt::dist

#endif  // RLT_DIST_DIST_H_
