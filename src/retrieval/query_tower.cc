// rltrade retrieval: the query tower (see query_tower.h).
#include "retrieval/query_tower.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "core/rng.h"
#include "core/status.h"
#include "native/gemm.h"
#include "native/gru.h"
#include "native/lstm.h"
#include "retrieval/l2_rows.h"

namespace rlt::retrieval {

// One direction of the bidirectional layer: reads x (T, B, D), writes out[t] at row
// stride `stride`; Backward accumulates its parameter gradients (no d_x: x is data).
class TowerDirection {
 public:
  virtual ~TowerDirection() = default;
  virtual const std::vector<native::ParamInfo>& param_info() const = 0;
  virtual float* params() = 0;
  virtual int64_t num_params() const = 0;
  virtual void Forward(const float* x, int steps, int batch, float* out, int stride) = 0;
  virtual void Backward(const float* d_out, int stride, float* grads) = 0;
};

namespace {

class GruDirection : public TowerDirection {
 public:
  GruDirection(int d, int hidden, uint64_t seed, bool reverse) : gru_(d, hidden, seed, reverse) {}
  const std::vector<native::ParamInfo>& param_info() const override { return gru_.param_info(); }
  float* params() override { return gru_.params().data(); }
  int64_t num_params() const override { return gru_.num_params(); }
  void Forward(const float* x, int steps, int batch, float* out, int stride) override {
    gru_.Forward(ws_, x, steps, batch, nullptr, out, stride, nullptr);
  }
  void Backward(const float* d_out, int stride, float* grads) override {
    gru_.Backward(ws_, d_out, stride, nullptr, nullptr, false, nullptr, grads);
  }

 private:
  native::Gru gru_;
  native::GruWorkspace ws_;
};

// The native LSTM runs forward in time; the reverse direction runs it on the time-
// reversed sequence and reverses its outputs back (torch's bidirectional semantics).
class LstmDirection : public TowerDirection {
 public:
  LstmDirection(int d, int hidden, uint64_t seed, bool reverse)
      : lstm_(d, hidden, seed), reverse_(reverse), info_(lstm_.param_info()) {
    if (reverse) {
      for (auto& p : info_) p.name += "_reverse";
    }
  }
  const std::vector<native::ParamInfo>& param_info() const override { return info_; }
  float* params() override { return lstm_.params().data(); }
  int64_t num_params() const override { return lstm_.num_params(); }
  void Forward(const float* x, int steps, int batch, float* out, int stride) override {
    const int D = lstm_.input_size(), H = lstm_.hidden_size();
    const int64_t rows = static_cast<int64_t>(steps) * batch;
    const float* in = x;
    if (reverse_) {
      x_rev_.resize(rows * D);
      for (int t = 0; t < steps; ++t) {
        std::copy_n(x + static_cast<int64_t>(steps - 1 - t) * batch * D,
                    static_cast<int64_t>(batch) * D, &x_rev_[static_cast<int64_t>(t) * batch * D]);
      }
      in = x_rev_.data();
    }
    dense_.resize(rows * H);
    zeros_.assign(static_cast<size_t>(batch) * H, 0.0f);
    lstm_.Forward(ws_, in, steps, batch, zeros_.data(), zeros_.data(), nullptr, dense_.data(),
                  nullptr, nullptr);
    for (int t = 0; t < steps; ++t) {
      const int src = reverse_ ? steps - 1 - t : t;
      for (int b = 0; b < batch; ++b) {
        std::copy_n(&dense_[(static_cast<int64_t>(src) * batch + b) * H], H,
                    out + (static_cast<int64_t>(t) * batch + b) * stride);
      }
    }
  }
  void Backward(const float* d_out, int stride, float* grads) override {
    const int H = lstm_.hidden_size(), steps = ws_.steps, batch = ws_.batch;
    for (int t = 0; t < steps; ++t) {
      const int dst = reverse_ ? steps - 1 - t : t;
      for (int b = 0; b < batch; ++b) {
        std::copy_n(d_out + (static_cast<int64_t>(t) * batch + b) * stride, H,
                    &dense_[(static_cast<int64_t>(dst) * batch + b) * H]);
      }
    }
    lstm_.Backward(ws_, dense_.data(), nullptr, nullptr, nullptr, nullptr, nullptr, grads);
  }

