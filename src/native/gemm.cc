// rltrade native: Gemm kernels (see gemm.h).
#include "native/gemm.h"

#include <cblas.h>

#include "core/status.h"

namespace rlt::native {
namespace {

void ScaleC(int m, int n, float beta, float* c, int ldc) {
  if (beta == 1.0f) return;
  for (int i = 0; i < m; ++i) {
    float* row = c + static_cast<int64_t>(i) * ldc;
    if (beta == 0.0f) {
      for (int j = 0; j < n; ++j) row[j] = 0.0f;
    } else {
      for (int j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

}  // namespace

void GemmLoops(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
               int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  if (!trans_b) {
    // C[i, :] += sum_p alpha op(A)[i, p] B[p, :]: contiguous axpy rows, vectorised over j.
    ScaleC(m, n, beta, c, ldc);
    for (int i = 0; i < m; ++i) {
      float* __restrict crow = c + static_cast<int64_t>(i) * ldc;
      for (int p = 0; p < k; ++p) {
        const float av = alpha * (trans_a ? a[static_cast<int64_t>(p) * lda + i]
                                          : a[static_cast<int64_t>(i) * lda + p]);
        const float* __restrict brow = b + static_cast<int64_t>(p) * ldb;
#pragma omp simd
        for (int j = 0; j < n; ++j) crow[j] += av * brow[j];
      }
    }
    return;
  }
  RLT_CHECK_MSG(!trans_a, "GemmLoops: A^T B^T is not used by any layer");
  // C[i, j] = alpha dot(A[i, :], B[j, :]) + beta C[i, j]: contiguous dot products.
  for (int i = 0; i < m; ++i) {
    const float* __restrict arow = a + static_cast<int64_t>(i) * lda;
    float* crow = c + static_cast<int64_t>(i) * ldc;
    for (int j = 0; j < n; ++j) {
      const float* __restrict brow = b + static_cast<int64_t>(j) * ldb;
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (int p = 0; p < k; ++p) sum += arow[p] * brow[p];
      crow[j] = alpha * sum + (beta == 0.0f ? 0.0f : beta * crow[j]);
    }
  }
}

void GemmBlas(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
              const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  const int64_t work = static_cast<int64_t>(m) * n * k;
  if (work >= kSgemmMinWork || (trans_a && trans_b)) {
    GemmBlas(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    GemmLoops(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

void GemmReference(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                   int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int p = 0; p < k; ++p) {
        const double av =
            trans_a ? a[static_cast<int64_t>(p) * lda + i] : a[static_cast<int64_t>(i) * lda + p];
        const double bv =
            trans_b ? b[static_cast<int64_t>(j) * ldb + p] : b[static_cast<int64_t>(p) * ldb + j];
        sum += av * bv;
      }
      float& out = c[static_cast<int64_t>(i) * ldc + j];
      out =
          static_cast<float>(alpha * sum + (beta == 0.0f ? 0.0 : static_cast<double>(beta) * out));
    }
  }
}

}  // namespace rlt::native
