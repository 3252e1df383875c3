// rltrade retrieval: exact ranks, Recall@k and MRR (see recall.h).
#include "retrieval/recall.h"

#include <algorithm>
#include <cmath>

#include "core/status.h"
#include "native/gemm.h"

namespace rlt::retrieval {
namespace {

constexpr int64_t kQueryBlock = 256;
constexpr int64_t kBankBlock = 4096;

}  // namespace

void TargetRanks(const float* queries, int64_t m, const float* bank, int64_t n, int d,
                 const int64_t* targets, int64_t* ranks) {
  std::vector<float> scores(kQueryBlock * kBankBlock);
  std::vector<float> target_score(kQueryBlock);
  for (int64_t q0 = 0; q0 < m; q0 += kQueryBlock) {
    const int64_t qn = std::min(kQueryBlock, m - q0);
    for (int64_t i = 0; i < qn; ++i) {
      const int64_t t = targets[q0 + i];
      RLT_CHECK(t >= 0 && t < n);
      // The target's score from the same product kernel as every other row's: a
      // one-row product, so rounding treats it like the others.
      native::Gemm(false, true, 1, 1, d, 1.0f, queries + (q0 + i) * d, d, bank + t * d, d, 0.0f,
                   &target_score[i], 1);
      ranks[q0 + i] = 0;
    }
    for (int64_t b0 = 0; b0 < n; b0 += kBankBlock) {
      const int64_t bn = std::min(kBankBlock, n - b0);
      native::Gemm(false, true, static_cast<int>(qn), static_cast<int>(bn), d, 1.0f,
                   queries + q0 * d, d, bank + b0 * d, d, 0.0f, scores.data(),
                   static_cast<int>(bn));
      for (int64_t i = 0; i < qn; ++i) {
        const float s = target_score[i];
        if (std::isnan(s)) continue;  // ranked last below
        const float* row = &scores[i * bn];
        const int64_t t = targets[q0 + i] - b0;
        int64_t above = 0;
        // !(row <= s): a NaN row counts above the target (a broken score never helps).
#pragma omp simd reduction(+ : above)
        for (int64_t j = 0; j < bn; ++j) above += row[j] <= s ? 0 : 1;
        if (t >= 0 && t < bn && !(row[t] <= s)) --above;  // the target itself never counts
        ranks[q0 + i] += above;
      }
    }
    // A NaN target score: a miss at every k, ranked after every bank row.
    for (int64_t i = 0; i < qn; ++i) {
      if (std::isnan(target_score[i])) ranks[q0 + i] = n;
    }
  }
}

RetrievalMetrics MetricsFromRanks(const std::vector<int64_t>& ranks, const std::vector<int>& ks) {
  RetrievalMetrics out;
  out.queries = static_cast<int64_t>(ranks.size());
  for (int k : ks) out.recall[k] = 0.0;
  if (ranks.empty()) return out;
  for (int64_t r : ranks) {
    out.mrr += 1.0 / static_cast<double>(r + 1);
    for (int k : ks) {
      if (r < k) out.recall[k] += 1.0;
    }
  }
  out.mrr /= static_cast<double>(ranks.size());
  for (auto& [k, v] : out.recall) v /= static_cast<double>(ranks.size());
  return out;
}

}  // namespace rlt::retrieval