 private:
  native::Lstm lstm_;
  bool reverse_;
  std::vector<native::ParamInfo> info_;
  native::LstmWorkspace ws_;
  std::vector<float> x_rev_, dense_, zeros_;
};

// The two directions at once, one per core (each with single-threaded products), or one
// after the other on one thread.
template <typename F, typename B>
void RunBothDirections(int threads, const F& forward_direction, const B& reverse_direction) {
  if (threads >= 2) {
    native::SetBlasThreads(1);
    std::thread other(reverse_direction);
    forward_direction();
    other.join();
    native::SetBlasThreads(threads);
  } else {
    forward_direction();
    reverse_direction();
  }
}

std::unique_ptr<TowerDirection> MakeDirection(const std::string& cell, int d, int hidden,
                                              uint64_t seed, bool reverse) {
  if (cell == "lstm") return std::make_unique<LstmDirection>(d, hidden, seed, reverse);
  RLT_CHECK_MSG(cell == "gru", "query tower cell must be gru or lstm");
  return std::make_unique<GruDirection>(d, hidden, seed, reverse);
}

}  // namespace

QueryTower::~QueryTower() = default;

QueryTower::QueryTower(int d, int hidden, uint64_t seed, const std::string& cell)
    : d_(d),
      hidden_(hidden),
      cell_(cell),
      fwd_(MakeDirection(cell, d, hidden, seed, false)),
      bwd_(MakeDirection(cell, d, hidden, seed + 1, true)),
      grad_fwd_(fwd_->num_params(), 0.0f),
      grad_bwd_(bwd_->num_params(), 0.0f),
      head_w_(static_cast<size_t>(d) * 2 * hidden),
      head_b_(d),
      grad_w_(head_w_.size(), 0.0f),
      grad_b_(d, 0.0f) {
  RLT_CHECK(d >= 1 && hidden >= 1);
  Rng rng(seed + 2);
  const double bound = 1.0 / std::sqrt(2.0 * hidden);
  for (float& w : head_w_) w = static_cast<float>(rng.Uniform(-bound, bound));
  for (float& b : head_b_) b = static_cast<float>(rng.Uniform(-bound, bound));
}

std::vector<TowerParam> QueryTower::Params() {
  std::vector<TowerParam> out;
  for (TowerDirection* dir : {fwd_.get(), bwd_.get()}) {
    float* grads = dir == fwd_.get() ? grad_fwd_.data() : grad_bwd_.data();
    for (const auto& p : dir->param_info()) {
      out.push_back(
          {cell_ + "." + p.name, p.shape, dir->params() + p.offset, grads + p.offset, p.size});
    }
  }
  out.push_back({"head.weight",
                 {d_, 2LL * hidden_},
                 head_w_.data(),
                 grad_w_.data(),
                 static_cast<int64_t>(head_w_.size())});
  out.push_back({"head.bias", {d_}, head_b_.data(), grad_b_.data(), d_});
  return out;
}

int64_t QueryTower::num_params() const {
  return fwd_->num_params() + bwd_->num_params() + static_cast<int64_t>(head_w_.size()) + d_;
}

void QueryTower::ZeroGrads() {
  for (auto* g : {&grad_fwd_, &grad_bwd_, &grad_w_, &grad_b_})
    std::fill(g->begin(), g->end(), 0.0f);
}

void QueryTower::Forward(const float* x, int batch, int steps, float* q, int threads) {
  const int D = d_, H = hidden_, H2 = 2 * hidden_;
  batch_ = batch;
  steps_ = steps;
  const int64_t rows = static_cast<int64_t>(steps) * batch;
  x_tbd_.resize(rows * D);
  out_.resize(rows * H2);
  mean_.resize(static_cast<size_t>(batch) * H2);
  p_.resize(static_cast<size_t>(batch) * D);
  norm_.resize(batch);
  q_.resize(static_cast<size_t>(batch) * D);
  // (B, T, D) -> (T, B, D): each step's rows contiguous for the recurrent products.
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < steps; ++t) {
      std::copy_n(x + (static_cast<int64_t>(b) * steps + t) * D, D,
                  &x_tbd_[(static_cast<int64_t>(t) * batch + b) * D]);
    }
  }
  auto run_fwd = [&] { fwd_->Forward(x_tbd_.data(), steps, batch, out_.data(), H2); };
  auto run_bwd = [&] { bwd_->Forward(x_tbd_.data(), steps, batch, out_.data() + H, H2); };
  RunBothDirections(threads, run_fwd, run_bwd);
  // Mean over time.
  std::fill(mean_.begin(), mean_.end(), 0.0f);
  const float inv_t = 1.0f / static_cast<float>(steps);
  for (int t = 0; t < steps; ++t) {
    const float* o = &out_[static_cast<int64_t>(t) * batch * H2];
    float* m = mean_.data();
#pragma omp simd
    for (int64_t k = 0; k < static_cast<int64_t>(batch) * H2; ++k) m[k] += o[k];
  }
  for (float& m : mean_) m *= inv_t;
  // p = mean W^T + b; q = p / ||p||.
  for (int b = 0; b < batch; ++b) std::copy_n(head_b_.data(), D, &p_[static_cast<size_t>(b) * D]);
  native::Gemm(false, true, batch, D, H2, 1.0f, mean_.data(), H2, head_w_.data(), H2, 1.0f,
               p_.data(), D);
  L2NormalizeRows(p_.data(), batch, D, norm_.data(), q_.data());
  std::copy(q_.begin(), q_.end(), q);
}

