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
#include <string>
#include <thread>

#include "core/plugin.h"
#include "dist/transport.h"

namespace rlt::dist {
namespace {

int g_rank = 0;
int g_size = 1;
Transport* g_mpi = nullptr;  // the plug-in's transport once MPI_Init ran, else nullptr
std::string g_deferred;      // DeferReport's text

bool LaunchedByMpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

// Loads librltrade_mpi.so (transport.h; core/plugin.h says where it is looked for).
// RTLD_GLOBAL: OpenMPI opens its own components later and they resolve libmpi's symbols
// globally. Exits with a message when the plug-in cannot be loaded: every rank fails alike.
Transport* LoadTransport() {
  PluginRequest request;
  request.file = kTransportFile;
  request.symbol = kTransportSymbol;
  request.build_dir = RLT_PLUGIN_BUILD_DIR;
  request.anchor = reinterpret_cast<const void*>(&LoadTransport);
  request.global = true;
  Result<void*> entry = LoadPluginSymbol(request);
  if (!entry.ok()) {
    std::fprintf(stderr,
                 "error: launched by mpirun, but the MPI plug-in could not be loaded (it is "
                 "built beside the rltrade binary when libopenmpi-dev is installed; rebuild, "
                 "or run without mpirun): %s\n",
                 entry.status().message().c_str());
    std::exit(2);
  }
  using Factory = Transport* (*)();
  return reinterpret_cast<Factory>(*entry)();
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
  if (!Built()) {
    if (std::getenv("OMPI_COMM_WORLD_RANK") != nullptr &&
        std::atoi(std::getenv("OMPI_COMM_WORLD_RANK")) == 0) {
      std::fprintf(stderr,
                   "note: launched by mpirun, but this rltrade was built without MPI "
                   "(RLT_WITH_MPI=OFF or no libopenmpi-dev): every rank runs alone\n");
    }
    return;
  }
  Transport* transport = LoadTransport();
  transport->Init(argc, argv, &g_rank, &g_size);
  g_mpi = transport;
}

void Finalize() {
  if (g_mpi != nullptr) {
    g_mpi->Finalize();
    g_mpi = nullptr;
  }
}

void Abort(int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (g_mpi != nullptr) {
    // stdout and stderr reach mpirun through a pipe and its I/O forwarding, the abort
    // through its control channel: the pause lets the text arrive first.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    g_mpi->Abort(exit_code);
  }
  std::exit(exit_code);
}

void DeferReport(const std::string& text) { g_deferred = text; }

int Finish(int code) {
  if (g_mpi == nullptr || g_size == 1) return code;
  std::fflush(stdout);
  std::fflush(stderr);
  auto report = [&] {
    if (g_deferred.empty()) return;
    std::fprintf(stderr, "%s\n", g_deferred.c_str());
    std::fflush(stderr);
  };
  std::vector<int> codes;
  if (g_mpi->GatherExitCodes(code, code == 0 ? -1.0 : kFinishWaitSeconds, &codes)) {
    if (code != 0 && g_rank != 0 && codes[0] == 0) report();
    return *std::max_element(codes.begin(), codes.end());
  }
  report();
  std::fprintf(stderr,
               "error: rank %d of %d ended with exit code %d while the other ranks went on; "
               "ending the job (the reason is above)\n",
               g_rank, g_size, code);
  Abort(code);
}

int Rank() { return g_rank; }
int Size() { return g_size; }

std::vector<std::string> Gather(const std::string& mine) {
  if (g_size == 1 || g_mpi == nullptr) return {mine};
  return g_mpi->Gather(mine);
}

std::string Broadcast(const std::string& value) {
  if (g_size == 1 || g_mpi == nullptr) return value;
  return g_mpi->Broadcast(value);
}

void Barrier() {
  if (g_mpi != nullptr) g_mpi->Barrier();
}

void IdleBarrier() {
  if (g_mpi != nullptr) g_mpi->IdleBarrier();
}

void SendText(int to, int tag, const std::string& text) {
  if (g_mpi != nullptr) g_mpi->SendText(to, tag, text);
}

Message ReceiveText(int from) {
  Message m;
  if (g_mpi != nullptr) g_mpi->ReceiveText(from, &m.source, &m.tag, &m.text);
  return m;
}

bool MessageWaiting(int from) { return g_mpi != nullptr && g_mpi->MessageWaiting(from); }

namespace {

// The job as a Collective (sums and gathers through the plug-in), each call timed by a
// watchdog thread.
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
    if (g_size == 1 || g_mpi == nullptr) return;
    Watched w(this, what);
    g_mpi->SumDoubles(data, n);
  }
  void SumFloats(float* data, int64_t n, const char* what) override {
    if (g_size == 1 || g_mpi == nullptr) return;
    Watched w(this, what);
    g_mpi->SumFloats(data, n);
  }
  std::vector<std::string> Allgather(const std::string& mine, const char* what) override {
    if (g_size == 1 || g_mpi == nullptr) return {mine};
    Watched w(this, what);
    return g_mpi->Allgather(mine);
  }

 private:
  using Clock = std::chrono::steady_clock;
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
