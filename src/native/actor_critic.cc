// rltrade native: ActorCritic implementation (see actor_critic.h).
#include "native/actor_critic.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "native/dispatch.h"

namespace rlt::native {
namespace {

// Orthogonal init as torch.nn.init.orthogonal_: a Gaussian matrix, Q of its QR
// decomposition (of the transpose when rows < cols) with R's diagonal made positive, times
// gain. Modified Gram-Schmidt in double gives exactly that Q.
void Orthogonal(float* w, int rows, int cols, double gain, Rng& rng) {
  const bool transpose = rows < cols;
  const int r = transpose ? cols : rows, c = transpose ? rows : cols;  // tall: r >= c
  std::vector<double> a(static_cast<size_t>(r) * c);                   // column-major (r, c)
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      const double v = rng.Normal();
      if (transpose) {
        a[static_cast<size_t>(i) * r + j] = v;  // element (j, i) of the tall matrix
      } else {
        a[static_cast<size_t>(j) * r + i] = v;
      }
    }
  }
  for (int j = 0; j < c; ++j) {
    double* col = a.data() + static_cast<size_t>(j) * r;
    for (int p = 0; p < j; ++p) {
      const double* q = a.data() + static_cast<size_t>(p) * r;
      double dot = 0.0;
      for (int i = 0; i < r; ++i) dot += q[i] * col[i];
      for (int i = 0; i < r; ++i) col[i] -= dot * q[i];
    }
    double norm = 0.0;
    for (int i = 0; i < r; ++i) norm += col[i] * col[i];
    norm = std::sqrt(norm);
    for (int i = 0; i < r; ++i) col[i] /= norm;
  }
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      const double q =
          transpose ? a[static_cast<size_t>(i) * r + j] : a[static_cast<size_t>(j) * r + i];
      w[static_cast<size_t>(i) * cols + j] = static_cast<float>(gain * q);
    }
  }
}

const double kHalfLog2Pi = 0.5 * std::log(2.0 * std::numbers::pi);

}  // namespace

Status ValidateSpec(const ActorCriticSpec& s) {
  if (s.obs_dim < 1) return Status::InvalidArgument("native policy: obs_dim must be >= 1");
  if (s.num_outputs < 1) return Status::InvalidArgument("native policy: no action outputs");
  if (s.discrete ? s.act_dim != 1 : s.act_dim != s.num_outputs) {
    return Status::InvalidArgument(
        "native policy: Discrete actions are one float; Box "
        "act_dim must equal num_outputs");
  }
  for (int w : s.pi) {
    if (w < 1) return Status::InvalidArgument("[policy] pi: layer widths must be >= 1");
  }
  for (int w : s.vf) {
    if (w < 1) return Status::InvalidArgument("[policy] vf: layer widths must be >= 1");
  }
  return Status::Ok();
}

int64_t ActorCritic::AddParam(const std::string& name, std::vector<int64_t> shape) {
  ParamInfo p;
  p.name = name;
  p.shape = std::move(shape);
  p.size = 1;
  for (int64_t d : p.shape) p.size *= d;
  p.offset = param_info_.empty() ? 0 : param_info_.back().offset + param_info_.back().size;
  param_info_.push_back(p);
  return p.offset;
}

ActorCritic::ActorCritic(const ActorCriticSpec& spec, uint64_t seed) : spec_(spec) {
  RLT_CHECK_MSG(ValidateSpec(spec).ok(), ValidateSpec(spec).ToString());
  // Parameter order = learn::ActorCritic's named_parameters(): own parameter first, then
  // the submodules in registration order.
  if (!spec.discrete) log_std_ = AddParam("log_std", {spec.act_dim});
  auto tower = [&](const std::string& prefix, const std::vector<int>& widths) {
    std::vector<Layer> layers;
    int in = spec.obs_dim;
    for (size_t l = 0; l < widths.size(); ++l) {
      // Sequential children: Linear at even indices, the activation after each.
      const std::string base = prefix + "." + std::to_string(2 * l) + ".";
      Layer layer;
      layer.in = in;
      layer.out = widths[l];
      layer.w = AddParam(base + "weight", {widths[l], in});
      layer.b = AddParam(base + "bias", {widths[l]});
      layers.push_back(layer);
      in = widths[l];
    }
    return layers;
  };
  pi_ = tower("pi_net", spec.pi);
  vf_ = tower("vf_net", spec.vf);
  const int pi_latent = spec.pi.empty() ? spec.obs_dim : spec.pi.back();
  const int vf_latent = spec.vf.empty() ? spec.obs_dim : spec.vf.back();
  action_head_ = {pi_latent, spec.num_outputs, 0, 0};
  action_head_.w = AddParam("action_net.weight", {spec.num_outputs, pi_latent});
  action_head_.b = AddParam("action_net.bias", {spec.num_outputs});
  value_head_ = {vf_latent, 1, 0, 0};
  value_head_.w = AddParam("value_net.weight", {1, vf_latent});
  value_head_.b = AddParam("value_net.bias", {1});
  const int64_t total = param_info_.back().offset + param_info_.back().size;
  params_.assign(total, 0.0f);
  grads_.assign(total, 0.0f);
  Initialise(seed);
}