void QueryTower::Backward(const float* d_q, int threads) {
  const int D = d_, H = hidden_, H2 = 2 * hidden_, batch = batch_, steps = steps_;
  d_p_.resize(static_cast<size_t>(batch) * D);
  L2NormalizeRowsBackward(q_.data(), norm_.data(), d_q, batch, D, d_p_.data());
  // Head: d W += d p^T mean, d b += sum d p, d mean = d p W.
  native::Gemm(true, false, D, H2, batch, 1.0f, d_p_.data(), D, mean_.data(), H2, 1.0f,
               grad_w_.data(), H2);
  for (int b = 0; b < batch; ++b) {
    for (int e = 0; e < D; ++e) grad_b_[e] += d_p_[static_cast<size_t>(b) * D + e];
  }
  d_mean_.resize(static_cast<size_t>(batch) * H2);
  native::Gemm(false, false, batch, H2, D, 1.0f, d_p_.data(), D, head_w_.data(), H2, 0.0f,
               d_mean_.data(), H2);
  // The mean spreads d mean / T over every step.
  const int64_t rows = static_cast<int64_t>(steps) * batch;
  d_out_.resize(rows * H2);
  const float inv_t = 1.0f / static_cast<float>(steps);
  for (int t = 0; t < steps; ++t) {
    float* o = &d_out_[static_cast<int64_t>(t) * batch * H2];
    for (int64_t k = 0; k < static_cast<int64_t>(batch) * H2; ++k) o[k] = d_mean_[k] * inv_t;
  }
  auto run_fwd = [&] { fwd_->Backward(d_out_.data(), H2, grad_fwd_.data()); };
  auto run_bwd = [&] { bwd_->Backward(d_out_.data() + H, H2, grad_bwd_.data()); };
  RunBothDirections(threads, run_fwd, run_bwd);
}

double QueryTower::FlopsPerIteration(int batch, int steps) const {
  const double gru = 2.0 * 2.0 * steps * batch * 3.0 * hidden_ * (d_ + hidden_);  // 2 dirs
  const double head = 2.0 * batch * 2.0 * hidden_ * d_;
  return 3.0 * (gru + head);
}

}  // namespace rlt::retrieval
