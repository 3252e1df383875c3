// rltrade retrieval: a structured synthetic dataset for the two-tower trainer
// (`rltrade retrieval synth`).
//
// The generator (all vectors L2-normalised, D dimensions):
//   - a random orthogonal map R and K cluster centroids on its orbit: mu_k = R^k mu_0;
//   - S slot directions u_s (random unit vectors), shared by every cluster;
//   - the bank: item(k, s) = normalise(mu_k + slot_weight * u_s) for every k < K, s < S
//     (K = bank_size / S), then bank_size - K*S distractors (random unit vectors that are
//     never a target), the rows shuffled; `ids` holds each row's item number;
//   - a sequence is a triple (start k0, speed v in 1..speeds, slot s): it walks over the
//     centroids, x_t = normalise(item(k0 + v t mod K, s) + noise * g_t / sqrt(D)) for
//     t < T, and its target is item(k0 + v T mod K, s), exactly a bank row.
// The next vector is predictable from the context (the speed and the last cluster from
// the walk, the slot from the shared component), so a trained query tower can retrieve it
// among all bank rows; with shuffled targets nothing can.
// Every triple is used at most once, drawn from a seeded permutation: validation contexts
// never repeat training ones. Rows are generated on demand from (seed, row), so a dataset
// larger than memory is written in bounded memory.
#ifndef RLT_RETRIEVAL_SYNTH_H_
#define RLT_RETRIEVAL_SYNTH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::retrieval {

struct SynthOptions {
  int64_t n = 8192;           // training pairs
  int64_t n_val = 0;          // validation pairs (0: n / 8, at least 1)
  int t = 32;                 // steps per context
  int d = 64;                 // vector dimensions
  int64_t bank_size = 16384;  // bank rows
  int slots = 64;             // S, items per cluster
  int speeds = 3;             // walk speeds 1..speeds
  double slot_weight = 0.6;   // weight of the slot direction in an item
  double noise = 0.3;         // norm of the noise added to each context vector
  uint64_t seed = 1;
  std::string dtype = "float32";  // float32 or float16 in the written files

  template <typename V>
  void VisitFields(V& v) {
    v("n", &n, "training pairs");
    v("n_val", &n_val, "validation pairs (0: n / 8)");
    v("t", &t, "steps per context");
    v("d", &d, "vector dimensions");
    v("bank_size", &bank_size, "bank rows");
    v("slots", &slots, "items per cluster");
    v("speeds", &speeds, "walk speeds 1..speeds");
    v("slot_weight", &slot_weight, "weight of the slot direction in an item");
    v("noise", &noise, "norm of the noise on each context vector");
    v("seed", &seed, "random seed");
    v("dtype", &dtype, "element type written", {"float32", "float16"});
  }
};

class SynthDataset {
 public:
  // Checks the options (sizes, enough distinct sequences for n + n_val) and builds the
  // centroids; O(K D + D^3) time.
  static Result<SynthDataset> Create(const SynthOptions& options);

  const SynthOptions& options() const { return options_; }
  int64_t n_train() const { return options_.n; }
  int64_t n_val() const { return n_val_; }
  int64_t clusters() const { return clusters_; }

  // Sequence i of the training (val = false) or validation set: x (T, D), y (D).
  void Pair(bool val, int64_t i, float* x, float* y) const;
  // The bank row of sequence i's target.
  int64_t TargetRow(bool val, int64_t i) const;
  // Bank row j (D) and its item id.
  void BankRow(int64_t j, float* v) const;
  int64_t BankId(int64_t j) const { return bank_item_[j]; }

 private:
  void Item(int64_t item, float* v) const;

  SynthOptions options_;
  int64_t n_val_ = 0, clusters_ = 0;
  std::vector<double> centroids_;   // (K, D)
  std::vector<double> slots_;       // (S, D)
  std::vector<int64_t> bank_item_;  // bank row -> item (k * S + s, or >= K*S: distractor)
  std::vector<int64_t> item_row_;   // item -> bank row
  std::vector<int64_t> triples_;    // sequence -> (k0 * speeds + v - 1) * S + s; train first
};

// Writes the pairs file (X_train, Y_train, X_val, Y_val, and the bank rows of the targets
// Y_train_row, Y_val_row) and the bank file (vectors, ids), each atomically, generating
// rows in blocks (memory bounded by a block, not the dataset).
Status WriteSynth(const SynthOptions& options, const std::string& pairs_path,
                  const std::string& bank_path);

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_SYNTH_H_