void ActorCritic::Initialise(uint64_t seed) {
  Rng rng(seed);
  auto init = [&](const Layer& layer, double gain) {
    float* w = params_.data() + layer.w;
    float* b = params_.data() + layer.b;
    if (spec_.ortho_init) {
      Orthogonal(w, layer.out, layer.in, gain, rng);
      std::fill(b, b + layer.out, 0.0f);
    } else {  // PyTorch Linear default: kaiming_uniform(a = sqrt 5) = U(+-1/sqrt(in)), same bias
      const double bound = 1.0 / std::sqrt(static_cast<double>(layer.in));
      for (int64_t k = 0; k < static_cast<int64_t>(layer.out) * layer.in; ++k) {
        w[k] = static_cast<float>(rng.Uniform(-bound, bound));
      }
      for (int o = 0; o < layer.out; ++o) b[o] = static_cast<float>(rng.Uniform(-bound, bound));
    }
  };
  for (const Layer& l : pi_) init(l, std::sqrt(2.0));
  for (const Layer& l : vf_) init(l, std::sqrt(2.0));
  init(action_head_, 0.01);
  init(value_head_, 1.0);
  if (log_std_ >= 0) {
    std::fill(params_.begin() + log_std_, params_.begin() + log_std_ + spec_.act_dim,
              static_cast<float>(spec_.log_std_init));
  }
}

