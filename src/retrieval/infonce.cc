// rltrade retrieval: the InfoNCE loss (see infonce.h).
#include "retrieval/infonce.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/status.h"
#include "native/gemm.h"

namespace rlt::retrieval {
namespace {

constexpr double kNoNegative = -std::numeric_limits<double>::infinity();

// Which logits of query i take part: the positive always; the rest unless masked.
struct Masks {
  const InfoNceBatch& bt;
  bool InBatch(int i, int j) const { return j != i && bt.target_ids[j] != bt.target_ids[i]; }
  bool Memory(int i, int k) const { return bt.memory_ids[k] != bt.target_ids[i]; }
  bool Hard(int i, int l) const {
    const int64_t id = bt.hard_ids[static_cast<int64_t>(i) * bt.hard + l];
    return id >= 0 && id != bt.target_ids[i];
  }
};

}  // namespace

InfoNceStats InfoNce::Compute(const InfoNceBatch& bt, double scale, float* d_q, float* d_y,
                              float* d_hard_out) {
  const int b = bt.b, d = bt.d, m = bt.m, nh = bt.hard;
  RLT_CHECK(b >= 1 && d >= 1 && m >= 0 && nh >= 0);
  const Masks mask{bt};
  in_batch_.resize(static_cast<size_t>(b) * b);
  d_in_.resize(static_cast<size_t>(b) * b);
  mem_.resize(static_cast<size_t>(b) * m);
  d_mem_.resize(static_cast<size_t>(b) * m);
  hard_.resize(static_cast<size_t>(b) * nh);
  native::Gemm(false, true, b, b, d, 1.0f, bt.q, d, bt.y, d, 0.0f, in_batch_.data(), b);
  if (m > 0) {
    native::Gemm(false, true, b, m, d, 1.0f, bt.q, d, bt.memory, d, 0.0f, mem_.data(), m);
  }
  for (int i = 0; i < b; ++i) {
    for (int l = 0; l < nh; ++l) {
      const float* h = bt.hard_vectors + (static_cast<int64_t>(i) * nh + l) * d;
      const float* q = bt.q + static_cast<int64_t>(i) * d;
      float s = 0.0f;
#pragma omp simd reduction(+ : s)
      for (int e = 0; e < d; ++e) s += q[e] * h[e];
      hard_[static_cast<size_t>(i) * nh + l] = s;
    }
  }
  const double inv_tau = 1.0 / options_.tau;
  const double row_scale = scale / b;
  InfoNceStats stats;
  std::vector<double> d_hard(nh);
  for (int i = 0; i < b; ++i) {
    const float* row_in = &in_batch_[static_cast<size_t>(i) * b];
    const float* row_mem = m > 0 ? &mem_[static_cast<size_t>(i) * m] : nullptr;
    const float* row_hard = nh > 0 ? &hard_[static_cast<size_t>(i) * nh] : nullptr;
    const double pos = row_in[i];
    // The largest negative (for the margin and the accuracy) and the log-sum-exp.
    double max_neg = kNoNegative;
    int max_kind = -1, max_index = -1;  // 0 in-batch, 1 memory, 2 hard
    auto consider = [&](double s, int kind, int index) {
      if (s > max_neg) {
        max_neg = s;
        max_kind = kind;
        max_index = index;
      }
    };
    for (int j = 0; j < b; ++j) {
      if (mask.InBatch(i, j)) consider(row_in[j], 0, j);
    }
    for (int k = 0; k < m; ++k) {
      if (mask.Memory(i, k)) consider(row_mem[k], 1, k);
    }
    for (int l = 0; l < nh; ++l) {
      if (mask.Hard(i, l)) consider(row_hard[l], 2, l);
    }
    const double top = std::max(pos, max_neg) * inv_tau;
    double sum = std::exp(pos * inv_tau - top);
    for (int j = 0; j < b; ++j) {
      if (mask.InBatch(i, j)) sum += std::exp(row_in[j] * inv_tau - top);
    }
    for (int k = 0; k < m; ++k) {
      if (mask.Memory(i, k)) sum += std::exp(row_mem[k] * inv_tau - top);
    }
    for (int l = 0; l < nh; ++l) {
      if (mask.Hard(i, l)) sum += std::exp(row_hard[l] * inv_tau - top);
    }
    const double lse = top + std::log(sum);
    stats.loss += lse - pos * inv_tau;
    if (pos >= max_neg) stats.accuracy += 1.0;
    // d loss_i / d s = (softmax - onehot) / tau, times the batch mean and scale.
    const double g = row_scale * inv_tau;
    float* din = &d_in_[static_cast<size_t>(i) * b];
    for (int j = 0; j < b; ++j) {
      din[j] =
          mask.InBatch(i, j) ? static_cast<float>(g * std::exp(row_in[j] * inv_tau - lse)) : 0.0f;
    }
    double d_pos = g * (std::exp(pos * inv_tau - lse) - 1.0);
    float* dmem = m > 0 ? &d_mem_[static_cast<size_t>(i) * m] : nullptr;
    for (int k = 0; k < m; ++k) {
      dmem[k] =
          mask.Memory(i, k) ? static_cast<float>(g * std::exp(row_mem[k] * inv_tau - lse)) : 0.0f;
    }
    for (int l = 0; l < nh; ++l) {
      d_hard[l] = mask.Hard(i, l) ? g * std::exp(row_hard[l] * inv_tau - lse) : 0.0;
    }
    if (options_.margin > 0.0 && max_kind >= 0) {
      const double gap = options_.margin - (pos - max_neg);
      if (gap > 0.0) {
        stats.margin_loss += options_.margin_weight * gap;
        const double w = row_scale * options_.margin_weight;
        d_pos -= w;
        if (max_kind == 0) din[max_index] += static_cast<float>(w);
        if (max_kind == 1) dmem[max_index] += static_cast<float>(w);
        if (max_kind == 2) d_hard[max_index] += w;
      }
    }
    din[i] = static_cast<float>(d_pos);
    // Hard negatives' share of d_q now; the products below add the rest.
    float* dq = d_q + static_cast<int64_t>(i) * d;
    std::fill(dq, dq + d, 0.0f);
    const float* qi = bt.q + static_cast<int64_t>(i) * d;
    for (int l = 0; l < nh; ++l) {
      const float w = static_cast<float>(d_hard[l]);
      if (d_hard_out != nullptr) {
        float* dh = d_hard_out + (static_cast<int64_t>(i) * nh + l) * d;
#pragma omp simd
        for (int e = 0; e < d; ++e) dh[e] = w * qi[e];
      }
      if (d_hard[l] == 0.0) continue;
      const float* h = bt.hard_vectors + (static_cast<int64_t>(i) * nh + l) * d;
#pragma omp simd
      for (int e = 0; e < d; ++e) dq[e] += w * h[e];
    }
  }
  // d y_j = sum_i d s_ij q_i.
  if (d_y != nullptr) {
    native::Gemm(true, false, b, d, b, 1.0f, d_in_.data(), b, bt.q, d, 0.0f, d_y, d);
  }
  native::Gemm(false, false, b, d, b, 1.0f, d_in_.data(), b, bt.y, d, 1.0f, d_q, d);
  if (m > 0) {
    native::Gemm(false, false, b, d, m, 1.0f, d_mem_.data(), m, bt.memory, d, 1.0f, d_q, d);
  }
  stats.loss = (stats.loss + stats.margin_loss) / b;
  stats.margin_loss /= b;
  stats.accuracy /= b;
  return stats;
}

double InfoNceReference(const InfoNceOptions& options, const InfoNceBatch& bt, double* d_q,
                        double* d_y, double* d_hard) {
  const int b = bt.b, d = bt.d;
  const Masks mask{bt};
  auto dot = [d](const float* a, const float* c) {
    double s = 0.0;
    for (int e = 0; e < d; ++e) s += static_cast<double>(a[e]) * c[e];
    return s;
  };
  double total = 0.0;
  std::fill(d_q, d_q + static_cast<int64_t>(b) * d, 0.0);
  if (d_y != nullptr) std::fill(d_y, d_y + static_cast<int64_t>(b) * d, 0.0);
  if (d_hard != nullptr) std::fill(d_hard, d_hard + static_cast<int64_t>(b) * bt.hard * d, 0.0);
  for (int i = 0; i < b; ++i) {
    const float* q = bt.q + static_cast<int64_t>(i) * d;
    // Every candidate: its vector, where its gradient goes (null: a constant) and its
    // similarity; the positive first.
    std::vector<const float*> vec{bt.y + static_cast<int64_t>(i) * d};
    std::vector<double*> grad{d_y ? d_y + static_cast<int64_t>(i) * d : nullptr};
    for (int j = 0; j < b; ++j) {
      if (mask.InBatch(i, j)) {
        vec.push_back(bt.y + static_cast<int64_t>(j) * d);
        grad.push_back(d_y ? d_y + static_cast<int64_t>(j) * d : nullptr);
      }
    }
    for (int k = 0; k < bt.m; ++k) {
      if (mask.Memory(i, k)) {
        vec.push_back(bt.memory + static_cast<int64_t>(k) * d);
        grad.push_back(nullptr);
      }
    }
    for (int l = 0; l < bt.hard; ++l) {
      if (mask.Hard(i, l)) {
        const int64_t at = (static_cast<int64_t>(i) * bt.hard + l) * d;
        vec.push_back(bt.hard_vectors + at);
        grad.push_back(d_hard ? d_hard + at : nullptr);
      }
    }
    std::vector<double> s(vec.size());
    double top = -1e300;
    for (size_t c = 0; c < vec.size(); ++c) {
      s[c] = dot(q, vec[c]);
      top = std::max(top, s[c] / options.tau);
    }
    double sum = 0.0;
    for (double x : s) sum += std::exp(x / options.tau - top);
    const double lse = top + std::log(sum);
    total += lse - s[0] / options.tau;
    std::vector<double> ds(vec.size());
    for (size_t c = 0; c < vec.size(); ++c) {
      ds[c] = (std::exp(s[c] / options.tau - lse) - (c == 0 ? 1.0 : 0.0)) / options.tau;
    }
    if (options.margin > 0.0 && vec.size() > 1) {
      size_t arg = 1;
      for (size_t c = 2; c < vec.size(); ++c) {
        if (s[c] > s[arg]) arg = c;
      }
      const double gap = options.margin - (s[0] - s[arg]);
      if (gap > 0.0) {
        total += options.margin_weight * gap;
        ds[0] -= options.margin_weight;
        ds[arg] += options.margin_weight;
      }
    }
    for (size_t c = 0; c < vec.size(); ++c) {
      for (int e = 0; e < d; ++e) {
        d_q[static_cast<int64_t>(i) * d + e] += ds[c] * vec[c][e] / b;
        if (grad[c] != nullptr) grad[c][e] += ds[c] * q[e] / b;
      }
    }
  }
  return total / b;
}

}  // namespace rlt::retrieval
