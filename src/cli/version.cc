// rltrade cli: `rltrade --version` (see version.h). The facts come from the build: a
// header written at every build (cmake/version_info.cmake, from cli/CMakeLists.txt).
#include "cli/version.h"

#include <fmt/format.h>

#include "native/dispatch.h"
#include "rlt_version_info.h"

namespace rlt::cli {
namespace {

std::string KernelText() {
  const std::string level = native::KernelLevel();
  if (level == "native") return "native (compiled for the build machine's CPU, -march=native)";
  if (level == "portable") return "x86-64 baseline (portable build without run-time dispatch)";
  return level + " (chosen at load time among x86-64-v4, x86-64-v3 and x86-64)";
}

}  // namespace

std::string VersionText() {
  return fmt::format(
      "rltrade {} (commit {}, {} build)\n"
      "LibTorch backend: {}\n"
      "MPI: {}\n"
      "FAISS hard-negative mining: built in\n"
      "Loop kernels: {}",
      RLT_VERSION, RLT_COMMIT, RLT_BUILD_TYPE,
      RLT_BUILT_TORCH ? "built (the plug-in librltrade_torch.so, loaded by the commands that "
                        "use it: [policy] backend = \"torch\", checkpoint convert)"
                      : "not built (configure with -DRLT_WITH_TORCH=ON and libtorch-dev)",
      RLT_BUILT_MPI ? "built (the plug-in librltrade_mpi.so, loaded under mpirun)"
                    : "not built (configure with -DRLT_WITH_MPI=ON and libopenmpi-dev)",
      KernelText());
}

}  // namespace rlt::cli
