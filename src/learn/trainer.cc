// rltrade learn: PpoTrainer implementation (see trainer.h).
#include "learn/trainer.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "learn/recurrent_learner.h"
#include "learn/torch_plugin.h"
#include "native/actor_critic.h"

namespace rlt::learn {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kEpisodeWindow = 100;  // SB3 stats_window_size

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

NormalizeOptions MakeNormalizeOptions(const PpoOptions& o) {
  NormalizeOptions n;
  n.norm_obs = o.norm_obs;
  n.norm_reward = o.norm_reward;
  n.clip_obs = o.clip_obs;
  n.clip_reward = o.clip_reward;
  n.gamma = o.gamma;
  return n;
}

// Test hooks: RLT_TEST_POISON_PARAMETER_AT_UPDATE=N writes NaN into the first policy
// parameter right after update N, RLT_TEST_POISON_LOSS_AT_UPDATE=N into update N's value
// loss, so tests can check the non-finite diagnostics end to end (a real divergence is too
// machine-dependent to time, and the settings that forced one, e.g. learning_rate = 1e30,
// are refused at config time). 0 / unset = off.
int64_t PoisonUpdateFromEnv(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::strtoll(v, nullptr, 10) : 0;
}

}  // namespace

std::vector<std::pair<std::string, double>> IterationStats::Named() const {
  std::vector<std::pair<std::string, double>> rows;
  if (episodes_seen > 0) {
    rows.emplace_back("rollout/ep_rew_mean", ep_rew_mean);
    rows.emplace_back("rollout/ep_len_mean", ep_len_mean);
  }
  if (!algo_rows.empty()) {
    rows.insert(rows.end(), algo_rows.begin(), algo_rows.end());
    rows.emplace_back("time/fps", fps);
    rows.emplace_back("time/total_timesteps", static_cast<double>(total_timesteps));
    return rows;
  }
  rows.emplace_back("train/policy_gradient_loss", update.policy_gradient_loss);
  rows.emplace_back("train/value_loss", update.value_loss);
  rows.emplace_back("train/entropy_loss", update.entropy_loss);
  rows.emplace_back("train/approx_kl", update.approx_kl);
  rows.emplace_back("train/clip_fraction", update.clip_fraction);
  rows.emplace_back("train/loss", update.loss);
  rows.emplace_back("train/explained_variance", explained_variance);
  if (has_std) rows.emplace_back("train/std", std);
  rows.emplace_back("train/learning_rate", learning_rate);
  rows.emplace_back("train/clip_range", clip_range);
  rows.emplace_back("time/fps", fps);
  rows.emplace_back("time/total_timesteps", static_cast<double>(total_timesteps));
  return rows;
}

Status ValidateActionSpace(const env::EnvSpec& spec) {
  const env::ActionSpace& space = spec.action;
  if (space.discrete ? space.n < 1
                     : (static_cast<int>(space.low.size()) != space.dim ||
                        static_cast<int>(space.high.size()) != space.dim)) {
    return Status::InvalidArgument("environment '" + spec.id +
                                   "' declares an action space no trainer can use (Discrete "
                                   "with n < 1, or Box bounds not matching its dimension)");
  }
  return Status::Ok();
}

Result<std::unique_ptr<PpoTrainer>> PpoTrainer::Create(env::VecEnv& venv,
                                                       const PolicyOptions& policy_options,
                                                       const PpoOptions& ppo_options, uint64_t seed,
                                                       int threads) {
  RLT_RETURN_IF_ERROR(ValidatePolicyOptions(policy_options));
  RLT_RETURN_IF_ERROR(ValidatePpoOptions(ppo_options));
  RLT_RETURN_IF_ERROR(ValidateRecurrentPpo(policy_options, ppo_options));
  RLT_RETURN_IF_ERROR(ValidateActionSpace(venv.spec()));
  return std::make_unique<PpoTrainer>(venv, policy_options, ppo_options, seed, threads);
}

