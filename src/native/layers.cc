// rltrade native: Linear and activation kernels (see layers.h).
#include "native/layers.h"

#include <algorithm>
#include <cmath>

#include "native/dispatch.h"
#include "native/gemm.h"

namespace rlt::native {

void LinearForward(float* y, const float* x, const float* w, const float* b, int batch, int in,
                   int out) {
  for (int i = 0; i < batch; ++i)
    std::memcpy(y + static_cast<int64_t>(i) * out, b, sizeof(float) * out);
  Gemm(/*trans_a=*/false, /*trans_b=*/true, batch, out, in, 1.0f, x, in, w, in, /*beta=*/1.0f, y,
       out);
}

void LinearForwardReference(float* y, const float* x, const float* w, const float* b, int batch,
                            int in, int out) {
  for (int i = 0; i < batch; ++i) {
    for (int o = 0; o < out; ++o) {
      double sum = b[o];
      for (int k = 0; k < in; ++k) {
        sum += static_cast<double>(x[static_cast<int64_t>(i) * in + k]) *
               w[static_cast<int64_t>(o) * in + k];
      }
      y[static_cast<int64_t>(i) * out + o] = static_cast<float>(sum);
    }
  }
}

RLT_KERNEL_CLONES
void LinearBackward(float* dx, float* dw, float* db, const float* dy, const float* x,
                    const float* w, int batch, int in, int out) {
  // dw (out, in) += dy^T (out, B) x (B, in)
  Gemm(/*trans_a=*/true, /*trans_b=*/false, out, in, batch, 1.0f, dy, out, x, in, 1.0f, dw, in);
  for (int i = 0; i < batch; ++i) {
    const float* row = dy + static_cast<int64_t>(i) * out;
#pragma omp simd
    for (int o = 0; o < out; ++o) db[o] += row[o];
  }
  // dx (B, in) = dy (B, out) W (out, in)
  if (dx != nullptr) {
    Gemm(/*trans_a=*/false, /*trans_b=*/false, batch, in, out, 1.0f, dy, out, w, in, 0.0f, dx, in);
  }
}

void LinearBackwardReference(float* dx, float* dw, float* db, const float* dy, const float* x,
                             const float* w, int batch, int in, int out) {
  for (int o = 0; o < out; ++o) {
    double bias_sum = 0.0;
    for (int i = 0; i < batch; ++i) bias_sum += dy[static_cast<int64_t>(i) * out + o];
    db[o] += static_cast<float>(bias_sum);
    for (int k = 0; k < in; ++k) {
      double sum = 0.0;
      for (int i = 0; i < batch; ++i) {
        sum += static_cast<double>(dy[static_cast<int64_t>(i) * out + o]) *
               x[static_cast<int64_t>(i) * in + k];
      }
      dw[static_cast<int64_t>(o) * in + k] += static_cast<float>(sum);
    }
  }
  if (dx == nullptr) return;
  for (int i = 0; i < batch; ++i) {
    for (int k = 0; k < in; ++k) {
      double sum = 0.0;
      for (int o = 0; o < out; ++o) {
        sum += static_cast<double>(dy[static_cast<int64_t>(i) * out + o]) *
               w[static_cast<int64_t>(o) * in + k];
      }
      dx[static_cast<int64_t>(i) * in + k] = static_cast<float>(sum);
    }
  }
}

RLT_KERNEL_CLONES
void ActivationForward(Activation act, float* y, int64_t n) {
  if (act == Activation::kTanh) {
#pragma omp simd
    for (int64_t k = 0; k < n; ++k) y[k] = FastTanh(y[k]);
  } else {
#pragma omp simd
    for (int64_t k = 0; k < n; ++k) y[k] = y[k] > 0.0f ? y[k] : 0.0f;
  }
}

void ActivationForwardReference(Activation act, float* y, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    y[k] = act == Activation::kTanh ? std::tanh(y[k]) : std::max(y[k], 0.0f);
  }
}

RLT_KERNEL_CLONES
void ActivationBackward(Activation act, float* d, const float* y, int64_t n) {
  if (act == Activation::kTanh) {
#pragma omp simd
    for (int64_t k = 0; k < n; ++k) d[k] *= 1.0f - y[k] * y[k];
  } else {
#pragma omp simd
    for (int64_t k = 0; k < n; ++k) d[k] = y[k] > 0.0f ? d[k] : 0.0f;
  }
}

void ActivationBackwardReference(Activation act, float* d, const float* y, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    if (act == Activation::kTanh) {
      d[k] = static_cast<float>(d[k] * (1.0 - static_cast<double>(y[k]) * y[k]));
    } else if (!(y[k] > 0.0f)) {
      d[k] = 0.0f;
    }
  }
}

}  // namespace rlt::native
