// LibTorch autograd as the oracle of the native engine (src/native/): with the same
// parameters copied into both, the forward outputs, the PPO loss terms, EVERY parameter
// gradient, the clipped gradient norm and one Adam step of native::ActorCritic equal
// learn::ActorCritic + learn::ComputePpoLoss + torch::optim::Adam, and native::Lstm equals
// torch::nn::LSTM stepped one step at a time with resets inside the sequence.
//
// Tolerance: every element within 1e-5 relative, |native - torch| <= 1e-5 (|torch| +
// max |torch| over the tensor): the second term covers elements that are sums of
// cancelling float32 terms, whose rounding depends on summation order.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "core/rng.h"
#include "learn/policy.h"
#include "learn/ppo.h"
#include "native/actor_critic.h"
#include "native/adam.h"
#include "native/lstm.h"
#include "native/ppo_loss.h"

namespace rlt::learn {
namespace {

constexpr double kRtol = 1e-5;

std::vector<float> RandomVector(size_t n, Rng& rng, double scale = 1.0) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.Normal() * scale);
  return v;
}

torch::Tensor View(const float* data, const std::vector<int64_t>& shape) {
  return torch::from_blob(const_cast<float*>(data), shape, torch::kFloat32);
}

// Largest |native - torch| / (|torch| + max |torch|), asserted <= kRtol.
void ExpectMatches(const float* native, const torch::Tensor& oracle, const std::string& what) {
  const torch::Tensor t = oracle.detach().contiguous().to(torch::kFloat32).reshape({-1});
  const float* o = t.data_ptr<float>();
  double scale = 0;
  for (int64_t k = 0; k < t.numel(); ++k) scale = std::max(scale, std::fabs(double{o[k]}));
  double worst = 0;
  int64_t worst_k = 0;
  for (int64_t k = 0; k < t.numel(); ++k) {
    const double err = std::fabs(double{native[k]} - o[k]) / (std::fabs(double{o[k]}) + scale);
    if (err > worst) {
      worst = err;
      worst_k = k;
    }
  }
  EXPECT_LE(worst, kRtol) << what << ": element " << worst_k << " native " << native[worst_k]
                          << " torch " << o[worst_k];
  EXPECT_GT(scale, 0.0) << what << " is all zero: the comparison would prove nothing";
}

void ExpectScalar(double native, double oracle, const std::string& what) {
  EXPECT_NEAR(native, oracle, kRtol * std::fabs(oracle) + 1e-7) << what;
}

// Copies the native parameters into the LibTorch module by name; every torch parameter
// must have a native counterpart of the same shape and vice versa.
void CopyParameters(const native::ActorCritic& net, ActorCritic& policy) {
  torch::NoGradGuard no_grad;
  size_t count = 0;
  for (auto& item : policy->named_parameters()) {
    const native::ParamInfo* p = net.FindParam(item.key());
    ASSERT_NE(p, nullptr) << item.key();
    ASSERT_EQ(item.value().sizes().vec(), p->shape) << item.key();
    item.value().copy_(View(net.params().data() + p->offset, p->shape));
    ++count;
  }
  EXPECT_EQ(count, net.param_info().size());
}

struct Architecture {
  int obs_dim;
  bool discrete;
  int outputs;  // Box dim or Discrete n
  std::vector<int> hidden;
  std::string activation;
  int batch;
  double clip_range_vf;
};

