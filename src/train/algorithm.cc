// rltrade train: the algorithm registry's entries (see algorithm.h).
#include "train/algorithm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "core/options.h"
#include "learn/es.h"
#include "learn/memory_model.h"
#include "learn/ppo.h"
#include "learn/schedule.h"

namespace rlt::train {
namespace {

// The values a schedule takes over a run of `total_updates` updates (sampled at 201
// points, both ends included: linear and warmup-cosine schedules reach their extremes
// there or at the end of the warm-up, which the dense sampling brackets).
std::pair<double, double> ScheduleRange(const learn::Schedule& schedule, int64_t total_updates) {
  double lo = 0, hi = 0;
  for (int k = 0; k <= 200; ++k) {
    learn::TrainingProgress p;
    p.progress_remaining = 1.0 - k / 200.0;
    p.total_updates = std::max<int64_t>(1, total_updates);
    p.update = 1 + (p.total_updates - 1) * k / 200;
    const double v = schedule.Value(p);
    lo = k == 0 ? v : std::min(lo, v);
    hi = k == 0 ? v : std::max(hi, v);
  }
  return {lo, hi};
}

std::vector<std::pair<std::string, std::string>> Rows(
    const std::vector<internal::Describer::Row>& described) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& row : described) {
    if (row.key != "total_timesteps") rows.emplace_back(row.key, row.value);
  }
  return rows;
}

// PPO (learn::PpoTrainer): the MLP learner, or the recurrent one for an LSTM policy.
class PpoAlgorithm : public Algorithm {
 public:
  std::string name() const override { return "ppo"; }

  Status Bind(const config::Config& config, int64_t total_steps) override {
    RLT_RETURN_IF_ERROR(config.Bind("algo", ppo_, {"name", "total_timesteps"}));
    ppo_.total_timesteps = total_steps;
    return Status::Ok();
  }

  // The valid ranges of [algo] values (and the policy's recurrent chunks), checked at
  // config time so that a bad value is reported with its file:line and leaves no run
  // directory. Non-finite numbers are refused by the options binder (core/options.h).
  Status Check(const config::Config& config, const RunOptions& run,
               const learn::PolicyOptions& policy, int64_t num_envs) const override {
    std::vector<std::string> errors;
    auto fail = [&](const std::string& key, const std::string& value, const std::string& rule) {
      errors.push_back(config::KeyPlace(config, "algo", key) + " = " + value + ": " + rule);
    };
    const int64_t per_update = static_cast<int64_t>(ppo_.n_steps) * num_envs;
    const int64_t updates = per_update > 0 ? run.total_steps / per_update : 1;
    struct ScheduleRule {
      const char* key;
      const learn::Schedule* schedule;
      double lo, hi;  // values must lie in [lo, hi]
      bool positive;  // a constant must be > 0 (a schedule may reach 0 at an end)
      const char* what;
    };
    const ScheduleRule rules[] = {
        {"learning_rate", &ppo_.learning_rate, 0, 1, true, "Adam step size"},
        {"clip_range", &ppo_.clip_range, 0, 10, true, "policy ratio clip"},
        {"ent_coef", &ppo_.ent_coef, 0, 100, false, "entropy coefficient"},
    };
    for (const ScheduleRule& r : rules) {
      const auto [lo, hi] = ScheduleRange(*r.schedule, updates);
      const bool constant = r.schedule->kind() == learn::Schedule::Kind::kConstant;
      const bool bad_zero = r.positive && hi <= 0;
      if (lo < r.lo || hi > r.hi || bad_zero) {
        fail(r.key, r.schedule->ToString(),
             fmt::format("{} must stay in {}{}, {}] over the run{} (here it spans [{}, {}])",
                         r.what, r.positive && constant ? "(" : "[", r.lo, r.hi,
                         r.positive ? "; a constant must be > 0" : "", lo, hi));
      }
    }
    if (!(ppo_.vf_coef >= 0 && ppo_.vf_coef <= 100)) {
      fail("vf_coef", rlt::FormatValue(ppo_.vf_coef), "must be in [0, 100]");
    }
    // A batch_size at or above the rollout is one minibatch of the whole rollout (SB3).
    if (ppo_.batch_size >= 1 && ppo_.batch_size < per_update && per_update % ppo_.batch_size != 0) {
      int64_t below = ppo_.batch_size;
      while (per_update % below != 0) --below;
      int64_t above = ppo_.batch_size;
      while (per_update % above != 0) ++above;
      fail("batch_size", std::to_string(ppo_.batch_size),
           fmt::format("must divide algo.n_steps x env.num_envs = {} x {} = {} (every minibatch "
                       "the same size); the nearest valid values are {} and {}",
                       ppo_.n_steps, num_envs, per_update, below, above));
    }
    if (policy.is_recurrent()) {  // learn/recurrent_learner.h: whole sequences per minibatch
      const int L = ppo_.sequence_length;
      if (L < 1 || L > ppo_.n_steps || ppo_.n_steps % L != 0) {
        fail("sequence_length", std::to_string(L),
             fmt::format("must divide algo.n_steps = {} (recurrent PPO trains on whole chunks of "
                         "each environment's rollout)",
                         ppo_.n_steps));
      } else if (ppo_.batch_size % L != 0) {
        fail("batch_size", std::to_string(ppo_.batch_size),
             fmt::format("must be a multiple of algo.sequence_length = {} (a recurrent minibatch "
                         "is whole sequences); e.g. {}",
                         L, std::max(1, ppo_.batch_size / L) * L));
      }
    }
    return config::JoinErrors(errors);
  }

