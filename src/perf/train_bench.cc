// rltrade perf: `rltrade bench train` (see train_bench.h).
#include "perf/train_bench.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>

#include "core/proc_stats.h"
#include "learn/policy.h"
#include "learn/torch_plugin.h"
#include "perf/machine.h"
#include "train/train.h"

namespace rlt::perf {
namespace {

namespace fs = std::filesystem;

double LayerFlops(int in, const std::vector<int>& hidden, int out) {
  double flops = 0;
  int width = in;
  for (int h : hidden) {
    flops += 2.0 * width * h;
    width = h;
  }
  return flops + 2.0 * width * out;
}

std::vector<std::pair<std::string, double>> Breakdown(const train::PhaseSeconds& p, double wall) {
  std::vector<std::pair<std::string, double>> b = {
      {"env_step", p.env_step}, {"inference", p.inference},
      {"advantage", p.gae},     {"update_forward", p.update_forward},
      {"backward", p.backward}, {"optimizer", p.optimizer},
      {"logging", p.logging}};
  double measured = 0;
  for (const auto& kv : b) measured += kv.second;
  b.emplace_back("other", std::max(0.0, wall - measured));
  const double total = std::max(wall, measured);  // measured > wall only by clock jitter
  for (auto& kv : b) kv.second = total > 0 ? kv.second / total : 0;
  return b;
}

train::PhaseSeconds Minus(const train::PhaseSeconds& a, const train::PhaseSeconds& b) {
  train::PhaseSeconds d;
  d.env_step = a.env_step - b.env_step;
  d.inference = a.inference - b.inference;
  d.gae = a.gae - b.gae;
  d.update_forward = a.update_forward - b.update_forward;
  d.backward = a.backward - b.backward;
  d.optimizer = a.optimizer - b.optimizer;
  d.logging = a.logging - b.logging;
  return d;
}

Result<TrainBenchResult> MeasureOne(const TrainBenchOptions& o, const std::string& backend,
                                    const std::string& device, int threads) {
  std::vector<std::string> overrides = o.overrides;
  if (!backend.empty()) overrides.push_back("policy.backend=" + backend);
  overrides.push_back("run.device=" + device);
  if (threads > 0) overrides.push_back("run.threads=" + std::to_string(threads));
  const fs::path scratch =
      fs::temp_directory_path() / ("rltrade_bench_" + std::to_string(::getpid()) + "_" + backend +
                                   "_" + device + "_" + std::to_string(threads));
  fs::remove_all(scratch);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{scratch};
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<train::TrainingSession> bench,
                       train::OpenTrainingSession(o.config_path, overrides, scratch.string()));
  const train::SessionShape& shape = bench->shape();
  const int64_t per_update = shape.steps_per_update;  // the algorithm's (train/algorithm.h)
  const int64_t target = o.steps > 0 ? o.steps : 4 * per_update;
  RLT_RETURN_IF_ERROR(bench->Iterate());  // warm-up: first-touch allocations, thread pools
  const train::PhaseSeconds before = bench->timing();
  const int64_t steps0 = bench->steps();
  const auto t0 = std::chrono::steady_clock::now();
  int updates = 0;
  do {
    RLT_RETURN_IF_ERROR(bench->Iterate());
    ++updates;
  } while (bench->steps() - steps0 < target);
  TrainBenchResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const train::PhaseSeconds p = Minus(bench->timing(), before);
  r.device = device;
  r.backend = shape.backend;
  r.threads = shape.threads;
  r.steps = bench->steps() - steps0;
  r.env_steps_per_sec = static_cast<double>(r.steps) / r.seconds;
  r.env_steps_per_core = r.env_steps_per_sec / std::max(1, shape.threads);
  r.algo = shape.algo;
  r.dense_update = shape.dense_update;
  r.update_note = shape.update_note;
  r.breakdown = Breakdown(p, r.seconds);
  const double update_seconds = p.update_forward + p.backward + p.optimizer;
  const double flops =
      !shape.dense_update
          ? 0.0
          : updates * UpdateFlops(shape.obs_dim, shape.action_outputs, shape.pi, shape.vf,
                                  per_update, shape.n_epochs, shape.lstm_hidden, shape.shared_lstm);
  r.update_gflops = update_seconds > 0 ? flops / update_seconds / 1e9 : 0;
  r.peak_gflops = PeakMatmulGflops(2000, shape.threads);
  r.end_to_end_gflops = r.seconds > 0 ? flops / r.seconds / 1e9 : 0;
  r.end_to_end_fraction = r.peak_gflops > 0 ? r.end_to_end_gflops / r.peak_gflops : 0;
  r.peak_rss_bytes = PeakResidentBytes();
  r.total_steps = shape.total_steps;
  r.projected_seconds = static_cast<double>(shape.total_steps) / r.env_steps_per_sec;
  return r;
}

}  // namespace

