// rltrade cli: `rltrade bench env` — environment engine throughput; `rltrade bench machine`
// — the machine (perf/machine.h); `rltrade bench train` — a config's training loop measured
// per device and thread count (perf/train_bench.h); `rltrade bench tune` — a study one trial
// at a time against several at once (evalrun/tune_run.h).
//
// Steps N environments with random actions for S seconds on T worker threads and
// prints env steps per second (one env step = one environment advancing one bar).
// Random actions are drawn before timing into a pool of 64 action batches that is cycled,
// so the figure measures the engine, not the random number generator. Market envs run
// on a synthetic market (market/synth.h) with the chosen feature preset.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "config/config.h"
#include "core/json_text.h"
#include "core/options.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "dist/dist.h"
#include "env/registry.h"
#include "env/vec_env.h"
#include "evalrun/tune_run.h"
#include "market/date_range.h"
#include "market/synth.h"
#include "paper/paper.h"
#include "perf/machine.h"
#include "perf/mpi_bench.h"
#include "perf/startup_bench.h"
#include "perf/threads_check.h"
#include "perf/train_bench.h"

namespace rlt::cli {
namespace {

struct BenchEnvFlags {
  std::string env = "intraday";
  int envs = 256;
  int threads = 0;
  double seconds = 5.0;
  std::string preset = "fast22";
  int days = 250;
  uint64_t seed = 1;
  std::vector<std::string> settings;
  bool json = false;
};

Result<env::EnvContext> BuildContext(const BenchEnvFlags& f, bool needs_market) {
  env::EnvContext ctx;
  for (const auto& s : f.settings) {
    RLT_ASSIGN_OR_RETURN(auto kv, SplitAssignment(s));
    ctx.settings[kv.first] = kv.second;
  }
  if (!needs_market) return ctx;
  market::SynthOptions so;
  so.num_days = f.days;
  so.seed = f.seed;
  RLT_ASSIGN_OR_RETURN(market::MarketData md, market::GenerateSynthetic(so));
  env::DatasetOptions dopt;
  dopt.preset = f.preset;
  RLT_ASSIGN_OR_RETURN(ctx.market, env::PrepareMarketDataset(std::move(md.symbols.front()), dopt,
                                                             market::DateRange{}));
  return ctx;
}

void FillRandomActions(const env::ActionSpace& space, Rng& rng, std::vector<float>& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    const int d = static_cast<int>(i % space.dim);
    out[i] = space.discrete ? static_cast<float>(rng.UniformInt(space.n))
                            : space.low[d] + (space.high[d] - space.low[d]) * rng.UniformFloat();
  }
}

int RunBenchEnv(const BenchEnvFlags& f) {
  const env::EnvEntry* entry = nullptr;
  for (const auto& e : env::EnvRegistry()) {
    if (f.env == e.id) entry = &e;
  }
  Result<env::EnvContext> ctx = BuildContext(f, entry != nullptr && entry->needs_market_data);
  if (!ctx.ok()) return ReportError(ctx.status());
  auto envs = env::MakeEnvs(f.env, *ctx, f.envs);
  if (!envs.ok()) return ReportError(envs.status());
  const int threads = f.threads > 0 ? f.threads : HardwareThreads();
  env::VecEnv vec(std::move(envs).value(), threads);
  constexpr int kPool = 64;
  const size_t batch = static_cast<size_t>(vec.num_envs()) * vec.act_dim();
  std::vector<float> actions(batch * kPool);
  Rng rng(f.seed);
  FillRandomActions(vec.spec().action, rng, actions);
  vec.Reset(f.seed);
  for (int i = 0; i < 100; ++i) vec.Step(&actions[(i % kPool) * batch]);  // warm caches
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  int64_t vector_steps = 0;
  double elapsed = 0;
  while (elapsed < f.seconds) {
    for (int i = 0; i < 256; ++i) vec.Step(&actions[((vector_steps + i) % kPool) * batch]);
    vector_steps += 256;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  const int64_t steps = vector_steps * vec.num_envs();
  const double rate = static_cast<double>(steps) / elapsed;
  if (f.json) {
    nlohmann::json j = {{"env", f.env},
                        {"envs", vec.num_envs()},
                        {"threads", vec.threads()},
                        {"obs_dim", vec.obs_dim()},
                        {"steps", steps},
                        {"seconds", elapsed},
                        {"steps_per_sec", rate}};
    fmt::print("{}\n", JsonText(j, 2));
  } else {
    fmt::print("env {}  envs {}  threads {}  obs_dim {}\n", f.env, vec.num_envs(), vec.threads(),
               vec.obs_dim());
    fmt::print("{} env steps in {:.2f} s = {:.2f} million env steps/s\n", steps, elapsed,
               rate / 1e6);
  }
  return 0;
}

int RunBenchMachine(bool json) {
  const perf::MachineReport r = perf::MeasureMachine(perf::MachineBenchOptions{});
  if (json) {
    nlohmann::json j = {{"cores", r.cores},
                        {"cpu_model", r.cpu_model},
                        {"blas_library", r.blas_library},
                        {"blas_config", r.blas_config},
                        {"openmp_libraries", r.openmp_libraries},
                        {"blas_libraries", r.blas_libraries},
                        {"duplicate_openmp", r.duplicate_openmp()},
                        {"memcpy_gbytes_per_sec", r.memcpy_gbytes_per_sec},
                        {"torch_version", r.torch_version}};
    for (const auto& d : r.devices) {
      nlohmann::json dj = {{"device", d.device}, {"op_overhead_us", d.op_overhead_us}};
      for (const auto& m : d.matmul) {
        dj["matmul"].push_back({{"size", m.size}, {"threads", m.threads}, {"gflops", m.gflops}});
      }
      j["devices"].push_back(dj);
    }
    fmt::print("{}\n", JsonText(j, 2));
    return 0;
  }
  fmt::print("cpu        {} ({} hardware threads)\n", r.cpu_model, r.cores);
  fmt::print("blas       {}\n", r.blas_library.empty() ? "(none mapped)" : r.blas_library);
  if (!r.blas_config.empty()) fmt::print("           {}\n", r.blas_config);
  if (r.blas_library.find("openblas") == std::string::npos &&
      r.blas_library.find("mkl") == std::string::npos) {
    fmt::print(
        "WARNING    the matrix products are not using OpenBLAS or MKL: matrix work runs on the "
        "reference "
        "BLAS (~10x slower); install libopenblas0-pthread\n");
  }
  fmt::print("openmp     {}\n", r.openmp_libraries.empty()
                                    ? std::string("(none mapped)")
                                    : fmt::format("{}", fmt::join(r.openmp_libraries, ", ")));
  fmt::print("blas libs  {}\n", fmt::format("{}", fmt::join(r.blas_libraries, ", ")));
  if (r.duplicate_openmp()) {
    fmt::print(
        "WARNING    {} OpenMP runtimes are loaded into one process; their thread pools "
        "oversubscribe the cores and mixing them can crash (link every library against "
        "one runtime, e.g. Debian's libgomp)\n",
        r.openmp_libraries.size());
  }
  fmt::print("libtorch   {}\n",
             r.torch_version.empty() ? "none (built without LibTorch)" : r.torch_version);
  fmt::print("memcpy     {:.1f} GB/s (one thread, read + write)\n", r.memcpy_gbytes_per_sec);
  for (const auto& d : r.devices) {
    if (d.op_overhead_us > 0) {
      fmt::print("\ndevice {}: LibTorch per-operator overhead {:.2f} us (small tensor add)\n",
                 d.device, d.op_overhead_us);
    } else {
      fmt::print("\ndevice {}\n", d.device);
    }
    fmt::print("  {:>6} {:>8} {:>10}\n", "size", "threads", "GFLOP/s");
    for (const auto& m : d.matmul) {
      fmt::print("  {:>6} {:>8} {:>10.1f}\n", m.size, m.threads, m.gflops);
    }
  }
  return 0;
}

struct BenchTrainFlags {
  perf::TrainBenchOptions options;
  std::string devices = "cpu";
  std::string backends;  // "native,torch"; "" = the config's
  std::string threads;   // "1,2"
  std::string report;
  bool json = false;
};

Result<std::vector<std::string>> SplitList(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    if (item.empty()) return Status::InvalidArgument("empty item in list '" + text + "'");
    items.push_back(item);
    start = comma + 1;
  }
  return items;
}

// "1,2" -> {1, 2}: the --threads lists of `bench train` and `bench threads`.
Result<std::vector<int>> ParseThreadList(const std::string& text) {
  RLT_ASSIGN_OR_RETURN(std::vector<std::string> items, SplitList(text));
  std::vector<int> out;
  for (const std::string& t : items) {
    char* end = nullptr;
    errno = 0;
    const long n = std::strtol(t.c_str(), &end, 10);
    if (*end != '\0' || n < 1 || errno == ERANGE || n > std::numeric_limits<int>::max()) {
      return Status::InvalidArgument("--threads " + text +
                                     ": expected positive integers, e.g. 1,2");
    }
    out.push_back(static_cast<int>(n));
  }
  return out;
}

int RunBenchTrainOnRanks(const BenchTrainFlags& f);

int RunBenchTrain(BenchTrainFlags f) {
  Result<std::vector<std::string>> devices = SplitList(f.devices);
  if (!devices.ok()) return ReportError(devices.status());
  f.options.devices = *devices;
  if (!f.backends.empty()) {
    Result<std::vector<std::string>> backends = SplitList(f.backends);
    if (!backends.ok()) return ReportError(backends.status());
    f.options.backends = *backends;
  }
  if (!f.threads.empty()) {
    Result<std::vector<int>> threads = ParseThreadList(f.threads);
    if (!threads.ok()) return ReportError(threads.status());
    f.options.threads = *threads;
  }
  if (dist::Distributed()) return RunBenchTrainOnRanks(f);
  Result<std::vector<perf::TrainBenchResult>> results = perf::MeasureTraining(f.options);
  if (!results.ok()) return ReportError(results.status());
  if (f.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& r : *results) {
      nlohmann::json breakdown = nlohmann::json::object();
      for (const auto& [phase, fraction] : r.breakdown) breakdown[phase] = fraction;
      all.push_back({{"device", r.device},
                     {"backend", r.backend},
                     {"threads", r.threads},
                     {"steps", r.steps},
                     {"seconds", r.seconds},
                     {"env_steps_per_sec", r.env_steps_per_sec},
                     {"env_steps_per_sec_per_core", r.env_steps_per_core},
                     {"algo", r.algo},
                     {"breakdown", breakdown},
                     {"update_gflops", r.update_gflops},
                     {"peak_gflops", r.peak_gflops},
                     {"end_to_end_gflops", r.end_to_end_gflops},
                     {"end_to_end_fraction", r.end_to_end_fraction},
                     {"peak_rss_bytes", r.peak_rss_bytes},
                     {"projected_seconds", r.projected_seconds},
                     {"total_steps", r.total_steps}});
    }
    fmt::print("{}\n", JsonText((all.size() == 1 ? all.front() : all), 2));
  } else {
    fmt::print("{}", perf::TrainBenchTable(*results, /*markdown=*/false));
  }
  if (!f.report.empty()) {
    std::ofstream out(f.report, std::ios::binary);
    out << perf::TrainBenchMarkdown(f.options, *results);
    out.close();
    if (!out) {
      return ReportError(
          Status::IoError("cannot write the report " + f.report + " (disk full or not writable?)"));
    }
  }
  return 0;
}

