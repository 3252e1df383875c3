// rltrade native: Adam and global-norm gradient clipping over a flat parameter array,
// with exactly torch::optim::Adam's and torch::nn::utils::clip_grad_norm_'s arithmetic:
//   step += 1;  bc1 = 1 - beta1^step;  bc2 = 1 - beta2^step
//   m = m beta1 + g (1 - beta1);  v = v beta2 + g g (1 - beta2)
//   p -= (lr / bc1) m / (sqrt(v) / sqrt(bc2) + eps)
// (no amsgrad), with optional decoupled weight decay as torch::optim::AdamW applies it
// before that update: p *= 1 - lr * weight_decay (0, the default, is plain Adam), and
//   norm = ||all gradients||_2;  g *= min(1, max_norm / (norm + 1e-6))
// Not thread-safe, except StepRange() on disjoint ranges.
#ifndef RLT_NATIVE_ADAM_H_
#define RLT_NATIVE_ADAM_H_

#include <cstdint>
#include <vector>

namespace rlt::native {

struct AdamOptions {
  double lr = 3e-4;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-5;          // the learner's setting (SB3 PPO); torch's default is 1e-8
  double weight_decay = 0.0;  // decoupled (AdamW); 0 = Adam
};

class Adam {
 public:
  Adam(int64_t num_params, const AdamOptions& options);

  void set_lr(double lr) { options_.lr = lr; }
  const AdamOptions& options() const { return options_; }
  // One update of params (num_params) with grads (num_params): Advance(), then StepRange()
  // over everything.
  void Step(float* params, const float* grads);
  // The same split for several threads: Advance() once, then StepRange() over disjoint
  // ranges [begin, end) that cover the parameters, possibly at once (element-wise: the
  // result equals Step()'s bit for bit).
  void Advance() { ++step_; }
  void StepRange(float* params, const float* grads, int64_t begin, int64_t end);

  // State, for checkpoints: the step count and the moment estimates (flat layout).
  int64_t step() const { return step_; }
  std::vector<float>& exp_avg() { return m_; }
  std::vector<float>& exp_avg_sq() { return v_; }
  const std::vector<float>& exp_avg() const { return m_; }
  const std::vector<float>& exp_avg_sq() const { return v_; }
  void set_step(int64_t step) { step_ = step; }

 private:
  AdamOptions options_;
  int64_t step_ = 0;
  std::vector<float> m_, v_;
};

// The same update in double precision with separate state (the test reference).
void AdamStepReference(const AdamOptions& options, int64_t step, double* params,
                       const double* grads, double* m, double* v, int64_t n);

// Scales grads (n) so that their L2 norm is at most max_norm; returns the norm before.
double ClipGradNorm(float* grads, int64_t n, double max_norm);
// The sum of squares ClipGradNorm uses (double accumulation, vectorised), and the scaling it
// applies, for clipping several arrays by one global norm.
double SumOfSquares(const float* v, int64_t n);
void Scale(float* v, int64_t n, float c);

}  // namespace rlt::native

#endif  // RLT_NATIVE_ADAM_H_
