// rltrade dist: the MPI job of this process (see dist.h).
#include "dist/dist.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#ifdef RLT_HAVE_MPI
#include <mpi.h>
#endif

namespace rlt::dist {
namespace {

int g_rank = 0;
int g_size = 1;
bool g_mpi = false;  // MPI_Init was called here

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

}  // namespace rlt::dist
