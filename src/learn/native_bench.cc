// Native engine vs LibTorch: the time of one PPO minibatch update (evaluate the stored
// actions, PPO loss, backward, global-norm clipping, Adam step), on the shapes the configs
// use. Single-threaded (both OpenBLAS and LibTorch's intra-op pool set to 1 thread).
//   BM_Update{Native,Torch}/<obs>/<hidden width>/<layers>/<discrete n or 0>/<batch>
// CartPole: 4 obs, 64-64, Discrete 2, batch 64.  Intraday demo: 147 obs, 64-64, Box 1,
// batch 64 / 256 / 2048.  intraday_original: 147 obs, 512-256-128, Box 1, batch 1024.
// items/s = samples per second through the update.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <vector>

#include "core/rng.h"
#include "learn/torch_policy.h"
#include "learn/torch_ppo.h"
#include "learn/trainer.h"
#include "native/actor_critic.h"
#include "native/adam.h"
#include "native/gemm.h"
#include "native/ppo_loss.h"

namespace rlt::learn {
namespace {

struct Shape {
  int obs_dim, n;  // n: Discrete actions, 0 = Box(1)
  std::vector<int> hidden;
  int batch;
};

Shape ShapeFrom(const benchmark::State& state) {
  Shape s;
  s.obs_dim = static_cast<int>(state.range(0));
  const int width = static_cast<int>(state.range(1));
  const int layers = static_cast<int>(state.range(2));
  s.n = static_cast<int>(state.range(3));
  s.batch = static_cast<int>(state.range(4));
  if (layers == 3) {
    s.hidden = {width, width / 2, width / 4};
  } else {
    s.hidden.assign(layers, width);
  }
  return s;
}

struct Data {
  std::vector<float> obs, actions, old_values, old_log_probs, advantages, returns;
};

Data MakeData(const Shape& s) {
  Rng rng(1);
  Data d;
  auto fill = [&](std::vector<float>& v, size_t n) {
    v.resize(n);
    for (float& x : v) x = static_cast<float>(rng.Normal());
  };
  fill(d.obs, static_cast<size_t>(s.batch) * s.obs_dim);
  fill(d.actions, s.batch);
  if (s.n > 0) {
    for (float& a : d.actions) a = static_cast<float>(rng.UniformInt(s.n));
  }
  fill(d.old_values, s.batch);
  fill(d.old_log_probs, s.batch);
  for (float& x : d.old_log_probs) x = -1.0f + 0.1f * x;
  fill(d.advantages, s.batch);
  fill(d.returns, s.batch);
  return d;
}

void BM_UpdateNative(benchmark::State& state) {
  SetComputeThreads(1);
  const Shape s = ShapeFrom(state);
  native::ActorCriticSpec spec;
  spec.obs_dim = s.obs_dim;
  spec.discrete = s.n > 0;
  spec.num_outputs = s.n > 0 ? s.n : 1;
  spec.pi = spec.vf = s.hidden;
  native::ActorCritic net(spec, 0);
  native::Adam adam(net.num_params(), native::AdamOptions{});
  native::ActorCriticWorkspace ws;
  const Data d = MakeData(s);
  const int b = s.batch;
  std::vector<float> values(b), log_probs(b), entropy(b), dv(b), dlp(b), dent(b);
  for (auto _ : state) {
    net.Evaluate(ws, d.obs.data(), d.actions.data(), b, values.data(), log_probs.data(),
                 entropy.data());
    const native::PpoLossTerms t =
        native::PpoLoss(b,
                        {values.data(), log_probs.data(), entropy.data(), d.old_values.data(),
                         d.old_log_probs.data(), d.advantages.data(), d.returns.data()},
                        native::PpoLossSettings{}, dv.data(), dlp.data(), dent.data());
    benchmark::DoNotOptimize(t);
    std::fill(net.grads().begin(), net.grads().end(), 0.0f);
    net.Backward(ws, dv.data(), dlp.data(), dent.data(), net.grads().data());
    native::ClipGradNorm(net.grads().data(), net.num_params(), 0.5);
    adam.Step(net.params().data(), net.grads().data());
  }
  state.SetItemsProcessed(state.iterations() * b);
}

void BM_UpdateTorch(benchmark::State& state) {
  SetComputeThreads(1);
  const Shape s = ShapeFrom(state);
  PolicyOptions options;
  options.pi = options.vf = s.hidden;
  env::ActionSpace space;
  space.discrete = s.n > 0;
  space.n = s.n;
  space.low = {-1.0f};
  space.high = {1.0f};
  ActorCritic policy(s.obs_dim, space, options);
  torch::optim::Adam adam(policy->parameters(), torch::optim::AdamOptions(3e-4).eps(1e-5));
  Data d = MakeData(s);
  const int b = s.batch;
  auto view = [](std::vector<float>& v, std::vector<int64_t> shape) {
    return torch::from_blob(v.data(), shape, torch::kFloat32);
  };
  Minibatch mb{view(d.obs, {b, s.obs_dim}), view(d.actions, {b, 1}), view(d.old_values, {b}),
               view(d.old_log_probs, {b}),  view(d.advantages, {b}), view(d.returns, {b})};
  const std::vector<torch::Tensor> params = policy->parameters();
  for (auto _ : state) {
    // The body of learn::PpoUpdate's minibatch loop, without the gather.
    const EvaluateResult eval = policy->Evaluate(mb.obs, mb.actions);
    const PpoLoss loss = ComputePpoLoss(eval, mb, PpoLossSettings{});
    benchmark::DoNotOptimize(loss.policy_loss.item<double>() + loss.value_loss.item<double>() +
                             loss.entropy_loss.item<double>() + loss.loss.item<double>());
    adam.zero_grad();
    loss.loss.backward();
    ClipGradNorm(params, 0.5);
    adam.step();
  }
  state.SetItemsProcessed(state.iterations() * b);
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"obs", "width", "layers", "n", "batch"});
  b->Args({4, 64, 2, 2, 64});       // CartPole
  b->Args({147, 64, 2, 0, 64});     // intraday demo net, batch 64
  b->Args({147, 64, 2, 0, 256});    // batch 256
  b->Args({147, 64, 2, 0, 2048});   // intraday_ppo.toml's batch_size
  b->Args({147, 512, 3, 0, 1024});  // intraday_original.toml
  b->Unit(benchmark::kMicrosecond);
}