// `mpirun -np K rltrade bench train`: the config data-parallel on rank 0 alone, then on
// all ranks; rank 0 prints aggregate env steps/s, speed-up and efficiency.
int RunBenchTrainOnRanks(const BenchTrainFlags& f) {
  auto world = dist::WorldCollective(/*timeout_seconds=*/600);
  Result<perf::ScalingResult> r = perf::MeasureScaling(f.options, *world);
  if (world->rank() != 0) return r.ok() ? 0 : 1;
  if (!r.ok()) return ReportError(r.status());
  const perf::DataParallelMeasure &one = r->one, &all = r->all;
  const double cores = static_cast<double>(all.ranks) * std::max(1, all.shape.threads);
  const double per_core = all.env_steps_per_sec / cores;
  if (f.json) {
    fmt::print("{}\n",
               JsonText(nlohmann::json{{"ranks", all.ranks},
                                       {"envs_per_rank", all.shape.num_envs},
                                       {"threads_per_rank", all.shape.threads},
                                       {"one_rank_env_steps_per_sec", one.env_steps_per_sec},
                                       {"env_steps_per_sec", all.env_steps_per_sec},
                                       {"env_steps_per_sec_per_core", per_core},
                                       {"algo", all.shape.algo},
                                       {"speedup", r->speedup},
                                       {"round_speedups", r->round_speedups},
                                       {"scaling_efficiency", r->efficiency},
                                       {"communicate_fraction", all.communicate_fraction},
                                       {"communicate_fraction_max", all.communicate_fraction_max},
                                       {"steps", all.steps},
                                       {"seconds", all.seconds}},
                        2));
    return 0;
  }
  const std::string what =
      fmt::format("{} of {} ({} and {} thread(s) per rank",
                  all.shape.dense_update ? "data-parallel training" : all.shape.algo,
                  f.options.config_path, all.shape.workload, all.shape.threads);
  fmt::print(
      "{}, after one warm-up update; the median of {} rounds of 1 rank then {} ranks: "
      "speed-ups {:.2f})\n"
      "  1 rank : {:>10.0f} env steps/s ({:.0f} per core)\n"
      "  {} ranks: {:>10.0f} env steps/s (all ranks; {:.0f} per core), speed-up {:.2f}x, "
      "scaling efficiency {:.0f}%, {:.1f}% of the wall time communicating (mean over the "
      "ranks; largest {:.1f}%)\n",
      what, r->round_speedups.size(), all.ranks, fmt::join(r->round_speedups, ", "),
      one.env_steps_per_sec, one.env_steps_per_sec / std::max(1, one.shape.threads), all.ranks,
      all.env_steps_per_sec, per_core, r->speedup, 100 * r->efficiency,
      100 * all.communicate_fraction, 100 * all.communicate_fraction_max);
  return 0;
}

