// Tests of rlt_native (no LibTorch): every fast kernel against its plain reference, every
// analytic gradient against central finite differences of an independent double-precision
// forward written here, Adam against the paper's formula in double, and the tensor file
// format (round trip and every kind of corrupt file). learn/native_oracle_test.cc checks
// the same engine against LibTorch autograd.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <numbers>
#include <vector>

#include "core/rng.h"
#include "core/status_test_util.h"
#include "core/thread_pool.h"
#include "native/actor_critic.h"
#include "native/adam.h"
#include "native/gemm.h"
#include "native/layers.h"
#include "native/lstm.h"
#include "native/ppo_loss.h"
#include "native/recurrent_actor_critic.h"
#include "native/tensor_file.h"
#include "testing/testing.h"

namespace rlt::native {
namespace {

std::vector<float> RandomVector(size_t n, Rng& rng, double scale = 1.0) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.Normal() * scale);
  return v;
}

double MaxAbs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

// |a - b| <= rtol (|b| + scale) element-wise, scale = max |b| over the tensor.
void ExpectClose(const std::vector<float>& a, const std::vector<float>& b, double rtol,
                 const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  const double scale = MaxAbs(b);
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_LE(std::fabs(a[k] - b[k]), rtol * (std::fabs(b[k]) + scale))
        << what << " element " << k << ": " << a[k] << " vs " << b[k];
  }
}

// ---------------------------------------------------------------- Gemm

struct GemmCase {
  bool ta, tb;
  int m, n, k;
};

TEST(Gemm, EveryKernelMatchesTheReference) {
  Rng rng(1);
  const std::vector<GemmCase> cases = {
      {false, true, 5, 7, 3},      {false, true, 64, 64, 64},   {false, true, 2048, 64, 147},
      {false, false, 6, 4, 9},     {false, false, 64, 147, 64}, {true, false, 8, 5, 11},
      {true, false, 64, 147, 256}, {false, true, 1, 1, 1},      {true, false, 3, 2, 1}};
  for (const GemmCase& c : cases) {
    for (float beta : {0.0f, 1.0f, 0.5f}) {
      const int lda = (c.ta ? c.m : c.k) + 2, ldb = (c.tb ? c.k : c.n) + 1, ldc = c.n + 3;
      const auto a = RandomVector(static_cast<size_t>(c.ta ? c.k : c.m) * lda, rng);
      const auto b = RandomVector(static_cast<size_t>(c.tb ? c.n : c.k) * ldb, rng);
      const auto c0 = RandomVector(static_cast<size_t>(c.m) * ldc, rng);
      std::vector<float> ref = c0, loops = c0, blas = c0, fast = c0;
      const float alpha = 0.75f;
      GemmReference(c.ta, c.tb, c.m, c.n, c.k, alpha, a.data(), lda, b.data(), ldb, beta,
                    ref.data(), ldc);
      GemmLoops(c.ta, c.tb, c.m, c.n, c.k, alpha, a.data(), lda, b.data(), ldb, beta, loops.data(),
                ldc);
      GemmBlas(c.ta, c.tb, c.m, c.n, c.k, alpha, a.data(), lda, b.data(), ldb, beta, blas.data(),
               ldc);
      Gemm(c.ta, c.tb, c.m, c.n, c.k, alpha, a.data(), lda, b.data(), ldb, beta, fast.data(), ldc);
      const std::string what = "m" + std::to_string(c.m) + " n" + std::to_string(c.n) + " k" +
                               std::to_string(c.k) + " ta" + std::to_string(c.ta) + " tb" +
                               std::to_string(c.tb) + " beta " + std::to_string(beta);
      // Rounding of a length-k float dot product: ~k eps relative to sum |a||b|.
      const double rtol = 2e-7 * std::sqrt(static_cast<double>(c.k)) * 4;
      ExpectClose(loops, ref, rtol, "loops " + what);
      ExpectClose(blas, ref, rtol, "blas " + what);
      ExpectClose(fast, ref, rtol, "dispatch " + what);
      // Padding columns (beyond n) are untouched.
      for (int i = 0; i < c.m; ++i) {
        for (int j = c.n; j < ldc; ++j)
          ASSERT_EQ(fast[static_cast<size_t>(i) * ldc + j], c0[static_cast<size_t>(i) * ldc + j]);
      }
    }
  }
}

