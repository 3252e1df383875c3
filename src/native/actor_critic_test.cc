// Tests of the native MLP actor-critic (no LibTorch): PPO gradients against central finite
// differences of an independent double-precision forward written here, SB3's orthogonal
// init, Act on two workers against the serial Act, and Act's samples against the
// distributions it scores. learn/native_oracle_test.cc checks it against LibTorch autograd.
#include "native/actor_critic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/thread_pool.h"
#include "native/ppo_loss.h"
#include "native/test_util.h"

namespace rlt::native {
namespace {

using testing_util::LossData;
using testing_util::RandomLossData;
using testing_util::RandomVector;
using testing_util::ToDouble;

// An independent double-precision forward of the actor-critic + PPO loss, from the
// parameter names alone.
struct ReferenceModel {
  const ActorCritic& net;
  std::vector<double> p;

  const double* Param(const std::string& name, int64_t* rows = nullptr) const {
    const ParamInfo* info = net.FindParam(name);
    RLT_CHECK_MSG(info != nullptr, name);
    if (rows) *rows = info->shape[0];
    return p.data() + info->offset;
  }
  // x (B, in) -> (B, out) through Linear `prefix`.
  std::vector<double> Linear(const std::string& prefix, const std::vector<double>& x,
                             int batch) const {
    int64_t out = 0;
    const double* w = Param(prefix + ".weight", &out);
    const double* b = Param(prefix + ".bias");
    const int64_t in = static_cast<int64_t>(x.size()) / batch;
    std::vector<double> y(batch * out);
    for (int i = 0; i < batch; ++i) {
      for (int64_t o = 0; o < out; ++o) {
        double s = b[o];
        for (int64_t k = 0; k < in; ++k) s += w[o * in + k] * x[i * in + k];
        y[i * out + o] = s;
      }
    }
    return y;
  }
  std::vector<double> Tower(const std::string& name, const std::vector<int>& widths,
                            std::vector<double> x, int batch) const {
    for (size_t l = 0; l < widths.size(); ++l) {
      x = Linear(name + "." + std::to_string(2 * l), x, batch);
      for (double& v : x) {
        v = net.spec().activation == Activation::kTanh ? std::tanh(v) : std::max(v, 0.0);
      }
    }
    return x;
  }
  // values, log_probs, entropy (B each).
  void Evaluate(const std::vector<float>& obs, const std::vector<float>& actions, int batch,
                std::vector<double>* values, std::vector<double>* log_probs,
                std::vector<double>* entropy) const {
    const ActorCriticSpec& s = net.spec();
    const std::vector<double> x(obs.begin(), obs.end());
    const auto head = Linear("action_net", Tower("pi_net", s.pi, x, batch), batch);
    *values = Linear("value_net", Tower("vf_net", s.vf, x, batch), batch);
    log_probs->assign(batch, 0.0);
    entropy->assign(batch, 0.0);
    const int n = s.num_outputs;
    for (int i = 0; i < batch; ++i) {
      if (s.discrete) {
        double m = -1e300, z = 0;
        for (int k = 0; k < n; ++k) m = std::max(m, head[i * n + k]);
        for (int k = 0; k < n; ++k) z += std::exp(head[i * n + k] - m);
        for (int k = 0; k < n; ++k) {
          const double lp = head[i * n + k] - m - std::log(z);
          (*entropy)[i] -= std::exp(lp) * lp;
          if (k == static_cast<int>(actions[i])) (*log_probs)[i] = lp;
        }
      } else {
        const double* log_std = Param("log_std");
        for (int j = 0; j < n; ++j) {
          const double sd = std::exp(log_std[j]);
          const double z = (actions[i * n + j] - head[i * n + j]) / sd;
          (*log_probs)[i] += -0.5 * z * z - log_std[j] - 0.5 * std::log(2 * std::numbers::pi);
          (*entropy)[i] += 0.5 + 0.5 * std::log(2 * std::numbers::pi) + log_std[j];
        }
      }
    }
  }
};

struct PolicyCase {
  ActorCriticSpec spec;
  PpoLossSettings loss;
};

ActorCriticSpec Spec(int obs, bool discrete, int outputs, std::vector<int> pi, std::vector<int> vf,
                     Activation act) {
  ActorCriticSpec s;
  s.obs_dim = obs;
  s.discrete = discrete;
  s.act_dim = discrete ? 1 : outputs;
  s.num_outputs = outputs;
  s.pi = std::move(pi);
  s.vf = std::move(vf);
  s.activation = act;
  s.log_std_init = -0.3;
  return s;
}

std::vector<float> RandomActions(const ActorCriticSpec& s, int batch, Rng& rng) {
  std::vector<float> a(static_cast<size_t>(batch) * s.act_dim);
  for (float& v : a) {
    v = s.discrete ? static_cast<float>(rng.UniformInt(s.num_outputs))
                   : static_cast<float>(rng.Normal());
  }
  return a;
}

TEST(ActorCritic, PpoGradientsMatchFiniteDifferencesOfAnIndependentDoubleForward) {
  const std::vector<PolicyCase> cases = {
      {Spec(5, false, 2, {8, 6}, {7}, Activation::kTanh), {0.2, 0.0, 0.01, 0.5, true}},
      {Spec(4, true, 3, {9}, {9, 5}, Activation::kRelu), {0.2, 0.3, 0.05, 0.5, true}},
      {Spec(3, false, 1, {}, {4}, Activation::kTanh), {0.2, 0.0, 0.0, 0.5, true}},
      {Spec(6, true, 2, {5, 5}, {}, Activation::kTanh), {0.1, 0.0, 0.02, 1.0, false}}};
  Rng rng(6);
  for (const PolicyCase& c : cases) {
    ActorCritic net(c.spec, 11);
    // Larger than SB3's tiny head init so every parameter gets a sizeable gradient.
    for (float& p : net.params()) p += static_cast<float>(rng.Normal() * 0.2);
    const int batch = 13;
    const auto obs = RandomVector(static_cast<size_t>(batch) * c.spec.obs_dim, rng);
    const auto actions = RandomActions(c.spec, batch, rng);
    ActorCriticWorkspace ws;
    LossData d = RandomLossData(batch, rng);
    net.Evaluate(ws, obs.data(), actions.data(), batch, d.values.data(), d.log_probs.data(),
                 d.entropy.data());
    ReferenceModel ref{net, ToDouble(net.params())};
    std::vector<double> v, lp, ent;
    ref.Evaluate(obs, actions, batch, &v, &lp, &ent);
    for (int i = 0; i < batch; ++i) {
      EXPECT_NEAR(d.values[i], v[i], 1e-5 * (1 + std::fabs(v[i])));
      EXPECT_NEAR(d.log_probs[i], lp[i], 1e-5 * (1 + std::fabs(lp[i])));
      EXPECT_NEAR(d.entropy[i], ent[i], 1e-5 * (1 + std::fabs(ent[i])));
    }
    // old_* relative to the current outputs so some ratios and values are clipped.
    for (int i = 0; i < batch; ++i) {
      d.old_log_probs[i] = d.log_probs[i] + static_cast<float>(rng.Uniform(-0.4, 0.4));
      d.old_values[i] = d.values[i] + static_cast<float>(rng.Uniform(-0.5, 0.5));
    }
    std::vector<float> dv(batch), dlp(batch), dent(batch);
    PpoLoss(batch, d.Inputs(), c.loss, dv.data(), dlp.data(), dent.data());
    std::vector<float> grads(net.num_params(), 0.0f);
    net.Backward(ws, dv.data(), dlp.data(), dent.data(), grads.data());
    auto loss = [&]() {
      std::vector<double> vv, ll, ee;
      ref.Evaluate(obs, actions, batch, &vv, &ll, &ee);
      const auto od = ToDouble(d.old_values), ol = ToDouble(d.old_log_probs);
      const auto ad = ToDouble(d.advantages), rd = ToDouble(d.returns);
      return PpoLossReference(
                 batch,
                 {vv.data(), ll.data(), ee.data(), od.data(), ol.data(), ad.data(), rd.data()},
                 c.loss)
          .loss;
    };
    double worst = 0, scale = 0;
    std::vector<double> fd(net.num_params());
    for (int64_t k = 0; k < net.num_params(); ++k) {
      const double h = 1e-6, x0 = ref.p[k];
      ref.p[k] = x0 + h;
      const double up = loss();
      ref.p[k] = x0 - h;
      const double down = loss();
      ref.p[k] = x0;
      fd[k] = (up - down) / (2 * h);
      scale = std::max(scale, std::fabs(fd[k]));
    }
    for (int64_t k = 0; k < net.num_params(); ++k) {
      worst = std::max(worst, std::fabs(grads[k] - fd[k]) / (std::fabs(fd[k]) + 1e-2 * scale));
    }
    EXPECT_LT(worst, 1e-3) << "obs " << c.spec.obs_dim << " discrete " << c.spec.discrete;
    EXPECT_GT(scale, 1e-3);
  }
}

TEST(ActorCritic, OrthogonalInitHasSb3Gains) {
  ActorCriticSpec s = Spec(5, false, 2, {8, 3}, {4}, Activation::kTanh);
  ActorCritic net(s, 3);
  auto check = [&](const std::string& name, double gain) {
    const ParamInfo* p = net.FindParam(name);
    ASSERT_NE(p, nullptr) << name;
    const int rows = static_cast<int>(p->shape[0]), cols = static_cast<int>(p->shape[1]);
    const float* w = net.params().data() + p->offset;
    // The smaller Gram matrix is gain^2 I.
    const bool by_rows = rows <= cols;
    const int n = by_rows ? rows : cols, len = by_rows ? cols : rows;
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        double dot = 0;
        for (int k = 0; k < len; ++k) {
          dot += by_rows ? double{w[a * cols + k]} * w[b * cols + k]
                         : double{w[k * cols + a]} * w[k * cols + b];
        }
        EXPECT_NEAR(dot, a == b ? gain * gain : 0.0, 1e-6) << name;
      }
    }
    const ParamInfo* bias = net.FindParam(name.substr(0, name.size() - 6) + "bias");
    for (int64_t k = 0; k < bias->size; ++k) EXPECT_EQ(net.params()[bias->offset + k], 0.0f);
  };
  check("pi_net.0.weight", std::sqrt(2.0));
  check("pi_net.2.weight", std::sqrt(2.0));
  check("vf_net.0.weight", std::sqrt(2.0));
  check("action_net.weight", 0.01);
  check("value_net.weight", 1.0);
  const ParamInfo* log_std = net.FindParam("log_std");
  EXPECT_EQ(net.params()[log_std->offset], -0.3f);
  EXPECT_EQ(log_std->offset, 0);  // learn::ActorCritic's named_parameters() order
}

