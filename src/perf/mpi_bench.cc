// rltrade perf: data-parallel communication measured and modelled (see mpi_bench.h).
#include "perf/mpi_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "config/config.h"
#include "core/file_io.h"
#include "dist/dist.h"
#include "train/algorithm.h"

namespace rlt::perf {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The per-minibatch and per-step shape of one update with `ranks` ranks (weak scaling:
// each rank's share of a minibatch as in the measured shape).
int64_t MinibatchesPerUpdate(const train::SessionShape& s) {
  const int64_t global = s.num_envs * s.ranks;
  const int64_t batch = std::min<int64_t>(s.batch_size, s.n_steps * global);
  const int64_t per_env = std::max<int64_t>(1, batch / global);
  return static_cast<int64_t>(s.n_epochs) * (s.n_steps / per_env);
}

}  // namespace

std::vector<AllreduceTiming> MeasureAllreduce(Collective& group,
                                              const std::vector<int64_t>& sizes) {
  std::vector<AllreduceTiming> out;
  const int k = group.size();
  for (int64_t n : sizes) {
    std::vector<float> buffer(static_cast<size_t>(n), 1.0f);
    for (int w = 0; w < 3; ++w) group.SumFloats(buffer.data(), n, "bench mpi");
    // Repeats: about 0.2 s per size, at least 10; rank 0's estimate decides for all.
    const auto t0 = Clock::now();
    group.SumFloats(buffer.data(), n, "bench mpi");
    double estimate = Since(t0);
    group.SumDoubles(&estimate, 1, "bench mpi");
    const int repeats =
        static_cast<int>(std::clamp(0.2 / std::max(estimate / k, 1e-7), 10.0, 20000.0));
    std::vector<double> times;
    times.reserve(repeats);
    for (int r = 0; r < repeats; ++r) {
      const auto t = Clock::now();
      group.SumFloats(buffer.data(), n, "bench mpi");
      times.push_back(Since(t));
    }
    std::sort(times.begin(), times.end());
    AllreduceTiming a;
    a.floats = n;
    a.repeats = repeats;
    a.median_seconds = times[times.size() / 2];
    const double bytes = 4.0 * static_cast<double>(n);
    a.algorithm_gbps = bytes / a.median_seconds / 1e9;
    a.bus_gbps = k > 1 ? 2.0 * (k - 1) / k * bytes / a.median_seconds / 1e9 : 0.0;
    out.push_back(a);
  }
  return out;
}

Result<DataParallelMeasure> MeasureDataParallel(const TrainBenchOptions& o, Collective* group) {
  RLT_ASSIGN_OR_RETURN(
      const ScratchDirectory scratch,
      ScratchDirectory::Create(fs::temp_directory_path().string(), "rltrade_bench_mpi_"));
  RLT_ASSIGN_OR_RETURN(
      std::unique_ptr<train::TrainingSession> session,
      train::OpenTrainingSession(o.config_path, o.overrides, scratch.path(), group));
  const train::SessionShape& shape = session->shape();
  const int64_t per_update = shape.steps_per_update;  // over all ranks (train/algorithm.h)
  const int64_t target = o.steps > 0 ? o.steps : 4 * per_update;
  RLT_RETURN_IF_ERROR(session->Iterate());  // warm-up
  const train::PhaseSeconds before = session->timing();
  const int64_t steps0 = session->steps();
  const auto t0 = Clock::now();
  DataParallelMeasure m;
  do {
    RLT_RETURN_IF_ERROR(session->Iterate());
    ++m.updates;
  } while (session->steps() - steps0 < target);
  m.seconds = Since(t0);
  m.ranks = shape.ranks;
  m.steps = session->steps() - steps0;
  m.env_steps_per_sec = static_cast<double>(m.steps) / m.seconds;
  m.seconds_per_update = m.seconds / m.updates;
  // Every rank's waiting differs (the slower rank waits least): the mean and the largest.
  const double mine = (session->timing().communicate - before.communicate) / m.seconds;
  m.communicate_fraction = mine;
  m.communicate_fraction_max = mine;
  if (group != nullptr && group->size() > 1) {
    double sum = mine;
    group->SumDoubles(&sum, 1, "bench: the communicating fraction");
    m.communicate_fraction = sum / group->size();
    for (const std::string& text :
         group->Allgather(std::to_string(mine), "bench: the communicating fraction")) {
      m.communicate_fraction_max = std::max(m.communicate_fraction_max, std::stod(text));
    }
  }
  m.shape = shape;
  return m;
}

Result<ScalingResult> MeasureScaling(const TrainBenchOptions& o, Collective& world) {
  struct Round {
    DataParallelMeasure one, all;
    double speedup = 1;
  };
  std::vector<Round> rounds;
  for (int k = 0; k < std::max(1, o.rounds); ++k) {
    Round round;
    // Rank 0 alone with the data-parallel code path and the same environments per rank.
    Status alone = Status::Ok();
    if (world.rank() == 0) {
      LocalCollective one;
      Result<DataParallelMeasure> m = MeasureDataParallel(o, &one);
      if (m.ok()) {
        round.one = *m;
      } else {
        alone = m.status();
      }
    }
    dist::IdleBarrier();  // the other ranks wait asleep: rank 0 measures on an idle machine
    const std::vector<std::string> verdict =
        world.Allgather(alone.ok() ? "" : alone.message(), "bench: the one-rank measurement");
    if (!verdict[0].empty()) return Status::InvalidArgument(verdict[0]);
    if (world.size() == 1) {  // alone: the one measurement is both
      round.all = round.one;
    } else {
      RLT_ASSIGN_OR_RETURN(round.all, MeasureDataParallel(o, &world));
      if (world.rank() == 0 && round.one.env_steps_per_sec > 0) {
        round.speedup = round.all.env_steps_per_sec / round.one.env_steps_per_sec;
      }
    }
    rounds.push_back(round);
    if (world.size() == 1) break;  // nothing to compare
  }
  ScalingResult r;
  for (const Round& round : rounds) r.round_speedups.push_back(round.speedup);
  std::vector<size_t> order(rounds.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return rounds[a].speedup < rounds[b].speedup; });
  const Round& median = rounds[order[order.size() / 2]];
  r.one = median.one;
  r.all = median.all;
  r.speedup = median.speedup;
  r.efficiency = r.speedup / world.size();
  return r;
}

