// rltrade retrieval: the MLP document tower (see doc_tower.h).
#include "retrieval/doc_tower.h"

#include <algorithm>
#include <cmath>

#include "core/rng.h"
#include "core/status.h"
#include "native/gemm.h"
#include "retrieval/l2_rows.h"

namespace rlt::retrieval {
namespace {

// Rows embedded at once by Embed(): bounds its scratch memory (a few MB).
constexpr int64_t kEmbedBlock = 1024;

}  // namespace

DocTower::DocTower(int d, int hidden, uint64_t seed)
    : d_(d),
      hidden_(hidden),
      w1_(static_cast<size_t>(hidden) * d),
      b1_(hidden),
      w2_(static_cast<size_t>(d) * hidden, 0.0f),
      b2_(d, 0.0f),
      g_w1_(w1_.size(), 0.0f),
      g_b1_(hidden, 0.0f),
      g_w2_(w2_.size(), 0.0f),
      g_b2_(d, 0.0f) {
  RLT_CHECK(d >= 1 && hidden >= 1);
  Rng rng(seed * 0x9E3779B97F4A7C15ULL + 0xD0C);
  const double bound = 1.0 / std::sqrt(static_cast<double>(d));
  for (float& w : w1_) w = static_cast<float>(rng.Uniform(-bound, bound));
  for (float& b : b1_) b = static_cast<float>(rng.Uniform(-bound, bound));
}

std::vector<TowerParam> DocTower::Params() {
  const int64_t hd = static_cast<int64_t>(hidden_) * d_;
  return {{"doc.fc1.weight", {hidden_, d_}, w1_.data(), g_w1_.data(), hd},
          {"doc.fc1.bias", {hidden_}, b1_.data(), g_b1_.data(), hidden_},
          {"doc.fc2.weight", {d_, hidden_}, w2_.data(), g_w2_.data(), hd},
          {"doc.fc2.bias", {d_}, b2_.data(), g_b2_.data(), d_}};
}

void DocTower::ZeroGrads() {
  for (auto* g : {&g_w1_, &g_b1_, &g_w2_, &g_b2_}) std::fill(g->begin(), g->end(), 0.0f);
}

void DocTower::ForwardBlock(const float* v, int64_t n, float* a, float* h, float* p, float* norms,
                            float* e) const {
  const int D = d_, Hd = hidden_, rows = static_cast<int>(n);
  // a = v W1^T + b1; h = relu(a).
  for (int64_t i = 0; i < n; ++i) std::copy(b1_.begin(), b1_.end(), a + i * Hd);
  native::Gemm(false, true, rows, Hd, D, 1.0f, v, D, w1_.data(), D, 1.0f, a, Hd);
  for (int64_t k = 0; k < n * Hd; ++k) h[k] = std::max(a[k], 0.0f);
  // p = v + h W2^T + b2; e = p / ||p||.
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < D; ++k) p[i * D + k] = v[i * D + k] + b2_[k];
  }
  native::Gemm(false, true, rows, D, Hd, 1.0f, h, Hd, w2_.data(), Hd, 1.0f, p, D);
  L2NormalizeRows(p, n, D, norms, e);
}

void DocTower::Forward(const float* v, int64_t n, float* e) {
  const int D = d_, Hd = hidden_;
  n_ = n;
  v_.assign(v, v + n * D);
  a_.resize(n * Hd);
  h_.resize(n * Hd);
  p_.resize(n * D);
  norms_.resize(n);
  e_.resize(n * D);
  ForwardBlock(v_.data(), n, a_.data(), h_.data(), p_.data(), norms_.data(), e_.data());
  std::copy(e_.begin(), e_.end(), e);
}

void DocTower::Backward(const float* d_e) {
  const int D = d_, Hd = hidden_, rows = static_cast<int>(n_);
  if (n_ == 0) return;
  d_p_.resize(n_ * D);
  d_h_.resize(n_ * Hd);
  L2NormalizeRowsBackward(e_.data(), norms_.data(), d_e, n_, D, d_p_.data());
  // Second layer: d W2 += d_p^T h, d b2 += sum d_p, d h = d_p W2.
  native::Gemm(true, false, D, Hd, rows, 1.0f, d_p_.data(), D, h_.data(), Hd, 1.0f, g_w2_.data(),
               Hd);
  for (int64_t i = 0; i < n_; ++i) {
    for (int k = 0; k < D; ++k) g_b2_[k] += d_p_[i * D + k];
  }
  native::Gemm(false, false, rows, Hd, D, 1.0f, d_p_.data(), D, w2_.data(), Hd, 0.0f, d_h_.data(),
               Hd);
  // Through the relu, then the first layer: d W1 += d_a^T v, d b1 += sum d_a.
  for (int64_t k = 0; k < n_ * Hd; ++k) {
    if (a_[k] <= 0.0f) d_h_[k] = 0.0f;
  }
  native::Gemm(true, false, Hd, D, rows, 1.0f, d_h_.data(), Hd, v_.data(), D, 1.0f, g_w1_.data(),
               D);
  for (int64_t i = 0; i < n_; ++i) {
    for (int k = 0; k < Hd; ++k) g_b1_[k] += d_h_[i * Hd + k];
  }
}

void DocTower::Embed(const float* v, int64_t n, float* e) const {
  const int D = d_, Hd = hidden_;
  const int64_t block = std::min(n, kEmbedBlock);
  std::vector<float> a(block * Hd), h(block * Hd), p(block * D), norms(block);
  for (int64_t first = 0; first < n; first += block) {
    const int64_t rows = std::min(block, n - first);
    ForwardBlock(v + first * D, rows, a.data(), h.data(), p.data(), norms.data(), e + first * D);
  }
}

}  // namespace rlt::retrieval