struct BenchMpiFlags {
  perf::TrainBenchOptions options;
  bool json = false;
};

std::string Micros(double seconds) { return fmt::format("{:.1f}", seconds * 1e6); }

// `mpirun -np K rltrade bench mpi`: allreduce latency and bandwidth, the communicating
// fraction of a data-parallel update, and the projection past this machine.
int RunBenchMpi(const BenchMpiFlags& f) {
  auto world = dist::WorldCollective(/*timeout_seconds=*/600);
  Result<perf::MpiBenchResult> result = perf::RunMpiBench(f.options, *world);
  if (world->rank() != 0) return result.ok() ? 0 : 1;
  if (!result.ok()) return ReportError(result.status());
  const int k = result->ranks;
  const std::vector<perf::AllreduceTiming>& timings = result->timings;
  const std::vector<perf::ProjectionRow>& projection = result->projection;
  const std::optional<perf::ScalingResult> scaling =
      result->has_scaling ? std::optional<perf::ScalingResult>(result->scaling) : std::nullopt;
  const double modelled_here = result->modelled_communicate_seconds_here;
  const double measured_here = result->measured_communicate_seconds_here;
  if (f.json) {
    nlohmann::json j = {{"ranks", k}, {"allreduce", nlohmann::json::array()}};
    for (const auto& t : timings) {
      j["allreduce"].push_back({{"floats", t.floats},
                                {"bytes", 4 * t.floats},
                                {"repeats", t.repeats},
                                {"median_seconds", t.median_seconds},
                                {"algorithm_gbps", t.algorithm_gbps},
                                {"bus_gbps", t.bus_gbps}});
    }
    if (scaling) {
      j["parameters"] = scaling->all.shape.parameters;
      j["one_rank_env_steps_per_sec"] = scaling->one.env_steps_per_sec;
      j["env_steps_per_sec"] = scaling->all.env_steps_per_sec;
      j["scaling_efficiency"] = scaling->efficiency;
      j["communicate_fraction"] = scaling->all.communicate_fraction;
      j["communicate_fraction_max"] = scaling->all.communicate_fraction_max;
      j["one_rank_seconds_per_update"] = scaling->one.seconds_per_update;
      j["seconds_per_update"] = scaling->all.seconds_per_update;
      j["modelled_communicate_seconds_here"] = modelled_here;
      j["measured_communicate_seconds_here"] = measured_here;
      j["projection"] = nlohmann::json::array();
      for (const auto& p : projection) {
        j["projection"].push_back({{"ranks", p.ranks},
                                   {"network", p.network},
                                   {"communicate_seconds", p.communicate_seconds},
                                   {"update_seconds", p.update_seconds},
                                   {"efficiency", p.efficiency},
                                   {"env_steps_per_sec", p.env_steps_per_sec}});
      }
    }
    fmt::print("{}\n", JsonText(j, 2));
    return 0;
  }
  if (k == 1) {
    fmt::print(
        "one rank: nothing to exchange. Run it as `mpirun -np K rltrade bench mpi ...` for the "
        "allreduce timings, the K-rank update and the projection.\n");
  } else {
    fmt::print("allreduce of float32 sums over {} ranks (median of the repeats)\n", k);
  }
  if (k > 1) {
    fmt::print("  {:>10} {:>12} {:>8} {:>12} {:>14} {:>10}\n", "floats", "bytes", "repeats",
               "median us", "algorithm GB/s", "bus GB/s");
  }
  for (const auto& t : timings) {
    const bool policy = scaling && t.floats == scaling->all.shape.parameters;
    fmt::print("  {:>10} {:>12} {:>8} {:>12} {:>14.3f} {:>10.3f}{}\n", t.floats, 4 * t.floats,
               t.repeats, Micros(t.median_seconds), t.algorithm_gbps, t.bus_gbps,
               policy ? "  (the policy's parameters)" : "");
  }
  if (!scaling) return 0;
  const perf::DataParallelMeasure &one = scaling->one, &all = scaling->all;
  fmt::print(
      "\ndata-parallel training of {} ({} parameters; {} envs, {} thread(s) per rank)\n"
      "  1 rank : {:>10.0f} env steps/s, {:.4f} s per update\n",
      f.options.config_path, all.shape.parameters, all.shape.num_envs, all.shape.threads,
      one.env_steps_per_sec, one.seconds_per_update);
  if (k < 2) return 0;
  fmt::print(
      "  {} ranks: {:>10.0f} env steps/s, {:.4f} s per update, scaling efficiency {:.0f}%, "
      "{:.1f}% of the wall time communicating (mean over the ranks; largest {:.1f}%)\n",
      k, all.env_steps_per_sec, all.seconds_per_update, 100 * scaling->efficiency,
      100 * all.communicate_fraction, 100 * all.communicate_fraction_max);
  fmt::print(
      "  the model with this machine's allreduce: {:.4f} s per update communicating; "
      "measured (mean over the ranks): {:.4f} s, the rest being waits for the slower rank\n",
      modelled_here, measured_here);
  fmt::print(
      "\nprojection (model: ring allreduce of the gradient per minibatch, latency-bound small "
      "sums; weak scaling; docs/scale-out.md)\n");
  fmt::print("  {:<26} {:>6} {:>14} {:>12} {:>11} {:>14}\n", "network", "ranks", "comm s/update",
             "s/update", "efficiency", "env steps/s");
  for (const auto& p : projection) {
    fmt::print("  {:<26} {:>6} {:>14.5f} {:>12.4f} {:>10.0f}% {:>14.0f}\n", p.network, p.ranks,
               p.communicate_seconds, p.update_seconds, 100 * p.efficiency, p.env_steps_per_sec);
  }
  return 0;
}

