// LibTorch autograd as the oracle of the native engine (src/native/): with the same
// parameters copied into both, the forward outputs, the PPO loss terms, EVERY parameter
// gradient, the clipped gradient norm and one Adam step of native::ActorCritic equal
// learn::ActorCritic + learn::ComputePpoLoss + torch::optim::Adam, and native::Lstm equals
// torch::nn::LSTM stepped one step at a time with resets inside the sequence, and the
// recurrent actor-critic's sequence-batched forward and gradients equal the LibTorch
// module (learn::ActorCritic with recurrent = "lstm") stepped one step at a time.
//
// Tolerance: every element within 1e-5 relative, |native - torch| <= 1e-5 (|torch| +
// max |torch| over the tensor): the second term covers elements that are sums of
// cancelling float32 terms, whose rounding depends on summation order.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "core/rng.h"
#include "learn/recurrent_learner.h"
#include "learn/torch_policy.h"
#include "learn/torch_ppo.h"
#include "native/actor_critic.h"
#include "native/adam.h"
#include "native/lstm.h"
#include "native/ppo_loss.h"
#include "native/recurrent_actor_critic.h"

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

// The recurrent actor-critic over B sequences of T steps (episode starts inside them,
// random initial states) against the LibTorch module stepped one step at a time, for a
// loss L = sum(w_v values + w_lp log_probs + w_h entropy) with random weights.
struct RecurrentCase {
  bool discrete;
  int n;  // Box: act_dim; Discrete: actions
  bool shared;
  std::vector<int> net;
};

