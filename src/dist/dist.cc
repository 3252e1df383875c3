// rltrade dist: the MPI job of this process (see dist.h).
#include "dist/dist.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#ifdef RLT_HAVE_MPI
#include <mpi.h>
#endif

namespace rlt::dist {
namespace {

int g_rank = 0;
int g_size = 1;
[[maybe_unused]] bool g_mpi = false;  // MPI_Init was called here (unused without MPI)

bool LaunchedByMpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

}  // namespace

bool Built() {
#ifdef RLT_HAVE_MPI
  return true;
#else
  return false;
#endif
}

void Init(int* argc, char*** argv) {
  if (!LaunchedByMpi()) return;
#ifdef RLT_HAVE_MPI
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  g_mpi = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
#else
  (void)argc;
  (void)argv;
  if (std::getenv("OMPI_COMM_WORLD_RANK") != nullptr &&
      std::atoi(std::getenv("OMPI_COMM_WORLD_RANK")) == 0) {
    std::fprintf(stderr,
                 "note: launched by mpirun, but this rltrade was built without MPI "
                 "(RLT_WITH_MPI=OFF or no libopenmpi-dev): every rank runs alone\n");
  }
#endif
}

void Finalize() {
#ifdef RLT_HAVE_MPI
  if (g_mpi) {
    MPI_Finalize();
    g_mpi = false;
  }
#endif
}

void Abort(int exit_code) {
#ifdef RLT_HAVE_MPI
  if (g_mpi) MPI_Abort(MPI_COMM_WORLD, exit_code);
#endif
  std::exit(exit_code);
}

int Rank() { return g_rank; }
int Size() { return g_size; }

std::vector<std::string> Gather(const std::string& mine) {
  if (g_size == 1) return {mine};
#ifdef RLT_HAVE_MPI
  const int64_t n = static_cast<int64_t>(mine.size());
  std::vector<int64_t> lengths(g_rank == 0 ? g_size : 0);
  MPI_Gather(&n, 1, MPI_INT64_T, lengths.data(), 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  std::vector<int> counts, offsets;
  std::string all;
  if (g_rank == 0) {
    int64_t total = 0;
    for (int64_t l : lengths) {
      offsets.push_back(static_cast<int>(total));
      counts.push_back(static_cast<int>(l));
      total += l;
    }
    all.resize(static_cast<size_t>(total));
  }
  MPI_Gatherv(mine.data(), static_cast<int>(n), MPI_CHAR, all.data(), counts.data(), offsets.data(),
              MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (g_rank == 0) {
    for (int r = 0; r < g_size; ++r) out.push_back(all.substr(offsets[r], counts[r]));
  }
  return out;
#else
  return {mine};
#endif
}

std::string Broadcast(const std::string& value) {
  if (g_size == 1) return value;
#ifdef RLT_HAVE_MPI
  int64_t n = static_cast<int64_t>(value.size());
  MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  std::string out = g_rank == 0 ? value : std::string(static_cast<size_t>(n), '\0');
  MPI_Bcast(out.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
  return out;
#else
  return value;
#endif
}

void Barrier() {
#ifdef RLT_HAVE_MPI
  if (g_mpi) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void IdleBarrier() {
#ifdef RLT_HAVE_MPI
  if (!g_mpi) return;
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  int done = 0;
  MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  while (!done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  }
#endif
}

void SendText(int to, int tag, const std::string& text) {
#ifdef RLT_HAVE_MPI
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
#else
  (void)to, (void)tag, (void)text;
#endif
}

Message ReceiveText(int from) {
  Message m;
#ifdef RLT_HAVE_MPI
  MPI_Status status;
  MPI_Probe(from == kAnySource ? MPI_ANY_SOURCE : from, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  m.source = status.MPI_SOURCE;
  m.tag = status.MPI_TAG;
  m.text.resize(static_cast<size_t>(count));
  MPI_Recv(m.text.data(), count, MPI_CHAR, m.source, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#else
  (void)from;
#endif
  return m;
}

bool MessageWaiting(int from) {
#ifdef RLT_HAVE_MPI
  int flag = 0;
  MPI_Iprobe(from == kAnySource ? MPI_ANY_SOURCE : from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
             MPI_STATUS_IGNORE);
  return flag != 0;
#else
  (void)from;
  return false;
#endif
}

namespace {

// MPI_COMM_WORLD as a Collective, each call timed by a watchdog thread.
class MpiCollective : public WatchedCollective {
 public:
  explicit MpiCollective(double timeout_seconds) : timeout_(timeout_seconds) {
    if (g_size > 1) watchdog_ = std::thread([this] { Watch(); });
  }
  ~MpiCollective() override {
    if (!watchdog_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    watchdog_.join();
  }
  int rank() const override { return g_rank; }
  int size() const override { return g_size; }
  void set_context(const std::string& context) override {
    std::lock_guard<std::mutex> lock(mu_);
    context_ = context;
  }

  void SumDoubles(double* data, int64_t n, const char* what) override {
#ifdef RLT_HAVE_MPI
    Sum(data, n, MPI_DOUBLE, sizeof(double), what);
#else
    (void)data, (void)n, (void)what;
#endif
  }
  void SumFloats(float* data, int64_t n, const char* what) override {
#ifdef RLT_HAVE_MPI
    Sum(data, n, MPI_FLOAT, sizeof(float), what);
#else
    (void)data, (void)n, (void)what;
#endif
  }
  std::vector<std::string> Allgather(const std::string& mine, const char* what) override {
    if (g_size == 1) return {mine};
#ifdef RLT_HAVE_MPI
    Watched w(this, what);
    const int n = static_cast<int>(mine.size());
    std::vector<int> counts(g_size), offsets(g_size);
    MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int64_t total = 0;
    for (int r = 0; r < g_size; ++r) {
      offsets[r] = static_cast<int>(total);
      total += counts[r];
    }
    std::string all(static_cast<size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), n, MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR,
                   MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (int r = 0; r < g_size; ++r) out.push_back(all.substr(offsets[r], counts[r]));
    return out;
#else
    (void)what;
    return {mine};
#endif
  }

 private:
  using Clock = std::chrono::steady_clock;
#ifdef RLT_HAVE_MPI
  // In place: data (n values of `type`, `bytes` each) summed over the ranks, in parts of at
  // most 2^30 values (MPI counts are int).
  void Sum(void* data, int64_t n, MPI_Datatype type, size_t bytes, const char* what) {
    if (g_size == 1) return;
    Watched w(this, what);
    for (int64_t done = 0; done < n;) {
      const int part = static_cast<int>(std::min<int64_t>(n - done, 1 << 30));
      MPI_Allreduce(MPI_IN_PLACE, static_cast<char*>(data) + done * bytes, part, type, MPI_SUM,
                    MPI_COMM_WORLD);
      done += part;
    }
  }
#endif
  // Marks one call as in flight for the watchdog.
  struct Watched {
    Watched(MpiCollective* c, const char* what) : c(c) {
      c->what_.store(what);
      c->started_.store(Clock::now().time_since_epoch().count());
    }
    ~Watched() { c->started_.store(0); }
    MpiCollective* c;
  };

  void Watch() {
    std::unique_lock<std::mutex> lock(mu_);
    auto last_wake = Clock::now();
    while (!stop_) {
      wake_.wait_for(lock, std::chrono::milliseconds(200));
      // A wake far later than asked means this process itself was stopped (SIGSTOP, a
      // suspended VM): its own wait is not the others' silence, so it starts over.
      const auto now = Clock::now();
      const bool suspended = now - last_wake > std::chrono::seconds(5);
      last_wake = now;
      int64_t started = started_.load();
      if (started == 0) continue;
      if (suspended) {  // unless the call has ended meanwhile
        started_.compare_exchange_strong(started, now.time_since_epoch().count());
        continue;
      }
      const double waited =
          std::chrono::duration<double>(now.time_since_epoch() - Clock::duration(started)).count();
      if (waited < timeout_) continue;
      const char* what = what_.load();
      std::fprintf(stderr,
                   "error: rank %d of %d: no answer from the other ranks for %.0f s in %s%s%s: "
                   "a rank died, hangs or was stopped, or the network is down; ending the job "
                   "(a longer wait: --set run.rank_timeout_seconds=S)\n",
                   g_rank, g_size, waited, what != nullptr ? what : "a collective",
                   context_.empty() ? "" : ", ", context_.c_str());
      std::fflush(stderr);
      ::_exit(3);
    }
  }

  const double timeout_;
  std::atomic<int64_t> started_{0};  // steady_clock ticks of the call in flight, 0 = none
  std::atomic<const char*> what_{nullptr};
  std::mutex mu_;
  std::condition_variable wake_;
  std::string context_;  // guarded by mu_
  bool stop_ = false;    // guarded by mu_
  std::thread watchdog_;
};

}  // namespace

std::unique_ptr<WatchedCollective> WorldCollective(double timeout_seconds) {
  return std::make_unique<MpiCollective>(timeout_seconds);
}

}  // namespace rlt::dist
