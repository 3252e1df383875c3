// rltrade python: make_vec's environments (see vec_env_setup.h).
#include "python/vec_env_setup.h"

#include <algorithm>
#include <cstdio>

#include "config/config.h"
#include "core/proc_stats.h"
#include "core/thread_pool.h"
#include "env/registry.h"
#include "env/vec_env.h"
#include "train/train_options.h"

namespace rlt::python {
namespace {

std::string DateText(int32_t yyyymmdd) {
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d", yyyymmdd / 10000, yyyymmdd / 100 % 100,
                yyyymmdd % 100);
  return text;
}

bool NeedsMarketData(const std::string& id) {
  for (const env::EnvEntry& e : env::EnvRegistry()) {
    if (id == e.id) return e.needs_market_data;
  }
  return false;
}

Status AddDefaultSplit(config::Config& cfg) {
  RLT_ASSIGN_OR_RETURN(std::vector<int32_t> dates, train::SessionDates(cfg));
  if (dates.size() < 5) {
    return Status::InvalidArgument("the market data holds " + std::to_string(dates.size()) +
                                   " sessions; a default split needs at least 5 (or pass "
                                   "split={\"train\": \"YYYY-MM-DD:YYYY-MM-DD\"})");
  }
  const size_t n = dates.size(), a = n * 6 / 10, b = n * 8 / 10;
  auto range = [&](size_t first, size_t last) {
    return DateText(dates[first]) + ":" + DateText(dates[last]);
  };
  cfg.Set("split", "train", range(0, a - 1), "make_vec default split");
  cfg.Set("split", "validation", range(a, b - 1), "make_vec default split");
  cfg.Set("split", "test", range(b, n - 1), "make_vec default split");
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<env::VecEnv>> MakeVecEnv(const std::string& env_id, int num_envs,
                                                int num_threads,
                                                const std::vector<Setting>& settings) {
  if (num_envs < 1) {
    return Status::InvalidArgument("num_envs must be >= 1, got " + std::to_string(num_envs));
  }
  if (num_threads < 0) {
    return Status::InvalidArgument("num_threads must be >= 0 (0 = the cores this process may use)");
  }
  config::Config cfg;
  cfg.Set("env", "id", env_id, "make_vec(env_id)");
  cfg.Set("env", "num_envs", std::to_string(num_envs), "make_vec(num_envs)");
  bool has_split = false;
  for (const auto& [section, key, text] : settings) {
    if (section != "env" && section != "data" && section != "features" && section != "split") {
      return Status::InvalidArgument("unknown section '" + section +
                                     "': expected env, data, features or split");
    }
    if (section == "env" && (key == "id" || key == "num_envs")) {
      return Status::InvalidArgument(key + " is make_vec's own argument, not an option");
    }
    const std::string place =
        "make_vec(" + (section == "env" ? key : section + "={'" + key + "': ...}") + ")";
    cfg.Set(section, key, text, place);
    has_split = has_split || section == "split";
  }
  if (NeedsMarketData(env_id) && !has_split) RLT_RETURN_IF_ERROR(AddDefaultSplit(cfg));
  RLT_ASSIGN_OR_RETURN(train::EnvSetup setup, train::BuildEnvSetup(cfg));
  RLT_RETURN_IF_ERROR(train::CheckCapitalBuysOneLot(setup));
  // One environment first: its spec sizes the rest, which must fit in memory (a huge
  // num_envs is refused here instead of failing inside the allocator).
  RLT_ASSIGN_OR_RETURN(auto probe, env::MakeEnvs(setup.id, setup.context, 1));
  const env::EnvSpec& spec = probe.front()->spec();
  const double per_env = env::EnvBytesEach(spec);
  const double bytes = per_env * num_envs;
  const int64_t available = AvailableMemoryBytes();
  if (available > 0 && bytes > 0.8 * static_cast<double>(available)) {
    char text[300];
    std::snprintf(text, sizeof text,
                  "num_envs = %d environments of '%s' would need about %.2f GB (~%.0f bytes "
                  "each) but only %.2f GB is available (MemAvailable); lower num_envs",
                  num_envs, env_id.c_str(), bytes / 1e9, per_env,
                  static_cast<double>(available) / 1e9);
    return Status::InvalidArgument(text);
  }
  RLT_ASSIGN_OR_RETURN(auto envs, env::MakeEnvs(setup.id, setup.context, num_envs));
  const int threads = std::min(ResolveThreads(num_threads), num_envs);
  return std::make_unique<env::VecEnv>(std::move(envs), threads);
}

}  // namespace rlt::python
