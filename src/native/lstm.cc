// rltrade native: LSTM forward and backward (see lstm.h).
#include "native/lstm.h"

#include <algorithm>
#include <cmath>

#include "core/rng.h"
#include "native/dispatch.h"
#include "native/gemm.h"
#include "native/layers.h"

namespace rlt::native {
namespace {

// Rows per step up to which the recurrent products use GemmSmallM.
constexpr int kSmallBatch = 32;

}  // namespace

Lstm::Lstm(int input_size, int hidden_size, uint64_t seed)
    : input_(input_size), hidden_(hidden_size) {
  RLT_CHECK(input_size >= 1 && hidden_size >= 1);
  const int64_t g = 4LL * hidden_size;
  int64_t offset = 0;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    ParamInfo p{name, shape, offset, 1};
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
void Lstm::Forward(LstmWorkspace& ws, const float* x, int steps, int batch, const float* h0,
                   const float* c0, const float* episode_starts, float* out, float* h_n,
                   float* c_n) const {
  const int H = hidden_, G = 4 * hidden_;
  const int64_t rows = static_cast<int64_t>(steps) * batch;
  if (rows > ws.capacity) {
    ws.gates.assign(rows * G, 0.0f);
    ws.d_gates.assign(rows * G, 0.0f);
    ws.h_prev.assign(rows * H, 0.0f);
    ws.c_prev.assign(rows * H, 0.0f);
    ws.tanh_c.assign(rows * H, 0.0f);
    ws.cell.assign(rows * H, 0.0f);
    ws.capacity = rows;
  }
  ws.dh.resize(static_cast<size_t>(batch) * H);
  ws.dc.resize(static_cast<size_t>(batch) * H);
  ws.x = x;
  ws.episode_starts = episode_starts;
  ws.steps = steps;
  ws.batch = batch;
  const float* w_ih = params_.data() + w_ih_;
  const float* w_hh = params_.data() + w_hh_;
  // All timesteps' input projections plus both biases in one product.
  for (int64_t r = 0; r < rows; ++r) {
    float* row = ws.gates.data() + r * G;
    for (int k = 0; k < G; ++k) row[k] = params_[b_ih_ + k] + params_[b_hh_ + k];
  }
  Gemm(false, true, static_cast<int>(rows), G, input_, 1.0f, x, input_, w_ih, input_, 1.0f,
       ws.gates.data(), G);
  // Few rows per step over several steps: the recurrent products run on GemmSmallM with
  // W_hh^T packed once here (cblas would repack W_hh on every step).
  const bool small = batch <= kSmallBatch && steps > 1;
  if (small) {
    ws.w_hh_packed.resize(PackedPanelsSize(H, G));
    PackPanels(/*trans_b=*/true, H, G, w_hh, H, ws.w_hh_packed.data());
  }
  for (int t = 0; t < steps; ++t) {
    const int64_t base = static_cast<int64_t>(t) * batch;
    float* hp = ws.h_prev.data() + base * H;
    float* cp = ws.c_prev.data() + base * H;
    const float* h_src = t == 0 ? h0 : out + (base - batch) * H;
    const float* c_src = t == 0 ? c0 : ws.cell.data() + (base - batch) * H;
    for (int b = 0; b < batch; ++b) {
      const float keep = episode_starts ? 1.0f - episode_starts[base + b] : 1.0f;
      for (int j = 0; j < H; ++j) {
        const int64_t k = static_cast<int64_t>(b) * H + j;
        hp[k] = h_src[k] * keep;
        cp[k] = c_src[k] * keep;
      }
    }
    float* gates = ws.gates.data() + base * G;
    if (small) {
      GemmSmallM(batch, G, H, hp, H, ws.w_hh_packed.data(), 1.0f, gates, G);
    } else {
      Gemm(false, true, batch, G, H, 1.0f, hp, H, w_hh, H, 1.0f, gates, G);
    }
    for (int b = 0; b < batch; ++b) {
      float* gr = gates + static_cast<int64_t>(b) * G;
#pragma omp simd
      for (int j = 0; j < H; ++j) {
        gr[j] = FastSigmoid(gr[j]);
        gr[H + j] = FastSigmoid(gr[H + j]);
        gr[2 * H + j] = FastTanh(gr[2 * H + j]);
        gr[3 * H + j] = FastSigmoid(gr[3 * H + j]);
      }
      const float* cpr = cp + static_cast<int64_t>(b) * H;
      float* tc = ws.tanh_c.data() + (base + b) * H;
      float* cell = ws.cell.data() + (base + b) * H;
      float* h = out + (base + b) * H;
#pragma omp simd
      for (int j = 0; j < H; ++j) {
        cell[j] = gr[H + j] * cpr[j] + gr[j] * gr[2 * H + j];
        tc[j] = FastTanh(cell[j]);
        h[j] = gr[3 * H + j] * tc[j];
      }
    }
  }
  const int64_t last = static_cast<int64_t>(steps - 1) * batch;
  const int64_t state = static_cast<int64_t>(batch) * H;
  if (h_n) std::copy(out + last * H, out + last * H + state, h_n);
  if (c_n) std::copy(ws.cell.data() + last * H, ws.cell.data() + last * H + state, c_n);
}

RLT_KERNEL_CLONES
void Lstm::Backward(LstmWorkspace& ws, const float* d_out, const float* d_h_n, const float* d_c_n,
                    float* d_x, float* d_h0, float* d_c0, float* grads) const {
  const int H = hidden_, G = 4 * hidden_, steps = ws.steps, batch = ws.batch;
  const int64_t rows = static_cast<int64_t>(steps) * batch;
  float* dh = ws.dh.data();
  float* dc = ws.dc.data();
  for (int64_t k = 0; k < static_cast<int64_t>(batch) * H; ++k) {
    dh[k] = d_h_n ? d_h_n[k] : 0.0f;
    dc[k] = d_c_n ? d_c_n[k] : 0.0f;
  }
  const float* w_hh = params_.data() + w_hh_;
  // d h_prev = d_gates W_hh per step: W_hh (4H, H) packed once for GemmSmallM.
  const bool small = batch <= kSmallBatch && steps > 1;
  if (small) {
    ws.w_hh_packed.resize(PackedPanelsSize(G, H));
    PackPanels(/*trans_b=*/false, G, H, w_hh, H, ws.w_hh_packed.data());
  }
  for (int t = steps - 1; t >= 0; --t) {
    const int64_t base = static_cast<int64_t>(t) * batch;
    for (int b = 0; b < batch; ++b) {
      const float* gr = ws.gates.data() + (base + b) * G;
      float* dg = ws.d_gates.data() + (base + b) * G;
      const float* tc = ws.tanh_c.data() + (base + b) * H;
      const float* cp = ws.c_prev.data() + (base + b) * H;
      const float* dout = d_out + (base + b) * H;
      float* dhb = dh + static_cast<int64_t>(b) * H;
      float* dcb = dc + static_cast<int64_t>(b) * H;
#pragma omp simd
      for (int j = 0; j < H; ++j) {
        const float i = gr[j], f = gr[H + j], g = gr[2 * H + j], o = gr[3 * H + j];
        const float dht = dout[j] + dhb[j];
        const float dct = dcb[j] + dht * o * (1.0f - tc[j] * tc[j]);
        dg[j] = dct * g * i * (1.0f - i);
        dg[H + j] = dct * cp[j] * f * (1.0f - f);
        dg[2 * H + j] = dct * i * (1.0f - g * g);
        dg[3 * H + j] = dht * tc[j] * o * (1.0f - o);
        dcb[j] = dct * f;  // d c_prev (before the reset mask)
      }
    }
    const float* dgt = ws.d_gates.data() + base * G;
    // d h_prev (B, H) = d_gates (B, 4H) W_hh (4H, H).
    if (small) {
      GemmSmallM(batch, H, G, dgt, G, ws.w_hh_packed.data(), 0.0f, dh, H);
    } else {
      Gemm(false, false, batch, H, G, 1.0f, dgt, G, w_hh, H, 0.0f, dh, H);
    }
    if (ws.episode_starts) {
      for (int b = 0; b < batch; ++b) {
        if (ws.episode_starts[base + b] == 0.0f) continue;
        const float keep = 1.0f - ws.episode_starts[base + b];
        for (int j = 0; j < H; ++j) {
          dh[static_cast<int64_t>(b) * H + j] *= keep;
          dc[static_cast<int64_t>(b) * H + j] *= keep;
        }
      }
    }
  }
  if (d_h0) std::copy(dh, dh + static_cast<int64_t>(batch) * H, d_h0);
  if (d_c0) std::copy(dc, dc + static_cast<int64_t>(batch) * H, d_c0);
  // d W_hh += d_gates^T h_prev and the input projection gradients, for all timesteps at once
  // (one large product each instead of a rank-B update per step).
  Gemm(true, false, G, H, static_cast<int>(rows), 1.0f, ws.d_gates.data(), G, ws.h_prev.data(), H,
       1.0f, grads + w_hh_, H);
  Gemm(true, false, G, input_, static_cast<int>(rows), 1.0f, ws.d_gates.data(), G, ws.x, input_,
       1.0f, grads + w_ih_, input_);
  if (d_x) {
    Gemm(false, false, static_cast<int>(rows), input_, G, 1.0f, ws.d_gates.data(), G,
         params_.data() + w_ih_, input_, 0.0f, d_x, input_);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* dg = ws.d_gates.data() + r * G;
    for (int k = 0; k < G; ++k) {
      grads[b_ih_ + k] += dg[k];
      grads[b_hh_ + k] += dg[k];
    }
  }
}

void LstmForwardReference(const double* p, int in, int H, const double* x, int steps, int batch,
                          const double* h0, const double* c0, const double* episode_starts,
                          double* out, double* h_n, double* c_n) {
  const int G = 4 * H;
  const double* w_ih = p;
  const double* w_hh = w_ih + static_cast<int64_t>(G) * in;
  const double* b_ih = w_hh + static_cast<int64_t>(G) * H;
  const double* b_hh = b_ih + G;
  std::vector<double> h(h0, h0 + static_cast<int64_t>(batch) * H);
  std::vector<double> c(c0, c0 + static_cast<int64_t>(batch) * H);
  std::vector<double> gates(G);
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  for (int t = 0; t < steps; ++t) {
    for (int b = 0; b < batch; ++b) {
      double* hb = h.data() + static_cast<int64_t>(b) * H;
      double* cb = c.data() + static_cast<int64_t>(b) * H;
      if (episode_starts && episode_starts[static_cast<int64_t>(t) * batch + b] != 0.0) {
        const double keep = 1.0 - episode_starts[static_cast<int64_t>(t) * batch + b];
        for (int j = 0; j < H; ++j) {
          hb[j] *= keep;
          cb[j] *= keep;
        }
      }
      const double* xb = x + (static_cast<int64_t>(t) * batch + b) * in;
      for (int k = 0; k < G; ++k) {
        double s = b_ih[k] + b_hh[k];
        for (int q = 0; q < in; ++q) s += w_ih[static_cast<int64_t>(k) * in + q] * xb[q];
        for (int q = 0; q < H; ++q) s += w_hh[static_cast<int64_t>(k) * H + q] * hb[q];
        gates[k] = s;
      }
      for (int j = 0; j < H; ++j) {
        const double i = sigmoid(gates[j]), f = sigmoid(gates[H + j]);
        const double g = std::tanh(gates[2 * H + j]), o = sigmoid(gates[3 * H + j]);
        cb[j] = f * cb[j] + i * g;
        hb[j] = o * std::tanh(cb[j]);
        out[(static_cast<int64_t>(t) * batch + b) * H + j] = hb[j];
      }
    }
  }
  if (h_n) std::copy(h.begin(), h.end(), h_n);
  if (c_n) std::copy(c.begin(), c.end(), c_n);
}

}  // namespace rlt::native
