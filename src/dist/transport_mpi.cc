// rltrade dist: the plug-in librltrade_mpi.so, the Transport (transport.h) on OpenMPI.
// Built only with RLT_WITH_MPI and OpenMPI found; loaded by dist.cc under mpirun.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "dist/transport.h"

namespace rlt::dist {
namespace {

class MpiTransport : public Transport {
 public:
  void Init(int* argc, char*** argv, int* rank, int* size) override {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm_dup(MPI_COMM_WORLD, &exit_comm_);
    *rank = rank_;
    *size = size_;
  }
  void Finalize() override {
    MPI_Comm_free(&exit_comm_);
    MPI_Finalize();
  }
  [[noreturn]] void Abort(int exit_code) override {
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::exit(exit_code);
  }

  std::vector<std::string> Gather(const std::string& mine) override {
    const int64_t n = static_cast<int64_t>(mine.size());
    std::vector<int64_t> lengths(rank_ == 0 ? size_ : 0);
    MPI_Gather(&n, 1, MPI_INT64_T, lengths.data(), 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    std::vector<int> counts, offsets;
    std::string all;
    if (rank_ == 0) {
      int64_t total = 0;
      for (int64_t l : lengths) {
        offsets.push_back(static_cast<int>(total));
        counts.push_back(static_cast<int>(l));
        total += l;
      }
      all.resize(static_cast<size_t>(total));
    }
    MPI_Gatherv(mine.data(), static_cast<int>(n), MPI_CHAR, all.data(), counts.data(),
                offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
    std::vector<std::string> out;
    if (rank_ == 0) {
      for (int r = 0; r < size_; ++r) out.push_back(all.substr(offsets[r], counts[r]));
    }
    return out;
  }

  std::string Broadcast(const std::string& value) override {
    int64_t n = static_cast<int64_t>(value.size());
    MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    std::string out = rank_ == 0 ? value : std::string(static_cast<size_t>(n), '\0');
    MPI_Bcast(out.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
    return out;
  }

  void Barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

  void IdleBarrier() override {
    MPI_Request request;
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    WaitAsleep(&request, -1.0);
  }

  void SendText(int to, int tag, const std::string& text) override {
    MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
  }

  void ReceiveText(int from, int* source, int* tag, std::string* text) override {
    MPI_Status status;
    MPI_Probe(from < 0 ? MPI_ANY_SOURCE : from, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    int count = 0;
    MPI_Get_count(&status, MPI_CHAR, &count);
    *source = status.MPI_SOURCE;
    *tag = status.MPI_TAG;
    text->resize(static_cast<size_t>(count));
    MPI_Recv(text->data(), count, MPI_CHAR, *source, *tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }

  bool MessageWaiting(int from) override {
    int flag = 0;
    MPI_Iprobe(from < 0 ? MPI_ANY_SOURCE : from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
               MPI_STATUS_IGNORE);
    return flag != 0;
  }

  void SumDoubles(double* data, int64_t n) override { Sum(data, n, MPI_DOUBLE, sizeof(double)); }
  void SumFloats(float* data, int64_t n) override { Sum(data, n, MPI_FLOAT, sizeof(float)); }

  std::vector<std::string> Allgather(const std::string& mine) override {
    const int n = static_cast<int>(mine.size());
    std::vector<int> counts(size_), offsets(size_);
    MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int64_t total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[r] = static_cast<int>(total);
      total += counts[r];
    }
    std::string all(static_cast<size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), n, MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR,
                   MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (int r = 0; r < size_; ++r) out.push_back(all.substr(offsets[r], counts[r]));
    return out;
  }

  bool GatherExitCodes(int code, double seconds, std::vector<int>* codes) override {
    // Members, not locals: a call left pending still owns its buffers.
    exit_mine_ = code;
    exit_all_.assign(static_cast<size_t>(size_), 0);
    MPI_Request request;
    MPI_Iallgather(&exit_mine_, 1, MPI_INT, exit_all_.data(), 1, MPI_INT, exit_comm_, &request);
    if (!WaitAsleep(&request, seconds)) return false;
    *codes = exit_all_;
    return true;
  }

 private:
  // Waits for `request`, polling every millisecond (the waiting core stays idle), at most
  // `seconds` (< 0: without limit); false when it has not completed by then.
  static bool WaitAsleep(MPI_Request* request, double seconds) {
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(seconds < 0 ? 0.0 : seconds));
    int done = 0;
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
    while (!done) {
      if (seconds >= 0 && std::chrono::steady_clock::now() >= until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      MPI_Test(request, &done, MPI_STATUS_IGNORE);
    }
    return true;
  }

  // In place, in parts of at most 2^30 values (MPI counts are int).
  void Sum(void* data, int64_t n, MPI_Datatype type, size_t bytes) {
    for (int64_t done = 0; done < n;) {
      const int part = static_cast<int>(std::min<int64_t>(n - done, 1 << 30));
      MPI_Allreduce(MPI_IN_PLACE, static_cast<char*>(data) + done * bytes, part, type, MPI_SUM,
                    MPI_COMM_WORLD);
      done += part;
    }
  }

  int rank_ = 0, size_ = 1;
  MPI_Comm exit_comm_ = MPI_COMM_NULL;  // GatherExitCodes' own communicator
  int exit_mine_ = 0;
  std::vector<int> exit_all_;
};

}  // namespace
}  // namespace rlt::dist

extern "C" __attribute__((visibility("default"))) rlt::dist::Transport* rlt_dist_mpi_transport() {
  static rlt::dist::MpiTransport transport;
  return &transport;
}
