// rltrade retrieval: the optional document tower ([model] doc_tower = "mlp").
//
// The default document tower is the identity: a document's embedding is its
// L2-normalised bank vector. The MLP tower maps a normalised bank vector v (D) to
//   e = normalize(v + W2 relu(W1 v + b1) + b2)
// with W1 (Hd, D), W2 (D, Hd): a residual two-layer perceptron. W2 and b2 start at zero,
// so at the first step the tower is exactly the identity (mining and Recall@k start where
// the identity tower's do) and learns a correction from there. W1 and b1 are initialised
// as torch::nn::Linear(D, Hd) is (U(+-1/sqrt(D))). Parameters are named doc.fc1.weight,
// doc.fc1.bias, doc.fc2.weight, doc.fc2.bias.
// Not thread-safe: one Forward/Backward at a time; Embed() is const and keeps nothing.
#ifndef RLT_RETRIEVAL_DOC_TOWER_H_
#define RLT_RETRIEVAL_DOC_TOWER_H_

#include <cstdint>
#include <vector>

#include "retrieval/query_tower.h"

namespace rlt::retrieval {

class DocTower {
 public:
  DocTower(int d, int hidden, uint64_t seed);

  int d() const { return d_; }
  int hidden() const { return hidden_; }
  std::vector<TowerParam> Params();
  void ZeroGrads();

  // v (n, D) -> e (n, D), keeping what Backward() needs.
  void Forward(const float* v, int64_t n, float* e);
  // Given d_e (n, D) for the last Forward(): accumulates the parameter gradients.
  void Backward(const float* d_e);
  // e = the tower of v for many rows (the whole bank), a block at a time; keeps nothing.
  void Embed(const float* v, int64_t n, float* e) const;

  // FLOPs of one row forward (backward is about twice as much).
  double FlopsPerRow() const { return 4.0 * d_ * hidden_; }

 private:
  // One block: a (n, Hd) pre-activations, h = relu(a), p (n, D) before normalisation.
  void ForwardBlock(const float* v, int64_t n, float* a, float* h, float* p, float* norms,
                    float* e) const;

  int d_, hidden_;
  std::vector<float> w1_, b1_, w2_, b2_;
  std::vector<float> g_w1_, g_b1_, g_w2_, g_b2_;
  // Activations of the last Forward().
  int64_t n_ = 0;
  std::vector<float> v_, a_, h_, p_, norms_, e_;
  std::vector<float> d_p_, d_h_;
};

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_DOC_TOWER_H_
