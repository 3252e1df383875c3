// rltrade native: the layers of the small-policy engine, each forward beside its backward,
// each fast version beside a plain reference (llm.c style). layers_test.cc checks every
// fast kernel against its reference and every backward against finite differences.
//
// Conventions: float32, row-major, batch first. Weights use PyTorch's layout so that
// parameters map 1:1 onto torch::nn modules: a Linear layer's weight is (out, in) and
//   y (B, out) = x (B, in) W^T + b.
// Backward functions ACCUMULATE into parameter gradients (dw += ..., db += ...) so that
// gradients of several minibatch slices can be summed; input gradients (dx) are
// overwritten. No allocation; thread-safe for disjoint outputs.
#ifndef RLT_NATIVE_LAYERS_H_
#define RLT_NATIVE_LAYERS_H_

#include <cstdint>
#include <cstring>

namespace rlt::native {

enum class Activation { kTanh, kRelu };

// ---- elementwise math (vectorisable; |relative error| < 1e-6 against libm, tested) ----

// exp(x) for x in [-87, 88] (clamped outside): 2^n exp(r) with a Cody-Waite reduction and
// a degree-7 Taylor polynomial on |r| <= ln2/2.
inline float FastExp(float x) {
  x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
  // Round to nearest by adding and subtracting 1.5 * 2^23 (|x log2 e| < 2^22; vectorises,
  // unlike a call to roundf).
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (x - n * 0.693145751953125f) - n * 1.42860682030941723e-6f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

// tanh(x): the odd Taylor series through x^17 for |x| < 0.4 (no cancellation near 0),
// 1 - 2 / (exp(2|x|) + 1) with the sign restored elsewhere; |x| clamped to 10 (tanh rounds to 1 in
// float32 beyond).
inline float FastTanh(float x) {
  const float ax = x < 0 ? -x : x;
  const float x2 = x * x;
  float s = 6404582.0f / 10854718875.0f;
  s = s * x2 - 929569.0f / 638512875.0f;
  s = s * x2 + 21844.0f / 6081075.0f;
  s = s * x2 - 1382.0f / 155925.0f;
  s = s * x2 + 62.0f / 2835.0f;
  s = s * x2 - 17.0f / 315.0f;
  s = s * x2 + 2.0f / 15.0f;
  s = s * x2 - 1.0f / 3.0f;
  const float small = x + x * x2 * s;
  const float e = FastExp(2.0f * (ax > 10.0f ? 10.0f : ax));
  const float large_abs = 1.0f - 2.0f / (e + 1.0f);
  const float large = x < 0 ? -large_abs : large_abs;
  return ax < 0.4f ? small : large;
}

// 1 / (1 + exp(-x)).
inline float FastSigmoid(float x) { return 1.0f / (1.0f + FastExp(-x)); }

// ---- Linear ----

// y (B, out) = x (B, in) W^T + b.  w: (out, in), b: (out).
void LinearForward(float* y, const float* x, const float* w, const float* b, int batch, int in,
                   int out);
void LinearForwardReference(float* y, const float* x, const float* w, const float* b, int batch,
                            int in, int out);
// dw (out, in) += dy^T x;  db (out) += sum over the batch of dy;  dx (B, in) = dy W unless
// dx is nullptr.  dy: (B, out).
void LinearBackward(float* dx, float* dw, float* db, const float* dy, const float* x,
                    const float* w, int batch, int in, int out);
void LinearBackwardReference(float* dx, float* dw, float* db, const float* dy, const float* x,
                             const float* w, int batch, int in, int out);

// ---- activations (in place; the backward uses the activation's OUTPUT y) ----

// y = act(y) for n values.
void ActivationForward(Activation act, float* y, int64_t n);
void ActivationForwardReference(Activation act, float* y, int64_t n);
// d = d * act'(y):  tanh' = 1 - y^2,  relu' = (y > 0)  (PyTorch's threshold_backward: 0 at 0).
void ActivationBackward(Activation act, float* d, const float* y, int64_t n);
void ActivationBackwardReference(Activation act, float* d, const float* y, int64_t n);

}  // namespace rlt::native

#endif  // RLT_NATIVE_LAYERS_H_
