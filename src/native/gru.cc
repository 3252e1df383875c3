// rltrade native: GRU forward and backward (see gru.h).
#include "native/gru.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/rng.h"
#include "native/dispatch.h"
#include "native/gemm.h"
#include "native/layers.h"

namespace rlt::native {
namespace {

// Rows per step up to which the recurrent products use GemmSmallM.
constexpr int kSmallBatch = 32;

}  // namespace

Gru::Gru(int input_size, int hidden_size, uint64_t seed, bool reverse)
    : input_(input_size), hidden_(hidden_size), reverse_(reverse) {
  RLT_CHECK(input_size >= 1 && hidden_size >= 1);
  const int64_t g = 3LL * hidden_size;
  const std::string suffix = reverse ? "_reverse" : "";
  int64_t offset = 0;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    ParamInfo p{name + suffix, shape, offset, 1};
    for (int64_t d : shape) p.size *= d;
    offset += p.size;
    param_info_.push_back(p);
    return p.offset;
  };
  w_ih_ = add("weight_ih_l0", {g, input_size});
  w_hh_ = add("weight_hh_l0", {g, hidden_size});
  b_ih_ = add("bias_ih_l0", {g});
  b_hh_ = add("bias_hh_l0", {g});
  params_.resize(offset);
  Rng rng(seed);
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  for (float& p : params_) p = static_cast<float>(rng.Uniform(-bound, bound));
}

RLT_KERNEL_CLONES
void Gru::Forward(GruWorkspace& ws, const float* x, int steps, int batch, const float* h0,
                  float* out, int out_stride, float* h_n) const {
  RLT_CHECK(steps >= 1 && batch >= 1 && out_stride >= hidden_);
  const int H = hidden_, G = 3 * hidden_;
  const int64_t rows = static_cast<int64_t>(steps) * batch;
  if (rows > ws.capacity) {
    ws.xg.assign(rows * G, 0.0f);
    ws.gates.assign(rows * G, 0.0f);
    ws.hn.assign(rows * H, 0.0f);
    ws.h_prev.assign(rows * H, 0.0f);
    ws.d_in.assign(rows * G, 0.0f);
    ws.d_hid.assign(rows * G, 0.0f);
    ws.capacity = rows;
  }
  ws.hg.resize(static_cast<size_t>(batch) * G);
  ws.dh.resize(static_cast<size_t>(batch) * H);
  ws.dht.resize(static_cast<size_t>(batch) * H);
  ws.x = x;
  ws.steps = steps;
  ws.batch = batch;
  const float* w_ih = params_.data() + w_ih_;
  const float* w_hh = params_.data() + w_hh_;
  const float* b_ih = params_.data() + b_ih_;
  const float* b_hh = params_.data() + b_hh_;
  // All timesteps' input projections (with b_ih) in one product.
  for (int64_t r = 0; r < rows; ++r) std::copy_n(b_ih, G, ws.xg.data() + r * G);
  Gemm(false, true, static_cast<int>(rows), G, input_, 1.0f, x, input_, w_ih, input_, 1.0f,
       ws.xg.data(), G);
  const bool small = batch <= kSmallBatch && steps > 1;
  if (small) {
    ws.w_hh_packed.resize(PackedPanelsSize(H, G));
    PackPanels(/*trans_b=*/true, H, G, w_hh, H, ws.w_hh_packed.data());
  }
  for (int s = 0; s < steps; ++s) {
    const int t = reverse_ ? steps - 1 - s : s;
    const int prev_t = reverse_ ? t + 1 : t - 1;
    const int64_t base = static_cast<int64_t>(t) * batch;
    float* hp = ws.h_prev.data() + base * H;
    for (int b = 0; b < batch; ++b) {
      float* dst = hp + static_cast<int64_t>(b) * H;
      if (s == 0) {
        if (h0 != nullptr) {
          std::copy_n(h0 + static_cast<int64_t>(b) * H, H, dst);
        } else {
          std::fill(dst, dst + H, 0.0f);
        }
      } else {
        std::copy_n(out + (static_cast<int64_t>(prev_t) * batch + b) * out_stride, H, dst);
      }
    }
    float* hg = ws.hg.data();
    for (int b = 0; b < batch; ++b) std::copy_n(b_hh, G, hg + static_cast<int64_t>(b) * G);
    if (small) {
      GemmSmallM(batch, G, H, hp, H, ws.w_hh_packed.data(), 1.0f, hg, G);
    } else {
      Gemm(false, true, batch, G, H, 1.0f, hp, H, w_hh, H, 1.0f, hg, G);
    }
    for (int b = 0; b < batch; ++b) {
      const float* xg = ws.xg.data() + (base + b) * G;
      const float* hgb = hg + static_cast<int64_t>(b) * G;
      float* gr = ws.gates.data() + (base + b) * G;
      float* hn = ws.hn.data() + (base + b) * H;
      const float* hpb = hp + static_cast<int64_t>(b) * H;
      float* h = out + (base + b) * out_stride;
#pragma omp simd
      for (int j = 0; j < H; ++j) {
        const float r = FastSigmoid(xg[j] + hgb[j]);
        const float z = FastSigmoid(xg[H + j] + hgb[H + j]);
        const float n = FastTanh(xg[2 * H + j] + r * hgb[2 * H + j]);
        gr[j] = r;
        gr[H + j] = z;
        gr[2 * H + j] = n;
        hn[j] = hgb[2 * H + j];
        h[j] = (1.0f - z) * n + z * hpb[j];
      }
    }
  }
  if (h_n != nullptr) {
    const int last = reverse_ ? 0 : steps - 1;
    for (int b = 0; b < batch; ++b) {
      std::copy_n(out + (static_cast<int64_t>(last) * batch + b) * out_stride, H,
                  h_n + static_cast<int64_t>(b) * H);
    }
  }
}

