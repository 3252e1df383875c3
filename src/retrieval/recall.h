// rltrade retrieval: Recall@k and MRR of queries against a whole bank, exactly.
//
// The rank of a query's target is the number of other bank rows more similar to the
// query (inner product of L2-normalised vectors) than the target row: 0 = retrieved
// first. Recall@k = fraction of queries with rank < k; MRR = mean of 1 / (rank + 1).
// Ties count in the target's favour. Computed with blocked matrix products over the bank
// (no top-k lists are kept), so the cost is one pass of queries x bank.
#ifndef RLT_RETRIEVAL_RECALL_H_
#define RLT_RETRIEVAL_RECALL_H_

#include <cstdint>
#include <map>
#include <vector>

namespace rlt::retrieval {

// queries (m, d), bank (n, d) row-major, targets (m) bank rows. Writes ranks (m).
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