void CompareOneMinibatch(const Architecture& a, uint64_t seed) {
  SCOPED_TRACE("obs " + std::to_string(a.obs_dim) + " outputs " + std::to_string(a.outputs) +
               (a.discrete ? " Discrete " : " Box ") + a.activation + " batch " +
               std::to_string(a.batch));
  Rng rng(seed);
  native::ActorCriticSpec spec;
  spec.obs_dim = a.obs_dim;
  spec.discrete = a.discrete;
  spec.act_dim = a.discrete ? 1 : a.outputs;
  spec.num_outputs = a.outputs;
  spec.pi = spec.vf = a.hidden;
  spec.activation = a.activation == "relu" ? native::Activation::kRelu : native::Activation::kTanh;
  spec.log_std_init = -0.5;
  native::ActorCritic net(spec, seed);
  // Away from SB3's 0.01 head init, so that every gradient is sizeable.
  for (float& p : net.params()) p += static_cast<float>(rng.Normal() * 0.05);

  PolicyOptions options;
  options.pi = options.vf = a.hidden;
  options.activation = a.activation;
  env::ActionSpace space;
  space.discrete = a.discrete;
  space.dim = a.discrete ? 1 : a.outputs;
  space.n = a.discrete ? a.outputs : 0;
  space.low.assign(space.dim, -1.0f);
  space.high.assign(space.dim, 1.0f);
  ActorCritic policy(a.obs_dim, space, options);
  CopyParameters(net, policy);

  const int b = a.batch;
  const auto obs = RandomVector(static_cast<size_t>(b) * a.obs_dim, rng);
  std::vector<float> actions(static_cast<size_t>(b) * spec.act_dim);
  for (float& x : actions) {
    x = a.discrete ? static_cast<float>(rng.UniformInt(a.outputs))
                   : static_cast<float>(rng.Normal());
  }
  // Inference: deterministic actions, their log-probabilities and the values.
  {
    std::vector<float> act(actions.size()), values(b), log_probs(b), values2(b);
    net.Act(obs.data(), b, nullptr, /*deterministic=*/true, act.data(), values.data(),
            log_probs.data());
    const ActResult ref = policy->Act(View(obs.data(), {b, a.obs_dim}), nullptr, true);
    ExpectMatches(act.data(), ref.actions, "deterministic actions");
    ExpectMatches(values.data(), ref.values, "Act values");
    ExpectMatches(log_probs.data(), ref.log_probs, "Act log_probs");
    net.PredictValues(obs.data(), b, values2.data());
    ExpectMatches(values2.data(), policy->PredictValues(View(obs.data(), {b, a.obs_dim})),
                  "PredictValues");
  }
  // Update: evaluation of stored actions, the loss, every gradient.
  std::vector<float> values(b), log_probs(b), entropy(b);
  native::ActorCriticWorkspace ws;
  net.Evaluate(ws, obs.data(), actions.data(), b, values.data(), log_probs.data(), entropy.data());
  std::vector<float> old_values(b), old_log_probs(b);
  for (int i = 0; i < b; ++i) {
    old_values[i] = values[i] + static_cast<float>(rng.Uniform(-0.4, 0.4));
    old_log_probs[i] = log_probs[i] + static_cast<float>(rng.Uniform(-0.3, 0.3));
  }
  const auto advantages = RandomVector(b, rng, 3.0), returns = RandomVector(b, rng);
  const native::PpoLossSettings ns{0.2, a.clip_range_vf, 0.01, 0.5, true};
  std::vector<float> dv(b), dlp(b), dent(b);
  const native::PpoLossTerms terms =
      native::PpoLoss(b,
                      {values.data(), log_probs.data(), entropy.data(), old_values.data(),
                       old_log_probs.data(), advantages.data(), returns.data()},
                      ns, dv.data(), dlp.data(), dent.data());
  std::fill(net.grads().begin(), net.grads().end(), 0.0f);
  net.Backward(ws, dv.data(), dlp.data(), dent.data(), net.grads().data());

  const torch::Tensor t_obs = View(obs.data(), {b, a.obs_dim});
  const EvaluateResult eval = policy->Evaluate(t_obs, View(actions.data(), {b, spec.act_dim}));
  ExpectMatches(values.data(), eval.values, "Evaluate values");
  ExpectMatches(log_probs.data(), eval.log_probs, "Evaluate log_probs");
  ExpectMatches(entropy.data(), eval.entropy, "Evaluate entropy");
  Minibatch mb{t_obs,
               View(actions.data(), {b, spec.act_dim}),
               View(old_values.data(), {b}),
               View(old_log_probs.data(), {b}),
               View(advantages.data(), {b}),
               View(returns.data(), {b})};
  const PpoLoss loss = ComputePpoLoss(eval, mb, {0.2, a.clip_range_vf, 0.01, 0.5, true});
  ExpectScalar(terms.loss, loss.loss.item<double>(), "loss");
  ExpectScalar(terms.policy_loss, loss.policy_loss.item<double>(), "policy_loss");
  ExpectScalar(terms.value_loss, loss.value_loss.item<double>(), "value_loss");
  ExpectScalar(terms.entropy_loss, loss.entropy_loss.item<double>(), "entropy_loss");
  ExpectScalar(terms.approx_kl, loss.approx_kl, "approx_kl");
  EXPECT_EQ(terms.clip_fraction, loss.clip_fraction);
  EXPECT_GT(terms.clip_fraction, 0.0);  // the clipped branch of the surrogate is exercised
  policy->zero_grad();
  loss.loss.backward();
  for (const auto& item : policy->named_parameters()) {
    const native::ParamInfo* p = net.FindParam(item.key());
    ExpectMatches(net.grads().data() + p->offset, item.value().grad(), "grad " + item.key());
  }
  // Gradient clipping (forced to clip) and one Adam step.
  const double max_norm = 0.5 * ClipGradNorm(policy->parameters(), 1e30);
  const double native_norm = native::ClipGradNorm(net.grads().data(), net.num_params(), max_norm);
  ExpectScalar(native_norm, 2 * max_norm, "gradient norm");
  ClipGradNorm(policy->parameters(), max_norm);
  for (const auto& item : policy->named_parameters()) {
    const native::ParamInfo* p = net.FindParam(item.key());
    ExpectMatches(net.grads().data() + p->offset, item.value().grad(),
                  "clipped grad " + item.key());
  }
  torch::optim::Adam adam(policy->parameters(), torch::optim::AdamOptions(1e-3).eps(1e-5));
  adam.step();
  native::AdamOptions no;
  no.lr = 1e-3;
  native::Adam native_adam(net.num_params(), no);
  native_adam.Step(net.params().data(), net.grads().data());
  for (const auto& item : policy->named_parameters()) {
    const native::ParamInfo* p = net.FindParam(item.key());
    ExpectMatches(net.params().data() + p->offset, item.value(), "after Adam " + item.key());
  }
}

