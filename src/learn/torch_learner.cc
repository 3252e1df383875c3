// rltrade learn: TorchLearner (see torch_learner.h).
#include "learn/torch_learner.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "learn/torch_error.h"
#include "learn/torch_ppo.h"
#include "learn/trainer.h"

namespace rlt::learn {
namespace {

std::string AdamKey(const torch::Tensor& p) {
  return c10::guts::to_string(p.unsafeGetTensorImpl());
}

// Copies a (B) or (B, k) float tensor into `out`.
void CopyOut(const torch::Tensor& t, float* out) {
  const torch::Tensor c = t.contiguous();
  std::memcpy(out, c.data_ptr<float>(), sizeof(float) * c.numel());
}

void AddTensor(native::TensorFile& file, const std::string& name, const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kFloat32).contiguous();
  file.AddFloat32(name, c.sizes().vec(), c.data_ptr<float>());
}

torch::Tensor View(const native::NamedTensor& t) {
  return torch::from_blob(const_cast<float*>(t.f32.data()), t.shape, torch::kFloat32);
}

}  // namespace

LearnerState ExportTorchState(ActorCritic& policy, torch::optim::Adam& optimizer) {
  torch::NoGradGuard no_grad;
  LearnerState s;
  auto& state = optimizer.state();
  for (const auto& item : policy->named_parameters()) {
    AddTensor(s.params, item.key(), item.value());
    auto it = state.find(AdamKey(item.value()));
    if (it == state.end()) continue;
    auto& a = static_cast<torch::optim::AdamParamState&>(*it->second);
    AddTensor(s.exp_avg, item.key(), a.exp_avg());
    AddTensor(s.exp_avg_sq, item.key(), a.exp_avg_sq());
    s.adam_step = std::max(s.adam_step, a.step());
  }
  if (s.adam_step == 0) s.exp_avg = s.exp_avg_sq = native::TensorFile();
  s.lr = static_cast<const torch::optim::AdamOptions&>(optimizer.param_groups().front().options())
             .lr();
  return s;
}

Status ImportTorchState(const LearnerState& s, ActorCritic& policy, torch::optim::Adam& optimizer,
                        const std::string& origin) {
  struct Found {
    torch::Tensor param;
    const native::NamedTensor *value, *m, *v;
  };
  std::vector<Found> found;
  for (const auto& item : policy->named_parameters()) {
    const std::vector<int64_t> shape = item.value().sizes().vec();
    Found f{item.value(), nullptr, nullptr, nullptr};
    RLT_ASSIGN_OR_RETURN(f.value, s.params.Get(item.key(), native::DType::kFloat32, shape, origin));
    if (s.adam_step > 0) {
      RLT_ASSIGN_OR_RETURN(f.m, s.exp_avg.Get(item.key(), native::DType::kFloat32, shape,
                                              origin + " (Adam exp_avg)"));
      RLT_ASSIGN_OR_RETURN(f.v, s.exp_avg_sq.Get(item.key(), native::DType::kFloat32, shape,
                                                 origin + " (Adam exp_avg_sq)"));
    }
    found.push_back(f);
  }
  torch::NoGradGuard no_grad;
  auto& state = optimizer.state();
  for (Found& f : found) {
    f.param.copy_(View(*f.value));
    const std::string key = AdamKey(f.param);
    if (s.adam_step == 0) {
      state.erase(key);
      continue;
    }
    auto a = std::make_unique<torch::optim::AdamParamState>();
    a->step(s.adam_step);
    a->exp_avg(View(*f.m).clone());
    a->exp_avg_sq(View(*f.v).clone());
    state[key] = std::move(a);
  }
  SetLearningRate(optimizer, s.lr);
  return Status::Ok();
}

TorchLearner::TorchLearner(int obs_dim, const env::ActionSpace& space, const PolicyOptions& options,
                           const LearnerState& initial, uint64_t seed)
    : obs_dim_(obs_dim), generator_(at::detail::createCPUGenerator(seed)) {
  RLT_CHECK(!options.is_recurrent());
  // The module's own initialisation draws from LibTorch's global generator; its values are
  // overwritten by `initial` right away.
  policy_ = ActorCritic(obs_dim, space, options);
  optimizer_ = std::make_unique<torch::optim::Adam>(
      policy_->parameters(), torch::optim::AdamOptions(initial.lr).eps(1e-5));
  const Status st = ImportTorchState(initial, policy_, *optimizer_, "the initial parameters");
  RLT_CHECK_MSG(st.ok(), st.message());
}