const ParamInfo* ActorCritic::FindParam(const std::string& name) const {
  for (const ParamInfo& p : param_info_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

void ActorCritic::SaveParameters(TensorFile& file, const std::string& prefix) const {
  for (const ParamInfo& p : param_info_) {
    file.AddFloat32(prefix + p.name, p.shape, params_.data() + p.offset);
  }
}

Status ActorCritic::LoadParameters(const TensorFile& file, const std::string& origin,
                                   const std::string& prefix) {
  std::vector<const NamedTensor*> found;
  for (const ParamInfo& p : param_info_) {
    RLT_ASSIGN_OR_RETURN(const NamedTensor* t,
                         file.Get(prefix + p.name, DType::kFloat32, p.shape, origin));
    found.push_back(t);
  }
  for (size_t k = 0; k < found.size(); ++k) {
    std::copy(found[k]->f32.begin(), found[k]->f32.end(), params_.begin() + param_info_[k].offset);
  }
  return Status::Ok();
}

void ActorCritic::Reserve(ActorCriticWorkspace& ws, int batch) const {
  if (batch <= ws.capacity) return;
  const size_t b = static_cast<size_t>(batch);
  int widest = std::max({spec_.obs_dim, spec_.num_outputs, 1});
  ws.pi_out.resize(pi_.size());
  ws.vf_out.resize(vf_.size());
  for (size_t l = 0; l < pi_.size(); ++l) {
    ws.pi_out[l].assign(b * pi_[l].out, 0.0f);
    widest = std::max(widest, pi_[l].out);
  }
  for (size_t l = 0; l < vf_.size(); ++l) {
    ws.vf_out[l].assign(b * vf_[l].out, 0.0f);
    widest = std::max(widest, vf_[l].out);
  }
  ws.head.assign(b * spec_.num_outputs, 0.0f);
  ws.dist.assign(b * spec_.num_outputs, 0.0f);
  ws.values.assign(b, 0.0f);
  ws.d_a.assign(b * widest, 0.0f);
  ws.d_b.assign(b * widest, 0.0f);
  ws.d_head.assign(b * spec_.num_outputs, 0.0f);
  ws.capacity = batch;
}

const float* ActorCritic::TowerForward(const std::vector<Layer>& tower, const float* x, int batch,
                                       std::vector<std::vector<float>>& outs) const {
  for (size_t l = 0; l < tower.size(); ++l) {
    const Layer& layer = tower[l];
    float* y = outs[l].data();
    LinearForward(y, x, params_.data() + layer.w, params_.data() + layer.b, batch, layer.in,
                  layer.out);
    ActivationForward(spec_.activation, y, static_cast<int64_t>(batch) * layer.out);
    x = y;
  }
  return x;
}

void ActorCritic::ActionHeadForward(ActorCriticWorkspace& ws, const float* obs, int batch) {
  Reserve(ws, batch);
  const float* pi_latent = TowerForward(pi_, obs, batch, ws.pi_out);
  LinearForward(ws.head.data(), pi_latent, params_.data() + action_head_.w,
                params_.data() + action_head_.b, batch, action_head_.in, action_head_.out);
}

void ActorCritic::ValueForward(ActorCriticWorkspace& ws, const float* obs, int batch,
                               float* values) {
  Reserve(ws, batch);
  const float* vf_latent = TowerForward(vf_, obs, batch, ws.vf_out);
  LinearForward(values, vf_latent, params_.data() + value_head_.w, params_.data() + value_head_.b,
                batch, value_head_.in, 1);
}

void ActorCritic::PredictValues(const float* obs, int batch, float* values) {
  ValueForward(inference_ws_, obs, batch, values);
}

void ActorCritic::Act(const float* obs, int batch, Rng* rng, bool deterministic, float* actions,
                      float* values, float* log_probs, bool rng_per_row) {
  SampleActions(obs, batch, rng, deterministic, actions, log_probs, rng_per_row);
  PredictValues(obs, batch, values);
}

void ActorCritic::ActSplit(const float* pi_in, const float* vf_in, int batch, Rng* rng,
                           bool deterministic, float* actions, float* values, float* log_probs) {
  SampleActions(pi_in, batch, rng, deterministic, actions, log_probs);
  PredictValues(vf_in, batch, values);
}

void ActorCritic::Act(WorkerPool& pool, const float* obs, int batch, Rng* rng, bool deterministic,
                      float* actions, float* values, float* log_probs, bool rng_per_row) {
  if (pool.num_workers() < 2) {
    Act(obs, batch, rng, deterministic, actions, values, log_probs, rng_per_row);
    return;
  }
  pool.Run([&](int w) {
    if (w == 0) SampleActions(obs, batch, rng, deterministic, actions, log_probs, rng_per_row);
    if (w == 1) ValueForward(value_ws_, obs, batch, values);
  });
}

void ActorCritic::PredictValuesConcurrent(const float* vf_in, int batch, float* values) {
  ValueForward(value_ws_, vf_in, batch, values);
}

void ActorCritic::SampleActions(const float* obs, int batch, Rng* rng, bool deterministic,
                                float* actions, float* log_probs, bool rng_per_row) {
  RLT_CHECK(deterministic || rng != nullptr);
  ActorCriticWorkspace& ws = inference_ws_;
  ActionHeadForward(ws, obs, batch);
  const int n = spec_.num_outputs;
  if (spec_.discrete) {
    LogSoftmax(ws.head.data(), batch, n, ws.dist.data());
    for (int i = 0; i < batch; ++i) {
      const float* lp = ws.dist.data() + static_cast<size_t>(i) * n;
      int pick = 0;
      if (deterministic) {  // argmax, first maximum (torch.argmax)
        for (int k = 1; k < n; ++k) {
          if (ws.head[static_cast<size_t>(i) * n + k] > ws.head[static_cast<size_t>(i) * n + pick])
            pick = k;
        }
      } else {  // inverse CDF of the softmax
        const double u = (rng_per_row ? rng[i] : *rng).Uniform();
        double cdf = 0.0;
        pick = n - 1;
        for (int k = 0; k < n; ++k) {
          cdf += std::exp(static_cast<double>(lp[k]));
          if (u < cdf) {
            pick = k;
            break;
          }
        }
      }
      actions[i] = static_cast<float>(pick);
      log_probs[i] = lp[pick];
    }
  } else {
    const float* log_std = params_.data() + log_std_;
    for (int i = 0; i < batch; ++i) {
      for (int j = 0; j < n; ++j) {
        const float mean = ws.head[static_cast<size_t>(i) * n + j];
        actions[static_cast<size_t>(i) * n + j] =
            deterministic ? mean
                          : mean + std::exp(log_std[j]) *
                                       static_cast<float>((rng_per_row ? rng[i] : *rng).Normal());
      }
    }
    GaussianLogProb(ws.head.data(), log_std, actions, batch, n, log_probs, nullptr);
  }
}

void ActorCritic::Evaluate(ActorCriticWorkspace& ws, const float* obs, const float* actions,
                           int batch, float* values, float* log_probs, float* entropy) {
  EvaluateSplit(ws, obs, obs, actions, batch, values, log_probs, entropy);
}

void ActorCritic::EvaluateSplit(ActorCriticWorkspace& ws, const float* pi_in, const float* vf_in,
                                const float* actions, int batch, float* values, float* log_probs,
                                float* entropy) {
  EvaluatePolicy(ws, pi_in, actions, batch, log_probs, entropy);
  EvaluateValue(ws, vf_in, batch, values);
}

void ActorCritic::EvaluatePolicy(ActorCriticWorkspace& ws, const float* pi_in, const float* actions,
                                 int batch, float* log_probs, float* entropy) {
  ws.obs = pi_in;
  ws.actions = actions;
  ws.batch = batch;
  ActionHeadForward(ws, pi_in, batch);
  const int n = spec_.num_outputs;
  if (spec_.discrete) {
    LogSoftmax(ws.head.data(), batch, n, ws.dist.data());
    for (int i = 0; i < batch; ++i) {
      const float* lp = ws.dist.data() + static_cast<size_t>(i) * n;
      log_probs[i] = lp[static_cast<int>(actions[i])];
      float h = 0.0f;
      for (int k = 0; k < n; ++k) h -= std::exp(lp[k]) * lp[k];
      entropy[i] = h;
    }
  } else {
    const float* log_std = params_.data() + log_std_;
    GaussianLogProb(ws.head.data(), log_std, actions, batch, n, log_probs, ws.dist.data());
    const float h = GaussianEntropy(log_std, n);
    std::fill(entropy, entropy + batch, h);
  }
}

void ActorCritic::EvaluateValue(ActorCriticWorkspace& ws, const float* vf_in, int batch,
                                float* values) {
  ws.vf_in = vf_in;
  ws.batch = batch;
  ValueForward(ws, vf_in, batch, values);
}

void ActorCritic::TowerBackward(const std::vector<Layer>& tower, const float* x, int batch,
                                std::vector<std::vector<float>>& outs, float* d, float* scratch,
                                float* grads, float* dx) const {
  for (int l = static_cast<int>(tower.size()) - 1; l >= 0; --l) {
    const Layer& layer = tower[l];
    ActivationBackward(spec_.activation, d, outs[l].data(),
                       static_cast<int64_t>(batch) * layer.out);
    const float* input = l == 0 ? x : outs[l - 1].data();
    LinearBackward(l == 0 ? dx : scratch, grads + layer.w, grads + layer.b, d, input,
                   params_.data() + layer.w, batch, layer.in, layer.out);
    std::swap(d, scratch);
  }
}

void ActorCritic::Backward(ActorCriticWorkspace& ws, const float* d_values,
                           const float* d_log_probs, const float* d_entropy, float* grads) {
  BackwardSplit(ws, d_values, d_log_probs, d_entropy, grads, nullptr, nullptr);
}

void ActorCritic::BackwardSplit(ActorCriticWorkspace& ws, const float* d_values,
                                const float* d_log_probs, const float* d_entropy, float* grads,
                                float* d_pi_in, float* d_vf_in) {
  BackwardPolicy(ws, d_log_probs, d_entropy, grads, d_pi_in);
  BackwardValue(ws, d_values, grads, d_vf_in);
}

void ActorCritic::BackwardPolicy(ActorCriticWorkspace& ws, const float* d_log_probs,
                                 const float* d_entropy, float* grads, float* d_pi_in) {
  const int batch = ws.batch, n = spec_.num_outputs;
  RLT_CHECK(batch > 0 && batch <= ws.capacity);
  float* d_head = ws.d_head.data();
  if (spec_.discrete) {
    // lp = log_p[a]: d logit_k = dlp (1[k = a] - p_k); H = -sum p log p:
    // d logit_k = -dH p_k (log p_k + H).
    for (int i = 0; i < batch; ++i) {
      const float* lp = ws.dist.data() + static_cast<size_t>(i) * n;
      float h = 0.0f;
      for (int k = 0; k < n; ++k) h -= std::exp(lp[k]) * lp[k];
      const int a = static_cast<int>(ws.actions[i]);
      for (int k = 0; k < n; ++k) {
        const float p = std::exp(lp[k]);
        d_head[static_cast<size_t>(i) * n + k] =
            d_log_probs[i] * ((k == a ? 1.0f : 0.0f) - p) - d_entropy[i] * p * (lp[k] + h);
      }
    }
  } else {
    // lp = sum_j -z_j^2 / 2 - log_std_j - c, z = (a - mean) exp(-log_std):
    // d mean_j = dlp z_j exp(-log_std_j);  d log_std_j = dlp (z_j^2 - 1) + dH.
    const float* log_std = params_.data() + log_std_;
    float* g_log_std = grads + log_std_;
    for (int j = 0; j < n; ++j) {
      const float inv_std = std::exp(-log_std[j]);
      float g = 0.0f;
      for (int i = 0; i < batch; ++i) {
        const float z = ws.dist[static_cast<size_t>(i) * n + j];
        d_head[static_cast<size_t>(i) * n + j] = d_log_probs[i] * z * inv_std;
        g += d_log_probs[i] * (z * z - 1.0f) + d_entropy[i];
      }
      g_log_std[j] += g;
    }
  }
  const int pi_width = action_head_.in;
  const float* pi_latent = pi_.empty() ? ws.obs : ws.pi_out.back().data();
  LinearBackward(pi_.empty() ? d_pi_in : ws.d_a.data(), grads + action_head_.w,
                 grads + action_head_.b, d_head, pi_latent, params_.data() + action_head_.w, batch,
                 pi_width, n);
  if (!pi_.empty()) {
    TowerBackward(pi_, ws.obs, batch, ws.pi_out, ws.d_a.data(), ws.d_b.data(), grads, d_pi_in);
  }
}

void ActorCritic::BackwardValue(ActorCriticWorkspace& ws, const float* d_values, float* grads,
                                float* d_vf_in) {
  const int batch = ws.batch;
  RLT_CHECK(batch > 0 && batch <= ws.capacity);
  const float* vf_latent = vf_.empty() ? ws.vf_in : ws.vf_out.back().data();
  LinearBackward(vf_.empty() ? d_vf_in : ws.d_a.data(), grads + value_head_.w,
                 grads + value_head_.b, d_values, vf_latent, params_.data() + value_head_.w, batch,
                 value_head_.in, 1);
  if (!vf_.empty()) {
    TowerBackward(vf_, ws.vf_in, batch, ws.vf_out, ws.d_a.data(), ws.d_b.data(), grads, d_vf_in);
  }
}

RLT_KERNEL_CLONES
void GaussianLogProb(const float* mean, const float* log_std, const float* actions, int batch,
                     int dim, float* log_probs, float* z_out) {
  const float c = static_cast<float>(kHalfLog2Pi);
  for (int i = 0; i < batch; ++i) {
    float sum = 0.0f;
    for (int j = 0; j < dim; ++j) {
      const size_t k = static_cast<size_t>(i) * dim + j;
      const float z = (actions[k] - mean[k]) * std::exp(-log_std[j]);
      if (z_out != nullptr) z_out[k] = z;
      sum += -0.5f * z * z - log_std[j] - c;
    }
    log_probs[i] = sum;
  }
}

float GaussianEntropy(const float* log_std, int dim) {
  const float c = static_cast<float>(0.5 + kHalfLog2Pi);
  float sum = 0.0f;
  for (int j = 0; j < dim; ++j) sum += log_std[j] + c;
  return sum;
}

RLT_KERNEL_CLONES
void LogSoftmax(const float* logits, int batch, int n, float* log_p) {
  for (int i = 0; i < batch; ++i) {
    const float* row = logits + static_cast<size_t>(i) * n;
    float m = row[0];
    for (int k = 1; k < n; ++k) m = std::max(m, row[k]);
    float s = 0.0f;
    for (int k = 0; k < n; ++k) s += std::exp(row[k] - m);
    const float lse = m + std::log(s);
    for (int k = 0; k < n; ++k) log_p[static_cast<size_t>(i) * n + k] = row[k] - lse;
  }
}

}  // namespace rlt::native
