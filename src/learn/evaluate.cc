// rltrade learn: EvaluatePolicy() (see evaluate.h).
#include "learn/evaluate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "learn/native_learner.h"
#include "learn/recurrent_learner.h"

namespace rlt::learn {
namespace {

// Index of `name` in the env's info names, or -1.
int InfoIndex(const env::EnvSpec& spec, const char* name) {
  for (size_t k = 0; k < spec.info_names.size(); ++k) {
    if (spec.info_names[k] == name) return static_cast<int>(k);
  }
  return -1;
}

// Env 0's session returns over its first episode (EvalStats::session_returns): Start()
// after the reset, Step() after every step until it reports the episode's end.
class SessionTracker {
 public:
  explicit SessionTracker(const env::EnvSpec& spec)
      : worth_(InfoIndex(spec, "net_worth")), date_(InfoIndex(spec, "session_date")) {}
  void Start(const env::VecEnv& venv) {
    if (!on()) return;
    start_ = venv.info()[worth_];
    date_before_ = venv.info()[date_];
  }
  // After a step; `done`: env 0's episode ended with it.
  void Step(const env::VecEnv& venv, bool done, std::vector<double>& out) {
    if (!on() || finished_) return;
    const double* info = done ? venv.terminal_info() : venv.info();
    const double date = venv.info()[date_];  // after a reset: the next episode's first session
    if (done || date != date_before_) {
      out.push_back(info[worth_] / start_ - 1.0);
      start_ = info[worth_];
    }
    date_before_ = date;
    finished_ = done;
  }

 private:
  bool on() const { return worth_ >= 0 && date_ >= 0; }
  int worth_, date_;
  double start_ = 0, date_before_ = 0;
  bool finished_ = false;
};

}  // namespace

struct DeterministicActor::Recurrent {
  std::unique_ptr<native::RecurrentActorCritic> net;
  native::RecurrentState state;
  int rows = -1;
  std::vector<float> values, log_probs;
};

struct DeterministicActor::Mlp {
  std::unique_ptr<native::ActorCritic> net;
  std::vector<float> values, log_probs;
};

DeterministicActor::DeterministicActor(const env::ActionSpace& space)
    : space_(space), act_dim_(space.discrete ? 1 : space.dim) {}

Result<std::unique_ptr<DeterministicActor>> DeterministicActor::Create(
    const native::TensorFile& params, int obs_dim, const env::ActionSpace& space,
    const PolicyOptions& options, const std::string& origin) {
  std::unique_ptr<DeterministicActor> actor(new DeterministicActor(space));
  if (options.is_recurrent()) {
    actor->recurrent_ = std::make_unique<Recurrent>();
    RLT_ASSIGN_OR_RETURN(actor->recurrent_->net,
                         RecurrentNetFromParameters(params, obs_dim, space, options, origin));
  } else {
    actor->mlp_ = std::make_unique<Mlp>();
    RLT_ASSIGN_OR_RETURN(actor->mlp_->net,
                         NativeNetFromParameters(params, obs_dim, space, options, origin));
  }
  return actor;
}

DeterministicActor::~DeterministicActor() = default;

void DeterministicActor::ResetState() {
  if (recurrent_) recurrent_->state.Zero();
}

void DeterministicActor::Act(const float* obs, int n, const float* episode_starts, float* actions,
                             float* values) {
  const int act_dim = act_dim_;
  if (recurrent_) {
    Recurrent& r = *recurrent_;
    if (r.rows != n) {
      r.state.Resize(n, r.net->hidden(), r.net->shared());
      r.rows = n;
    }
    r.values.resize(n);
    r.log_probs.resize(n);
    r.net->Act(obs, n, episode_starts, r.state, /*rng=*/nullptr, /*deterministic=*/true, actions,
               r.values.data(), r.log_probs.data());
    if (values != nullptr) std::copy(r.values.begin(), r.values.end(), values);
  } else {
    mlp_->values.resize(n);
    mlp_->log_probs.resize(n);
    mlp_->net->Act(obs, n, /*rng=*/nullptr, /*deterministic=*/true, actions, mlp_->values.data(),
                   mlp_->log_probs.data());
    if (values != nullptr) std::copy(mlp_->values.begin(), mlp_->values.end(), values);
  }
  if (space_.discrete) return;
  for (int64_t k = 0; k < static_cast<int64_t>(n) * act_dim; ++k) {
    const int d = static_cast<int>(k % act_dim);
    actions[k] = std::clamp(actions[k], space_.low[d], space_.high[d]);
  }
}

Result<EvalStats> EvaluatePolicy(const native::TensorFile& params, const PolicyOptions& options,
                                 const VecNormalizer& normalizer, env::VecEnv& venv, int episodes,
                                 uint64_t seed) {
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<DeterministicActor> actor,
                       DeterministicActor::Create(params, venv.obs_dim(), venv.spec().action,
                                                  options, "the policy's parameters"));
  return EvaluatePolicy(*actor, normalizer, venv, episodes, seed);
}

