// rltrade native: a one-layer GRU over batched sequences, forward and backward, with
// PyTorch's semantics and parameter layout (torch::nn::GRU, one layer, biases):
//   r = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)
//   z = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)
//   n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))
//   h' = (1 - z) * n + z * h
// Parameters (flat, in this order, named as torch's): weight_ih_l0 (3H, in),
// weight_hh_l0 (3H, H), bias_ih_l0 (3H), bias_hh_l0 (3H), gate blocks in the order r, z,
// n; with reverse = true the names end in "_reverse" (the second direction of a
// bidirectional torch GRU), and the sequence is read from t = T - 1 down to 0, h0
// entering at T - 1, out[t] written at time index t. Initialised U(+-1/sqrt(H)) as torch
// does (our own RNG).
// Speed: the input projection of all T*B rows is one matrix product (and so are its
// gradients and W_hh's); each step adds one (B, H) x (H, 3H) product on W_hh packed once
// per call (GemmSmallM) for B <= 32.
// Thread safety: Forward/Backward of different Gru objects with their own workspaces and
// gradient buffers may run at once (the two directions of a bidirectional layer); one
// object's calls must not overlap.
#ifndef RLT_NATIVE_GRU_H_
#define RLT_NATIVE_GRU_H_

#include <cstdint>
#include <vector>

#include "native/actor_critic.h"

namespace rlt::native {

// Activations of one Forward(), kept for Backward(); grown on demand.
struct GruWorkspace {
  int64_t capacity = 0;        // T * B rows
  std::vector<float> xg;       // (T, B, 3H) x W_ih^T + b_ih
  std::vector<float> gates;    // (T, B, 3H) activated r, z, n
  std::vector<float> hn;       // (T, B, H) h W_hn^T + b_hn
  std::vector<float> h_prev;   // (T, B, H) state entering step t
  std::vector<float> d_in;     // (T, B, 3H) d of the input-side pre-activations
  std::vector<float> d_hid;    // (T, B, 3H) d of the hidden-side pre-activations
  std::vector<float> hg;       // (B, 3H) one step's hidden products
  std::vector<float> dh, dht;  // (B, H)
  std::vector<float> w_hh_packed;
  const float* x = nullptr;
  int steps = 0, batch = 0;
};

class Gru {
 public:
  // REQUIRES: input_size >= 1, hidden_size >= 1.
  Gru(int input_size, int hidden_size, uint64_t seed, bool reverse = false);

  int input_size() const { return input_; }
  int hidden_size() const { return hidden_; }
  bool reverse() const { return reverse_; }
  const std::vector<ParamInfo>& param_info() const { return param_info_; }
  std::vector<float>& params() { return params_; }
  const std::vector<float>& params() const { return params_; }
  int64_t num_params() const { return static_cast<int64_t>(params_.size()); }

  // x (T, B, in); h0 (B, H) or nullptr (zeros). Writes out[t] (B rows of H floats, row
  // stride out_stride >= H, so two directions can fill one (T, B, 2H) buffer) and, unless
  // nullptr, the final state h_n (B, H). x must stay valid until Backward().
  void Forward(GruWorkspace& ws, const float* x, int steps, int batch, const float* h0, float* out,
               int out_stride, float* h_n) const;
  // Given d_out (row stride d_out_stride) and d_h_n (nullptr = zero) for the last
  // Forward() on ws: ACCUMULATES parameter gradients into grads (num_params()); writes
  // d_x (T, B, in) (added to it when accumulate_dx, else overwritten) and d_h0 (B, H)
  // unless nullptr.
  void Backward(GruWorkspace& ws, const float* d_out, int d_out_stride, const float* d_h_n,
                float* d_x, bool accumulate_dx, float* d_h0, float* grads) const;

 private:
  int input_, hidden_;
  bool reverse_;
  std::vector<ParamInfo> param_info_;
  std::vector<float> params_;
  int64_t w_ih_, w_hh_, b_ih_, b_hh_;  // offsets
};

// Plain reference: the same recurrence step by step in double precision, from double
// parameters in the flat layout above; out (T, B, H) dense.
void GruForwardReference(const double* params, int input_size, int hidden_size, bool reverse,
                         const double* x, int steps, int batch, const double* h0, double* out,
                         double* h_n);

}  // namespace rlt::native

#endif  // RLT_NATIVE_GRU_H_