// Act on a WorkerPool runs the policy tower (with sampling) and the value tower on two
// workers at once; the towers share nothing, so everything equals the serial Act bit for
// bit, whether the pool hands off (set_inline_below_seconds(0)) or runs inline.
TEST(ActorCritic, ActOnTwoWorkersEqualsTheSerialActBitForBit) {
  for (bool discrete : {false, true}) {
    SCOPED_TRACE(discrete ? "discrete" : "box");
    ActorCriticSpec s = Spec(5, discrete, discrete ? 4 : 2, {16, 8}, {12}, Activation::kTanh);
    ActorCritic serial(s, 3), parallel(s, 3);
    const int batch = 64;
    Rng data(9);
    std::vector<float> obs(static_cast<size_t>(batch) * 5);
    for (float& v : obs) v = static_cast<float>(data.Normal());
    const size_t act = discrete ? 1 : 2;
    std::vector<float> a1(batch * act), v1(batch), l1(batch), a2(batch * act), v2(batch), l2(batch);
    WorkerPool pool(2);
    for (double inline_below : {0.0, 1.0}) {
      pool.set_inline_below_seconds(inline_below);
      Rng r1(4), r2(4);
      for (int rep = 0; rep < 3; ++rep) {
        serial.Act(obs.data(), batch, &r1, false, a1.data(), v1.data(), l1.data());
        parallel.Act(pool, obs.data(), batch, &r2, false, a2.data(), v2.data(), l2.data());
        EXPECT_EQ(a1, a2);
        EXPECT_EQ(v1, v2);
        EXPECT_EQ(l1, l2);
      }
    }
  }
}