  int NumEnvs(int configured, int /*threads*/) const override { return configured; }

  Status CheckMemory(const config::Config& /*config*/, const learn::PolicyOptions& policy,
                     const env::EnvSpec& spec, int64_t num_envs, int64_t available) const override {
    const learn::PpoMemoryEstimate m = learn::EstimatePpoMemory(ppo_, policy, num_envs, spec);
    const double bytes = m.total();
    if (available <= 0 || bytes <= 0.8 * static_cast<double>(available)) return Status::Ok();
    const double envs = static_cast<double>(num_envs);
    char text[900];
    std::snprintf(text, sizeof text,
                  "training would need about %.2f GB (environments: env.num_envs %lld x ~%.0f "
                  "bytes = %.2f GB; rollout: algo.n_steps %d x env.num_envs %lld = %.0f samples "
                  "of %d observation + %d action floats, x2 for the update = %.2f GB; "
                  "network: %.3g parameters from policy.pi, policy.vf%s, held ~%.0f times, and "
                  "algo.batch_size %d activations = %.2f GB) but only %.2f GB is available "
                  "(MemAvailable); lower %s",
                  bytes / 1e9, static_cast<long long>(num_envs), m.env_bytes / envs,
                  m.env_bytes / 1e9, ppo_.n_steps, static_cast<long long>(num_envs), m.samples,
                  spec.obs_dim, spec.action.dim, m.rollout_bytes / 1e9, m.parameters,
                  policy.is_recurrent() ? " and policy.lstm_hidden_size" : "",
                  learn::kParameterCopies, ppo_.batch_size, m.network_bytes / 1e9,
                  static_cast<double>(available) / 1e9,
                  m.network_bytes > m.env_bytes + m.rollout_bytes
                      ? "the layer widths (policy.pi, policy.vf, policy.lstm_hidden_size)"
                      : "env.num_envs or algo.n_steps");
    return Status::InvalidArgument(text);
  }

  Result<std::unique_ptr<learn::Trainer>> CreateTrainer(env::VecEnv& venv,
                                                        const learn::PolicyOptions& policy,
                                                        uint64_t seed, int threads) const override {
    RLT_ASSIGN_OR_RETURN(auto trainer,
                         learn::PpoTrainer::Create(venv, policy, ppo_, seed, threads));
    return std::unique_ptr<learn::Trainer>(std::move(trainer));
  }

  std::vector<std::pair<std::string, std::string>> ResolvedRows() const override {
    return Rows(DescribeOptions(ppo_));
  }
  std::vector<std::pair<std::string, std::string>> DefaultRows() const override {
    return Rows(DescribeOptions(learn::PpoOptions()));
  }

  void DescribeShape(int64_t num_envs, SessionShape& shape) const override {
    shape.algo = name();
    shape.n_steps = ppo_.n_steps;
    shape.n_epochs = ppo_.n_epochs;
    shape.batch_size = ppo_.batch_size;
    shape.norm_obs = ppo_.norm_obs;
    shape.norm_reward = ppo_.norm_reward;
    shape.steps_per_update = static_cast<int64_t>(ppo_.n_steps) * num_envs * shape.ranks;
    shape.dense_update = true;
    shape.workload = fmt::format("{} envs", num_envs);
  }

 protected:
  learn::PpoOptions ppo_;
};

// Recurrent PPO by name: PPO's keys and trainer, and the policy must be recurrent.
class RecurrentPpoAlgorithm : public PpoAlgorithm {
 public:
  std::string name() const override { return "recurrent_ppo"; }

  Status Check(const config::Config& config, const RunOptions& run,
               const learn::PolicyOptions& policy, int64_t num_envs) const override {
    if (!policy.is_recurrent()) {
      return Status::InvalidArgument(
          config::KeyPlace(config, "algo", "name") +
          " = \"recurrent_ppo\": needs a recurrent policy; set [policy] recurrent = \"lstm\" "
          "(and lstm_hidden_size), or use name = \"ppo\" for an MLP policy");
    }
    return PpoAlgorithm::Check(config, run, policy, num_envs);
  }

  std::vector<std::pair<std::string, std::string>> ResolvedRows() const override {
    std::vector<std::pair<std::string, std::string>> rows = {{"name", name()}};
    for (auto& row : PpoAlgorithm::ResolvedRows()) rows.push_back(std::move(row));
    return rows;
  }
  std::vector<std::pair<std::string, std::string>> DefaultRows() const override {
    std::vector<std::pair<std::string, std::string>> rows = {{"name", name()}};
    for (auto& row : PpoAlgorithm::DefaultRows()) rows.push_back(std::move(row));
    return rows;
  }
};