// ---------------------------------------------------------------- elementwise math

TEST(FastMath, ExpTanhSigmoidAgreeWithLibmToOneMillionth) {
  double worst_exp = 0, worst_tanh = 0, worst_sigmoid = 0;
  for (double x = -30.0; x <= 30.0; x += 0.00113) {
    const float xf = static_cast<float>(x);
    if (std::fabs(xf) < 80) {
      worst_exp = std::max(worst_exp, std::fabs(FastExp(xf) / std::exp(double{xf}) - 1.0));
    }
    const double t = std::tanh(double{xf});
    worst_tanh = std::max(worst_tanh, std::fabs(FastTanh(xf) - t) / std::fabs(t));
    const double s = 1.0 / (1.0 + std::exp(-double{xf}));
    worst_sigmoid = std::max(worst_sigmoid, std::fabs(FastSigmoid(xf) - s) / s);
  }
  for (float tiny : {1e-30f, -1e-20f, 3e-8f, -4e-4f, 0.39999f, 0.40001f, -0.4f}) {
    const double t = std::tanh(double{tiny});
    worst_tanh = std::max(worst_tanh, std::fabs(FastTanh(tiny) - t) / std::fabs(t));
  }
  EXPECT_LT(worst_exp, 1e-6);
  EXPECT_LT(worst_tanh, 1e-6);
  EXPECT_LT(worst_sigmoid, 1e-6);
  EXPECT_EQ(FastTanh(0.0f), 0.0f);
  EXPECT_EQ(FastTanh(50.0f), 1.0f);
  EXPECT_EQ(FastTanh(-50.0f), -1.0f);
}

// ---------------------------------------------------------------- Linear / activations

TEST(Linear, ForwardAndBackwardMatchTheReference) {
  Rng rng(2);
  for (auto [batch, in, out] : {std::tuple{3, 4, 2}, {64, 4, 64}, {256, 147, 64}, {64, 64, 1}}) {
    const auto x = RandomVector(static_cast<size_t>(batch) * in, rng);
    const auto w = RandomVector(static_cast<size_t>(out) * in, rng, 0.3);
    const auto b = RandomVector(out, rng);
    const auto dy = RandomVector(static_cast<size_t>(batch) * out, rng);
    std::vector<float> y(batch * out), y_ref(batch * out);
    LinearForward(y.data(), x.data(), w.data(), b.data(), batch, in, out);
    LinearForwardReference(y_ref.data(), x.data(), w.data(), b.data(), batch, in, out);
    ExpectClose(y, y_ref, 1e-5, "linear forward");
    // Accumulation into existing gradients.
    auto dw = RandomVector(w.size(), rng), db = RandomVector(b.size(), rng);
    auto dw_ref = dw, db_ref = db;
    std::vector<float> dx(x.size()), dx_ref(x.size());
    LinearBackward(dx.data(), dw.data(), db.data(), dy.data(), x.data(), w.data(), batch, in, out);
    LinearBackwardReference(dx_ref.data(), dw_ref.data(), db_ref.data(), dy.data(), x.data(),
                            w.data(), batch, in, out);
    ExpectClose(dx, dx_ref, 1e-5, "linear dx");
    ExpectClose(dw, dw_ref, 1e-5, "linear dw");
    ExpectClose(db, db_ref, 1e-5, "linear db");
  }
}

TEST(Activation, ForwardAndBackwardMatchTheReference) {
  Rng rng(3);
  for (Activation act : {Activation::kTanh, Activation::kRelu}) {
    auto y = RandomVector(1000, rng, 2.0);
    y[0] = 0.0f;  // relu'(0) = 0 as in PyTorch
    auto y_ref = y;
    ActivationForward(act, y.data(), 1000);
    ActivationForwardReference(act, y_ref.data(), 1000);
    ExpectClose(y, y_ref, 1e-6, "activation forward");
    auto d = RandomVector(1000, rng);
    auto d_ref = d;
    ActivationBackward(act, d.data(), y_ref.data(), 1000);
    ActivationBackwardReference(act, d_ref.data(), y_ref.data(), 1000);
    ExpectClose(d, d_ref, 1e-6, "activation backward");
    if (act == Activation::kRelu) {
      EXPECT_EQ(d[0], 0.0f);
    }
  }
}