double UpdateFlops(int obs_dim, int action_outputs, const std::vector<int>& pi,
                   const std::vector<int>& vf, int64_t samples, int epochs, int lstm_hidden,
                   bool shared_lstm) {
  const int tower_in = lstm_hidden > 0 ? lstm_hidden : obs_dim;
  double forward = LayerFlops(tower_in, pi, action_outputs) + LayerFlops(tower_in, vf, 1);
  if (lstm_hidden > 0) {
    forward += (shared_lstm ? 1 : 2) * 2.0 * (obs_dim + lstm_hidden) * 4.0 * lstm_hidden;
  }
  return 3.0 * forward * static_cast<double>(samples) * epochs;  // forward + 2x backward
}

std::vector<std::string> AvailableDevices() {
  std::vector<std::string> d = {"cpu"};
  if (learn::CudaAvailable()) d.push_back("cuda");
  return d;
}

Result<std::vector<TrainBenchResult>> MeasureTraining(const TrainBenchOptions& o) {
  // Only asking about another device than the CPU loads LibTorch (torch_plugin.h).
  const bool cpu_only = std::all_of(o.devices.begin(), o.devices.end(),
                                    [](const std::string& d) { return d == "cpu"; });
  const std::vector<std::string> available =
      cpu_only ? std::vector<std::string>{"cpu"} : AvailableDevices();
  for (const std::string& d : o.devices) {
    if (std::find(available.begin(), available.end(), d) == available.end()) {
      std::string list;
      for (const auto& a : available) list += (list.empty() ? "" : ", ") + a;
      return Status::InvalidArgument(
          "--devices " + d + ": not available in this build (available: " + list + ")" +
          (d == "cuda" ? "; this LibTorch has no CUDA device (torch::cuda::is_available() is "
                         "false)"
                       : ""));
    }
  }
  std::vector<int> threads = o.threads.empty() ? std::vector<int>{0} : o.threads;
  for (const std::string& b : o.backends) {
    if (b != "native" && b != "torch") {
      return Status::InvalidArgument("--backends " + b + ": expected native or torch");
    }
  }
  const std::vector<std::string> backends =
      o.backends.empty() ? std::vector<std::string>{""} : o.backends;
  std::vector<TrainBenchResult> results;
  for (const std::string& b : backends) {
    for (const std::string& d : o.devices) {
      for (int t : threads) {
        RLT_ASSIGN_OR_RETURN(TrainBenchResult r, MeasureOne(o, b, d, t));
        results.push_back(std::move(r));
      }
    }
  }
  return results;
}

namespace {
std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
}  // namespace