PpoTrainer::PpoTrainer(env::VecEnv& venv, const PolicyOptions& policy_options,
                       const PpoOptions& ppo_options, uint64_t seed, int threads)
    : venv_(venv),
      policy_options_(policy_options),
      ppo_options_(ppo_options),
      num_envs_(venv.num_envs()),
      obs_dim_(venv.obs_dim()),
      act_dim_(venv.act_dim()),
      buffer_(ppo_options.n_steps, venv.num_envs(), venv.obs_dim(), venv.act_dim()) {
  normalizer_ = VecNormalizer(obs_dim_, num_envs_, MakeNormalizeOptions(ppo_options));
  const env::ActionSpace& space = venv.spec().action;
  if (policy_options.is_recurrent()) {
    learner_ =
        std::make_unique<RecurrentLearner>(obs_dim_, space, policy_options, ppo_options, num_envs_,
                                           seed, threads > 0 ? threads : venv.threads());
  } else if (policy_options.backend == "native") {
    RLT_CHECK(NativeSupports(policy_options));
    learner_ =
        std::make_unique<NativeLearner>(obs_dim_, space, policy_options, seed, venv.threads());
  } else {
    // The torch backend starts from the native engine's initialisation for this seed.
    // ValidatePolicyOptions loaded the plug-in already (or refused the options).
    const Result<const TorchApi*> torch = Torch();
    RLT_CHECK_MSG(torch.ok(), torch.status().message().c_str());
    native::ActorCritic initial(NativeSpec(obs_dim_, space, policy_options), seed);
    LearnerState s0;
    initial.SaveParameters(s0.params);
    s0.lr = ppo_options.learning_rate.Value(TrainingProgress{});
    learner_ = (*torch)->make_learner(obs_dim_, space, policy_options, s0, seed);
  }
  env_actions_.assign(static_cast<size_t>(num_envs_) * act_dim_, 0.0f);
  last_episode_starts_.assign(num_envs_, 1.0f);  // SB3: np.ones at the start of learn()
  scratch_obs_.assign(static_cast<size_t>(num_envs_) * obs_dim_, 0.0f);
  scratch_values_.assign(num_envs_, 0.0f);
  truncated_envs_.reserve(num_envs_);
  seed_ = seed;
  venv_.Reset(seed);
  normalizer_->UpdateObs(venv_.observations(), num_envs_);  // VecNormalize.reset()
  start_time_ = Clock::now();
}

Status PpoTrainer::EnableDataParallel(Collective* group) {
  RLT_CHECK(group != nullptr && group_ == nullptr && total_steps_ == 0);
  Learner* learner = learner_.get();
  RLT_RETURN_IF_ERROR(
      ValidateDataParallel(ppo_options_, policy_options_, num_envs_, group->size()));
  group_ = group;
  const int64_t first_env = static_cast<int64_t>(group->rank()) * num_envs_;
  learner->SetDataParallel(
      DataParallel{group, first_env, static_cast<int64_t>(num_envs_) * group->size(), seed_});
  // The constructor's reset and first statistics update, again as this member of the group.
  normalizer_ = VecNormalizer(obs_dim_, num_envs_, MakeNormalizeOptions(ppo_options_));
  normalizer_->set_collective(group);
  venv_.Reset(seed_ + static_cast<uint64_t>(first_env));
  normalizer_->UpdateObs(venv_.observations(), num_envs_);
  return Status::Ok();
}

void PpoTrainer::RestartEnvironments(uint64_t seed) {
  const int64_t first_env =
      group_ != nullptr ? static_cast<int64_t>(group_->rank()) * num_envs_ : 0;
  venv_.Reset(seed + static_cast<uint64_t>(first_env));
  normalizer_->ResetReturns();
  std::fill(last_episode_starts_.begin(), last_episode_starts_.end(), 1.0f);
  // Recurrent policies: every environment's LSTM state starts at zero.
  const Status zeroed =
      learner_->SetRecurrentStates(std::vector<float>(learner_->RecurrentStates().size(), 0.0f));
  RLT_CHECK_MSG(zeroed.ok(), zeroed.message());
}

void PpoTrainer::MergeGroupEpisodes() {
  std::string mine;
  for (const FinishedEpisode& e : finished_) {
    mine.append(reinterpret_cast<const char*>(&e), sizeof e);
  }
  finished_.clear();
  std::vector<FinishedEpisode> all;
  for (const std::string& part : group_->Allgather(mine, "the episode statistics")) {
    for (size_t k = 0; k + sizeof(FinishedEpisode) <= part.size(); k += sizeof(FinishedEpisode)) {
      FinishedEpisode e;
      std::memcpy(&e, part.data() + k, sizeof e);
      all.push_back(e);
    }
  }
  std::sort(all.begin(), all.end(), [](const FinishedEpisode& a, const FinishedEpisode& b) {
    return a.t != b.t ? a.t < b.t : a.env < b.env;
  });
  for (const FinishedEpisode& e : all) {
    episodes_.emplace_back(e.ret, e.len);
    if (episodes_.size() > kEpisodeWindow) episodes_.pop_front();
  }
}

