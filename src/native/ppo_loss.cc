// rltrade native: PPO loss forward and backward (see ppo_loss.h).
#include "native/ppo_loss.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "core/status.h"
#include "native/dispatch.h"

namespace rlt::native {
namespace {

// Mean and unbiased standard deviation of x (B), in double.
template <typename T>
void MeanStd(const T* x, int n, double* mean, double* std_dev) {
  double m = 0.0;
  for (int i = 0; i < n; ++i) m += x[i];
  m /= n;
  double ss = 0.0;
  for (int i = 0; i < n; ++i) ss += (x[i] - m) * (x[i] - m);
  *mean = m;
  *std_dev = n > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
}

}  // namespace

namespace {

// Per-sample terms of the loss (sums over the rows given) and, when d_log_probs is not
// nullptr, its gradients with the minibatch size 1 / inv_b.
struct PartialSums {
  double pg = 0, v = 0, ent = 0, kl = 0;
  int clipped = 0;
};
RLT_KERNEL_CLONES
PartialSums Accumulate(int rows, const PpoLossInputs& in, const PpoLossSettings& s, bool normalize,
                       double adv_mean, double adv_std, float inv_b, float* d_values,
                       float* d_log_probs, float* d_entropy) {
  const float adv_shift = static_cast<float>(adv_mean);
  const float adv_scale = static_cast<float>(adv_std + 1e-8);
  const float lo = static_cast<float>(1.0 - s.clip_range),
              hi = static_cast<float>(1.0 + s.clip_range);
  const float clip = static_cast<float>(s.clip_range),
              clip_vf = static_cast<float>(s.clip_range_vf);
  const bool clip_values = s.clip_range_vf > 0;
  const float vf_coef = static_cast<float>(s.vf_coef), ent_coef = static_cast<float>(s.ent_coef);
  PartialSums p;
  for (int i = 0; i < rows; ++i) {
    const float a = normalize ? (in.advantages[i] - adv_shift) / adv_scale : in.advantages[i];
    const float log_ratio = in.log_probs[i] - in.old_log_probs[i];
    const float r = std::exp(log_ratio);
    const float r_clamped = std::clamp(r, lo, hi);
    const float s1 = a * r, s2 = a * r_clamped;
    p.pg += std::min(s1, s2);
    p.kl += static_cast<double>((r - 1.0f) - log_ratio);
    p.clipped += std::fabs(r - 1.0f) > clip;
    const float dv = in.values[i] - in.old_values[i];
    const bool v_inside = !clip_values || (dv >= -clip_vf && dv <= clip_vf);
    const float v_pred =
        clip_values ? in.old_values[i] + std::clamp(dv, -clip_vf, clip_vf) : in.values[i];
    const float diff = in.returns[i] - v_pred;
    p.v += static_cast<double>(diff) * diff;
    p.ent += in.entropy[i];
    if (d_log_probs != nullptr) {
      // d L_pg / d s = -1/B on the smaller surrogate (half each on a tie); ds1/dr = A,
      // ds2/dr = A [lo <= r <= hi]; dr/dlog_prob = r.
      const float g = -inv_b;
      const float inside = (r >= lo && r <= hi) ? 1.0f : 0.0f;
      float dr;
      if (s1 < s2) {
        dr = g * a;
      } else if (s1 > s2) {
        dr = g * a * inside;
      } else {
        dr = 0.5f * g * a + 0.5f * g * a * inside;
      }
      d_log_probs[i] = dr * r;
      d_values[i] = v_inside ? vf_coef * (-2.0f * diff * inv_b) : 0.0f;
      d_entropy[i] = -ent_coef * inv_b;
    }
  }
  return p;
}

PpoLossTerms Terms(const PartialSums& p, double batch, const PpoLossSettings& s) {
  PpoLossTerms t;
  t.policy_loss = -p.pg / batch;
  t.value_loss = p.v / batch;
  t.entropy_loss = -p.ent / batch;
  t.loss = t.policy_loss + s.ent_coef * t.entropy_loss + s.vf_coef * t.value_loss;
  t.approx_kl = p.kl / batch;
  t.clip_fraction = static_cast<double>(p.clipped) / batch;
  return t;
}

}  // namespace

PpoLossTerms PpoLoss(int batch, const PpoLossInputs& in, const PpoLossSettings& s, float* d_values,
                     float* d_log_probs, float* d_entropy) {
  RLT_CHECK(batch >= 1);
  const bool normalize = s.normalize_advantage && batch > 1;
  double adv_mean = 0.0, adv_std = 1.0;
  if (normalize) MeanStd(in.advantages, batch, &adv_mean, &adv_std);
  const float inv_b = 1.0f / static_cast<float>(batch);
  return Terms(Accumulate(batch, in, s, normalize, adv_mean, adv_std, inv_b, d_values, d_log_probs,
                          d_entropy),
               batch, s);
}

PpoLossTerms PpoLossShared(int rows, const PpoLossInputs& in, const PpoLossSettings& s,
                           float* d_values, float* d_log_probs, float* d_entropy,
                           const std::function<void(double*, int)>& sum) {
  // Advantage moments of the whole minibatch: one sum of (count, sum, sum of squares).
  double moments[3] = {static_cast<double>(rows), 0.0, 0.0};
  for (int i = 0; i < rows; ++i) {
    moments[1] += in.advantages[i];
    moments[2] += static_cast<double>(in.advantages[i]) * in.advantages[i];
  }
  sum(moments, 3);
  const double batch = moments[0];
  RLT_CHECK(batch >= 1);
  const bool normalize = s.normalize_advantage && batch > 1;
  double adv_mean = 0.0, adv_std = 1.0;
  if (normalize) {
    adv_mean = moments[1] / batch;
    const double ss = std::max(0.0, moments[2] - batch * adv_mean * adv_mean);
    adv_std = std::sqrt(ss / (batch - 1));
  }
  const float inv_b = 1.0f / static_cast<float>(batch);
  const PartialSums p = Accumulate(rows, in, s, normalize, adv_mean, adv_std, inv_b, d_values,
                                   d_log_probs, d_entropy);
  double parts[5] = {p.pg, p.v, p.ent, p.kl, static_cast<double>(p.clipped)};
  sum(parts, 5);
  PartialSums all;
  all.pg = parts[0];
  all.v = parts[1];
  all.ent = parts[2];
  all.kl = parts[3];
  all.clipped = static_cast<int>(std::lround(parts[4]));
  return Terms(all, batch, s);
}

PpoLossTerms PpoLossReference(int batch, const PpoLossInputsF64& in, const PpoLossSettings& s) {
  const bool normalize = s.normalize_advantage && batch > 1;
  double adv_mean = 0.0, adv_std = 1.0;
  if (normalize) MeanStd(in.advantages, batch, &adv_mean, &adv_std);
  PpoLossTerms t;
  int clipped = 0;
  for (int i = 0; i < batch; ++i) {
    const double a =
        normalize ? (in.advantages[i] - adv_mean) / (adv_std + 1e-8) : in.advantages[i];
    const double log_ratio = in.log_probs[i] - in.old_log_probs[i];
    const double r = std::exp(log_ratio);
    t.policy_loss -= std::min(a * r, a * std::clamp(r, 1 - s.clip_range, 1 + s.clip_range));
    double v_pred = in.values[i];
    if (s.clip_range_vf > 0) {
      v_pred = in.old_values[i] +
               std::clamp(in.values[i] - in.old_values[i], -s.clip_range_vf, s.clip_range_vf);
    }
    t.value_loss += (in.returns[i] - v_pred) * (in.returns[i] - v_pred);
    t.entropy_loss -= in.entropy[i];
    t.approx_kl += (r - 1) - log_ratio;
    clipped += std::fabs(r - 1) > s.clip_range;
  }
  t.policy_loss /= batch;
  t.value_loss /= batch;
  t.entropy_loss /= batch;
  t.approx_kl /= batch;
  t.clip_fraction = static_cast<double>(clipped) / batch;
  t.loss = t.policy_loss + s.ent_coef * t.entropy_loss + s.vf_coef * t.value_loss;
  return t;
}

}  // namespace rlt::native
