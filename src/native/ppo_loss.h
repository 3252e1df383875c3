// rltrade native: the PPO loss of learn/ppo.h (Stable-Baselines3's PPO.train) and its
// gradient with respect to the policy's outputs, for one minibatch of B samples:
//   A      = (A - mean A) / (std A + 1e-8)    unbiased std; skipped for B = 1 or when
//                                             normalize_advantage is false
//   r      = exp(log_prob - old_log_prob)
//   L_pg   = -mean(min(A r, A clamp(r, 1 - clip, 1 + clip)))
//   V'     = V  or  old_V + clamp(V - old_V, -clip_vf, clip_vf)   (clip_range_vf > 0)
//   L_vf   = mean((returns - V')^2)
//   L_ent  = -mean(entropy)
//   loss   = L_pg + ent_coef L_ent + vf_coef L_vf
//   approx_kl = mean((r - 1) - log r), clip_fraction = mean(|r - 1| > clip)
// The derivatives follow PyTorch's autograd conventions at the kinks, so that gradients
// equal LibTorch's exactly in structure: min(a, b) sends half the gradient to each side
// when a == b (torch.minimum), clamp passes the gradient where min <= x <= max inclusive.
// Thread-safe (no state).
#ifndef RLT_NATIVE_PPO_LOSS_H_
#define RLT_NATIVE_PPO_LOSS_H_

#include <functional>

namespace rlt::native {

struct PpoLossSettings {
  double clip_range = 0.2;
  double clip_range_vf = 0.0;  // <= 0: no value clipping
  double ent_coef = 0.0;
  double vf_coef = 0.5;
  bool normalize_advantage = true;
};

// The current policy's outputs and the stored rollout data, (B) each.
struct PpoLossInputs {
  const float* values = nullptr;
  const float* log_probs = nullptr;
  const float* entropy = nullptr;
  const float* old_values = nullptr;
  const float* old_log_probs = nullptr;
  const float* advantages = nullptr;
  const float* returns = nullptr;
};

struct PpoLossTerms {
  double loss = 0, policy_loss = 0, value_loss = 0, entropy_loss = 0;
  double approx_kl = 0, clip_fraction = 0;
};

// Loss terms, and d loss / d values, log_probs, entropy (B each) when the d_* pointers are
// not nullptr. REQUIRES: batch >= 1.
PpoLossTerms PpoLoss(int batch, const PpoLossInputs& in, const PpoLossSettings& settings,
                     float* d_values, float* d_log_probs, float* d_entropy);

// The loss of a minibatch spread over several processes (data-parallel PPO): this process
// holds `rows` of its rows (rows may be 0), and `sum` replaces a few doubles by their sum
// over all the processes (in place; every process gets the same sums). The advantage
// mean and unbiased std come from the summed count, sum and sum of squares (one pass, in
// double), the gradients use the whole minibatch's size, and the returned terms are the
// whole minibatch's. With one process this is PpoLoss up to the rounding of the one-pass
// variance. Two calls to `sum` per minibatch.
PpoLossTerms PpoLossShared(int rows, const PpoLossInputs& in, const PpoLossSettings& settings,
                           float* d_values, float* d_log_probs, float* d_entropy,
                           const std::function<void(double*, int)>& sum);

// The same loss value computed in double precision from double inputs (no gradient):
// the reference the finite-difference checks differentiate.
struct PpoLossInputsF64 {
  const double *values, *log_probs, *entropy, *old_values, *old_log_probs, *advantages, *returns;
};
PpoLossTerms PpoLossReference(int batch, const PpoLossInputsF64& in,
                              const PpoLossSettings& settings);

}  // namespace rlt::native

#endif  // RLT_NATIVE_PPO_LOSS_H_