struct BenchThreadsFlags {
  std::vector<std::string> configs;
  perf::ThreadsCheckOptions options;
  std::string threads = "1,2";
};

// `rltrade bench threads`: threads = 0 against the best fixed count, per config.
int RunBenchThreads(BenchThreadsFlags f) {
  Result<std::vector<int>> threads = ParseThreadList(f.threads);
  if (!threads.ok()) return ReportError(threads.status());
  f.options.fixed_threads = *threads;
  bool all_ok = true;
  for (const std::string& config : f.configs) {
    perf::ThreadsCheckOptions o = f.options;
    o.config_path = config;
    Result<perf::ThreadsVerdict> v = perf::CheckDefaultThreads(o);
    if (!v.ok()) return ReportError(v.status());
    fmt::print("{}", perf::DescribeVerdict(config, *v, o.tolerance));
    std::fflush(stdout);
    all_ok = all_ok && v->ok;
  }
  return all_ok ? 0 : 1;
}

struct BenchTuneFlags {
  evalrun::TuneBenchOptions options;
  bool json = false;
};

// A benchmark's JSON result: printed as it is with --json, else through `describe`.
int PrintBenchJson(const Result<std::string>& r, bool json,
                   const std::function<void(const nlohmann::json&)>& describe) {
  if (!r.ok()) return ReportError(r.status());
  if (json) {
    fmt::print("{}\n", *r);
  } else {
    describe(nlohmann::json::parse(*r));
  }
  return 0;
}