void PpoTrainer::StepOnce(int t) {
  const size_t n = num_envs_;
  const auto t0 = Clock::now();
  float* obs_row = buffer_.obs(t);
  normalizer_->NormalizeObs(venv_.observations(), num_envs_, obs_row);
  float* forward_obs = ppo_options_.norm_obs ? obs_row : venv_.mutable_observations();
  if (group_ != nullptr) {
    learner_->set_vector_step(total_steps_ / (static_cast<int64_t>(num_envs_) * group_->size()));
  }
  learner_->Act(t, forward_obs, num_envs_, last_episode_starts_.data(), buffer_.actions(t),
                buffer_.values(t), buffer_.log_probs(t));
  const env::ActionSpace& space = venv_.spec().action;
  const float* stored = buffer_.actions(t);
  for (size_t k = 0; k < n * act_dim_; ++k) {
    const int d = static_cast<int>(k % act_dim_);
    env_actions_[k] =
        space.discrete ? stored[k] : std::clamp(stored[k], space.low[d], space.high[d]);
  }
  const auto t1 = Clock::now();
  venv_.Step(env_actions_.data());
  const auto t2 = Clock::now();
  timing_.inference += Seconds(t0, t1);
  timing_.env_step += Seconds(t1, t2);
  total_steps_ += static_cast<int64_t>(num_envs_) * (group_ != nullptr ? group_->size() : 1);

  std::vector<uint8_t>& dones = done_scratch_;
  for (int i = 0; i < num_envs_; ++i) {
    dones[i] = venv_.done(i);
    if (!dones[i]) continue;
    if (group_ != nullptr) {
      finished_.push_back({t, static_cast<int64_t>(group_->rank()) * num_envs_ + i,
                           venv_.episode_returns()[i], venv_.episode_lengths()[i]});
      continue;
    }
    episodes_.emplace_back(venv_.episode_returns()[i], venv_.episode_lengths()[i]);
    if (episodes_.size() > kEpisodeWindow) episodes_.pop_front();
  }
  normalizer_->UpdateObs(venv_.observations(), num_envs_);
  float* rewards = buffer_.rewards(t);
  normalizer_->ProcessRewards(venv_.rewards(), dones.data(), ppo_options_.norm_reward, rewards);
  BootstrapTruncated(rewards);
  std::copy(last_episode_starts_.begin(), last_episode_starts_.end(), buffer_.episode_starts(t));
  for (int i = 0; i < num_envs_; ++i) last_episode_starts_[i] = dones[i];
}

// SB3 collect_rollouts: reward += gamma V(terminal_obs) where the episode was cut by a time
// limit, with the terminal observation normalised by the current statistics. One forward.
void PpoTrainer::BootstrapTruncated(float* rewards) {
  truncated_envs_.clear();
  for (int i = 0; i < num_envs_; ++i) {
    if (venv_.truncated()[i] && !venv_.terminated()[i]) truncated_envs_.push_back(i);
  }
  if (truncated_envs_.empty()) return;
  const auto t0 = Clock::now();
  const int k = static_cast<int>(truncated_envs_.size());
  for (int j = 0; j < k; ++j) {
    const float* src =
        venv_.terminal_observations() + static_cast<size_t>(truncated_envs_[j]) * obs_dim_;
    std::copy(src, src + obs_dim_, scratch_obs_.data() + static_cast<size_t>(j) * obs_dim_);
  }
  normalizer_->NormalizeObs(scratch_obs_.data(), k, scratch_obs_.data());
  PredictValues(k, truncated_envs_.data(), nullptr);
  const float gamma = static_cast<float>(ppo_options_.gamma);
  for (int j = 0; j < k; ++j) rewards[truncated_envs_[j]] += gamma * scratch_values_[j];
  timing_.inference += Seconds(t0, Clock::now());
}

// scratch_values_ (n) = V(scratch_obs_ (n, obs_dim)) of envs[0..n) (nullptr: 0..n-1),
// recurrent states zeroed first where reset (n, may be nullptr).
void PpoTrainer::PredictValues(int n, const int* envs, const float* reset) {
  learner_->PredictValues(scratch_obs_.data(), envs, n, reset, scratch_values_.data());
}