// ---------------------------------------------------------------- PPO loss

struct LossData {
  int batch;
  std::vector<float> values, log_probs, entropy, old_values, old_log_probs, advantages, returns;
  PpoLossInputs Inputs() const {
    return {values.data(),        log_probs.data(),  entropy.data(), old_values.data(),
            old_log_probs.data(), advantages.data(), returns.data()};
  }
};

LossData RandomLossData(int batch, Rng& rng) {
  LossData d;
  d.batch = batch;
  d.values = RandomVector(batch, rng);
  d.log_probs = RandomVector(batch, rng);
  d.entropy = RandomVector(batch, rng);
  d.old_values = d.values;
  d.old_log_probs = d.log_probs;
  for (int i = 0; i < batch; ++i) {
    d.old_values[i] += static_cast<float>(rng.Uniform(-0.5, 0.5));
    d.old_log_probs[i] += static_cast<float>(rng.Uniform(-0.4, 0.4));  // some ratios clipped
  }
  d.advantages = RandomVector(batch, rng, 2.0);
  d.returns = RandomVector(batch, rng);
  return d;
}

std::vector<double> ToDouble(const std::vector<float>& v) { return {v.begin(), v.end()}; }

TEST(PpoLoss, GradientsMatchFiniteDifferencesOfTheDoubleReference) {
  Rng rng(4);
  for (const PpoLossSettings s :
       {PpoLossSettings{0.2, 0.0, 0.0, 0.5, true}, PpoLossSettings{0.1, 0.2, 0.01, 0.7, true},
        PpoLossSettings{0.3, 0.0, 0.05, 0.5, false}}) {
    LossData d = RandomLossData(37, rng);
    std::vector<float> dv(d.batch), dlp(d.batch), dent(d.batch);
    const PpoLossTerms t = PpoLoss(d.batch, d.Inputs(), s, dv.data(), dlp.data(), dent.data());
    std::vector<std::vector<double>> in = {ToDouble(d.values),        ToDouble(d.log_probs),
                                           ToDouble(d.entropy),       ToDouble(d.old_values),
                                           ToDouble(d.old_log_probs), ToDouble(d.advantages),
                                           ToDouble(d.returns)};
    auto loss = [&]() {
      return PpoLossReference(d.batch,
                              {in[0].data(), in[1].data(), in[2].data(), in[3].data(), in[4].data(),
                               in[5].data(), in[6].data()},
                              s);
    };
    const PpoLossTerms ref = loss();
    EXPECT_NEAR(t.loss, ref.loss, 1e-5 * std::fabs(ref.loss));
    EXPECT_NEAR(t.policy_loss, ref.policy_loss, 1e-5 * std::fabs(ref.policy_loss) + 1e-7);
    EXPECT_NEAR(t.value_loss, ref.value_loss, 1e-5 * std::fabs(ref.value_loss));
    EXPECT_NEAR(t.entropy_loss, ref.entropy_loss, 1e-5 * std::fabs(ref.entropy_loss) + 1e-7);
    EXPECT_NEAR(t.approx_kl, ref.approx_kl, 1e-5 * std::fabs(ref.approx_kl) + 1e-7);
    EXPECT_EQ(t.clip_fraction, ref.clip_fraction);
    EXPECT_GT(ref.clip_fraction, 0.0);  // the clipped branch is exercised
    const std::vector<std::pair<int, std::vector<float>*>> wrt = {{0, &dv}, {1, &dlp}, {2, &dent}};
    for (const auto& [which, grad] : wrt) {
      for (int i = 0; i < d.batch; ++i) {
        const double h = 1e-6, x0 = in[which][i];
        in[which][i] = x0 + h;
        const double up = loss().loss;
        in[which][i] = x0 - h;
        const double down = loss().loss;
        in[which][i] = x0;
        const double fd = (up - down) / (2 * h);
        EXPECT_NEAR((*grad)[i], fd, 2e-5 * std::fabs(fd) + 1e-6)
            << "input " << which << " sample " << i;
      }
    }
  }
}

