// rltrade native: Adam and gradient clipping (see adam.h).
#include "native/adam.h"

#include <cmath>

#include "core/status.h"
#include "native/dispatch.h"

namespace rlt::native {

Adam::Adam(int64_t num_params, const AdamOptions& options)
    : options_(options), m_(num_params, 0.0f), v_(num_params, 0.0f) {}

void Adam::Step(float* params, const float* grads) {
  Advance();
  StepRange(params, grads, 0, static_cast<int64_t>(m_.size()));
}

RLT_KERNEL_CLONES
void Adam::StepRange(float* params, const float* grads, int64_t begin, int64_t end) {
  const double bc1 = 1.0 - std::pow(options_.beta1, static_cast<double>(step_));
  const double bc2 = 1.0 - std::pow(options_.beta2, static_cast<double>(step_));
  const float beta1 = static_cast<float>(options_.beta1),
              beta2 = static_cast<float>(options_.beta2);
  const float one_minus_beta1 = static_cast<float>(1.0 - options_.beta1);
  const float one_minus_beta2 = static_cast<float>(1.0 - options_.beta2);
  const float sqrt_bc2 = static_cast<float>(std::sqrt(bc2));
  const float eps = static_cast<float>(options_.eps);
  const float step_size = static_cast<float>(options_.lr / bc1);
  if (options_.weight_decay != 0.0) {
    const float keep = static_cast<float>(1.0 - options_.lr * options_.weight_decay);
#pragma omp simd
    for (int64_t k = begin; k < end; ++k) params[k] *= keep;
  }
  float* __restrict m = m_.data();
  float* __restrict v = v_.data();
#pragma omp simd
  for (int64_t k = begin; k < end; ++k) {
    const float g = grads[k];
    m[k] = m[k] * beta1 + g * one_minus_beta1;
    v[k] = v[k] * beta2 + one_minus_beta2 * g * g;
    const float denom = std::sqrt(v[k]) / sqrt_bc2 + eps;
    params[k] += -step_size * (m[k] / denom);
  }
}

void AdamStepReference(const AdamOptions& o, int64_t step, double* params, const double* grads,
                       double* m, double* v, int64_t n) {
  const double bc1 = 1.0 - std::pow(o.beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(o.beta2, static_cast<double>(step));
  for (int64_t k = 0; k < n; ++k) {
    params[k] *= 1.0 - o.lr * o.weight_decay;
    m[k] = o.beta1 * m[k] + (1.0 - o.beta1) * grads[k];
    v[k] = o.beta2 * v[k] + (1.0 - o.beta2) * grads[k] * grads[k];
    const double m_hat = m[k] / bc1, v_hat = v[k] / bc2;
    params[k] -= o.lr * m_hat / (std::sqrt(v_hat) + o.eps);
  }
}

RLT_KERNEL_CLONES
double SumOfSquares(const float* v, int64_t n) {
  double ss = 0.0;
#pragma omp simd reduction(+ : ss)
  for (int64_t k = 0; k < n; ++k) ss += static_cast<double>(v[k]) * v[k];
  return ss;
}

RLT_KERNEL_CLONES
void Scale(float* v, int64_t n, float c) {
#pragma omp simd
  for (int64_t k = 0; k < n; ++k) v[k] *= c;
}

double ClipGradNorm(float* grads, int64_t n, double max_norm) {
  const double norm = std::sqrt(SumOfSquares(grads, n));
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1.0) Scale(grads, n, static_cast<float>(coef));
  return norm;
}

}  // namespace rlt::native