bool PpoTrainer::CollectRollout() {
  done_scratch_.assign(num_envs_, 0);
  const auto start = Clock::now();
  for (int t = 0; t < ppo_options_.n_steps; ++t) {
    if (interrupt_ != nullptr && group_ == nullptr &&
        interrupt_->load(std::memory_order_relaxed) != 0 && t > 0) {
      const double per_step = Seconds(start, Clock::now()) / t;
      if (per_step * (ppo_options_.n_steps - t) > kInterruptSeconds) return false;
    }
    StepOnce(t);
  }
  const auto t0 = Clock::now();
  normalizer_->NormalizeObs(venv_.observations(), num_envs_, scratch_obs_.data());
  PredictValues(num_envs_, nullptr, last_episode_starts_.data());
  const auto t1 = Clock::now();
  buffer_.ComputeReturnsAndAdvantage(scratch_values_.data(), last_episode_starts_.data(),
                                     static_cast<float>(ppo_options_.gamma),
                                     static_cast<float>(ppo_options_.gae_lambda));
  timing_.inference += Seconds(t0, t1);
  timing_.gae += Seconds(t1, Clock::now());
  if (group_ != nullptr) {
    const auto t2 = Clock::now();
    MergeGroupEpisodes();
    timing_.communicate += Seconds(t2, Clock::now());
  }
  return true;
}

IterationStats PpoTrainer::Update() {
  const PpoOptions& o = ppo_options_;
  const int64_t per_iteration = static_cast<int64_t>(o.n_steps) * num_envs_;
  TrainingProgress progress;
  progress.progress_remaining =
      1.0 - static_cast<double>(total_steps_) / static_cast<double>(o.total_timesteps);
  progress.update = iterations_ + 1;
  progress.total_updates = (o.total_timesteps + per_iteration - 1) / per_iteration;
  IterationStats s;
  s.learning_rate = o.learning_rate.Value(progress);
  s.clip_range = o.clip_range.Value(progress);
  s.ent_coef = o.ent_coef.Value(progress);
  PpoLossSettings settings{s.clip_range, o.clip_range_vf, s.ent_coef, o.vf_coef,
                           o.normalize_advantage};
  UpdateTiming t;
  if (group_ != nullptr) learner_->set_update_index(iterations_);
  s.update = learner_->Update(buffer_, o, settings, s.learning_rate, &t);
  timing_.update_forward += t.forward;
  timing_.backward += t.backward;
  timing_.optimizer += t.optimizer;
  timing_.communicate += t.communicate;
  ++iterations_;
  static const int64_t poison_update = PoisonUpdateFromEnv("RLT_TEST_POISON_PARAMETER_AT_UPDATE");
  static const int64_t poison_loss = PoisonUpdateFromEnv("RLT_TEST_POISON_LOSS_AT_UPDATE");
  if (poison_loss > 0 && iterations_ == poison_loss) s.update.value_loss = NAN;
  if (poison_update > 0 && iterations_ == poison_update) learner_->PoisonFirstParameter();
  s.explained_variance =
      group_ != nullptr
          ? ExplainedVarianceShared(buffer_.values(0), buffer_.flat_returns(), buffer_.size(),
                                    *group_)
          : ExplainedVariance(buffer_.values(0), buffer_.flat_returns(), buffer_.size());
  if (!venv_.spec().action.discrete) {
    s.has_std = true;
    s.std = learner_->MeanStd();
  }
  return s;
}

Result<IterationStats> PpoTrainer::Iterate() {
  RLT_CHECK_MSG(!interrupted_, "an interrupted trainer cannot continue (see set_interrupt_flag)");
  const int64_t steps_before = total_steps_;
  if (!CollectRollout()) {
    interrupted_ = true;
    total_steps_ = steps_before;  // the partial rollout is discarded
    IterationStats s;
    s.interrupted = true;
    s.total_timesteps = total_steps_;
    s.iterations = iterations_;
    return s;
  }
  IterationStats s = Update();
  s.episodes_seen = static_cast<int64_t>(episodes_.size());
  for (const auto& [ret, len] : episodes_) {
    s.ep_rew_mean += ret;
    s.ep_len_mean += static_cast<double>(len);
  }
  if (!episodes_.empty()) {
    s.ep_rew_mean /= static_cast<double>(episodes_.size());
    s.ep_len_mean /= static_cast<double>(episodes_.size());
  }
  s.total_timesteps = total_steps_;
  s.iterations = iterations_;
  const double elapsed = std::max(Seconds(start_time_, Clock::now()), 1e-9);
  s.fps = static_cast<double>(total_steps_ - steps_at_start_) / elapsed;
  RLT_RETURN_IF_ERROR(CheckFinite(s));
  if (group_ != nullptr) RLT_RETURN_IF_ERROR(CheckGroupAgrees());
  return s;
}

