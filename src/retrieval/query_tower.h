// rltrade retrieval: the query tower of the two-tower model, forward and backward on the
// native engine (no LibTorch):
//   x (B, T, D) --bidirectional GRU or LSTM (D -> H each way)--> (T, B, 2H) --mean over T-->
//   (B, 2H)
//   --linear 2H -> D--> p (B, D) --L2 normalisation--> q = p / ||p||
// Parameters, named as torch::nn::GRU / LSTM(D, H, bidirectional) and torch::nn::Linear(2H, D)
// would name them: gru.weight_ih_l0 ... gru.bias_hh_l0_reverse (lstm.* for the LSTM),
// head.weight (D, 2H),
// head.bias (D); the linear layer is initialised as torch's (U(+-1/sqrt(2H))).
// The two GRU directions are independent until the mean: with two threads they run at
// once, each on its own core (OpenBLAS limited to one thread meanwhile).
// Not thread-safe: one Forward/Backward at a time per tower.
#ifndef RLT_RETRIEVAL_QUERY_TOWER_H_
#define RLT_RETRIEVAL_QUERY_TOWER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rlt::retrieval {

struct TowerParam {
  std::string name;
  std::vector<int64_t> shape;
  float* value;
  float* grad;
  int64_t size;
};

class TowerDirection;  // one direction of the recurrent layer (query_tower.cc)

class QueryTower {
 public:
  // cell: "gru" or "lstm".
  QueryTower(int d, int hidden, uint64_t seed, const std::string& cell = "gru");
  ~QueryTower();

  int d() const { return d_; }
  int hidden() const { return hidden_; }
  // Every parameter with its gradient buffer, in a fixed order (checkpoints, optimiser).
  std::vector<TowerParam> Params();
  int64_t num_params() const;
  void ZeroGrads();

  // x (B, T, D) row-major (one sequence after another) -> q (B, D). threads is 1 or 2.
  void Forward(const float* x, int batch, int steps, float* q, int threads);
  // Given d_q (B, D) for the last Forward(): accumulates the parameter gradients.
  void Backward(const float* d_q, int threads);

  // FLOPs of one Forward + Backward for (batch, steps) (the GRU's products counted
  // twice per multiply-add; backward = 2x forward).
  double FlopsPerIteration(int batch, int steps) const;

 private:
  int d_, hidden_;
  std::string cell_;
  std::unique_ptr<TowerDirection> fwd_, bwd_;
  std::vector<float> grad_fwd_, grad_bwd_;
  std::vector<float> head_w_, head_b_, grad_w_, grad_b_;
  // Activations of the last Forward().
  int batch_ = 0, steps_ = 0;
  std::vector<float> x_tbd_;     // (T, B, D)
  std::vector<float> out_;       // (T, B, 2H)
  std::vector<float> mean_;      // (B, 2H)
  std::vector<float> p_, norm_;  // (B, D), (B)
  std::vector<float> q_;         // (B, D)
  std::vector<float> d_out_, d_mean_, d_p_;
};

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_QUERY_TOWER_H_