void CompareRecurrent(const RecurrentCase& rc, uint64_t seed) {
  SCOPED_TRACE(std::string(rc.discrete ? "discrete" : "box") + (rc.shared ? " shared" : ""));
  Rng rng(seed);
  const int obs_dim = 5, hidden = 12, steps = 7, batch = 3, rows = steps * batch;
  env::ActionSpace space;
  space.discrete = rc.discrete;
  space.dim = rc.discrete ? 1 : rc.n;
  space.n = rc.discrete ? rc.n : 0;
  space.low.assign(space.dim, -1.0f);
  space.high.assign(space.dim, 1.0f);
  PolicyOptions o;
  o.pi = rc.net;
  o.vf = rc.net;
  o.recurrent = "lstm";
  o.lstm_hidden_size = hidden;
  o.shared_lstm = rc.shared;
  o.log_std_init = -0.3;
  torch::manual_seed(seed);
  ActorCritic torch_policy(obs_dim, space, o);
  native::RecurrentActorCritic net(MakeRecurrentSpec(obs_dim, space, o), seed);
  {
    torch::NoGradGuard no_grad;
    int count = 0;
    for (auto& item : torch_policy->named_parameters()) {
      int g = 0;
      const native::ParamInfo* p = nullptr;
      ASSERT_TRUE(net.FindParam(item.key(), &g, &p)) << item.key();
      ASSERT_EQ(item.value().sizes().vec(), p->shape) << item.key();
      std::copy_n(item.value().contiguous().data_ptr<float>(), p->size,
                  net.group_params(g).begin() + p->offset);
      ++count;
    }
    int native_count = 0;
    for (int g = 0; g < net.num_groups(); ++g) native_count += net.group_info(g).size();
    ASSERT_EQ(count, native_count) << "every native tensor has a LibTorch twin";
  }
  const auto obs = RandomVector(static_cast<size_t>(rows) * obs_dim, rng);
  std::vector<float> starts(rows, 0.0f);
  starts[2 * batch + 1] = 1.0f;
  starts[5 * batch + 0] = 1.0f;
  starts[0 * batch + 2] = 1.0f;
  std::vector<float> actions(static_cast<size_t>(rows) * space.dim);
  for (size_t k = 0; k < actions.size(); ++k) {
    actions[k] = rc.discrete ? static_cast<float>(rng.UniformInt(rc.n))
                             : static_cast<float>(rng.Normal() * 0.7);
  }
  const size_t state = static_cast<size_t>(batch) * hidden;
  const auto h0p = RandomVector(state, rng, 0.5), c0p = RandomVector(state, rng, 0.5);
  const auto h0v = RandomVector(state, rng, 0.5), c0v = RandomVector(state, rng, 0.5);
  std::vector<float> values(rows), log_probs(rows), entropy(rows);
  native::RecurrentWorkspace ws;
  net.Evaluate(ws, obs.data(), starts.data(), steps, batch, h0p.data(), c0p.data(), h0v.data(),
               c0v.data(), actions.data(), values.data(), log_probs.data(), entropy.data());
  const auto wv = RandomVector(rows, rng), wl = RandomVector(rows, rng),
             wh = RandomVector(rows, rng);
  std::vector<std::vector<float>> grads;
  std::vector<float*> grad_ptrs;
  for (int g = 0; g < net.num_groups(); ++g) grads.emplace_back(net.group_params(g).size(), 0.0f);
  for (auto& g : grads) grad_ptrs.push_back(g.data());
  net.Backward(ws, wv.data(), wl.data(), wh.data(), grad_ptrs);

  // The same with the actor and critic halves on two workers: bit for bit.
  {
    WorkerPool pool(2);
    native::RecurrentWorkspace ws2;
    std::vector<float> v2(rows), lp2(rows), e2(rows);
    net.Evaluate(ws2, obs.data(), starts.data(), steps, batch, h0p.data(), c0p.data(), h0v.data(),
                 c0v.data(), actions.data(), v2.data(), lp2.data(), e2.data(), &pool);
    std::vector<std::vector<float>> g2;
    std::vector<float*> p2;
    for (int g = 0; g < net.num_groups(); ++g) g2.emplace_back(net.group_params(g).size(), 0.0f);
    for (auto& g : g2) p2.push_back(g.data());
    net.Backward(ws2, wv.data(), wl.data(), wh.data(), p2, &pool);
    EXPECT_EQ(v2, values);
    EXPECT_EQ(lp2, log_probs);
    EXPECT_EQ(g2, grads);
  }

  // LibTorch, one step at a time.
  auto step_lstm = [&](torch::nn::LSTM& lstm, const torch::Tensor& x, torch::Tensor& h,
                       torch::Tensor& c) {
    auto [out, st] = lstm->forward(x.unsqueeze(0), std::make_tuple(h, c));
    std::tie(h, c) = st;
    return out.squeeze(0);
  };
  const torch::Tensor tobs = View(obs.data(), {steps, batch, obs_dim});
  const torch::Tensor keep = 1 - View(starts.data(), {steps, 1, batch, 1});
  torch::Tensor hp = View(h0p.data(), {1, batch, hidden}).clone();
  torch::Tensor cp = View(c0p.data(), {1, batch, hidden}).clone();
  torch::Tensor hv = View(h0v.data(), {1, batch, hidden}).clone();
  torch::Tensor cv = View(c0v.data(), {1, batch, hidden}).clone();
  std::vector<torch::Tensor> t_values, t_lp, t_ent;
  for (int t = 0; t < steps; ++t) {
    hp = hp * keep[t];
    cp = cp * keep[t];
    const torch::Tensor pi_in = step_lstm(torch_policy->lstm_actor(), tobs[t], hp, cp);
    torch::Tensor vf_in = pi_in;
    if (!rc.shared) {
      hv = hv * keep[t];
      cv = cv * keep[t];
      vf_in = step_lstm(torch_policy->lstm_critic(), tobs[t], hv, cv);
    }
    const torch::Tensor pi_latent =
        torch_policy->pi_net()->size() > 0 ? torch_policy->pi_net()->forward(pi_in) : pi_in;
    const torch::Tensor vf_latent =
        torch_policy->vf_net()->size() > 0 ? torch_policy->vf_net()->forward(vf_in) : vf_in;
    const torch::Tensor head = torch_policy->action_net()->forward(pi_latent);
    const torch::Tensor a =
        View(actions.data() + static_cast<size_t>(t) * batch * space.dim, {batch, space.dim});
    if (rc.discrete) {
      t_lp.push_back(CategoricalLogProb(head, a));
      t_ent.push_back(CategoricalEntropy(head));
    } else {
      t_lp.push_back(GaussianLogProb(head, torch_policy->log_std(), a));
      t_ent.push_back(GaussianEntropy(torch_policy->log_std(), batch));
    }
    t_values.push_back(torch_policy->value_net()->forward(vf_latent).squeeze(-1));
  }
  const torch::Tensor tv = torch::cat(t_values), tl = torch::cat(t_lp), te = torch::cat(t_ent);
  ExpectMatches(values.data(), tv, "values");
  ExpectMatches(log_probs.data(), tl, "log_probs");
  ExpectMatches(entropy.data(), te, "entropy");
  const torch::Tensor loss = (tv * View(wv.data(), {rows})).sum() +
                             (tl * View(wl.data(), {rows})).sum() +
                             (te * View(wh.data(), {rows})).sum();
  loss.backward();
  for (const auto& item : torch_policy->named_parameters()) {
    int g = 0;
    const native::ParamInfo* p = nullptr;
    ASSERT_TRUE(net.FindParam(item.key(), &g, &p));
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    ExpectMatches(grads[g].data() + p->offset, item.value().grad(), "grad " + item.key());
  }
}

