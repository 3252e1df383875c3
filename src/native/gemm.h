// rltrade native: the one matrix product every layer uses, row-major float32.
//
//   C (M, N) = alpha * op(A) op(B) + beta * C,   op(X) = X or X^T
// A is (M, K) (or (K, M) when trans_a), B is (K, N) (or (N, K) when trans_b), leading
// dimensions are the row strides. Gemm() calls OpenBLAS's cblas_sgemm unless the product
// is so small that the call costs more than the arithmetic (M N K < kSgemmMinWork), where
// it runs loops the compiler vectorises; GemmReference() is the plain triple loop (double
// accumulation) both are tested against (gemm_test.cc).
// Thread-safe (no state). OpenBLAS may use its own threads for large products; the learner
// sets their number (learn::SetComputeThreads).
#ifndef RLT_NATIVE_GEMM_H_
#define RLT_NATIVE_GEMM_H_

#include <cstdint>

namespace rlt::native {

// Products with fewer multiply-adds than this use the loop kernels. Measured with
// native_bench BM_Gemm (OpenBLAS 0.3.21, which has small-matrix sgemm kernels): cblas_sgemm
// beats the loops on every layer shape the policies use, down to (1 x 64 x 4) (0.14 us vs
// 0.42 us); only products of a few dozen multiply-adds are cheaper without the call.
inline constexpr int64_t kSgemmMinWork = 128;

void Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc);

// Always the loop kernels / always cblas_sgemm (for tests and benchmarks).
void GemmLoops(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
               int lda, const float* b, int ldb, float beta, float* c, int ldc);
void GemmBlas(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
              const float* b, int ldb, float beta, float* c, int ldc);

// Small-row products for recurrent steps: C (m, n) = A (m, k) B (k, n) + beta C for few
// rows m, with B packed once into 32-column panels (PackPanels) and then reused for many
// products (an LSTM's W_hh over the steps of a sequence): each panel is read sequentially
// for 8 rows of A at a time, with no per-call packing (cblas_sgemm packs B on every call,
// which for m = 8 costs about as much as the arithmetic).
// Packed layout: panel q holds columns [32q, 32q + 32) as k rows of 32 floats (zero beyond
// n); size PackedPanelsSize(k, n).
int64_t PackedPanelsSize(int k, int n);
// trans_b = false: B (k, n) row-major with leading dimension ldb; true: B given as its
// transpose, (n, k) row-major with leading dimension ldb.
void PackPanels(bool trans_b, int k, int n, const float* b, int ldb, float* packed);
// AVX-512 kernels when the build targets it, plain loops otherwise.
void GemmSmallM(int m, int n, int k, const float* a, int lda, const float* packed, float beta,
                float* c, int ldc);

// Sets OpenBLAS's thread count for later products (openblas_set_num_threads, found at run
// time; a no-op with another BLAS). Process-wide: callers that run products on several
// threads at once set 1 first and restore afterwards. REQUIRES: n >= 1.
void SetBlasThreads(int n);

// Plain reference: each C element is one double-precision dot product.
void GemmReference(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                   int lda, const float* b, int ldb, float beta, float* c, int ldc);

}  // namespace rlt::native

#endif  // RLT_NATIVE_GEMM_H_
