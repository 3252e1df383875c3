// rltrade native: a one-layer LSTM over batched sequences, forward and backward, with
// PyTorch's semantics and parameter layout (torch::nn::LSTM, one layer, biases):
//   gates (B, 4H) = x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh, split in the order i, f, g, o
//   i, f, o = sigmoid(.), g = tanh(.),  c_t = f c_{t-1} + i g,  h_t = o tanh(c_t)
// Parameters (flat, in this order, named as torch's): weight_ih_l0 (4H, in),
// weight_hh_l0 (4H, H), bias_ih_l0 (4H), bias_hh_l0 (4H); initialised U(+-1/sqrt(H)) as
// torch does (our own RNG).
// Episode resets (recurrent PPO, SB3 RecurrentPPO): where episode_starts[t][b] = 1 the
// state entering step t is zeroed, h_{t-1} <- 0, c_{t-1} <- 0, before the step.
// Speed: the input projection of all T*B rows is one matrix product (and so are its
// gradients, and so is W_hh's); each step adds one (B, H) x (H, 4H) product, run for small
// B by native::GemmSmallM on W_hh packed once per Forward / Backward.
// Not thread-safe; concurrent Forward/Backward need separate workspaces and gradients.
#ifndef RLT_NATIVE_LSTM_H_
#define RLT_NATIVE_LSTM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "native/actor_critic.h"

namespace rlt::native {

// Activations of one Forward(), kept for Backward(); grown on demand.
struct LstmWorkspace {
  int64_t capacity = 0;            // T * B rows
  std::vector<float> gates;        // (T, B, 4H) activated i, f, g, o
  std::vector<float> h_prev;       // (T, B, H) state entering step t, after the reset
  std::vector<float> c_prev;       // (T, B, H)
  std::vector<float> cell;         // (T, B, H) c_t
  std::vector<float> tanh_c;       // (T, B, H) tanh(c_t)
  std::vector<float> d_gates;      // (T, B, 4H)
  std::vector<float> dh, dc;       // (B, H)
  std::vector<float> w_hh_packed;  // W_hh^T (Forward) / W_hh (Backward) in GemmSmallM panels
  const float* x = nullptr;
  const float* episode_starts = nullptr;
  int steps = 0, batch = 0;
};

class Lstm {
 public:
  // REQUIRES: input_size >= 1, hidden_size >= 1.
  Lstm(int input_size, int hidden_size, uint64_t seed);

  int input_size() const { return input_; }
  int hidden_size() const { return hidden_; }
  const std::vector<ParamInfo>& param_info() const { return param_info_; }
  std::vector<float>& params() { return params_; }
  const std::vector<float>& params() const { return params_; }
  int64_t num_params() const { return static_cast<int64_t>(params_.size()); }

  // x (T, B, in); h0, c0 (B, H); episode_starts (T, B) or nullptr (no resets).
  // Writes out (T, B, H) and, unless nullptr, the final state h_n, c_n (B, H).
  // x and episode_starts must stay valid until Backward().
  void Forward(LstmWorkspace& ws, const float* x, int steps, int batch, const float* h0,
               const float* c0, const float* episode_starts, float* out, float* h_n,
               float* c_n) const;
  // Given d_out (T, B, H) and the gradients of the final state d_h_n, d_c_n (B, H; nullptr
  // = zero) of the last Forward() on ws: ACCUMULATES parameter gradients into grads
  // (num_params()) and writes d_x (T, B, in), d_h0, d_c0 (B, H) unless nullptr.
  void Backward(LstmWorkspace& ws, const float* d_out, const float* d_h_n, const float* d_c_n,
                float* d_x, float* d_h0, float* d_c0, float* grads) const;

 private:
  int input_, hidden_;
  std::vector<ParamInfo> param_info_;
  std::vector<float> params_;
  int64_t w_ih_, w_hh_, b_ih_, b_hh_;  // offsets
};

// Plain reference: the same recurrence step by step in double precision, from double
// parameters in the flat layout above. Same argument shapes as Lstm::Forward.
void LstmForwardReference(const double* params, int input_size, int hidden_size, const double* x,
                          int steps, int batch, const double* h0, const double* c0,
                          const double* episode_starts, double* out, double* h_n, double* c_n);

}  // namespace rlt::native

#endif  // RLT_NATIVE_LSTM_H_
