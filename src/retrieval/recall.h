// rltrade retrieval: Recall@k and MRR of queries against a whole bank, exactly.
//
// The rank of a query's target is the number of other bank rows more similar to the
// query (inner product of L2-normalised vectors) than the target row: 0 = retrieved
// first. Recall@k = fraction of queries with rank < k; MRR = mean of 1 / (rank + 1).
// Ties count in the target's favour. Scores that are NaN (a diverged model, a query or
// vector that is not finite) never help: a bank row scoring NaN counts above the target,
// and a query whose target scores NaN gets rank n (after every row: a miss at every k,
// reciprocal rank 1 / (n + 1)). Computed with blocked matrix products over the bank
// (no top-k lists are kept), so the cost is one pass of queries x bank.
#ifndef RLT_RETRIEVAL_RECALL_H_
#define RLT_RETRIEVAL_RECALL_H_

#include <cstdint>
#include <map>
#include <vector>

namespace rlt::retrieval {

// queries (m, d), bank (n, d) row-major, targets (m) bank rows. Writes ranks (m), each in
// [0, n - 1], or n for a NaN target score.
void TargetRanks(const float* queries, int64_t m, const float* bank, int64_t n, int d,
                 const int64_t* targets, int64_t* ranks);

struct RetrievalMetrics {
  std::map<int, double> recall;  // k -> Recall@k
  double mrr = 0.0;
  int64_t queries = 0;
};

RetrievalMetrics MetricsFromRanks(const std::vector<int64_t>& ranks, const std::vector<int>& ks);

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_RECALL_H_