// Evolution strategies (learn/es.h): [algo] holds ES's keys; one environment per thread.
class EsAlgorithm : public Algorithm {
 public:
  std::string name() const override { return "es"; }

  Status Bind(const config::Config& config, int64_t /*total_steps*/) override {
    RLT_RETURN_IF_ERROR(config.Bind("algo", es_, {"name", "total_timesteps"}));
    return learn::ValidateEsOptions(
        es_, [&](const std::string& key) { return config::KeyPlace(config, "algo", key); });
  }

  Status Check(const config::Config& /*config*/, const RunOptions& /*run*/,
               const learn::PolicyOptions& /*policy*/, int64_t /*num_envs*/) const override {
    return Status::Ok();  // ValidateEsOptions (Bind) and EsTrainer::Create check the rest
  }

  // ES plays one episode at a time per worker ([env] num_envs is not used).
  int NumEnvs(int /*configured*/, int threads) const override { return threads; }

  Status CheckMemory(const config::Config& config, const learn::PolicyOptions& /*policy*/,
                     const env::EnvSpec& /*spec*/, int64_t /*num_envs*/,
                     int64_t available) const override {
    const double bytes = learn::EsMemoryBytes(es_);
    if (available <= 0 || bytes <= 0.8 * static_cast<double>(available)) return Status::Ok();
    return Status::InvalidArgument(fmt::format(
        "{} = {}: the noise table needs {:.0f} MB but only {:.0f} MB is available; lower "
        "noise_table_size",
        config::KeyPlace(config, "algo", "noise_table_size"), es_.noise_table_size, bytes / 1e6,
        static_cast<double>(available) / 1e6));
  }

  Result<std::unique_ptr<learn::Trainer>> CreateTrainer(env::VecEnv& venv,
                                                        const learn::PolicyOptions& policy,
                                                        uint64_t seed, int threads) const override {
    RLT_ASSIGN_OR_RETURN(auto trainer, learn::EsTrainer::Create(venv, policy, es_, seed, threads));
    return std::unique_ptr<learn::Trainer>(std::move(trainer));
  }

  std::vector<std::pair<std::string, std::string>> ResolvedRows() const override {
    std::vector<std::pair<std::string, std::string>> rows = {{"name", name()}};
    for (auto& row : Rows(DescribeOptions(es_))) rows.push_back(std::move(row));
    return rows;
  }
  std::vector<std::pair<std::string, std::string>> DefaultRows() const override {
    std::vector<std::pair<std::string, std::string>> rows = {{"name", name()}};
    for (auto& row : Rows(DescribeOptions(learn::EsOptions()))) rows.push_back(std::move(row));
    return rows;
  }

  void DescribeShape(int64_t /*num_envs*/, SessionShape& shape) const override {
    shape.algo = name();
    shape.population = es_.population;
    // A generation is `population` members' episodes; 100 steps each is the benchmark's
    // guess of its length, so that four generations are measured by default.
    shape.steps_per_update = static_cast<int64_t>(es_.population) * 100;
    // The update is a weighted sum of noise vectors, not dense layers: no FLOP figure.
    shape.dense_update = false;
    shape.update_note =
        "evolution strategies: `inference` is the members' policy forwards, `optimizer` the "
        "update from the population's fitnesses";
    shape.workload = fmt::format("population {}", es_.population);
  }

 private:
  learn::EsOptions es_;
};

template <typename A>
std::unique_ptr<Algorithm> Make() {
  return std::make_unique<A>();
}

}  // namespace

const std::vector<AlgorithmEntry>& Algorithms() {
  static const std::vector<AlgorithmEntry> kEntries = {
      {"ppo", "PPO (the default; the recurrent learner when [policy] recurrent = \"lstm\")",
       &Make<PpoAlgorithm>, true, "a gradient sum per minibatch"},
      {"recurrent_ppo", "recurrent PPO: PPO with an LSTM policy, which it requires",
       &Make<RecurrentPpoAlgorithm>, true, "a gradient sum per minibatch"},
      {"es", "evolution strategies: OpenAI-ES or ARS, see docs/training.md", &Make<EsAlgorithm>,
       false, "only their members' fitnesses, once per generation"},
  };
  return kEntries;
}

Result<const AlgorithmEntry*> FindAlgorithm(const config::Config& config) {
  const config::ConfigValue* value = config.Get("algo", "name");
  const std::string name = value != nullptr ? value->text : "ppo";
  std::string names;
  for (const AlgorithmEntry& e : Algorithms()) {
    if (name == e.name) return &e;
    names += fmt::format("{}\"{}\" ({})", names.empty() ? "" : ", ", e.name, e.summary);
  }
  return Status::InvalidArgument(config::KeyPlace(config, "algo", "name") + " = \"" + name +
                                 "\": expected one of " + names);
}

Result<std::unique_ptr<Algorithm>> MakeAlgorithm(const config::Config& config) {
  RLT_ASSIGN_OR_RETURN(const AlgorithmEntry* entry, FindAlgorithm(config));
  return entry->make();
}

}  // namespace rlt::train
