// rltrade learn: the LibTorch ActorCritic (see torch_policy.h).
#include "learn/torch_policy.h"

#include <torch/torch.h>

#include <cmath>
#include <numbers>

namespace rlt::learn {
namespace {

torch::nn::Sequential MakeMlp(int in, const std::vector<int>& widths, const std::string& activation,
                              bool ortho_init) {
  torch::nn::Sequential net;
  for (int width : widths) {
    torch::nn::Linear layer(in, width);
    if (ortho_init) {
      torch::NoGradGuard no_grad;
      torch::nn::init::orthogonal_(layer->weight, std::sqrt(2.0));
      layer->bias.zero_();
    }
    net->push_back(layer);
    if (activation == "relu") {
      net->push_back(torch::nn::ReLU());
    } else {
      net->push_back(torch::nn::Tanh());
    }
    in = width;
  }
  return net;
}

void OrthoInit(torch::nn::Linear& layer, double gain) {
  torch::NoGradGuard no_grad;
  torch::nn::init::orthogonal_(layer->weight, gain);
  layer->bias.zero_();
}

}  // namespace

ActorCriticImpl::ActorCriticImpl(int obs_dim, const env::ActionSpace& space, const PolicyOptions& o)
    : discrete_(space.discrete),
      act_dim_(space.dim),
      obs_dim_(obs_dim),
      options_(o),
      num_outputs_(space.discrete ? space.n : space.dim) {
  RLT_CHECK(obs_dim >= 1 && num_outputs_ >= 1);
  RLT_CHECK_MSG(!discrete_ || act_dim_ == 1, "Discrete actions are one float");
  // Recurrent: the towers read the LSTMs' outputs (lstm_hidden_size wide).
  const int tower_in = o.is_recurrent() ? o.lstm_hidden_size : obs_dim;
  pi_net_ = register_module("pi_net", MakeMlp(tower_in, o.pi, o.activation, o.ortho_init));
  vf_net_ = register_module("vf_net", MakeMlp(tower_in, o.vf, o.activation, o.ortho_init));
  const int pi_latent = o.pi.empty() ? tower_in : o.pi.back();
  const int vf_latent = o.vf.empty() ? tower_in : o.vf.back();
  action_net_ = register_module("action_net", torch::nn::Linear(pi_latent, num_outputs_));
  value_net_ = register_module("value_net", torch::nn::Linear(vf_latent, 1));
  if (o.ortho_init) {
    OrthoInit(action_net_, 0.01);
    OrthoInit(value_net_, 1.0);
  }
  if (!discrete_) {
    log_std_ = register_parameter("log_std", torch::full({act_dim_}, o.log_std_init));
  }
  if (o.is_recurrent()) {  // PyTorch's default LSTM initialisation U(+-1/sqrt(H)), as SB3
    lstm_actor_ = register_module(
        "lstm_actor", torch::nn::LSTM(torch::nn::LSTMOptions(obs_dim, o.lstm_hidden_size)));
    if (!o.shared_lstm) {
      lstm_critic_ = register_module(
          "lstm_critic", torch::nn::LSTM(torch::nn::LSTMOptions(obs_dim, o.lstm_hidden_size)));
    }
  }
}

torch::Tensor ActorCriticImpl::ActionHead(const torch::Tensor& obs) {
  return action_net_->forward(pi_net_->size() > 0 ? pi_net_->forward(obs) : obs);
}

torch::Tensor ActorCriticImpl::Values(const torch::Tensor& obs) {
  return value_net_->forward(vf_net_->size() > 0 ? vf_net_->forward(obs) : obs).squeeze(-1);
}

ActResult ActorCriticImpl::Act(const torch::Tensor& obs, torch::Generator* generator,
                               bool deterministic) {
  RLT_CHECK_MSG(!recurrent(), "recurrent policies run on native::RecurrentActorCritic");
  c10::InferenceMode guard;
  const c10::optional<at::Generator> gen =
      generator ? c10::optional<at::Generator>(*generator) : c10::nullopt;
  ActResult out;
  const torch::Tensor head = ActionHead(obs);
  if (discrete_) {
    torch::Tensor index;
    if (deterministic) {
      index = head.argmax(-1, /*keepdim=*/true);
    } else {
      index = at::multinomial(torch::softmax(head, -1), 1, /*replacement=*/true, gen);
    }
    out.log_probs = CategoricalLogProb(head, index.to(torch::kFloat));
    out.actions = index.to(torch::kFloat);
  } else {
    out.actions = head;
    if (!deterministic) {
      out.actions = head + log_std_.exp() * torch::randn(head.sizes(), gen, head.options());
    }
    out.log_probs = GaussianLogProb(head, log_std_, out.actions);
  }
  out.values = Values(obs);
  return out;
}

torch::Tensor ActorCriticImpl::PredictValues(const torch::Tensor& obs) {
  RLT_CHECK_MSG(!recurrent(), "recurrent policies run on native::RecurrentActorCritic");
  c10::InferenceMode guard;
  return Values(obs);
}

EvaluateResult ActorCriticImpl::Evaluate(const torch::Tensor& obs, const torch::Tensor& actions) {
  RLT_CHECK_MSG(!recurrent(), "recurrent policies run on native::RecurrentActorCritic");
  EvaluateResult out;
  const torch::Tensor head = ActionHead(obs);
  if (discrete_) {
    out.log_probs = CategoricalLogProb(head, actions);
    out.entropy = CategoricalEntropy(head);
  } else {
    out.log_probs = GaussianLogProb(head, log_std_, actions);
    out.entropy = GaussianEntropy(log_std_, obs.size(0));
  }
  out.values = Values(obs);
  return out;
}

// torch.distributions.Normal.log_prob, summed over action dimensions (SB3 sum_independent_dims).
torch::Tensor GaussianLogProb(const torch::Tensor& mean, const torch::Tensor& log_std,
                              const torch::Tensor& actions) {
  const double half_log_2pi = 0.5 * std::log(2.0 * std::numbers::pi);
  const torch::Tensor z = (actions - mean) * torch::exp(-log_std);
  return (-0.5 * z.square() - log_std - half_log_2pi).sum(-1);
}

// Normal.entropy = 0.5 + 0.5 log(2 pi) + log sigma, summed over dimensions, per sample.
torch::Tensor GaussianEntropy(const torch::Tensor& log_std, int64_t batch) {
  const double c = 0.5 + 0.5 * std::log(2.0 * std::numbers::pi);
  return (log_std + c).sum().expand({batch});
}

torch::Tensor CategoricalLogProb(const torch::Tensor& logits, const torch::Tensor& actions) {
  const torch::Tensor index = actions.reshape({-1, 1}).to(torch::kLong);
  return torch::log_softmax(logits, -1).gather(-1, index).squeeze(-1);
}

torch::Tensor CategoricalEntropy(const torch::Tensor& logits) {
  const torch::Tensor log_p = torch::log_softmax(logits, -1);
  return -(log_p.exp() * log_p).sum(-1);
}

native::TensorFile PolicyToTensorFile(ActorCritic& policy) {
  native::TensorFile file;
  for (const auto& item : policy->named_parameters()) {
    const torch::Tensor c = item.value().detach().to(torch::kFloat32).contiguous();
    file.AddFloat32(item.key(), c.sizes().vec(), c.data_ptr<float>());
  }
  return file;
}

Status LoadPolicyFromTensorFile(const native::TensorFile& file, ActorCritic& policy,
                                const std::string& origin) {
  std::vector<std::pair<torch::Tensor, const native::NamedTensor*>> found;
  for (const auto& item : policy->named_parameters()) {
    RLT_ASSIGN_OR_RETURN(
        const native::NamedTensor* t,
        file.Get(item.key(), native::DType::kFloat32, item.value().sizes().vec(), origin));
    found.emplace_back(item.value(), t);
  }
  torch::NoGradGuard no_grad;
  for (auto& [param, t] : found) {
    param.copy_(
        torch::from_blob(const_cast<float*>(t->f32.data()), param.sizes(), torch::kFloat32));
  }
  return Status::Ok();
}

}  // namespace rlt::learn
