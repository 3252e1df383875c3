// rltrade retrieval: L2 normalisation of rows, forward and backward, as torch's
// F.normalize(dim=1) computes it (divide by max(||p||, 1e-12)); shared by both towers.
#ifndef RLT_RETRIEVAL_L2_ROWS_H_
#define RLT_RETRIEVAL_L2_ROWS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace rlt::retrieval {

// q_i = p_i / max(||p_i||, 1e-12) for rows p (n, d); norms (n) keep the divisors.
inline void L2NormalizeRows(const float* p, int64_t n, int d, float* norms, float* q) {
  for (int64_t i = 0; i < n; ++i) {
    const float* row = p + i * d;
    double ss = 0.0;
    for (int e = 0; e < d; ++e) ss += static_cast<double>(row[e]) * row[e];
    norms[i] = static_cast<float>(std::max(std::sqrt(ss), 1e-12));
    for (int e = 0; e < d; ++e) q[i * d + e] = row[e] / norms[i];
  }
}

// Given the outputs q and divisors of L2NormalizeRows and d_q: d_p = (d_q - q (q . d_q)) / norm.
inline void L2NormalizeRowsBackward(const float* q, const float* norms, const float* d_q, int64_t n,
                                    int d, float* d_p) {
  for (int64_t i = 0; i < n; ++i) {
    const float* qi = q + i * d;
    const float* g = d_q + i * d;
    double dot = 0.0;
    for (int e = 0; e < d; ++e) dot += static_cast<double>(qi[e]) * g[e];
    for (int e = 0; e < d; ++e)
      d_p[i * d + e] = static_cast<float>((g[e] - qi[e] * dot) / norms[i]);
  }
}

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_L2_ROWS_H_