TEST(PpoLoss, OneSampleSkipsAdvantageNormalisation) {
  Rng rng(5);
  LossData d = RandomLossData(1, rng);
  d.log_probs[0] = d.old_log_probs[0];  // ratio 1
  const PpoLossTerms t = PpoLoss(1, d.Inputs(), PpoLossSettings{}, nullptr, nullptr, nullptr);
  EXPECT_NEAR(t.policy_loss, -d.advantages[0], 1e-6 * std::fabs(d.advantages[0]));
}

// ---------------------------------------------------------------- actor-critic

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

// ---------------------------------------------------------------- Adam, clipping

// The data-parallel learner steps Adam on disjoint parameter ranges (Advance() once, then
// StepRange() per range): element-wise, so the result is Step()'s bit for bit.
TEST(Adam, StepOnRangesEqualsOneStep) {
  const int64_t n = 1001;
  Rng rng(5);
  std::vector<float> p1(n), p2, g(n);
  for (float& v : p1) v = static_cast<float>(rng.Normal());
  p2 = p1;
  Adam whole(n, AdamOptions{}), ranged(n, AdamOptions{});
  for (int step = 0; step < 4; ++step) {
    for (float& v : g) v = static_cast<float>(rng.Normal());
    whole.Step(p1.data(), g.data());
    ranged.Advance();
    for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, 333}, {333, 800}, {800, n}}) {
      ranged.StepRange(p2.data(), g.data(), lo, hi);
    }
    ASSERT_EQ(p1, p2) << "step " << step;
  }
  EXPECT_EQ(whole.exp_avg(), ranged.exp_avg());
  EXPECT_EQ(whole.exp_avg_sq(), ranged.exp_avg_sq());
}

TEST(Adam, FollowsThePaperFormulaInDouble) {
  Rng rng(8);
  const int64_t n = 300;
  AdamOptions o;
  o.lr = 1e-3;
  auto params = RandomVector(n, rng);
  std::vector<double> ref_p = ToDouble(params), m(n, 0.0), v(n, 0.0);
  Adam adam(n, o);
  for (int step = 1; step <= 6; ++step) {
    auto grads = RandomVector(n, rng, step == 3 ? 1e-6 : 1.0);  // tiny grads: eps matters
    adam.Step(params.data(), grads.data());
    const auto g = ToDouble(grads);
    AdamStepReference(o, step, ref_p.data(), g.data(), m.data(), v.data(), n);
  }
  EXPECT_EQ(adam.step(), 6);
  for (int64_t k = 0; k < n; ++k) {
    ASSERT_NEAR(params[k], ref_p[k], 1e-5 * std::fabs(ref_p[k]) + 1e-8) << k;
  }
}

TEST(Adam, DecoupledWeightDecayShrinksParametersBeforeTheUpdate) {
  // AdamW (Loshchilov & Hutter, decoupled): with zero gradients the moments stay zero and
  // each step only multiplies the parameters by 1 - lr * weight_decay.
  AdamOptions o;
  o.lr = 0.1;
  o.weight_decay = 0.5;
  std::vector<float> p = {2.0f, -4.0f}, zero = {0.0f, 0.0f};
  Adam adam(2, o);
  adam.Step(p.data(), zero.data());
  adam.Step(p.data(), zero.data());
  EXPECT_FLOAT_EQ(p[0], 2.0f * 0.95f * 0.95f);
  EXPECT_FLOAT_EQ(p[1], -4.0f * 0.95f * 0.95f);
  // With gradients: the double reference, which applies the same decay.
  Rng rng(11);
  const int64_t n = 200;
  o.lr = 1e-2;
  o.weight_decay = 0.01;
  o.eps = 1e-8;
  auto params = RandomVector(n, rng);
  std::vector<double> ref_p = ToDouble(params), m(n, 0.0), v(n, 0.0);
  Adam adamw(n, o);
  for (int step = 1; step <= 5; ++step) {
    auto grads = RandomVector(n, rng);
    adamw.Step(params.data(), grads.data());
    const auto g = ToDouble(grads);
    AdamStepReference(o, step, ref_p.data(), g.data(), m.data(), v.data(), n);
  }
  for (int64_t k = 0; k < n; ++k) {
    ASSERT_NEAR(params[k], ref_p[k], 1e-5 * std::fabs(ref_p[k]) + 1e-7) << k;
  }
}

