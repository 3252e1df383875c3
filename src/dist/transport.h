// rltrade dist: the MPI calls of dist.cc behind one interface, implemented by the plug-in
// librltrade_mpi.so (transport_mpi.cc), which alone links OpenMPI.
//
// Why a plug-in: OpenMPI's libraries (libmpi, hwloc, pmix, libevent, ...) cost every
// process that links them a dozen shared libraries and their initialisers at start-up,
// yet only a process launched by mpirun uses them. dist.cc loads the plug-in (dlopen)
// in Init() when an MPI launcher started the process, so every other command starts
// without OpenMPI.
// The plug-in and the binary come from the same build (same compiler and standard
// library), so the interface is a C++ class; the plug-in exports one C function,
// kTransportSymbol, that returns its single instance.
// Thread safety: as dist.h (the main thread; SumFloats/SumDoubles/Allgather from the
// thread that owns the WorldCollective).
#ifndef RLT_DIST_TRANSPORT_H_
#define RLT_DIST_TRANSPORT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rlt::dist {

class Transport {
 public:
  virtual ~Transport() = default;
  // MPI_Init_thread (MPI_THREAD_FUNNELED); writes this process's rank and the job's size.
  virtual void Init(int* argc, char*** argv, int* rank, int* size) = 0;
  virtual void Finalize() = 0;
  [[noreturn]] virtual void Abort(int exit_code) = 0;
  // Every rank's string at rank 0 (others: empty), rank 0's value everywhere.
  virtual std::vector<std::string> Gather(const std::string& mine) = 0;
  virtual std::string Broadcast(const std::string& value) = 0;
  virtual void Barrier() = 0;
  virtual void IdleBarrier() = 0;
  virtual void SendText(int to, int tag, const std::string& text) = 0;
  // Blocks for the next message from `from` (-1: any rank).
  virtual void ReceiveText(int from, int* source, int* tag, std::string* text) = 0;
  virtual bool MessageWaiting(int from) = 0;
  // In place: sums over the ranks.
  virtual void SumDoubles(double* data, int64_t n) = 0;
  virtual void SumFloats(float* data, int64_t n) = 0;
  virtual std::vector<std::string> Allgather(const std::string& mine) = 0;
  // The end of the job: every rank's exit code, in rank order, gathered on a
  // communicator of its own, so that it never meets another rank's pending collective.
  // Waits at most `seconds` (< 0: without limit) for the other ranks; returns false when
  // they did not all arrive in time (the call is then left pending: the caller aborts).
  virtual bool GatherExitCodes(int code, double seconds, std::vector<int>* codes) = 0;
};

// The plug-in's file name (beside the rltrade binary) and its one exported function,
// `extern "C" rlt::dist::Transport* rlt_dist_mpi_transport()`.
inline constexpr const char* kTransportFile = "librltrade_mpi.so";
inline constexpr const char* kTransportSymbol = "rlt_dist_mpi_transport";

}  // namespace rlt::dist

#endif  // RLT_DIST_TRANSPORT_H_
