// rltrade dist: the MPI job this process belongs to (issue 15) — one binary that runs alone
// or as one rank of `mpirun -np K rltrade ...`, on one machine or a cluster.
//
// What it is: Init() starts MPI only when the process was launched by an MPI launcher
// (mpirun/mpiexec set OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK) and the build has MPI
// (RLT_WITH_MPI, the default when Debian's OpenMPI is installed); otherwise the process is
// rank 0 of a job of 1 and every call below is the single-process case (a gather returns
// its own value). So `rltrade` never needs mpirun, and a build without MPI still runs
// every command. The calls are collectives: every rank of the job must make them in the
// same order (a rank that skips one hangs the others, so callers reach them on errors too).
// What it is not: the data-parallel learner's allreduce (that needs the tensors; it will
// use Comm() of this module).
// Thread safety: call from the main thread only (MPI_THREAD_FUNNELED).
#ifndef RLT_DIST_DIST_H_
#define RLT_DIST_DIST_H_

#include <string>
#include <vector>

namespace rlt::dist {

// Starts MPI when launched by an MPI launcher; call once, at the start of main.
void Init(int* argc, char*** argv);
// Ends MPI (a no-op for a single process); call once, before main returns.
void Finalize();
// Ends every rank of the job at once (MPI_Abort), or exits this process.
[[noreturn]] void Abort(int exit_code);

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

}  // namespace rlt::dist

#endif  // RLT_DIST_DIST_H_