int RunBenchTune(const BenchTuneFlags& f) {
  return PrintBenchJson(evalrun::BenchTune(f.options), f.json, [&f](const nlohmann::json& j) {
    fmt::print(
        "{} trials of {}: {:.1f} s one at a time, {:.1f} s {} at a time (ratio {:.2f})\n"
        "per trial: {:.3f} s training loop, {:.3f} s overhead (setup, run files, validation "
        "evaluation) = {:.1f}% (medians)\n",
        f.options.trials, f.options.config_path, j["sequential_seconds"].get<double>(),
        j["parallel_seconds"].get<double>(), f.options.parallel, j["ratio"].get<double>(),
        j["train_seconds_median"].get<double>(), j["overhead_seconds_median"].get<double>(),
        100 * j["overhead_fraction_median"].get<double>());
  });
}

struct BenchPaperFlags {
  paper::PaperBenchOptions options;
  bool json = false;
};

int RunBenchPaper(const BenchPaperFlags& f) {
  return PrintBenchJson(paper::BenchPaper(f.options), f.json, [&f](const nlohmann::json& j) {
    fmt::print(
        "paper session of {} (preset {}): {} bars, {} decisions; bar-to-decision latency p50 "
        "{:.1f} us, p99 {:.1f} us, max {:.1f} us; {:.0f} bars/s\n",
        f.options.config_path, j["preset"].get<std::string>(), j["bars"].get<int64_t>(),
        j["decisions"].get<int64_t>(), j["latency_p50_us"].get<double>(),
        j["latency_p99_us"].get<double>(), j["latency_max_us"].get<double>(),
        j["bars_per_second"].get<double>());
  });
}

}  // namespace

