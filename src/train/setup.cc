// rltrade train: BuildSetup(), a config to a run's setup (see setup.h).
#include "train/setup.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/json_text.h"
#include "core/options.h"
#include "core/proc_stats.h"
#include "core/thread_pool.h"
#include "env/registry.h"
#include "learn/policy.h"
#include "train/data_record.h"
#include "train/selection.h"

namespace rlt::train::internal {
namespace {

// The bars of one symbol of a several-symbol dataset, as that symbol's own Bars.
market::Bars SliceOfPart(const env::MarketDataset& data, const env::SymbolPart& part) {
  const market::Bars& all = data.bars;
  market::Bars b;
  b.symbol = part.symbol;
  b.timezone = all.timezone;
  const auto from = static_cast<std::ptrdiff_t>(part.first_bar);
  const auto to = static_cast<std::ptrdiff_t>(part.end_bar);
  b.time.assign(all.time.begin() + from, all.time.begin() + to);
  b.utc_offset.assign(all.utc_offset.begin() + from, all.utc_offset.begin() + to);
  b.open.assign(all.open.begin() + from, all.open.begin() + to);
  b.high.assign(all.high.begin() + from, all.high.begin() + to);
  b.low.assign(all.low.begin() + from, all.low.begin() + to);
  b.close.assign(all.close.begin() + from, all.close.begin() + to);
  b.volume.assign(all.volume.begin() + from, all.volume.begin() + to);
  b.bar_in_session.assign(all.bar_in_session.begin() + from, all.bar_in_session.begin() + to);
  b.last_in_session.assign(all.last_in_session.begin() + from, all.last_in_session.begin() + to);
  for (auto t = from; t < to; ++t) b.session.push_back(all.session[t] - part.first_session);
  for (int32_t s = part.first_session; s < part.end_session; ++s) {
    market::Session session = all.sessions[s];
    session.begin -= static_cast<int32_t>(part.first_bar);
    session.end -= static_cast<int32_t>(part.first_bar);
    b.sessions.push_back(session);
  }
  return b;
}

// The record of the bars a market setup trained on: the sessions of [split] train and of
// the training envs' range are hashed.
Result<DataRecord> RecordSetupData(const EnvSetup& env_setup) {
  if (env_setup.data.source != "file") return RecordSyntheticData();
  std::vector<market::DateRange> ranges;
  if (const auto it = env_setup.split.find("train"); it != env_setup.split.end()) {
    ranges.push_back(it->second);
  }
  if (const auto it = env_setup.context.settings.find("range");
      it != env_setup.context.settings.end() && !it->second.empty()) {
    RLT_ASSIGN_OR_RETURN(const market::DateRange r, market::DateRange::Parse(it->second));
    if (ranges.empty() || !(ranges.front().first == r.first && ranges.front().last == r.last)) {
      ranges.push_back(r);
    }
  }
  const env::MarketDataset& data = *env_setup.context.market;
  if (data.parts.empty()) {
    return RecordFileData(env_setup.data.file.str(), data.bars, env_setup.data.symbol,
                          env_setup.symbol_column, ranges);
  }
  // Several symbols: one file record per symbol (the same file), each with its sessions.
  DataRecord record;
  for (size_t i = 0; i < data.parts.size(); ++i) {
    const auto& [file, symbol_column] = env_setup.symbol_files[i];
    // A file without a symbol column records the name its bars were given.
    RLT_ASSIGN_OR_RETURN(DataRecord one, RecordFileData(file, SliceOfPart(data, data.parts[i]),
                                                        symbol_column ? "" : data.parts[i].symbol,
                                                        symbol_column, ranges));
    record.source = one.source;
    for (FileRecord& f : one.files) record.files.push_back(std::move(f));
  }
  return record;
}

}  // namespace
namespace {

void WarnIfOversubscribed(int threads) {
  static std::atomic<bool> warned{false};
  const int cores = AvailableCores();
  if (threads <= cores || warned.exchange(true)) return;
  std::fprintf(stderr,
               "warning: [run] threads = %d exceeds the %d cores this process may use; env "
               "workers, LibTorch and OpenBLAS will oversubscribe them (set run.threads <= %d, "
               "or 0 for all of them)\n",
               threads, cores, cores);
}

// The valid ranges of [run] and [policy] values (the algorithm's entry checks [algo]),
// checked at config time so that a bad value is reported with its file:line and leaves no
// run directory. Non-finite numbers are refused by the options binder (core/options.h).
std::vector<std::string> CheckRanges(const config::Config& config, const RunOptions& run,
                                     const learn::PolicyOptions& policy) {
  std::vector<std::string> errors;
  auto fail = [&](const std::string& section, const std::string& key, const std::string& value,
                  const std::string& rule) {
    errors.push_back(config::KeyPlace(config, section, key) + " = " + value + ": " + rule);
  };
  const int max_threads = std::max(16, 4 * HardwareThreads());
  if (run.threads < 0 || run.threads > max_threads) {
    fail("run", "threads", std::to_string(run.threads),
         fmt::format("must be in [0, {}] (0 = the cores this process may use; at most 4x the "
                     "machine's {} hardware threads)",
                     max_threads, HardwareThreads()));
  }
  if (run.total_steps < 1) {
    fail("run", "total_steps", std::to_string(run.total_steps),
         "must be >= 1 (env steps to train for)");
  }
  if (run.checkpoint_every < 0) {
    fail("run", "checkpoint_every", std::to_string(run.checkpoint_every),
         "must be >= 0 (env steps between checkpoints; 0 = final only)");
  }
  if (!(policy.log_std_init >= -20 && policy.log_std_init <= 5)) {
    fail("policy", "log_std_init", rlt::FormatValue(policy.log_std_init),
         "must be in [-20, 5] (the initial std exp(log_std_init) in [2e-9, 148])");
  }
  return errors;
}

}  // namespace

Result<Setup> BuildSetup(config::Config config) {
  Setup s;
  RLT_RETURN_IF_ERROR(
      config.CheckSections({"run", "data", "split", "features", "env", "algo", "policy"}));
  RLT_RETURN_IF_ERROR(config.Bind("run", s.run));
  RLT_ASSIGN_OR_RETURN(s.algorithm, MakeAlgorithm(config));
  RLT_RETURN_IF_ERROR(s.algorithm->Bind(config, s.run.total_steps));
  if (config.Get("algo", "total_timesteps") != nullptr) {
    return Status::InvalidArgument(config.Get("algo", "total_timesteps")->source +
                                   ": [algo] total_timesteps is set by [run] total_steps");
  }
  RLT_RETURN_IF_ERROR(config.Bind("policy", s.policy));
  if (s.run.seeds != 1) {
    return Status::InvalidArgument(
        "[run] seeds = " + std::to_string(s.run.seeds) +
        ": one training run trains one seed; several seeds are trained by `rltrade train` "
        "(each into RUN/seed_<seed>/)");
  }
  if (!(s.run.rank_timeout_seconds >= 1 && s.run.rank_timeout_seconds <= 86400)) {
    return Status::InvalidArgument(
        "[run] rank_timeout_seconds = " + rlt::FormatValue(s.run.rank_timeout_seconds) +
        ": expected 1 to 86400 seconds (how long a rank under mpirun waits for the others)");
  }
  if (s.run.eval_every < 0) {
    return Status::InvalidArgument("[run] eval_every must be >= 0 (0 = no evaluation)");
  }
  RLT_ASSIGN_OR_RETURN(EnvSetup env_setup, BuildEnvSetup(config));
  RLT_ASSIGN_OR_RETURN(s.run.select_metric,
                       ResolveSelectMetric(config, s.run, env_setup.context.market != nullptr));
  std::vector<std::string> errors = CheckRanges(config, s.run, s.policy);
  if (Status algo = s.algorithm->Check(config, s.run, s.policy, env_setup.num_envs); !algo.ok()) {
    if (algo.code() != Status::Code::kInvalidArgument) return algo;
    errors.push_back(algo.message());
  }
  RLT_RETURN_IF_ERROR(config::JoinErrors(errors));
  // Honesty: whatever set the training range ([env] range, --set, a fold's
  // split), the dates training will see must not touch [split] test.
  RLT_ASSIGN_OR_RETURN(s.ranges, TrainingRangesOf(env_setup));
  RLT_RETURN_IF_ERROR(CheckOutsideTest(env_setup.split, s.ranges));
  RLT_RETURN_IF_ERROR(CheckCapitalBuysOneLot(env_setup));
  s.split = env_setup.split;
  if (s.run.eval_every > 0) {
    RLT_ASSIGN_OR_RETURN(s.eval, BuildEvalEnvSetup(env_setup, s.run));
  }
  if (s.run.device != "cpu") {
    return Status::InvalidArgument("[run] device = \"" + s.run.device +
                                   "\": this build trains on \"cpu\" (\"auto\" measures and "
                                   "picks; it is resolved before setup)");
  }
  // threads = 0: the cores this process is given. The resolved count is what the saved
  // config.toml records (config.SetSection below), so a resume uses the same count and
  // stays bit-identical even on a machine with other cores.
  const int threads = ResolveThreads(s.run.threads);
  s.run.threads = threads;
  WarnIfOversubscribed(threads);
  learn::SetComputeThreads(threads);
  const int num_envs = s.algorithm->NumEnvs(env_setup.num_envs, threads);
  {
    // One probe env gives the spec the memory estimate needs, before num_envs are built.
    RLT_ASSIGN_OR_RETURN(auto probe, env::MakeEnvs(env_setup.id, env_setup.context, 1));
    RLT_RETURN_IF_ERROR(s.algorithm->CheckMemory(config, s.policy, probe.front()->spec(), num_envs,
                                                 AvailableMemoryBytes()));
  }
  RLT_ASSIGN_OR_RETURN(auto envs, env::MakeEnvs(env_setup.id, env_setup.context, num_envs));
  s.venv = std::make_unique<env::VecEnv>(std::move(envs), threads);
  if (s.run.eval_every > 0) {
    Result<std::vector<std::unique_ptr<env::Env>>> eval_envs =
        env::MakeEnvs(env_setup.id, s.eval.context, s.eval.num_envs);
    if (!eval_envs.ok()) {
      return Status::InvalidArgument("evaluation environment (run.eval_every > 0): " +
                                     eval_envs.status().message());
    }
    s.eval_venv = std::make_unique<env::VecEnv>(std::move(*eval_envs), threads);
  }
  RLT_ASSIGN_OR_RETURN(s.trainer,
                       s.algorithm->CreateTrainer(*s.venv, s.policy, s.run.seed, threads));
  config.SetSection("run", s.run);
  config.SetSectionValues("algo", s.algorithm->ResolvedRows());
  config.SetSection("policy", s.policy);
  ResolveEnvSection(config, env_setup);
  if (env_setup.context.market) {
    s.normalizer_json = JsonText(env_setup.context.market->NormalizerJson(), 2) + "\n";
    RLT_ASSIGN_OR_RETURN(const DataRecord record, RecordSetupData(env_setup));
    s.data_json = DataRecordJson(record);
  }
  s.config = std::move(config);
  return s;
}

}  // namespace rlt::train::internal
