// rltrade learn: the worker data_parallel_test.cc launches under mpirun: every rank trains
// its share of RunDataParallel (data_parallel_run.h) and writes its result to
// OUT_DIR/rank_<r>.txt.
//   data_parallel_worker OUT_DIR ENV_ID NUM_ENVS UPDATES
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/file_io.h"
#include "dist/dist.h"
#include "learn/data_parallel_run.h"

int main(int argc, char** argv) {
  rlt::dist::Init(&argc, &argv);
  if (argc != 5) {
    std::fprintf(stderr, "usage: data_parallel_worker OUT_DIR ENV_ID NUM_ENVS UPDATES\n");
    return 2;
  }
  auto group = rlt::dist::WorldCollective(/*timeout_seconds=*/30);
  auto r =
      rlt::learn::testing::RunDataParallel(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), *group);
  if (!r.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", group->rank(), r.status().message().c_str());
    rlt::dist::Abort(1);
  }
  const std::string path = std::string(argv[1]) + "/rank_" + std::to_string(group->rank()) + ".txt";
  if (rlt::Status st = rlt::WriteFileAtomic(path, rlt::learn::testing::FormatResult(*r));
      !st.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", group->rank(), st.message().c_str());
    rlt::dist::Abort(1);
  }
  group.reset();
  rlt::dist::Finalize();
  return 0;
}