TEST(ClipGradNorm, ScalesToTheMaximumNormOnlyWhenAbove) {
  std::vector<float> g = {3.0f, 4.0f, 0.0f};
  EXPECT_DOUBLE_EQ(ClipGradNorm(g.data(), 3, 10.0), 5.0);
  EXPECT_EQ(g[0], 3.0f);
  EXPECT_DOUBLE_EQ(ClipGradNorm(g.data(), 3, 0.5), 5.0);
  EXPECT_NEAR(g[0], 3.0 * 0.5 / (5.0 + 1e-6), 1e-7);
  EXPECT_NEAR(g[1], 4.0 * 0.5 / (5.0 + 1e-6), 1e-7);
}

// ---------------------------------------------------------------- LSTM

TEST(Lstm, ForwardMatchesTheReferenceAndGradientsMatchFiniteDifferences) {
  Rng rng(9);
  const int in = 3, hidden = 5, steps = 6, batch = 4;
  Lstm lstm(in, hidden, 4);
  for (float& p : lstm.params()) p += static_cast<float>(rng.Normal() * 0.3);
  const auto x = RandomVector(static_cast<size_t>(steps) * batch * in, rng);
  const auto h0 = RandomVector(batch * hidden, rng, 0.5), c0 = RandomVector(batch * hidden, rng);
  std::vector<float> starts(steps * batch, 0.0f);
  starts[2 * batch + 1] = 1.0f;  // resets inside the sequence
  starts[4 * batch + 3] = 1.0f;
  starts[0 * batch + 2] = 1.0f;  // and at the first step
  std::vector<float> out(steps * batch * hidden), hn(batch * hidden), cn(batch * hidden);
  LstmWorkspace ws;
  lstm.Forward(ws, x.data(), steps, batch, h0.data(), c0.data(), starts.data(), out.data(),
               hn.data(), cn.data());
  std::vector<double> p = ToDouble(lstm.params()), xd = ToDouble(x), h0d = ToDouble(h0),
                      c0d = ToDouble(c0), sd = ToDouble(starts);
  std::vector<double> out_ref(out.size()), hn_ref(hn.size()), cn_ref(cn.size());
  LstmForwardReference(p.data(), in, hidden, xd.data(), steps, batch, h0d.data(), c0d.data(),
                       sd.data(), out_ref.data(), hn_ref.data(), cn_ref.data());
  auto as_float = [](const std::vector<double>& v) {
    return std::vector<float>(v.begin(), v.end());
  };
  ExpectClose(out, as_float(out_ref), 2e-6, "lstm out");
  ExpectClose(hn, as_float(hn_ref), 2e-6, "lstm h_n");
  ExpectClose(cn, as_float(cn_ref), 2e-6, "lstm c_n");

  const auto w_out = RandomVector(out.size(), rng), w_h = RandomVector(hn.size(), rng),
             w_c = RandomVector(cn.size(), rng);
  std::vector<float> grads(lstm.num_params(), 0.0f), dx(x.size()), dh0(h0.size()), dc0(c0.size());
  lstm.Backward(ws, w_out.data(), w_h.data(), w_c.data(), dx.data(), dh0.data(), dc0.data(),
                grads.data());
  auto loss = [&]() {
    LstmForwardReference(p.data(), in, hidden, xd.data(), steps, batch, h0d.data(), c0d.data(),
                         sd.data(), out_ref.data(), hn_ref.data(), cn_ref.data());
    double l = 0;
    for (size_t k = 0; k < out_ref.size(); ++k) l += out_ref[k] * w_out[k];
    for (size_t k = 0; k < hn_ref.size(); ++k) l += hn_ref[k] * w_h[k] + cn_ref[k] * w_c[k];
    return l;
  };
  auto check = [&](std::vector<double>& var, const std::vector<float>& analytic, const char* what) {
    std::vector<float> fd(var.size());
    for (size_t k = 0; k < var.size(); ++k) {
      const double h = 1e-6, v0 = var[k];
      var[k] = v0 + h;
      const double up = loss();
      var[k] = v0 - h;
      const double down = loss();
      var[k] = v0;
      fd[k] = static_cast<float>((up - down) / (2 * h));
    }
    ExpectClose(analytic, fd, 1e-4, what);
  };
  check(p, grads, "lstm parameter gradients");
  check(xd, dx, "lstm d_x");
  check(h0d, dh0, "lstm d_h0");
  check(c0d, dc0, "lstm d_c0");
  // The reset at step 0 of sequence 2 cuts its initial state off.
  for (int j = 0; j < hidden; ++j) {
    EXPECT_EQ(dh0[2 * hidden + j], 0.0f);
    EXPECT_EQ(dc0[2 * hidden + j], 0.0f);
  }
}

