// rltrade native: Gemm kernels (see gemm.h).
#include "native/gemm.h"

#include <cblas.h>
#include <dlfcn.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstring>

#include "core/status.h"
#include "native/dispatch.h"

namespace rlt::native {

void SetBlasThreads(int n) {
  RLT_CHECK(n >= 1);
  using SetFn = void (*)(int);
  static const auto set_fn =
      reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (set_fn != nullptr) set_fn(n);
}
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

RLT_KERNEL_CLONES
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

int64_t PackedPanelsSize(int k, int n) { return static_cast<int64_t>((n + 31) / 32) * 32 * k; }

void PackPanels(bool trans_b, int k, int n, const float* b, int ldb, float* packed) {
  for (int q = 0; q < (n + 31) / 32; ++q) {
    float* panel = packed + static_cast<int64_t>(q) * 32 * k;
    const int n0 = 32 * q, width = std::min(32, n - n0);
    if (trans_b) {  // B^T (n, k): column j of B is row j of the input
      for (int j = 0; j < 32; ++j) {
        const float* src = b + static_cast<int64_t>(n0 + j) * ldb;
        for (int p = 0; p < k; ++p)
          panel[static_cast<int64_t>(p) * 32 + j] = j < width ? src[p] : 0;
      }
    } else {
      for (int p = 0; p < k; ++p) {
        const float* src = b + static_cast<int64_t>(p) * ldb + n0;
        float* dst = panel + static_cast<int64_t>(p) * 32;
        for (int j = 0; j < 32; ++j) dst[j] = j < width ? src[j] : 0.0f;
      }
    }
  }
}

namespace {

#if defined(__AVX512F__)
// MB rows of C against one packed panel (columns [n0, n0 + width)).
template <int MB>
void SmallMPanel(int k, const float* a, int lda, const float* panel, float beta, float* c, int ldc,
                 int width) {
  __m512 acc0[MB], acc1[MB];
  for (int i = 0; i < MB; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  for (int p = 0; p < k; ++p) {
    const __m512 b0 = _mm512_loadu_ps(panel + static_cast<int64_t>(p) * 32);
    const __m512 b1 = _mm512_loadu_ps(panel + static_cast<int64_t>(p) * 32 + 16);
    for (int i = 0; i < MB; ++i) {
      const __m512 av = _mm512_set1_ps(a[static_cast<int64_t>(i) * lda + p]);
      acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
    }
  }
  const __mmask16 m0 = width >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << width) - 1);
  const __mmask16 m1 = width >= 32   ? 0xFFFF
                       : width <= 16 ? 0
                                     : static_cast<__mmask16>((1u << (width - 16)) - 1);
  const __m512 vb = _mm512_set1_ps(beta);
  for (int i = 0; i < MB; ++i) {
    float* crow = c + static_cast<int64_t>(i) * ldc;
    __m512 r0 = acc0[i], r1 = acc1[i];
    if (beta != 0.0f) {
      r0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, crow), r0);
      r1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, crow + 16), r1);
    }
    _mm512_mask_storeu_ps(crow, m0, r0);
    _mm512_mask_storeu_ps(crow + 16, m1, r1);
  }
}
#else
// Eight floats in GCC's vector extension: AVX registers where the target has them, pairs of
// SSE registers otherwise (and the clones of dispatch.h pick per CPU).
using Float8 = float __attribute__((vector_size(32)));

// MB rows of C against one packed panel, 16 columns at a time: MB x 2 accumulators of
// eight stay in registers while the panel's rows stream past once per MB rows of A (one
// pass per row of A, as a plain loop does, is bound by reading the panel: an LSTM's W_hh is
// 1 MB). Each element is still summed over p in order.
template <int MB>
RLT_KERNEL_CLONES void SmallMPanel(int k, const float* a, int lda, const float* panel, float beta,
                                   float* c, int ldc, int width) {
  for (int half = 0; half < 2 && 16 * half < width; ++half) {
    Float8 acc[MB][2] = {};
    const float* b = panel + 16 * half;
    for (int p = 0; p < k; ++p) {
      // Loaded in place, not through a helper: a function returning a 32-byte vector changes
      // the ABI in the baseline clone (no AVX), which GCC warns about.
      Float8 b0, b1;
      std::memcpy(&b0, b + static_cast<int64_t>(p) * 32, sizeof b0);
      std::memcpy(&b1, b + static_cast<int64_t>(p) * 32 + 8, sizeof b1);
#if defined(__AVX__)
      // Keeps the panel's two vectors in registers: GCC otherwise folds the load into each
      // row's multiply-add, and 2 x MB loads per p bound the loop by the load ports (B = 8:
      // 44 -> 72 GFLOP/s on a Zen 3 core). An empty asm statement; nothing is computed.
      asm("" : "+x"(b0), "+x"(b1));
#endif
      for (int i = 0; i < MB; ++i) {
        const float av = a[static_cast<int64_t>(i) * lda + p];
        acc[i][0] += av * b0;
        acc[i][1] += av * b1;
      }
    }
    const int cols = std::min(16, width - 16 * half);
    for (int i = 0; i < MB; ++i) {
      float out[16];
      std::memcpy(out, acc[i], sizeof out);
      float* crow = c + static_cast<int64_t>(i) * ldc + 16 * half;
      for (int j = 0; j < cols; ++j) crow[j] = out[j] + (beta != 0.0f ? beta * crow[j] : 0.0f);
    }
  }
}
#endif

}  // namespace

void GemmSmallM(int m, int n, int k, const float* a, int lda, const float* packed, float beta,
                float* c, int ldc) {
  using PanelFn = void (*)(int, const float*, int, const float*, float, float*, int, int);
  static constexpr PanelFn kPanel[] = {SmallMPanel<1>, SmallMPanel<2>, SmallMPanel<3>,
                                       SmallMPanel<4>, SmallMPanel<5>, SmallMPanel<6>,
                                       SmallMPanel<7>, SmallMPanel<8>};
  // Rows per block: at most eight with AVX-512 (2 x 8 of its 32 registers), six otherwise (12
  // of AVX2's 16 registers hold the accumulators). The rows are split into blocks of nearly
  // equal size (16 rows: 6 + 5 + 5, 8 rows: 4 + 4), since a block of one or two rows is bound
  // by loading the panel, not by its multiply-adds.
#if defined(__AVX512F__)
  constexpr int kRowBlock = 8;
#else
  constexpr int kRowBlock = 6;
#endif
  const int blocks = (m + kRowBlock - 1) / kRowBlock;
  // Panels outside, row blocks inside: a panel (32 columns, k rows) is read from memory once
  // and stays in the core's cache for the other row blocks; the whole packed matrix (an
  // LSTM's W_hh is 1 MB) does not fit there.
  for (int q = 0; q < (n + 31) / 32; ++q) {
    const float* panel = packed + static_cast<int64_t>(q) * 32 * k;
    const int width = std::min(32, n - 32 * q);
    for (int blk = 0, i0 = 0; blk < blocks; ++blk) {
      const int mb = (m - i0 + (blocks - blk) - 1) / (blocks - blk);
      kPanel[mb - 1](k, a + static_cast<int64_t>(i0) * lda, lda, panel, beta,
                     c + static_cast<int64_t>(i0) * ldc + 32 * q, ldc, width);
      i0 += mb;
    }
  }
}

}  // namespace rlt::native