void TorchLearner::Act(int, const float* obs, int n, const float*, float* actions, float* values,
                       float* log_probs) {
  const torch::Tensor x = torch::from_blob(const_cast<float*>(obs), {n, obs_dim_});
  const ActResult act = policy_->Act(x, &generator_);
  CopyOut(act.actions, actions);
  CopyOut(act.values, values);
  CopyOut(act.log_probs, log_probs);
}

void TorchLearner::PredictValues(const float* obs, const int*, int k, const float*, float* values) {
  CopyOut(policy_->PredictValues(torch::from_blob(const_cast<float*>(obs), {k, obs_dim_})), values);
}

UpdateStats TorchLearner::Update(RolloutBuffer& buffer, const PpoOptions& options,
                                 const PpoLossSettings& settings, double lr, UpdateTiming* timing) {
  SetLearningRate(*optimizer_, lr);
  return PpoUpdate(policy_, *optimizer_, buffer, options, settings, generator_, timing);
}

LearnerState TorchLearner::ExportState() const {
  return ExportTorchState(const_cast<ActorCritic&>(policy_), *optimizer_);
}

Status TorchLearner::ImportState(const LearnerState& s, const std::string& origin) {
  return ImportTorchState(s, policy_, *optimizer_, origin);
}

double TorchLearner::MeanStd() const {
  if (policy_->discrete()) return 0.0;
  torch::NoGradGuard no_grad;
  return policy_->log_std().exp().mean().item<double>();
}

std::vector<int64_t> TorchLearner::RngWords() const {
  const torch::Tensor bytes = generator_.get_state().contiguous();
  const int64_t n = bytes.numel();
  std::vector<int64_t> words(1 + (n + 7) / 8, 0);
  words[0] = n;
  std::memcpy(words.data() + 1, bytes.data_ptr<uint8_t>(), n);
  return words;
}

Status TorchLearner::SetRngWords(const std::vector<int64_t>& words, const std::string& origin) {
  const int64_t n = words.empty() ? -1 : words[0];
  if (n < 0 || static_cast<int64_t>(words.size()) != 1 + (n + 7) / 8) {
    return Status::DataError(origin +
                             ": the LibTorch generator's state is malformed (a checkpoint of "
                             "another backend?)");
  }
  torch::Tensor bytes = torch::empty({n}, torch::kUInt8);
  std::memcpy(bytes.data_ptr<uint8_t>(), words.data() + 1, n);
  try {
    generator_.set_state(bytes);
  } catch (const std::exception& e) {
    return Status::DataError(origin + ": " + TorchErrorMessage(e));
  }
  return Status::Ok();
}

std::string TorchLearner::FirstNonFinite(bool grads) const {
  torch::NoGradGuard no_grad;
  for (const auto& item : policy_->named_parameters()) {
    const torch::Tensor& t = grads ? item.value().grad() : item.value();
    if (t.defined() && !torch::isfinite(t).all().item<bool>()) return item.key();
  }
  return "";
}

void TorchLearner::PoisonFirstParameter() {
  torch::NoGradGuard no_grad;
  policy_->parameters().front().fill_(NAN);
}

uint64_t TorchLearner::ParamHash() const {
  uint64_t h = kFnvOffset;
  for (const auto& p : policy_->parameters()) {
    const torch::Tensor c = p.detach().contiguous();
    h = HashFloats(h, c.data_ptr<float>(), static_cast<size_t>(c.numel()));
  }
  return h;
}

void SetTorchThreads(int intra_op) {
  at::set_num_threads(intra_op);
  try {
    at::set_num_interop_threads(1);  // rltrade issues no inter-op (async) work
  } catch (const std::exception&) {
    // Only allowed once, before any inter-op work; later calls keep the first setting.
  }
}

std::unique_ptr<Learner> MakeTorchLearner(int obs_dim, const env::ActionSpace& space,
                                          const PolicyOptions& options, const LearnerState& initial,
                                          uint64_t seed) {
  return std::make_unique<TorchLearner>(obs_dim, space, options, initial, seed);
}

}  // namespace rlt::learn