struct BenchStartupFlags {
  perf::StartupBenchOptions options;
  bool check = false;
  bool json = false;
};

// `rltrade bench startup`: exec-to-exit time and peak memory of the instant commands.
int RunBenchStartup(const BenchStartupFlags& f) {
  Result<std::vector<perf::StartupTiming>> r = perf::MeasureStartup(f.options);
  if (!r.ok()) return ReportError(r.status());
  bool within = true;
  for (const perf::StartupTiming& t : *r) {
    within = within && t.median_seconds <= perf::kStartupTargetSeconds &&
             t.peak_rss_mb <= perf::kStartupTargetMb;
  }
  if (f.json) {
    nlohmann::json j = {{"target_seconds", perf::kStartupTargetSeconds},
                        {"target_mb", perf::kStartupTargetMb},
                        {"within_targets", within},
                        {"commands", nlohmann::json::array()}};
    for (const perf::StartupTiming& t : *r) {
      j["commands"].push_back({{"name", t.name},
                               {"command", t.command},
                               {"repeats", t.repeats},
                               {"median_seconds", t.median_seconds},
                               {"min_seconds", t.min_seconds},
                               {"max_seconds", t.max_seconds},
                               {"peak_rss_mb", t.peak_rss_mb}});
    }
    fmt::print("{}\n", JsonText(j, 2));
  } else {
    fmt::print(
        "start-up of the instant commands ({} runs each, interleaved; targets: median "
        "<= {:.0f} ms, peak <= {:.0f} MB)\n",
        f.options.repeats, 1e3 * perf::kStartupTargetSeconds, perf::kStartupTargetMb);
    fmt::print("  {:<8} {:>10} {:>8} {:>8} {:>9}  {}\n", "command", "median ms", "min ms", "max ms",
               "peak MB", "");
    for (const perf::StartupTiming& t : *r) {
      const bool ok = t.median_seconds <= perf::kStartupTargetSeconds &&
                      t.peak_rss_mb <= perf::kStartupTargetMb;
      fmt::print("  {:<8} {:>10.1f} {:>8.1f} {:>8.1f} {:>9.1f}  {}\n", t.name,
                 1e3 * t.median_seconds, 1e3 * t.min_seconds, 1e3 * t.max_seconds, t.peak_rss_mb,
                 ok ? "" : "over the target");
    }
  }
  return f.check && !within ? 1 : 0;
}