// Every member applied the same summed gradient to the same parameters, so the parameters
// must be equal bit for bit; a difference means a member diverged (a bug, or a different
// build or machine arithmetic) and training would silently average different policies.
Status PpoTrainer::CheckGroupAgrees() {
  const auto t0 = Clock::now();
  const uint64_t mine = learner_->ParamHash();
  const std::vector<std::string> all = group_->Allgather(
      std::string(reinterpret_cast<const char*>(&mine), sizeof mine), "the parameter check");
  timing_.communicate += Seconds(t0, Clock::now());
  for (size_t r = 0; r < all.size(); ++r) {
    uint64_t h = 0;
    std::memcpy(&h, all[r].data(), std::min(sizeof h, all[r].size()));
    if (h != mine) {
      return Status::DataError(fmt::format(
          "after update {} the parameters of rank {} (hash {:016x}) differ from rank {}'s "
          "({:016x}): the ranks no longer train one policy; run every rank with the same "
          "rltrade build on machines of the same architecture",
          iterations_, r, h, group_->rank(), mine));
    }
  }
  return Status::Ok();
}

// Loss first, then the gradients of the last minibatch, then the parameters after the step:
// the first non-finite tensor is named so a user can tell a diverging loss from a bad input.
Status PpoTrainer::CheckFinite(const IterationStats& s) {
  const UpdateStats& u = s.update;
  const std::string at = " at update " + std::to_string(iterations_) + " (env step " +
                         std::to_string(total_steps_) + ")";
  const std::string advice =
      "; lower learning_rate, set max_grad_norm or enable norm_obs / norm_reward";
  if (!std::isfinite(u.policy_gradient_loss) || !std::isfinite(u.value_loss) ||
      !std::isfinite(u.entropy_loss) || !std::isfinite(u.loss)) {
    return Status::DataError("PPO loss is not finite" + at + " (policy " +
                             std::to_string(u.policy_gradient_loss) + ", value " +
                             std::to_string(u.value_loss) + ", entropy " +
                             std::to_string(u.entropy_loss) + ")" + advice);
  }
  if (const std::string name = learner_->FirstNonFinite(/*grads=*/true); !name.empty()) {
    return Status::DataError("gradient of parameter '" + name + "' is not finite" + at + advice);
  }
  if (const std::string name = learner_->FirstNonFinite(/*grads=*/false); !name.empty()) {
    return Status::DataError("parameter '" + name + "' is not finite" + at + advice);
  }
  return Status::Ok();
}

PpoTrainer::State PpoTrainer::state() const {
  RLT_CHECK_MSG(!interrupted_, "an interrupted trainer's state is partial and cannot be saved");
  State s;
  s.total_steps = total_steps_;
  s.iterations = iterations_;
  for (float f : last_episode_starts_) s.last_episode_starts.push_back(f != 0.0f);
  s.episodes.assign(episodes_.begin(), episodes_.end());
  return s;
}

void PpoTrainer::set_state(const State& s) {
  RLT_CHECK(static_cast<int>(s.last_episode_starts.size()) == num_envs_);
  total_steps_ = steps_at_start_ = s.total_steps;
  iterations_ = s.iterations;
  for (int i = 0; i < num_envs_; ++i) last_episode_starts_[i] = s.last_episode_starts[i];
  episodes_.assign(s.episodes.begin(), s.episodes.end());
  start_time_ = Clock::now();
}

std::mutex& GlobalGeneratorMutex() {
  static std::mutex mu;
  return mu;
}

void SetBlasThreads(int n) {
  RLT_CHECK(n >= 1);
  using SetFn = void (*)(int);
  if (auto fn = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) fn(n);
}

void SetComputeThreads(int n) {
  RLT_CHECK(n >= 1);
  using SetFn = void (*)(int);
  const auto set_blas_threads =
      reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  SetTorchThreadsWhenLoaded(set_blas_threads != nullptr ? 1 : n);
  if (set_blas_threads != nullptr) set_blas_threads(n);
}

}  // namespace rlt::learn
