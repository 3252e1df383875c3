// rltrade cli: `rltrade --version` (see version.h). The facts come from the build: a
// header written at every build (cmake/version_info.cmake, from cli/CMakeLists.txt).
#include "cli/version.h"

#include <fmt/format.h>

#include "rlt_version_info.h"

namespace rlt::cli {

std::string VersionText() {
  return fmt::format(
      "rltrade {} (commit {}, {} build)\n"
      "LibTorch backend: {}\n"
      "MPI: {}\n"
      "FAISS hard-negative mining: built in",
      RLT_VERSION, RLT_COMMIT, RLT_BUILD_TYPE,
      RLT_BUILT_TORCH ? "built (the plug-in librltrade_torch.so, loaded by the commands that "
                        "use it: [policy] backend = \"torch\", checkpoint convert)"
                      : "not built (configure with -DRLT_WITH_TORCH=ON and libtorch-dev)",
      RLT_BUILT_MPI ? "built (the plug-in librltrade_mpi.so, loaded under mpirun)"
                    : "not built (configure with -DRLT_WITH_MPI=ON and libopenmpi-dev)");
}

}  // namespace rlt::cli
