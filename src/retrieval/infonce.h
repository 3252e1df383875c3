// rltrade retrieval: the InfoNCE loss of the two-tower trainer, forward and backward.
//
// For a batch of b queries q_i (L2-normalised, D) with targets y_i (L2-normalised bank
// vectors whose bank rows are target_ids[i]) the logits of query i are, divided by tau:
//   [ q_i.y_i | q_i.y_j for j != i | q_i.m_k for the memory bank's entries | q_i.h_il ]
// where an in-batch or memory-bank entry with the same bank row as y_i is masked (it is
// the query's own target, not a negative), and h_il are query i's hard negatives
// (hard_ids[i][l] >= 0; -1 = none). loss_i = logsumexp(logits) - logits[0] (cross-entropy
// with the positive as the class); with margin > 0 it adds
//   margin_weight * max(0, margin - (q_i.y_i - max over unmasked negatives of q_i.n))
// on the unscaled similarities. The loss is the mean over the batch times `scale` (1 /
// accumulation steps). Gradients go to the queries and, when asked for (a document tower
// with parameters, doc_tower.h), to the targets y and the hard negatives; memory-bank
// entries are constants (embeddings kept from earlier steps, as in MoCo).
// Sums run in double; logits in float from OpenBLAS products.
#ifndef RLT_RETRIEVAL_INFONCE_H_
#define RLT_RETRIEVAL_INFONCE_H_

#include <cstdint>
#include <vector>

namespace rlt::retrieval {

struct InfoNceOptions {
  double tau = 0.05;
  double margin = 0.0;  // 0: no margin term
  double margin_weight = 1.0;
};

struct InfoNceBatch {
  int b = 0, d = 0;
  const float* q = nullptr;             // (b, d)
  const float* y = nullptr;             // (b, d)
  const int64_t* target_ids = nullptr;  // (b)
  int m = 0;                            // memory-bank entries
  const float* memory = nullptr;        // (m, d)
  const int64_t* memory_ids = nullptr;  // (m)
  int hard = 0;                         // hard negatives per query
  const float* hard_vectors = nullptr;  // (b, hard, d)
  const int64_t* hard_ids = nullptr;    // (b, hard); -1 = unused slot
};

struct InfoNceStats {
  double loss = 0.0;         // mean over the batch (before `scale`)
  double margin_loss = 0.0;  // the margin part of it
  double accuracy = 0.0;     // fraction of queries whose positive has the largest logit
};

class InfoNce {
 public:
  explicit InfoNce(const InfoNceOptions& options) : options_(options) {}
  // Writes d_q (b, d) = scale * d(mean loss)/dq and, when not null, d_y (b, d) and d_hard
  // (b, hard, d) likewise; returns the statistics.
  InfoNceStats Compute(const InfoNceBatch& batch, double scale, float* d_q, float* d_y = nullptr,
                       float* d_hard = nullptr);

 private:
  InfoNceOptions options_;
  std::vector<float> in_batch_, mem_, hard_;  // logits
  std::vector<float> d_in_, d_mem_;
};

// The same loss and gradients in double precision, one dot product at a time (d_y and
// d_hard may be null).
double InfoNceReference(const InfoNceOptions& options, const InfoNceBatch& batch, double* d_q,
                        double* d_y = nullptr, double* d_hard = nullptr);

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_INFONCE_H_
