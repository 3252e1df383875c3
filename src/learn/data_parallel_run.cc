// rltrade learn: one small data-parallel PPO run (see data_parallel_run.h).
#include "learn/data_parallel_run.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "env/registry.h"
#include "env/vec_env.h"
#include "learn/native_learner.h"
#include "learn/recurrent_learner.h"
#include "learn/trainer.h"

namespace rlt::learn::testing {

Result<DataParallelResult> RunDataParallel(const std::string& id, int num_envs, int updates,
                                           Collective& group) {
  const std::string suffix = "_lstm";
  const bool recurrent = id.size() > suffix.size() &&
                         id.compare(id.size() - suffix.size(), suffix.size(), suffix) == 0;
  const std::string env_id = recurrent ? id.substr(0, id.size() - suffix.size()) : id;
  RLT_ASSIGN_OR_RETURN(auto envs, env::MakeEnvs(env_id, {}, num_envs));
  env::VecEnv venv(std::move(envs), 1);
  PpoOptions o;
  o.n_steps = 64;
  o.batch_size = 16 * num_envs * group.size();
  o.n_epochs = 4;
  o.total_timesteps = 1'000'000;
  o.norm_obs = o.norm_reward = true;
  PolicyOptions p;
  p.backend = "native";
  if (recurrent) {
    p.recurrent = "lstm";
    p.lstm_hidden_size = 16;
    p.pi = p.vf = {32};
    o.sequence_length = 16;  // 4 chunks per environment, one of each per minibatch
  }
  RLT_ASSIGN_OR_RETURN(auto trainer, PpoTrainer::Create(venv, p, o, /*seed=*/7, /*threads=*/1));
  RLT_RETURN_IF_ERROR(trainer->EnableDataParallel(&group));
  DataParallelResult r;
  for (int u = 0; u < updates; ++u) {
    RLT_ASSIGN_OR_RETURN(const IterationStats s, trainer->Iterate());
    r.ep_rew_mean = s.ep_rew_mean;
    r.episodes_seen = s.episodes_seen;
    r.explained_variance = s.explained_variance;
    r.approx_kl = s.update.approx_kl;
  }
  if (NativeLearner* mlp = trainer->native_learner()) {
    r.params = mlp->net().params();
  } else {
    auto* lstm = dynamic_cast<RecurrentLearner*>(trainer->learner());
    RLT_CHECK(lstm != nullptr);
    for (int g = 0; g < lstm->net().num_groups(); ++g) {
      const std::vector<float>& v = lstm->net().group_params(g);
      r.params.insert(r.params.end(), v.begin(), v.end());
    }
  }
  r.hash = trainer->learner()->ParamHash();
  r.total_steps = trainer->total_steps();
  return r;
}

std::string FormatResult(const DataParallelResult& r) {
  std::ostringstream out;
  char buf[64];
  auto put = [&](double v) {
    std::snprintf(buf, sizeof buf, "%a\n", v);
    out << buf;
  };
  out << r.hash << "\n" << r.total_steps << "\n" << r.episodes_seen << "\n";
  put(r.ep_rew_mean);
  put(r.explained_variance);
  put(r.approx_kl);
  out << r.params.size() << "\n";
  for (float v : r.params) put(v);
  return out.str();
}

Result<DataParallelResult> ParseResult(const std::string& text) {
  std::istringstream in(text);
  DataParallelResult r;
  std::string line;
  auto next = [&]() -> Result<std::string> {
    if (!std::getline(in, line)) return Status::DataError("data-parallel result: cut short");
    return line;
  };
  RLT_ASSIGN_OR_RETURN(std::string v, next());
  r.hash = std::strtoull(v.c_str(), nullptr, 10);
  RLT_ASSIGN_OR_RETURN(v, next());
  r.total_steps = std::strtoll(v.c_str(), nullptr, 10);
  RLT_ASSIGN_OR_RETURN(v, next());
  r.episodes_seen = std::strtoll(v.c_str(), nullptr, 10);
  for (double* d : {&r.ep_rew_mean, &r.explained_variance, &r.approx_kl}) {
    RLT_ASSIGN_OR_RETURN(v, next());
    *d = std::strtod(v.c_str(), nullptr);
  }
  RLT_ASSIGN_OR_RETURN(v, next());
  const size_t n = std::strtoull(v.c_str(), nullptr, 10);
  for (size_t k = 0; k < n; ++k) {
    RLT_ASSIGN_OR_RETURN(v, next());
    r.params.push_back(static_cast<float>(std::strtod(v.c_str(), nullptr)));
  }
  return r;
}

}  // namespace rlt::learn::testing