TEST(NativeOracle, MlpForwardGradientsAndAdamMatchLibTorch) {
  const std::vector<Architecture> archs = {
      {8, false, 1, {64, 64}, "tanh", 64, 0.0},            // the demo's shape, act_dim 1
      {8, false, 3, {64, 64}, "tanh", 64, 0.2},            // act_dim 3, value clipping
      {147, false, 1, {64, 64}, "tanh", 256, 0.0},         // intraday demo inputs
      {4, true, 2, {64, 64}, "tanh", 64, 0.0},             // CartPole
      {5, true, 3, {32}, "relu", 64, 0.0},                 // relu, Discrete n = 3
      {147, false, 1, {512, 256, 128}, "tanh", 128, 0.0},  // intraday_original's nets
      {6, true, 4, {}, "tanh", 16, 0.1},                   // no hidden layers
  };
  uint64_t seed = 100;
  for (const Architecture& a : archs) CompareOneMinibatch(a, seed++);
}

TEST(NativeOracle, LstmWithResetsMatchesTorchLstmSteppedOneStepAtATime) {
  Rng rng(5);
  const int in = 7, hidden = 16, steps = 9, batch = 5;
  native::Lstm lstm(in, hidden, 3);
  torch::nn::LSTM ref(torch::nn::LSTMOptions(in, hidden));
  {
    torch::NoGradGuard no_grad;
    for (auto& item : ref->named_parameters()) {
      const native::ParamInfo* p = nullptr;
      for (const auto& info : lstm.param_info()) {
        if (info.name == item.key()) p = &info;
      }
      ASSERT_NE(p, nullptr) << item.key();
      ASSERT_EQ(item.value().sizes().vec(), p->shape);
      item.value().copy_(View(lstm.params().data() + p->offset, p->shape));
    }
  }
  const auto x = RandomVector(static_cast<size_t>(steps) * batch * in, rng);
  const auto h0 = RandomVector(batch * hidden, rng, 0.5), c0 = RandomVector(batch * hidden, rng);
  std::vector<float> starts(steps * batch, 0.0f);
  starts[0 * batch + 1] = 1.0f;
  starts[3 * batch + 0] = 1.0f;
  starts[3 * batch + 4] = 1.0f;
  starts[7 * batch + 2] = 1.0f;
  std::vector<float> out(steps * batch * hidden), hn(batch * hidden), cn(batch * hidden);
  native::LstmWorkspace ws;
  lstm.Forward(ws, x.data(), steps, batch, h0.data(), c0.data(), starts.data(), out.data(),
               hn.data(), cn.data());
  const auto w_out = RandomVector(out.size(), rng), w_h = RandomVector(hn.size(), rng),
             w_c = RandomVector(cn.size(), rng);
  std::vector<float> grads(lstm.num_params(), 0.0f), dx(x.size()), dh0(h0.size()), dc0(c0.size());
  lstm.Backward(ws, w_out.data(), w_h.data(), w_c.data(), dx.data(), dh0.data(), dc0.data(),
                grads.data());

  const torch::Tensor tx = View(x.data(), {steps, batch, in}).clone().requires_grad_(true);
  const torch::Tensor th0 = View(h0.data(), {1, batch, hidden}).clone().requires_grad_(true);
  const torch::Tensor tc0 = View(c0.data(), {1, batch, hidden}).clone().requires_grad_(true);
  const torch::Tensor keep = 1 - View(starts.data(), {steps, 1, batch, 1});
  torch::Tensor h = th0, c = tc0;
  std::vector<torch::Tensor> outs;
  for (int t = 0; t < steps; ++t) {
    h = h * keep[t];
    c = c * keep[t];
    auto [o, state] = ref->forward(tx.slice(0, t, t + 1), std::make_tuple(h, c));
    std::tie(h, c) = state;
    outs.push_back(o);
  }
  const torch::Tensor t_out = torch::cat(outs, 0);
  ExpectMatches(out.data(), t_out, "lstm output");
  ExpectMatches(hn.data(), h, "lstm h_n");
  ExpectMatches(cn.data(), c, "lstm c_n");
  const torch::Tensor loss = (t_out * View(w_out.data(), {steps, batch, hidden})).sum() +
                             (h * View(w_h.data(), {1, batch, hidden})).sum() +
                             (c * View(w_c.data(), {1, batch, hidden})).sum();
  loss.backward();
  for (const auto& item : ref->named_parameters()) {
    for (const auto& info : lstm.param_info()) {
      if (info.name == item.key()) {
        ExpectMatches(grads.data() + info.offset, item.value().grad(), "grad " + item.key());
      }
    }
  }
  ExpectMatches(dx.data(), tx.grad(), "lstm d_x");
  ExpectMatches(dh0.data(), th0.grad(), "lstm d_h0");
  ExpectMatches(dc0.data(), tc0.grad(), "lstm d_c0");
}

}  // namespace
}  // namespace rlt::learn