TEST(NativeOracle, RecurrentActorCriticSequencesMatchTorchSteppedOneStepAtATime) {
  const std::vector<RecurrentCase> cases = {
      {false, 2, false, {16, 8}},  // Box, separate actor and critic LSTMs
      {true, 3, true, {8}},        // Discrete, one shared LSTM
      {false, 1, false, {}},       // heads straight on the LSTM outputs
  };
  uint64_t seed = 300;
  for (const RecurrentCase& rc : cases) CompareRecurrent(rc, seed++);
}

// The rollout (Act, one step at a time, states carried and reset at episode starts)
// computes the function training evaluates over the whole sequence from the same initial
// state: the log-probabilities of the sampled actions and the values agree.
TEST(NativeOracle, RecurrentRolloutStepsEqualTheSequenceForward) {
  Rng rng(11);
  const int obs_dim = 4, hidden = 10, steps = 9, n = 3;
  env::ActionSpace space;
  space.dim = 2;
  space.low.assign(2, -1.0f);
  space.high.assign(2, 1.0f);
  PolicyOptions o;
  o.recurrent = "lstm";
  o.lstm_hidden_size = hidden;
  o.pi = {8};
  o.vf = {8};
  native::RecurrentActorCritic net(MakeRecurrentSpec(obs_dim, space, o), 21);
  native::RecurrentState state;
  state.Resize(n, hidden, false);
  for (float& v : state.h_pi) v = static_cast<float>(rng.Normal() * 0.3);
  for (float& v : state.c_vf) v = static_cast<float>(rng.Normal() * 0.3);
  const native::RecurrentState initial = state;
  const auto obs = RandomVector(static_cast<size_t>(steps) * n * obs_dim, rng);
  std::vector<float> starts(steps * n, 0.0f);
  starts[4 * n + 1] = 1.0f;
  starts[6 * n + 2] = 1.0f;
  std::vector<float> actions(steps * n * 2), values(steps * n), log_probs(steps * n);
  Rng sampler(5);
  WorkerPool pool(2);
  for (int t = 0; t < steps; ++t) {
    const size_t r = static_cast<size_t>(t) * n;
    net.Act(pool, obs.data() + r * obs_dim, n, starts.data() + r, state, &sampler, false,
            actions.data() + r * 2, values.data() + r, log_probs.data() + r);
  }
  std::vector<float> v(steps * n), lp(steps * n), ent(steps * n);
  native::RecurrentWorkspace ws;
  net.Evaluate(ws, obs.data(), starts.data(), steps, n, initial.h_pi.data(), initial.c_pi.data(),
               initial.h_vf.data(), initial.c_vf.data(), actions.data(), v.data(), lp.data(),
               ent.data());
  for (int k = 0; k < steps * n; ++k) {
    EXPECT_NEAR(v[k], values[k], 1e-5 * (1 + std::fabs(values[k]))) << k;
    EXPECT_NEAR(lp[k], log_probs[k], 1e-5 * (1 + std::fabs(log_probs[k]))) << k;
  }
}

}  // namespace
}  // namespace rlt::learn