void RegisterBenchCommands(CLI::App& app, Action* action) {
  CLI::App* bench = app.add_subcommand("bench", "Measure throughput");
  bench->require_subcommand(1);
  auto f = std::make_shared<BenchEnvFlags>();
  CLI::App* env = bench->add_subcommand("env", "Env steps per second with random actions");
  env->add_option("--env", f->env, "environment id (see docs/environments.md)")
      ->capture_default_str();
  env->add_option("--envs", f->envs, "number of environments")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  env->add_option("--threads", f->threads, "worker threads (0 = all cores)")->capture_default_str();
  env->add_option("--seconds", f->seconds, "measuring time")->capture_default_str();
  env->add_option("--preset", f->preset, "feature preset for market envs")->capture_default_str();
  env->add_option("--days", f->days, "synthetic sessions for market envs")->capture_default_str();
  env->add_option("--seed", f->seed, "seed")->capture_default_str();
  env->add_option("--set", f->settings, "environment option KEY=VALUE (repeatable)");
  env->add_flag("--json", f->json, "print JSON");
  env->callback([f, action] { *action = [f] { return RunBenchEnv(*f); }; });

  auto machine_json = std::make_shared<bool>(false);
  CLI::App* machine = bench->add_subcommand(
      "machine", "BLAS in use, matmul GFLOP/s per thread count, memory bandwidth, op overhead");
  machine->add_flag("--json", *machine_json, "print JSON");
  machine->callback([machine_json, action] {
    *action = [machine_json] { return RunBenchMachine(*machine_json); };
  });

  auto tf = std::make_shared<BenchTrainFlags>();
  CLI::App* train = bench->add_subcommand(
      "train", "A config's real training loop per device and thread count, with a breakdown");
  train->add_option("--config", tf->options.config_path, "training config (TOML)")->required();
  train->add_option("--steps", tf->options.steps, "env steps to measure (0 = 4 updates)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 50));
  train->add_option("--devices", tf->devices, "comma-separated devices (cpu; cuda if built)")
      ->capture_default_str();
  train->add_option("--threads", tf->threads, "comma-separated thread counts (default: config)");
  train->add_option("--backends", tf->backends,
                    "comma-separated learner backends to compare, e.g. native,torch "
                    "(default: the config's [policy] backend)");
  train->add_option("--set", tf->options.overrides, "config override SECTION.KEY=VALUE");
  train
      ->add_option("--rounds", tf->options.rounds,
                   "under mpirun: rounds of (1 rank, then all ranks), median reported")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  train->add_option("--report", tf->report, "write a Markdown report with a recommendation");
  train->add_flag("--json", tf->json, "print JSON (an array with several settings)");
  train->callback([tf, action] { *action = [tf] { return RunBenchTrain(*tf); }; });

  auto mf = std::make_shared<BenchMpiFlags>();
  CLI::App* mpi = bench->add_subcommand(
      "mpi",
      "Under mpirun: allreduce latency and bandwidth, and with --config the communicating "
      "fraction of a data-parallel update and a projection to 8, 64 and 512 ranks");
  mpi->add_option("--config", mf->options.config_path, "training config (TOML) to measure");
  mpi->add_option("--steps", mf->options.steps, "env steps to measure (0 = 4 updates)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 50));
  mpi->add_option("--set", mf->options.overrides, "config override SECTION.KEY=VALUE");
  mpi->add_option("--rounds", mf->options.rounds,
                  "rounds of (1 rank, then all ranks); the median is reported")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  mpi->add_flag("--json", mf->json, "print JSON");
  mpi->callback([mf, action] { *action = [mf] { return RunBenchMpi(*mf); }; });

  auto thf = std::make_shared<BenchThreadsFlags>();
  CLI::App* threads = bench->add_subcommand(
      "threads",
      "Is threads = 0 within --tolerance of the best fixed thread count? (medians of "
      "--repeats interleaved runs of `bench train`; exit 1 if not)");
  threads->add_option("--config", thf->configs, "training config(s) (TOML)")->required();
  threads->add_option("--threads", thf->threads, "fixed thread counts to compare with")
      ->capture_default_str();
  threads
      ->add_option("--steps", thf->options.steps,
                   "env steps per run (0 = 4 updates and at least 2 s, calibrated)")
      ->capture_default_str();
  threads->add_option("--repeats", thf->options.repeats, "runs per setting")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  threads->add_option("--tolerance", thf->options.tolerance, "allowed shortfall (0.05 = 5%)")
      ->capture_default_str();
  threads->add_option("--set", thf->options.overrides, "config override SECTION.KEY=VALUE");
  threads->add_flag("--check-scaling", thf->options.check_scaling,
                    "also exit 1 when a larger fixed count's median is below (1 - tolerance) "
                    "x a smaller count's (more threads must never be slower)");
  threads->callback([thf, action] { *action = [thf] { return RunBenchThreads(*thf); }; });

  auto tuf = std::make_shared<BenchTuneFlags>();
  tuf->options.config_path = "configs/cartpole_ppo.toml";
  CLI::App* tune = bench->add_subcommand(
      "tune",
      "A Sobol study run one trial at a time and --parallel at a time: wall times, their "
      "ratio, and each trial's overhead beside its training loop");
  tune->add_option("--config", tuf->options.config_path, "training config (TOML)")
      ->capture_default_str();
  tune->add_option("--space", tuf->options.space_path,
                   "search space (default: learning_rate and n_epochs)");
  tune->add_option("--trials", tuf->options.trials, "trials per study")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  tune->add_option("--parallel", tuf->options.parallel, "trials at once in the second study")
      ->capture_default_str()
      ->check(CLI::Range(2, 1024));
  tune->add_option("--set", tuf->options.overrides, "config override SECTION.KEY=VALUE");
  tune->add_option("--scratch", tuf->options.scratch,
                   "directory for the studies (removed afterwards)")
      ->capture_default_str();
  tune->add_flag("--json", tuf->json, "print JSON");
  tune->callback([tuf, action] { *action = [tuf] { return RunBenchTune(*tuf); }; });

  auto pf = std::make_shared<BenchPaperFlags>();
  CLI::App* paper_bench = bench->add_subcommand(
      "paper",
      "Bar-to-decision latency of a paper session (a short training on synthetic bars, then "
      "a replay through the sim broker): p50, p99");
  paper_bench->add_option("--config", pf->options.config_path, "training config (TOML)")
      ->capture_default_str();
  paper_bench
      ->add_option("--set", pf->options.overrides,
                   "config overrides (default: features.preset=fast22, a 64-64 policy)")
      ->capture_default_str();
  paper_bench->add_option("--days", pf->options.days, "synthetic sessions (60% train)")
      ->capture_default_str();
  paper_bench->add_option("--scratch", pf->options.scratch, "directory for the run (removed)")
      ->capture_default_str();
  paper_bench->add_flag("--json", pf->json, "print JSON");
  paper_bench->callback([pf, action] { *action = [pf] { return RunBenchPaper(*pf); }; });

  auto sf = std::make_shared<BenchStartupFlags>();
  CLI::App* startup = bench->add_subcommand(
      "startup",
      "Exec-to-exit time and peak memory of `--help`, `price` (one option) and `status RUN` "
      "(medians of interleaved runs; targets 30 ms and 40 MB)");
  startup->add_option("--repeats", sf->options.repeats, "runs per command")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  startup->add_option("--run", sf->options.run_dir,
                      "run directory for `status` (default: train a tiny one, not timed)");
  startup->add_option("--binary", sf->options.binary, "rltrade executable (default: this one)");
  startup->add_option("--scratch", sf->options.scratch, "directory for the tiny run (removed)")
      ->capture_default_str();
  startup->add_flag("--check", sf->check, "exit 1 when a command misses a target");
  startup->add_flag("--json", sf->json, "print JSON");
  startup->callback([sf, action] { *action = [sf] { return RunBenchStartup(*sf); }; });
}

}  // namespace rlt::cli