std::string TrainBenchTable(const std::vector<TrainBenchResult>& results, bool markdown) {
  std::vector<std::string> head = {"backend", "device", "threads", "env steps/s", "per core"};
  if (!results.empty()) {
    for (const auto& kv : results.front().breakdown) head.push_back(kv.first + " %");
  }
  for (const char* h : {"update GFLOP/s", "peak GFLOP/s", "peak RSS MB", "projected s"}) {
    head.push_back(h);
  }
  std::vector<std::vector<std::string>> rows = {head};
  for (const auto& r : results) {
    std::vector<std::string> row = {r.backend, r.device, std::to_string(r.threads),
                                    Fmt("%.0f", r.env_steps_per_sec),
                                    Fmt("%.0f", r.env_steps_per_core)};
    for (const auto& kv : r.breakdown) row.push_back(Fmt("%.1f", 100 * kv.second));
    row.push_back(Fmt("%.2f", r.update_gflops));
    row.push_back(Fmt("%.1f", r.peak_gflops));
    row.push_back(Fmt("%.0f", static_cast<double>(r.peak_rss_bytes) / 1e6));
    row.push_back(Fmt("%.0f", r.projected_seconds));
    rows.push_back(row);
  }
  std::vector<size_t> width(head.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::ostringstream out;
  for (size_t k = 0; k < rows.size(); ++k) {
    if (markdown) out << "|";
    for (size_t i = 0; i < rows[k].size(); ++i) {
      const std::string& c = rows[k][i];
      out << (markdown ? " " : (i ? "  " : "")) << std::string(width[i] - c.size(), ' ') << c
          << (markdown ? " |" : "");
    }
    out << "\n";
    if (markdown && k == 0) {
      out << "|";
      for (size_t i = 0; i < head.size(); ++i) out << std::string(width[i] + 1, '-') << ":|";
      out << "\n";
    }
  }
  return out.str();
}

std::string TrainBenchMarkdown(const TrainBenchOptions& o,
                               const std::vector<TrainBenchResult>& results) {
  std::ostringstream md;
  md << "# rltrade bench train: " << o.config_path << "\n\n";
  for (const auto& s : o.overrides) md << "- override `" << s << "`\n";
  md << "- measured env steps per setting: " << (results.empty() ? 0 : results.front().steps)
     << " (after one warm-up update); every number below is measured on this machine\n\n";
  md << TrainBenchTable(results, /*markdown=*/true) << "\n";
  md << "Phases are fractions of wall time from the trainer's own timers; `other` is the "
        "remainder. Update GFLOP/s counts the MLP's dense layers analytically "
        "(2·in·out per sample forward, twice that backward) against a 2000×2000 float32 "
        "matmul at the same thread count.\n\n";
  if (results.empty()) return md.str();
  const TrainBenchResult* best = &results.front();
  const TrainBenchResult* slowest = &results.front();
  for (const auto& r : results) {
    if (r.env_steps_per_sec > best->env_steps_per_sec) best = &r;
    if (r.env_steps_per_sec < slowest->env_steps_per_sec) slowest = &r;
  }
  const auto& b = best->breakdown;
  const auto top = std::max_element(
      b.begin(), b.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
  md << "## Recommendation\n\n";
  md << "Use **backend " << best->backend << ", device " << best->device << ", threads "
     << best->threads << "**: " << Fmt("%.0f", best->env_steps_per_sec) << " env steps/s";
  if (results.size() > 1) {
    md << ", " << Fmt("%.2f", best->env_steps_per_sec / slowest->env_steps_per_sec)
       << "x the slowest setting (backend " << slowest->backend << ", " << slowest->device
       << ", threads " << slowest->threads << ": " << Fmt("%.0f", slowest->env_steps_per_sec)
       << " env steps/s)";
  }
  md << "; the config's " << best->total_steps << " steps would take about "
     << Fmt("%.0f", best->projected_seconds) << " s.\n\n";
  md << "Where the time goes with it: " << top->first << " takes " << Fmt("%.0f", 100 * top->second)
     << "% of wall time";
  if (!best->dense_update) {
    md << " (" << best->update_note << ")";
  } else {
    md << ". The update reaches " << Fmt("%.2f", best->update_gflops) << " GFLOP/s, "
       << Fmt("%.1f", 100 * best->update_gflops / std::max(best->peak_gflops, 1e-9))
       << "% of the machine's matmul peak at this thread count (" << Fmt("%.1f", best->peak_gflops)
       << " GFLOP/s)";
  }
  if (best->dense_update && best->update_gflops < 0.1 * best->peak_gflops) {
    md << ": the network is too small for the matmuls to dominate, so per-operator overhead "
          "and the environment set the pace and more threads or a GPU help little";
  }
  md << ".\n";
  if (o.devices.size() == 1 && o.devices.front() == "cpu") {
    md << "\nOnly cpu was measured";
    if (!learn::TorchLoaded()) {
      md << " (the native engine runs on the CPU; CUDA is LibTorch's)";
    } else if (AvailableDevices().size() == 1) {
      md << " (this build has no CUDA device)";
    }
    md << ".\n";
  }
  return md.str();
}

}  // namespace rlt::perf
