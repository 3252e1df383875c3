// rltrade learn: PolicyRunner (see inference.h). LibTorch throws c10::Error on I/O and
// format problems; this file turns those into Status.
#include "learn/inference.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "core/file_io.h"
#include "core/options.h"
#include "learn/checkpoint.h"
#include "learn/evaluate.h"
#include "learn/ppo.h"
#include "learn/trainer.h"

namespace rlt::learn {
namespace fs = std::filesystem;

struct PolicyRunner::Impl {
  native::TensorFile params;
  PolicyOptions options;
  VecNormalizer normalizer{nullptr};
  env::ActionSpace action;
  std::vector<float> scratch;  // (n, obs_dim) normalised observations
  std::unique_ptr<DeterministicActor> actor;
};

namespace {

// A checkpoint part; a missing one means the checkpoint is incomplete.
Result<std::string> ReadText(const fs::path& path) {
  Result<std::string> text = ReadFile(path.string());
  if (!text.ok() && text.status().code() == Status::Code::kNotFound) {
    return Status::NotFound(path.string() + " is missing; the checkpoint is incomplete");
  }
  return text;
}

// "key value" lines of FORMAT after the first line.
std::map<std::string, int64_t> ParseShapes(const std::string& text) {
  std::map<std::string, int64_t> shapes;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string key;
    int64_t value = 0;
    if (row >> key >> value) shapes[key] = value;
  }
  return shapes;
}

// options.txt "ppo.key = value" / "policy.key = value" lines, by prefix.
Status ReadOptions(const std::string& text, const fs::path& path, PpoOptions& ppo,
                   PolicyOptions& policy) {
  std::map<std::string, std::string> ppo_values, policy_values;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 3);
    if (key.rfind("ppo.", 0) == 0) ppo_values[key.substr(4)] = value;
    if (key.rfind("policy.", 0) == 0) policy_values[key.substr(7)] = value;
  }
  Status s = SetOptions(ppo, ppo_values, path.string() + " ppo");
  if (s.ok()) s = SetOptions(policy, policy_values, path.string() + " policy");
  return s;
}

}  // namespace

PolicyRunner::PolicyRunner(std::unique_ptr<Impl> impl, int obs_dim, int act_dim)
    : impl_(std::move(impl)), obs_dim_(obs_dim), act_dim_(act_dim) {}
PolicyRunner::~PolicyRunner() = default;

Result<std::unique_ptr<PolicyRunner>> PolicyRunner::Load(const std::string& checkpoint_dir,
                                                         int obs_dim,
                                                         const env::ActionSpace& action) {
  const fs::path dir(checkpoint_dir);
  if (!fs::exists(dir / "FORMAT")) {
    return Status::NotFound(checkpoint_dir +
                            " is not a checkpoint (no FORMAT file); train the run to the end "
                            "(final/) or pass a checkpoints/step_<N>/ directory");
  }
  RLT_RETURN_IF_ERROR(VerifyCheckpointFiles(dir));  // checksums before any file is parsed
  RLT_ASSIGN_OR_RETURN(const std::string format, ReadText(dir / "FORMAT"));
  std::map<std::string, int64_t> shapes = ParseShapes(format);
  const int act_dim = action.dim;
  if (shapes["obs_dim"] != obs_dim || shapes["act_dim"] != act_dim || shapes["num_envs"] < 1) {
    return Status::DataError(checkpoint_dir + "/FORMAT: the checkpoint is for obs_dim " +
                             std::to_string(shapes["obs_dim"]) + ", act_dim " +
                             std::to_string(shapes["act_dim"]) + " but the environment has " +
                             std::to_string(obs_dim) + ", " + std::to_string(act_dim) +
                             " (different [env] settings or features?)");
  }
  RLT_ASSIGN_OR_RETURN(const std::string options_text, ReadText(dir / "options.txt"));
  PpoOptions ppo;
  PolicyOptions policy_options;
  RLT_RETURN_IF_ERROR(ReadOptions(options_text, dir / "options.txt", ppo, policy_options));
  // Inference runs on the native engine whichever backend trained the policy.
  policy_options.backend = "native";
  RLT_RETURN_IF_ERROR(ValidatePolicyOptions(policy_options));
  auto impl = std::make_unique<Impl>();
  impl->action = action;
  NormalizeOptions norm;
  norm.norm_obs = ppo.norm_obs;
  norm.norm_reward = ppo.norm_reward;
  norm.clip_obs = ppo.clip_obs;
  norm.clip_reward = ppo.clip_reward;
  norm.gamma = ppo.gamma;
  RLT_ASSIGN_OR_RETURN(impl->params, ReadPolicyParameters(dir, obs_dim, action, policy_options));
  impl->options = policy_options;
  RLT_ASSIGN_OR_RETURN(impl->actor,
                       DeterministicActor::Create(impl->params, obs_dim, action, policy_options,
                                                  (dir / "policy.rlt").string()));
  RLT_ASSIGN_OR_RETURN(impl->normalizer,
                       ReadNormalizer(dir, obs_dim, static_cast<int>(shapes["num_envs"]), norm));
  return std::unique_ptr<PolicyRunner>(new PolicyRunner(std::move(impl), obs_dim, act_dim));
}

void PolicyRunner::Act(const float* obs, int n, float* actions, float* values) {
  impl_->scratch.resize(static_cast<size_t>(n) * obs_dim_);
  impl_->normalizer->NormalizeObs(obs, n, impl_->scratch.data());  // a copy when !norm_obs
  impl_->actor->Act(impl_->scratch.data(), n, /*episode_starts=*/nullptr, actions, values);
}

void PolicyRunner::ResetState() { impl_->actor->ResetState(); }

bool PolicyRunner::recurrent() const { return impl_->actor->recurrent(); }

Result<std::vector<double>> PolicyRunner::EvaluateEpisodes(env::VecEnv& venv, int episodes,
                                                           uint64_t seed) {
  RLT_ASSIGN_OR_RETURN(EvalStats stats, EvaluatePolicy(impl_->params, impl_->options,
                                                       impl_->normalizer, venv, episodes, seed));
  return stats.episode_rewards;
}

}  // namespace rlt::learn