Result<EvalStats> EvaluatePolicy(DeterministicActor& actor, const VecNormalizer& normalizer,
                                 env::VecEnv& venv, int episodes, uint64_t seed) {
  if (episodes < 1) {
    return Status::InvalidArgument("evaluation needs at least one episode (got " +
                                   std::to_string(episodes) + "); set run.eval_episodes >= 1");
  }
  RLT_CHECK(actor.act_dim() == venv.act_dim());
  const int n = venv.num_envs();
  const int net_worth = InfoIndex(venv.spec(), "net_worth");
  SessionTracker sessions(venv.spec());
  std::vector<int> target(n), done_count(n, 0);  // SB3 episode_count_targets
  for (int i = 0; i < n; ++i) target[i] = (episodes + i) / n;
  std::vector<float> obs(static_cast<size_t>(n) * venv.obs_dim());      // (N, obs_dim)
  std::vector<float> actions(static_cast<size_t>(n) * venv.act_dim());  // (N, act_dim)
  EvalStats s;
  s.has_net_worth = net_worth >= 0;
  double net_worth_sum = 0;
  actor.ResetState();
  std::vector<float> starts(n, 1.0f);  // recurrent states start at zero
  venv.Reset(seed);
  sessions.Start(venv);
  int finished = 0;
  while (finished < episodes) {
    normalizer->NormalizeObs(venv.observations(), n, obs.data());  // a copy when !norm_obs
    actor.Act(obs.data(), n, starts.data(), actions.data(), nullptr);
    venv.Step(actions.data());
    sessions.Step(venv, venv.done(0), s.session_returns);
    for (int i = 0; i < n; ++i) starts[i] = venv.done(i) ? 1.0f : 0.0f;
    for (int i = 0; i < n; ++i) {
      if (!venv.done(i) || done_count[i] >= target[i]) continue;
      ++done_count[i];
      ++finished;
      s.episode_rewards.push_back(venv.episode_returns()[i]);
      s.episode_lengths.push_back(venv.episode_lengths()[i]);
      if (net_worth >= 0) {
        net_worth_sum += venv.terminal_info()[static_cast<size_t>(i) * venv.info_dim() + net_worth];
      }
    }
  }
  const double count = static_cast<double>(episodes);
  for (size_t e = 0; e < s.episode_rewards.size(); ++e) {
    s.mean_reward += s.episode_rewards[e];
    s.mean_ep_length += static_cast<double>(s.episode_lengths[e]);
  }
  s.mean_reward /= count;
  s.mean_ep_length /= count;
  for (double r : s.episode_rewards) s.std_reward += (r - s.mean_reward) * (r - s.mean_reward);
  s.std_reward = std::sqrt(s.std_reward / count);
  s.mean_final_net_worth = s.has_net_worth ? net_worth_sum / count : NAN;
  return s;
}

}  // namespace rlt::learn