// ---------------------------------------------------------------- tensor files

uint64_t TestFnv1a(const std::string& s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t k = 0; k < n; ++k) h = (h ^ static_cast<uint8_t>(s[k])) * 0x100000001b3ULL;
  return h;
}

// Rewrites the trailing checksum so a deliberately malformed body reaches the parser.
std::string Reseal(std::string bytes) {
  const uint64_t h = TestFnv1a(bytes, bytes.size() - 8);
  std::memcpy(bytes.data() + bytes.size() - 8, &h, 8);
  return bytes;
}

TensorFile SampleFile() {
  TensorFile f;
  const std::vector<float> w = {1.5f, -2.0f, 3.25f, 0.0f, -0.0f, 1e-30f};
  f.AddFloat32("pi_net.0.weight", {2, 3}, w.data());
  const double stats[2] = {0.1, 1e300};
  f.AddFloat64("obs_mean", {2}, stats);
  const int64_t step = 42;
  f.AddInt64("adam.step", {}, &step);
  f.AddFloat32("empty", {0, 4}, nullptr);
  return f;
}

TEST(TensorFile, RoundTripsThroughBytesAndDisk) {
  const TensorFile f = SampleFile();
  const std::string bytes = f.Serialize();
  EXPECT_EQ(bytes.substr(0, 8), "RLTTENSR");
  uint32_t version;
  std::memcpy(&version, bytes.data() + 8, 4);
  EXPECT_EQ(version, 1u);
  auto parsed = TensorFile::Parse(bytes, "mem");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->tensors().size(), 4u);
  const NamedTensor* w = parsed->Find("pi_net.0.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(w->f32, f.tensors()[0].f32);
  EXPECT_TRUE(std::signbit(w->f32[4]));
  EXPECT_EQ(parsed->Find("obs_mean")->f64[1], 1e300);
  EXPECT_EQ(parsed->Find("adam.step")->i64[0], 42);
  EXPECT_TRUE(parsed->Find("adam.step")->shape.empty());
  EXPECT_EQ(parsed->Find("empty")->numel(), 0);

  const rlt::testing::ScratchDir scratch("rlt_native_test_");
  const std::filesystem::path path = scratch / "tensors.bin";
  ASSERT_TRUE(f.Write(path).ok());
  auto read = TensorFile::Read(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->Serialize(), bytes);
  auto got = read->Get("pi_net.0.weight", DType::kFloat32, {2, 3}, path.string());
  EXPECT_TRUE(got.ok());
  auto wrong = read->Get("pi_net.0.weight", DType::kFloat32, {3, 2}, path.string());
  ASSERT_TRUE(IsError(wrong, Status::Code::kDataError,
                      "tensor 'pi_net.0.weight' is float32 (2, 3), expected float32 (3, 2)"));
  EXPECT_FALSE(read->Get("missing", DType::kFloat32, {1}, "f").ok());
  std::filesystem::remove(path);
  EXPECT_EQ(TensorFile::Read(path).status().code(), Status::Code::kNotFound);
}

void ExpectRejected(const std::string& bytes, const std::string& expected_fragment) {
  auto parsed = TensorFile::Parse(bytes, "bad.bin");
  ASSERT_TRUE(IsError(parsed, Status::Code::kDataError, expected_fragment));
  EXPECT_NE(parsed.status().message().find("bad.bin"), std::string::npos);
}

