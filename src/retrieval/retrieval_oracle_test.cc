// LibTorch as the oracle of the retrieval trainer's native parts: the GRU (both
// directions of torch::nn::GRU(bidirectional)), the whole query tower (GRU or LSTM, mean
// over time, Linear, F.normalize) with every parameter gradient, the MLP document tower,
// and one AdamW step against torch::optim::AdamW. Parameters are copied from ours into torch's
// modules.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "native/adam.h"
#include "native/gru.h"
#include "retrieval/doc_tower.h"
#include "retrieval/query_tower.h"

namespace rlt {
namespace {

void ExpectClose(const float* ours, const torch::Tensor& oracle, const std::string& what,
                 double tol = 2e-5) {
  const torch::Tensor t = oracle.detach().contiguous().to(torch::kFloat32).reshape({-1});
  const float* o = t.data_ptr<float>();
  double scale = 0;
  for (int64_t k = 0; k < t.numel(); ++k) scale = std::max(scale, std::fabs(double{o[k]}));
  for (int64_t k = 0; k < t.numel(); ++k) {
    ASSERT_NEAR(ours[k], o[k], tol * (scale + std::fabs(double{o[k]}))) << what << "[" << k << "]";
  }
}

torch::Tensor FromVector(const std::vector<float>& v, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32).clone();
}

TEST(RetrievalOracle, BidirectionalGruOutputsAndGradientsMatchLibTorch) {
  torch::manual_seed(0);
  const int in = 7, H = 6, T = 5, B = 4;
  native::Gru fwd(in, H, 1, false), bwd(in, H, 2, true);
  torch::nn::GRU gru(torch::nn::GRUOptions(in, H).bidirectional(true));
  {
    torch::NoGradGuard no_grad;
    for (auto* dir : {&fwd, &bwd}) {
      for (const auto& p : dir->param_info()) {
        gru->named_parameters()[p.name].copy_(
            torch::from_blob(dir->params().data() + p.offset, p.shape, torch::kFloat32));
      }
    }
  }
  Rng rng(3);
  std::vector<float> x(static_cast<size_t>(T) * B * in), w(static_cast<size_t>(T) * B * 2 * H);
  for (float& v : x) v = static_cast<float>(rng.Normal());
  for (float& v : w) v = static_cast<float>(rng.Normal());
  // Ours: both directions into one (T, B, 2H) buffer.
  std::vector<float> out(w.size()), dx(x.size(), 0.0f);
  std::vector<float> gf(fwd.num_params(), 0.0f), gb(bwd.num_params(), 0.0f);
  native::GruWorkspace wf, wb;
  fwd.Forward(wf, x.data(), T, B, nullptr, out.data(), 2 * H, nullptr);
  bwd.Forward(wb, x.data(), T, B, nullptr, out.data() + H, 2 * H, nullptr);
  fwd.Backward(wf, w.data(), 2 * H, nullptr, dx.data(), false, nullptr, gf.data());
  bwd.Backward(wb, w.data() + H, 2 * H, nullptr, dx.data(), true, nullptr, gb.data());
  // Torch: the same loss sum(out * w).
  torch::Tensor xt = FromVector(x, {T, B, in}).requires_grad_(true);
  auto [yt, hn] = gru->forward(xt);
  (yt * FromVector(w, {T, B, 2 * H})).sum().backward();
  ExpectClose(out.data(), yt, "output");
  ExpectClose(dx.data(), xt.grad(), "d_x");
  for (auto* dir : {&fwd, &bwd}) {
    const std::vector<float>& g = dir == &fwd ? gf : gb;
    for (const auto& p : dir->param_info()) {
      ExpectClose(g.data() + p.offset, gru->named_parameters()[p.name].grad(), "grad " + p.name);
    }
  }
}

TEST(RetrievalOracle, QueryTowerAndAdamWMatchLibTorch) {
  for (const std::string cell : {"gru", "lstm"}) {
    torch::manual_seed(0);
    const int D = 9, H = 5, T = 4, B = 3;
    retrieval::QueryTower tower(D, H, 11, cell);
    torch::nn::GRU gru(torch::nn::GRUOptions(D, H).bidirectional(true).batch_first(true));
    torch::nn::LSTM lstm(torch::nn::LSTMOptions(D, H).bidirectional(true).batch_first(true));
    torch::nn::Linear head(2 * H, D);
    auto torch_param = [&](const std::string& name) -> torch::Tensor {
      if (name.rfind("gru.", 0) == 0) return gru->named_parameters()[name.substr(4)];
      if (name.rfind("lstm.", 0) == 0) return lstm->named_parameters()[name.substr(5)];
      return head->named_parameters()[name.substr(5)];
    };
    {
      torch::NoGradGuard no_grad;
      for (const retrieval::TowerParam& p : tower.Params()) {
        torch_param(p.name).copy_(torch::from_blob(p.value, p.shape, torch::kFloat32));
      }
    }
    Rng rng(4);
    std::vector<float> x(static_cast<size_t>(B) * T * D), w(static_cast<size_t>(B) * D);
    for (float& v : x) v = static_cast<float>(rng.Normal());
    for (float& v : w) v = static_cast<float>(rng.Normal());
    std::vector<float> q(w.size());
    tower.ZeroGrads();
    tower.Forward(x.data(), B, T, q.data(), 2);
    tower.Backward(w.data(), 2);
    torch::Tensor xt = FromVector(x, {B, T, D});
    torch::Tensor seq =
        cell == "gru" ? std::get<0>(gru->forward(xt)) : std::get<0>(lstm->forward(xt));
    torch::Tensor qt = torch::nn::functional::normalize(
        head->forward(seq.mean(1)), torch::nn::functional::NormalizeFuncOptions().dim(1));
    (qt * FromVector(w, {B, D})).sum().backward();
    ExpectClose(q.data(), qt, cell + " q");
    for (const retrieval::TowerParam& p : tower.Params()) {
      ExpectClose(p.grad, torch_param(p.name).grad(), cell + " grad " + p.name);
    }
    if (cell != "gru") continue;
    // One AdamW step on our gradients (lr 1e-2, weight decay 0.1, eps 1e-8): torch's
    // gradients differ in the last bits, which a first Adam step (about lr * sign(g))
    // would magnify for gradients near zero.
    std::vector<torch::Tensor> params;
    for (const retrieval::TowerParam& p : tower.Params()) {
      torch::Tensor t = torch_param(p.name);
      {
        torch::NoGradGuard no_grad;
        t.grad().copy_(torch::from_blob(p.grad, p.shape, torch::kFloat32));
      }
      params.push_back(t);
    }
    torch::optim::AdamW opt(params, torch::optim::AdamWOptions(1e-2).weight_decay(0.1).eps(1e-8));
    opt.step();
    native::AdamOptions o;
    o.lr = 1e-2;
    o.weight_decay = 0.1;
    o.eps = 1e-8;
    for (const retrieval::TowerParam& p : tower.Params()) {
      native::Adam adam(p.size, o);
      adam.Step(p.value, p.grad);
      ExpectClose(p.value, torch_param(p.name), "after AdamW " + p.name, 1e-6);
    }
  }
}

TEST(RetrievalOracle, MlpDocumentTowerMatchesLibTorch) {
  const int D = 8, Hd = 5, N = 6;
  retrieval::DocTower tower(D, Hd, 2);
  Rng rng(6);
  std::vector<retrieval::TowerParam> params = tower.Params();
  // Off the zero start of W2 and b2, so every path carries a gradient.
  for (int j : {2, 3}) {
    for (int64_t k = 0; k < params[j].size; ++k) params[j].value[k] = 0.3f * rng.Normal();
  }
  torch::nn::Linear fc1(D, Hd), fc2(Hd, D);
  auto torch_param = [&](const std::string& name) -> torch::Tensor {
    torch::nn::Linear& layer = name.rfind("doc.fc1.", 0) == 0 ? fc1 : fc2;
    return layer->named_parameters()[name.substr(8)];
  };
  {
    torch::NoGradGuard no_grad;
    for (const retrieval::TowerParam& p : params) {
      torch_param(p.name).copy_(torch::from_blob(p.value, p.shape, torch::kFloat32));
    }
  }
  std::vector<float> v(static_cast<size_t>(N) * D), w(v.size()), e(v.size());
  for (float& x : v) x = static_cast<float>(rng.Normal());
  for (float& x : w) x = static_cast<float>(rng.Normal());
  tower.ZeroGrads();
  tower.Forward(v.data(), N, e.data());
  tower.Backward(w.data());
  torch::Tensor vt = FromVector(v, {N, D});
  torch::Tensor et =
      torch::nn::functional::normalize(vt + fc2->forward(torch::relu(fc1->forward(vt))),
                                       torch::nn::functional::NormalizeFuncOptions().dim(1));
  (et * FromVector(w, {N, D})).sum().backward();
  ExpectClose(e.data(), et, "e");
  for (const retrieval::TowerParam& p : params) {
    ExpectClose(p.grad, torch_param(p.name).grad(), "grad " + p.name);
  }
}

}  // namespace
}  // namespace rlt