// The two Gemm kernels on the layer shapes above: where cblas_sgemm's call cost pays off
// (native/gemm.h kSgemmMinWork). Args: m, n, k, trans_a, trans_b, blas.
void BM_Gemm(benchmark::State& state) {
  SetComputeThreads(1);
  const int m = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1));
  const int k = static_cast<int>(state.range(2));
  const bool ta = state.range(3) != 0, tb = state.range(4) != 0, blas = state.range(5) != 0;
  std::vector<float> a(static_cast<size_t>(m) * k, 0.5f), b(static_cast<size_t>(k) * n, 0.25f),
      c(static_cast<size_t>(m) * n, 0.0f);
  const int lda = ta ? m : k, ldb = tb ? k : n;
  for (auto _ : state) {
    if (blas) {
      native::GemmBlas(ta, tb, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, 1.0f, c.data(), n);
    } else {
      native::GemmLoops(ta, tb, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, 1.0f, c.data(), n);
    }
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * m * n * k * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
void GemmShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k", "ta", "tb", "blas"});
  for (int blas : {0, 1}) {
    b->Args({64, 64, 4, 0, 1, blas});     // forward, CartPole first layer
    b->Args({64, 64, 64, 0, 1, blas});    // forward, hidden layer
    b->Args({64, 64, 147, 0, 1, blas});   // forward, intraday first layer
    b->Args({64, 1, 64, 0, 1, blas});     // forward, value head
    b->Args({64, 64, 64, 1, 0, blas});    // dW = dY^T X
    b->Args({64, 147, 64, 1, 0, blas});   // dW, intraday first layer
    b->Args({64, 64, 64, 0, 0, blas});    // dX = dY W
    b->Args({256, 64, 147, 0, 1, blas});  // forward, batch 256
    b->Args({1, 64, 4, 0, 1, blas});      // one-env inference (cartpole_sb3_defaults)
    b->Args({1, 64, 64, 0, 1, blas});
    b->Args({1, 2, 64, 0, 1, blas});
    b->Args({8, 64, 4, 0, 1, blas});
  }
  b->Unit(benchmark::kMicrosecond);
}

// One recurrent step's products (LSTM hidden 256, B sequences): gates (B, 1024) = h (B, 256)
// W_hh^T and dh (B, 256) = d_gates (B, 1024) W_hh, by cblas_sgemm (which packs W_hh on
// every call) and by GemmSmallM on W_hh packed once (native/gemm.h; an LSTM packs once per
// sequence batch). Args: B, which (0 forward, 1 backward), small (1 = GemmSmallM).
void BM_LstmStepGemm(benchmark::State& state) {
  SetComputeThreads(1);
  const int m = static_cast<int>(state.range(0)), hidden = 256, gates = 4 * hidden;
  const bool backward = state.range(1) != 0, small = state.range(2) != 0;
  const int n = backward ? hidden : gates, k = backward ? gates : hidden;
  std::vector<float> a(static_cast<size_t>(m) * k, 0.5f), w(static_cast<size_t>(k) * n, 0.25f),
      c(static_cast<size_t>(m) * n, 0.0f), packed(native::PackedPanelsSize(k, n));
  native::PackPanels(!backward, k, n, w.data(), backward ? n : k, packed.data());  // once
  for (auto _ : state) {
    if (small) {
      native::GemmSmallM(m, n, k, a.data(), k, packed.data(), 1.0f, c.data(), n);
    } else if (backward) {
      native::GemmBlas(false, false, m, n, k, 1.0f, a.data(), k, w.data(), n, 1.0f, c.data(), n);
    } else {  // the forward product as the LSTM had it: h W_hh^T with W_hh (4H, H)
      native::GemmBlas(false, true, m, n, k, 1.0f, a.data(), k, w.data(), k, 1.0f, c.data(), n);
    }
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * m * n * k * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
void LstmStepShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"B", "backward", "small"});
  for (int m : {1, 8, 16, 32}) {
    for (int backward : {0, 1}) {
      for (int small : {0, 1}) b->Args({m, backward, small});
    }
  }
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_Gemm)->Apply(GemmShapes);
BENCHMARK(BM_LstmStepGemm)->Apply(LstmStepShapes);
BENCHMARK(BM_UpdateNative)->Apply(Shapes);
BENCHMARK(BM_UpdateTorch)->Apply(Shapes);

}  // namespace
}  // namespace rlt::learn

BENCHMARK_MAIN();