std::vector<NetworkModel> DefaultNetworks() {
  return {{"10 Gbit/s Ethernet (TCP)", 10, 10e-6}, {"100 Gbit/s RDMA", 100, 2e-6}};
}

double ModelCommunicateSeconds(const train::SessionShape& shape, int ranks,
                               const NetworkModel& net) {
  if (ranks < 2) return 0.0;
  const double k = ranks;
  const double alpha = net.latency_seconds, beta = net.gbit_per_sec * 1e9 / 8.0;  // bytes/s
  const double minibatches = static_cast<double>(MinibatchesPerUpdate(shape));
  const double gradient = 2.0 * (k - 1) * alpha +
                          2.0 * (k - 1) / k * 4.0 * static_cast<double>(shape.parameters) / beta;
  const double small_calls =
      2.0 * minibatches + (shape.norm_obs ? 2.0 : 0.0) * static_cast<double>(shape.n_steps) +
      (shape.norm_reward ? 2.0 : 0.0) * static_cast<double>(shape.n_steps) + 4.0;
  const double small = 2.0 * std::ceil(std::log2(k)) * alpha;
  return minibatches * gradient + small_calls * small;
}

std::vector<ProjectionRow> ProjectScaling(const DataParallelMeasure& one,
                                          const std::vector<int>& ranks,
                                          const std::vector<NetworkModel>& networks) {
  std::vector<ProjectionRow> rows;
  const double compute = one.seconds_per_update * (1.0 - one.communicate_fraction);
  const double per_rank_steps = static_cast<double>(one.shape.n_steps * one.shape.num_envs);
  for (const NetworkModel& net : networks) {
    for (int k : ranks) {
      ProjectionRow row;
      row.ranks = k;
      row.network = net.name;
      row.communicate_seconds = ModelCommunicateSeconds(one.shape, k, net);
      row.update_seconds = compute + row.communicate_seconds;
      row.efficiency = compute / row.update_seconds;
      row.env_steps_per_sec = k * per_rank_steps / row.update_seconds;
      rows.push_back(row);
    }
  }
  return rows;
}

Result<MpiBenchResult> RunMpiBench(const TrainBenchOptions& options, Collective& world) {
  MpiBenchResult out;
  out.ranks = world.size();
  if (!options.config_path.empty()) {
    // The model is PPO's per-minibatch gradient allreduce: an algorithm that exchanges
    // less has none. Every rank reads the same config, so every rank refuses alike.
    Result<config::Config> c = config::Config::LoadFile(options.config_path);
    Status st = c.ok() ? Status::Ok() : c.status();
    for (const std::string& o : options.overrides) {
      if (st.ok()) st = c->ApplyOverride(o);
    }
    if (st.ok()) {
      Result<const train::AlgorithmEntry*> entry = train::FindAlgorithm(*c);
      if (!entry.ok()) {
        st = entry.status();
      } else if (!(*entry)->minibatch_allreduce) {
        st = Status::InvalidArgument(fmt::format(
            "{}: [algo] name = \"{}\": bench mpi models PPO's gradient allreduce per "
            "minibatch; its ranks exchange {}. Measure their scaling with `mpirun -np K "
            "rltrade bench train --config {}`",
            options.config_path, (*entry)->name, (*entry)->exchange, options.config_path));
      }
    }
    RLT_RETURN_IF_ERROR(st);
  }
  std::vector<int64_t> sizes = {1, 1024, 16384, 262144, 4194304};
  if (!options.config_path.empty()) {
    Result<ScalingResult> r = MeasureScaling(options, world);
    RLT_RETURN_IF_ERROR(r.status());
    out.has_scaling = true;
    out.scaling = *r;
    sizes.push_back(r->all.shape.parameters);
    std::sort(sizes.begin(), sizes.end());
  }
  const int k = out.ranks;
  // Alone there is nothing to exchange: no allreduce timings.
  if (k > 1) out.timings = MeasureAllreduce(world, sizes);
  // The measures are complete on rank 0 only (MeasureScaling): the model runs there.
  if (out.has_scaling && k > 1 && world.rank() == 0) {
    out.projection = ProjectScaling(out.scaling.one, {2, 8, 64, 512}, DefaultNetworks());
    NetworkModel here{"this machine", 0, 0};
    for (const AllreduceTiming& t : out.timings) {
      if (t.floats == 1) here.latency_seconds = t.median_seconds / (2.0 * (k - 1));
      if (t.floats == out.scaling.all.shape.parameters) here.gbit_per_sec = 8 * t.bus_gbps;
    }
    out.modelled_communicate_seconds_here = ModelCommunicateSeconds(out.scaling.one.shape, k, here);
    out.measured_communicate_seconds_here =
        out.scaling.all.communicate_fraction * out.scaling.all.seconds_per_update;
  }
  return out;
}

}  // namespace rlt::perf