TEST(TensorFile, RejectsEveryKindOfCorruptFile) {
  const std::string good = SampleFile().Serialize();
  ExpectRejected("", "too short");
  std::string magic = good;
  magic[0] = 'X';
  ExpectRejected(magic, "RLTTENSR");
  std::string version = good;
  version[8] = 2;
  ExpectRejected(version, "version 2");
  for (size_t cut : {good.size() - 1, good.size() - 9, size_t{40}, size_t{25}}) {
    ExpectRejected(good.substr(0, cut), "checksum");
  }
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x10;
  ExpectRejected(flipped, "checksum");
  std::string longer = good;
  longer.push_back('x');
  ExpectRejected(longer, "checksum");
  // Structurally bad bodies with a valid checksum.
  const size_t first = 16;  // offset of the first tensor record
  std::string bad_dtype = good;
  const uint32_t name_len = 15;  // "pi_net.0.weight"
  uint32_t dtype = 9;
  std::memcpy(bad_dtype.data() + first + 4 + name_len, &dtype, 4);
  ExpectRejected(Reseal(bad_dtype), "unknown dtype 9");
  std::string bad_dim = good;
  int64_t huge = int64_t{1} << 50;
  std::memcpy(bad_dim.data() + first + 4 + name_len + 8, &huge, 8);
  ExpectRejected(Reseal(bad_dim), "absurdly large");
  std::string neg_dim = good;
  int64_t neg = -1;
  std::memcpy(neg_dim.data() + first + 4 + name_len + 8, &neg, 8);
  ExpectRejected(Reseal(neg_dim), "negative dimension");
  std::string more = good;
  uint32_t count = 5;
  std::memcpy(more.data() + 12, &count, 4);
  ExpectRejected(Reseal(more), "truncated");
  std::string fewer = good;
  count = 3;
  std::memcpy(fewer.data() + 12, &count, 4);
  ExpectRejected(Reseal(fewer), "unexpected bytes");
  TensorFile twice;
  const float one = 1.0f;
  twice.AddFloat32("a", {1}, &one);
  twice.AddFloat32("b", {1}, &one);
  std::string dup = twice.Serialize();
  dup[16 + 4] = 'a';
  dup[16 + 4 + 1 + 4 + 4 + 8 + 4 + 4] = 'a';
  ExpectRejected(Reseal(dup), "appears twice");
}

// One float32 tensor "x" of `dims` with no data, behind a valid checksum.
std::string HeaderOnlyFile(const std::vector<int64_t>& dims) {
  std::string b = "RLTTENSR";
  auto put = [&b](const auto& v) { b.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(uint32_t{1});  // version
  put(uint32_t{1});  // count
  put(uint32_t{1});  // name length
  b += 'x';
  put(uint32_t{1});  // float32
  put(static_cast<uint32_t>(dims.size()));
  for (int64_t d : dims) put(d);
  b.append(8, '\0');  // the checksum, set by Reseal
  return Reseal(b);
}

// Found by fuzz/tensor_file_fuzz: dimensions whose product wraps around 2^64 (2^32 x
// 2^32 = 0 elements) were accepted, and NamedTensor::numel() then overflowed int64.
TEST(TensorFile, RejectsDimensionsWhoseProductOverflows) {
  const int64_t two32 = int64_t{1} << 32, two40 = int64_t{1} << 40;
  ExpectRejected(HeaderOnlyFile({two32, two32}), "absurdly large");
  ExpectRejected(HeaderOnlyFile({0, two40, two40}), "absurdly large");
  ExpectRejected(HeaderOnlyFile({two40 + 1, 0}), "absurdly large");
  auto empty = TensorFile::Parse(HeaderOnlyFile({0, two40}), "empty.bin");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->tensors().at(0).numel(), 0);
}

}  // namespace
}  // namespace rlt::native