RLT_KERNEL_CLONES
void Gru::Backward(GruWorkspace& ws, const float* d_out, int d_out_stride, const float* d_h_n,
                   float* d_x, bool accumulate_dx, float* d_h0, float* grads) const {
  const int H = hidden_, G = 3 * hidden_, steps = ws.steps, batch = ws.batch;
  const int64_t rows = static_cast<int64_t>(steps) * batch;
  float* dh = ws.dh.data();
  for (int64_t k = 0; k < static_cast<int64_t>(batch) * H; ++k) dh[k] = d_h_n ? d_h_n[k] : 0.0f;
  const float* w_hh = params_.data() + w_hh_;
  const bool small = batch <= kSmallBatch && steps > 1;
  if (small) {
    ws.w_hh_packed.resize(PackedPanelsSize(G, H));
    PackPanels(/*trans_b=*/false, G, H, w_hh, H, ws.w_hh_packed.data());
  }
  for (int s = steps - 1; s >= 0; --s) {
    const int t = reverse_ ? steps - 1 - s : s;
    const int64_t base = static_cast<int64_t>(t) * batch;
    for (int b = 0; b < batch; ++b) {
      const float* gr = ws.gates.data() + (base + b) * G;
      const float* hn = ws.hn.data() + (base + b) * H;
      const float* hp = ws.h_prev.data() + (base + b) * H;
      const float* dout = d_out + (base + b) * d_out_stride;
      float* di = ws.d_in.data() + (base + b) * G;
      float* dhid = ws.d_hid.data() + (base + b) * G;
      float* dhb = dh + static_cast<int64_t>(b) * H;
#pragma omp simd
      for (int j = 0; j < H; ++j) {
        const float r = gr[j], z = gr[H + j], n = gr[2 * H + j];
        const float dht = dout[j] + dhb[j];
        const float dn_pre = dht * (1.0f - z) * (1.0f - n * n);
        const float dz_pre = dht * (hp[j] - n) * z * (1.0f - z);
        const float dr_pre = dn_pre * hn[j] * r * (1.0f - r);
        di[j] = dr_pre;
        di[H + j] = dz_pre;
        di[2 * H + j] = dn_pre;
        dhid[j] = dr_pre;
        dhid[H + j] = dz_pre;
        dhid[2 * H + j] = dn_pre * r;
        dhb[j] = dht * z;  // the direct path; the product below adds the gates' paths
      }
    }
    const float* dg = ws.d_hid.data() + base * G;
    if (small) {
      GemmSmallM(batch, H, G, dg, G, ws.w_hh_packed.data(), 1.0f, dh, H);
    } else {
      Gemm(false, false, batch, H, G, 1.0f, dg, G, w_hh, H, 1.0f, dh, H);
    }
  }
  if (d_h0 != nullptr) std::copy(dh, dh + static_cast<int64_t>(batch) * H, d_h0);
  // Weight gradients for all timesteps at once.
  Gemm(true, false, G, H, static_cast<int>(rows), 1.0f, ws.d_hid.data(), G, ws.h_prev.data(), H,
       1.0f, grads + w_hh_, H);
  Gemm(true, false, G, input_, static_cast<int>(rows), 1.0f, ws.d_in.data(), G, ws.x, input_, 1.0f,
       grads + w_ih_, input_);
  if (d_x != nullptr) {
    Gemm(false, false, static_cast<int>(rows), input_, G, 1.0f, ws.d_in.data(), G,
         params_.data() + w_ih_, input_, accumulate_dx ? 1.0f : 0.0f, d_x, input_);
  }
  float* gb_ih = grads + b_ih_;
  float* gb_hh = grads + b_hh_;
  for (int64_t r = 0; r < rows; ++r) {
    const float* di = ws.d_in.data() + r * G;
    const float* dhid = ws.d_hid.data() + r * G;
#pragma omp simd
    for (int k = 0; k < G; ++k) {
      gb_ih[k] += di[k];
      gb_hh[k] += dhid[k];
    }
  }
}