TEST(ActorCritic, ActSamplesTheDistributionsItScores) {
  Rng rng(7);
  // Discrete: frequencies match the softmax; log_probs are those of the sampled index.
  {
    ActorCriticSpec s = Spec(3, true, 3, {6}, {6}, Activation::kTanh);
    ActorCritic net(s, 1);
    for (float& p : net.params()) p += static_cast<float>(rng.Normal() * 0.5);
    const int batch = 20000;
    std::vector<float> obs(static_cast<size_t>(batch) * 3);
    for (int i = 0; i < batch; ++i)
      std::copy_n(std::vector<float>{0.3f, -1.0f, 0.5f}.data(), 3, &obs[i * 3]);
    std::vector<float> actions(batch), values(batch), log_probs(batch);
    net.Act(obs.data(), batch, &rng, false, actions.data(), values.data(), log_probs.data());
    std::vector<int> counts(3, 0);
    for (float a : actions) counts[static_cast<int>(a)]++;
    ActorCriticWorkspace ws;
    std::vector<float> v(1), lp(1), ent(1);
    // Act's 20000 rows go through cblas_sgemm, Evaluate's one row through the loop kernels:
    // the same sums (at most 3 + 6 + 3 terms along a path, of unit size: tanh activations,
    // weights near 1) in another order, so about n eps apart relative to max(|x|, 1).
    const double n_terms = 3 + 6 + 3, bound = 4 * n_terms * std::numeric_limits<float>::epsilon();
    for (int k = 0; k < 3; ++k) {
      const float a = static_cast<float>(k);
      net.Evaluate(ws, obs.data(), &a, 1, v.data(), lp.data(), ent.data());
      const double p = std::exp(lp[0]);
      EXPECT_NEAR(counts[k] / double{batch}, p, 4 * std::sqrt(p * (1 - p) / batch) + 1e-3);
      for (int i = 0; i < batch; ++i) {
        if (actions[i] == a) {
          ASSERT_NEAR(log_probs[i], lp[0], bound * std::max(1.0, std::fabs(double{lp[0]})));
        }
      }
    }
    EXPECT_NEAR(values[0], v[0], bound * std::max(1.0, std::fabs(double{v[0]})));
    // Deterministic: the argmax.
    float best = 0;
    net.Act(obs.data(), 1, nullptr, true, &best, values.data(), log_probs.data());
    EXPECT_EQ(counts[static_cast<int>(best)], *std::max_element(counts.begin(), counts.end()));
  }
  // Box: mean and spread of the samples are the head's mean and exp(log_std).
  {
    ActorCriticSpec s = Spec(2, false, 2, {4}, {4}, Activation::kTanh);
    ActorCritic net(s, 2);
    const int batch = 20000;
    std::vector<float> obs(static_cast<size_t>(batch) * 2, 0.7f);
    std::vector<float> actions(batch * 2), values(batch), log_probs(batch), mean(2);
    net.Act(obs.data(), 1, nullptr, true, mean.data(), values.data(), log_probs.data());
    net.Act(obs.data(), batch, &rng, false, actions.data(), values.data(), log_probs.data());
    const double sd = std::exp(-0.3);
    for (int j = 0; j < 2; ++j) {
      double m = 0, ss = 0;
      for (int i = 0; i < batch; ++i) m += actions[i * 2 + j];
      m /= batch;
      for (int i = 0; i < batch; ++i) ss += (actions[i * 2 + j] - m) * (actions[i * 2 + j] - m);
      EXPECT_NEAR(m, mean[j], 4 * sd / std::sqrt(batch));
      EXPECT_NEAR(std::sqrt(ss / batch), sd, 0.02 * sd);
    }
  }
}

}  // namespace
}  // namespace rlt::native