namespace rlt::native {
namespace {

// GemmSmallM on packed panels equals the double-precision reference for every row count
// up to two 8-row blocks and column counts that end inside a panel's first or second half.
TEST(GemmSmallM, MatchesTheReferenceForBothPackingsAndBetas) {
  Rng rng(17);
  for (int m : {1, 3, 8, 9, 16}) {
    for (int n : {5, 16, 37, 64}) {
      for (bool trans_b : {false, true}) {
        for (float beta : {0.0f, 1.0f, 0.5f}) {
          const int k = 19;
          std::vector<float> a(m * k), b(k * n), c(m * n), ref(m * n);
          for (float& v : a) v = static_cast<float>(rng.Normal());
          for (float& v : b) v = static_cast<float>(rng.Normal());
          for (size_t i = 0; i < c.size(); ++i) c[i] = ref[i] = static_cast<float>(rng.Normal());
          // B as given: (k, n) row-major, or its transpose (n, k) row-major.
          std::vector<float> given(b.size());
          for (int p = 0; p < k; ++p) {
            for (int j = 0; j < n; ++j) {
              given[trans_b ? j * k + p : p * n + j] = b[p * n + j];
            }
          }
          std::vector<float> packed(PackedPanelsSize(k, n), -7.0f);
          PackPanels(trans_b, k, n, given.data(), trans_b ? k : n, packed.data());
          GemmSmallM(m, n, k, a.data(), k, packed.data(), beta, c.data(), n);
          GemmReference(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, beta, ref.data(), n);
          for (int i = 0; i < m * n; ++i) {
            ASSERT_NEAR(c[i], ref[i], 1e-4f * (1.0f + std::fabs(ref[i])))
                << "m " << m << " n " << n << " trans_b " << trans_b << " beta " << beta << " at "
                << i;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace rlt::native

namespace rlt::native {
namespace {

// RecurrentActorCritic's gradients against central finite differences of its own forward
// (LibTorch autograd is the exact oracle in learn/native_oracle_test.cc; this check runs in
// the LibTorch-free sanitizer build too), for separate and shared LSTMs.
TEST(RecurrentActorCritic, GradientsMatchFiniteDifferences) {
  for (bool shared : {false, true}) {
    SCOPED_TRACE(shared ? "shared" : "separate");
    RecurrentSpec spec;
    spec.obs_dim = 3;
    spec.hidden = 5;
    spec.shared_lstm = shared;
    spec.head.discrete = false;
    spec.head.act_dim = spec.head.num_outputs = 2;
    spec.head.pi = {4};
    spec.head.vf = {4};
    spec.head.log_std_init = -0.2;
    RecurrentActorCritic net(spec, 9);
    Rng rng(4);
    const int steps = 4, batch = 2, rows = steps * batch;
    auto random = [&](size_t n, double scale) {
      std::vector<float> v(n);
      for (float& x : v) x = static_cast<float>(rng.Normal() * scale);
      return v;
    };
    const auto obs = random(rows * 3, 1.0), actions = random(rows * 2, 0.5);
    const auto h0 = random(batch * 5, 0.3), c0 = random(batch * 5, 0.3);
    const auto wv = random(rows, 1.0), wl = random(rows, 1.0), wh = random(rows, 1.0);
    std::vector<float> starts(rows, 0.0f);
    starts[2 * batch + 1] = 1.0f;
    auto loss = [&](RecurrentWorkspace& ws) {
      std::vector<float> v(rows), lp(rows), ent(rows);
      net.Evaluate(ws, obs.data(), starts.data(), steps, batch, h0.data(), c0.data(), h0.data(),
                   c0.data(), actions.data(), v.data(), lp.data(), ent.data());
      double sum = 0;
      for (int k = 0; k < rows; ++k)
        sum += double{wv[k]} * v[k] + double{wl[k]} * lp[k] + double{wh[k]} * ent[k];
      return sum;
    };
    RecurrentWorkspace ws;
    loss(ws);
    std::vector<std::vector<float>> grads;
    std::vector<float*> ptrs;
    for (int g = 0; g < net.num_groups(); ++g) grads.emplace_back(net.group_params(g).size(), 0.0f);
    for (auto& g : grads) ptrs.push_back(g.data());
    net.Backward(ws, wv.data(), wl.data(), wh.data(), ptrs);
    for (int g = 0; g < net.num_groups(); ++g) {
      std::vector<float>& p = net.group_params(g);
      for (size_t k = 0; k < p.size(); k += 7) {  // every 7th parameter of every group
        const float saved = p[k];
        const float eps = 1e-2f;
        p[k] = saved + eps;
        const double up = loss(ws);
        p[k] = saved - eps;
        const double down = loss(ws);
        p[k] = saved;
        const double numeric = (up - down) / (2.0 * eps);
        EXPECT_NEAR(grads[g][k], numeric, 2e-2 * std::fabs(numeric) + 2e-3)
            << net.group_prefix(g) << " parameter " << k;
      }
    }
  }
}

}  // namespace
}  // namespace rlt::native
