// FAISS and LibTorch in one process: the original retrieval trainer crashed from two
// OpenMP runtimes (macOS). On Linux both use libgomp; this binary links both, runs an
// exact IndexFlatL2 search with FAISS's OpenMP threads and a multi-threaded torch matmul,
// interleaved, and checks both results against plain loops, and that the process holds
// exactly one OpenMP runtime (what `rltrade bench machine` lists and warns about).
#include <faiss/IndexFlat.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "perf/machine.h"

namespace {

TEST(FaissAndTorch, SearchAndMatmulInOneProcessGiveTheReferenceResults) {
  constexpr int kDim = 16, kBase = 2000, kQueries = 50;
  torch::manual_seed(3);
  const torch::Tensor base = torch::randn({kBase, kDim});
  const torch::Tensor queries = torch::randn({kQueries, kDim});
  at::set_num_threads(2);
  for (int round = 0; round < 3; ++round) {
    faiss::IndexFlatL2 index(kDim);
    index.add(kBase, base.data_ptr<float>());
    std::vector<float> distances(kQueries);
    std::vector<faiss::Index::idx_t> labels(kQueries);
    index.search(kQueries, queries.data_ptr<float>(), 1, distances.data(), labels.data());
    // Torch between FAISS calls: all pairwise dot products by matmul.
    const torch::Tensor dots = torch::matmul(queries, base.t());
    const float* b = base.data_ptr<float>();
    const float* q = queries.data_ptr<float>();
    for (int i = 0; i < kQueries; ++i) {
      int best = -1;
      double best_d = std::numeric_limits<double>::infinity();
      for (int j = 0; j < kBase; ++j) {
        double d = 0, dot = 0, magnitude = 0;  // magnitude: sum of |terms| of the dot
        for (int k = 0; k < kDim; ++k) {
          d += std::pow(q[i * kDim + k] - b[j * kDim + k], 2);
          dot += static_cast<double>(q[i * kDim + k]) * b[j * kDim + k];
          magnitude += std::fabs(static_cast<double>(q[i * kDim + k]) * b[j * kDim + k]);
        }
        if (d < best_d) best_d = d, best = j;
        if (j < 5) {
          // A float32 sgemm dot of kDim terms in the BLAS kernel's order: within
          // kDim eps of the sum of the terms' magnitudes.
          EXPECT_NEAR(dots[i][j].item<float>(), dot,
                      kDim * std::numeric_limits<float>::epsilon() * magnitude);
        }
      }
      EXPECT_EQ(labels[i], best) << "query " << i;
      EXPECT_NEAR(distances[i], best_d, 1e-3 * (1 + best_d));
    }
  }
}

TEST(FaissAndTorch, OneOpenMpRuntimeServesFaissTorchAndOpenBlas) {
  faiss::IndexFlatIP index(4);  // touch FAISS and LibTorch so every runtime is in use
  const std::vector<float> v = {1, 0, 0, 0};
  index.add(1, v.data());
  EXPECT_EQ(torch::ones({8, 8}).matmul(torch::ones({8, 8}))[0][0].item<float>(), 8.0f);
  const rlt::perf::LoadedRuntimes r = rlt::perf::FindLoadedRuntimes();
  ASSERT_EQ(r.openmp.size(), 1u) << "OpenMP runtimes: " << ::testing::PrintToString(r.openmp);
  EXPECT_NE(r.openmp[0].find("libgomp"), std::string::npos) << r.openmp[0];
  EXPECT_FALSE(r.blas.empty());
}

}  // namespace