void GruForwardReference(const double* p, int in, int H, bool reverse, const double* x, int steps,
                         int batch, const double* h0, double* out, double* h_n) {
  const int G = 3 * H;
  const double* w_ih = p;
  const double* w_hh = w_ih + static_cast<int64_t>(G) * in;
  const double* b_ih = w_hh + static_cast<int64_t>(G) * H;
  const double* b_hh = b_ih + G;
  std::vector<double> h(static_cast<size_t>(batch) * H, 0.0);
  if (h0 != nullptr) std::copy(h0, h0 + static_cast<int64_t>(batch) * H, h.begin());
  std::vector<double> gi(G), gh(G);
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  for (int s = 0; s < steps; ++s) {
    const int t = reverse ? steps - 1 - s : s;
    for (int b = 0; b < batch; ++b) {
      double* hb = h.data() + static_cast<int64_t>(b) * H;
      const double* xb = x + (static_cast<int64_t>(t) * batch + b) * in;
      for (int k = 0; k < G; ++k) {
        double si = b_ih[k], sh = b_hh[k];
        for (int q = 0; q < in; ++q) si += w_ih[static_cast<int64_t>(k) * in + q] * xb[q];
        for (int q = 0; q < H; ++q) sh += w_hh[static_cast<int64_t>(k) * H + q] * hb[q];
        gi[k] = si;
        gh[k] = sh;
      }
      for (int j = 0; j < H; ++j) {
        const double r = sigmoid(gi[j] + gh[j]);
        const double z = sigmoid(gi[H + j] + gh[H + j]);
        const double n = std::tanh(gi[2 * H + j] + r * gh[2 * H + j]);
        hb[j] = (1.0 - z) * n + z * hb[j];
        out[(static_cast<int64_t>(t) * batch + b) * H + j] = hb[j];
      }
    }
  }
  if (h_n != nullptr) std::copy(h.begin(), h.end(), h_n);
}

}  // namespace rlt::native
