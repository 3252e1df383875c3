// Tests of the native matrix product (no LibTorch): Gemm's loop kernels, its OpenBLAS call
// and its dispatch against the double-accumulating reference, and GemmSmallM on packed
// panels.
#include "native/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "native/test_util.h"

namespace rlt::native {
namespace {

using testing_util::ExpectClose;
using testing_util::RandomVector;

struct GemmCase {
  bool ta, tb;
  int m, n, k;
};

TEST(Gemm, EveryKernelMatchesTheReference) {
  Rng rng(1);
  const std::vector<GemmCase> cases = {
      {false, true, 5, 7, 3},      {false, true, 64, 64, 64},   {false, true, 2048, 64, 147},
      {false, false, 6, 4, 9},     {false, false, 64, 147, 64}, {true, false, 8, 5, 11},
      {true, false, 64, 147, 256}, {false, true, 1, 1, 1},      {true, false, 3, 2, 1}};
  for (const GemmCase& c : cases) {
    for (float beta : {0.0f, 1.0f, 0.5f}) {
      const int lda = (c.ta ? c.m : c.k) + 2, ldb = (c.tb ? c.k : c.n) + 1, ldc = c.n + 3;
      const auto a = RandomVector(static_cast<size_t>(c.ta ? c.k : c.m) * lda, rng);
      const auto b = RandomVector(static_cast<size_t>(c.tb ? c.n : c.k) * ldb, rng);
      const auto c0 = RandomVector(static_cast<size_t>(c.m) * ldc, rng);
      std::vector<float> ref = c0, loops = c0, blas = c0, fast = c0;
      const float alpha = 0.75f;
      GemmReference(c.ta, c.tb, c.m, c.n, c.k, alpha, a.data(), lda, b.data(), ldb, beta,
                    ref.data(), ldc);
      GemmLoops(c.ta, c.tb, c.m, c.n, c.k, alpha, a.data(), lda, b.data(), ldb, beta, loops.data(),
                ldc);
      GemmBlas(c.ta, c.tb, c.m, c.n, c.k, alpha, a.data(), lda, b.data(), ldb, beta, blas.data(),
               ldc);
      Gemm(c.ta, c.tb, c.m, c.n, c.k, alpha, a.data(), lda, b.data(), ldb, beta, fast.data(), ldc);
      const std::string what = "m" + std::to_string(c.m) + " n" + std::to_string(c.n) + " k" +
                               std::to_string(c.k) + " ta" + std::to_string(c.ta) + " tb" +
                               std::to_string(c.tb) + " beta " + std::to_string(beta);
      // Rounding of a length-k float dot product: ~k eps relative to sum |a||b|.
      const double rtol = 2e-7 * std::sqrt(static_cast<double>(c.k)) * 4;
      ExpectClose(loops, ref, rtol, "loops " + what);
      ExpectClose(blas, ref, rtol, "blas " + what);
      ExpectClose(fast, ref, rtol, "dispatch " + what);
      // Padding columns (beyond n) are untouched.
      for (int i = 0; i < c.m; ++i) {
        for (int j = c.n; j < ldc; ++j)
          ASSERT_EQ(fast[static_cast<size_t>(i) * ldc + j], c0[static_cast<size_t>(i) * ldc + j]);
      }
    }
  }
}

// GemmSmallM on packed panels equals the double-precision reference for row counts that
// split into one to six blocks of unequal and equal sizes (six or eight rows at most per
// block) and column counts that end inside a panel's first or second half.
TEST(GemmSmallM, MatchesTheReferenceForBothPackingsAndBetas) {
  Rng rng(17);
  for (int m : {1, 2, 3, 5, 6, 7, 8, 9, 13, 16, 17, 32, 41}) {
    for (int n : {5, 16, 37, 64}) {
      for (bool trans_b : {false, true}) {
        for (float beta : {0.0f, 1.0f, 0.5f}) {
          const int k = 19;
          std::vector<float> a(m * k), b(k * n), c(m * n), ref(m * n);
          for (float& v : a) v = static_cast<float>(rng.Normal());
          for (float& v : b) v = static_cast<float>(rng.Normal());
          for (size_t i = 0; i < c.size(); ++i) c[i] = ref[i] = static_cast<float>(rng.Normal());
          // B as given: (k, n) row-major, or its transpose (n, k) row-major.
          std::vector<float> given(b.size());
          for (int p = 0; p < k; ++p) {
            for (int j = 0; j < n; ++j) {
              given[trans_b ? j * k + p : p * n + j] = b[p * n + j];
            }
          }
          std::vector<float> packed(PackedPanelsSize(k, n), -7.0f);
          PackPanels(trans_b, k, n, given.data(), trans_b ? k : n, packed.data());
          GemmSmallM(m, n, k, a.data(), k, packed.data(), beta, c.data(), n);
          GemmReference(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, beta, ref.data(), n);
          for (int i = 0; i < m * n; ++i) {
            ASSERT_NEAR(c[i], ref[i], 1e-4f * (1.0f + std::fabs(ref[i])))
                << "m " << m << " n " << n << " trans_b " << trans_b << " beta " << beta << " at "
                << i;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace rlt::native
