// rltrade perf: `rltrade bench mpi` and `rltrade bench train` under mpirun —
// what data-parallel training costs in communication, measured, and a model of it past
// this machine.
//
// MeasureAllreduce   the group's SumFloats (one MPI_Allreduce) of each size: the median
//                    seconds of repeated calls after a warm-up, the algorithm bandwidth
//                    (bytes / time) and the bus bandwidth (2 (K - 1) / K x bytes / time:
//                    what each rank's link carries in a ring allreduce).
// MeasureDataParallel  a config's real training loop (train::OpenTrainingSession) as one
//                    member of a data-parallel group, after one warm-up update: all ranks'
//                    env steps per wall second and the fraction of the wall time the ranks
//                    waited in the group's sums and gathers (TrainerTiming::communicate; mean
//                    and largest over the ranks: the faster ranks wait for the slower).
// MeasureScaling     rank 0 alone (the group of one, same environments per rank), then all
//                    K ranks together: aggregate env steps/s, speed-up and efficiency
//                    (speed-up / K). The idle ranks wait in a barrier during the first part.
//                    A job of one rank is measured once.
// ProjectScaling     the update time on K ranks of a network, from the one-rank compute
//                    time and a ring-allreduce model (docs/scale-out.md states it):
//                    per update, M = n_epochs x minibatches gradient sums of P floats at
//                    2 (K - 1) alpha + 2 (K - 1) / K x 4P / beta each, plus the small
//                    latency-bound sums (2 per minibatch, 4 per vector step with both
//                    normalisers, 4 per update) at 2 ceil(log2 K) alpha each. Weak scaling:
//                    each rank keeps its environments and its share of every minibatch
//                    (batch_size grows with K), so M and the compute per rank stay fixed.
//                    Compute and communication do not overlap (they do not here); stragglers
//                    and contention are not modelled.
// Every rank of the group must call the Measure functions together.
// Not thread-safe.
#ifndef RLT_PERF_MPI_BENCH_H_
#define RLT_PERF_MPI_BENCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/collective.h"
#include "core/status.h"
#include "perf/train_bench.h"
#include "train/train.h"

namespace rlt::perf {

struct AllreduceTiming {
  int64_t floats = 0;
  int repeats = 0;
  double median_seconds = 0;
  double algorithm_gbps = 0;  // GB/s
  double bus_gbps = 0;        // GB/s
};
std::vector<AllreduceTiming> MeasureAllreduce(Collective& group, const std::vector<int64_t>& sizes);

struct DataParallelMeasure {
  int ranks = 1;
  int64_t steps = 0;  // every rank's env steps during the measurement
  int updates = 0;
  double seconds = 0;
  double env_steps_per_sec = 0;
  double seconds_per_update = 0;
  double communicate_fraction = 0;      // of the wall time, mean over the ranks
  double communicate_fraction_max = 0;  // the rank that waited most
  train::SessionShape shape;
};
Result<DataParallelMeasure> MeasureDataParallel(const TrainBenchOptions& options,
                                                Collective* group);

// options.rounds rounds, each rank 0 alone and then all ranks; one, all and speedup are
// those of the round with the median speed-up (efficiency = speedup / ranks).
struct ScalingResult {
  DataParallelMeasure one, all;
  double speedup = 0, efficiency = 0;
  std::vector<double> round_speedups;  // every round's, in order
};
Result<ScalingResult> MeasureScaling(const TrainBenchOptions& options, Collective& world);

struct NetworkModel {
  std::string name;
  double gbit_per_sec = 0;
  double latency_seconds = 0;  // alpha, per message
};
// The two networks of the projection in docs/scale-out.md: 10 Gbit/s Ethernet with MPI over TCP
// (alpha 10 us) and 100 Gbit/s RDMA (InfiniBand / RoCE, alpha 2 us).
std::vector<NetworkModel> DefaultNetworks();

struct ProjectionRow {
  int ranks = 0;
  std::string network;
  double communicate_seconds = 0;  // per update
  double update_seconds = 0;       // compute + communication
  double efficiency = 0;           // compute / update_seconds
  double env_steps_per_sec = 0;    // all ranks
};
// The model for one update on K ranks; `compute_seconds` per update on one rank.
double ModelCommunicateSeconds(const train::SessionShape& shape, int ranks,
                               const NetworkModel& net);
std::vector<ProjectionRow> ProjectScaling(const DataParallelMeasure& one_rank,
                                          const std::vector<int>& ranks,
                                          const std::vector<NetworkModel>& networks);

// The whole of `rltrade bench mpi` (every rank calls it): the config's scaling when
// options.config_path is set (refused for evolution strategies: they exchange only their
// members' fitnesses once per generation, not a gradient per minibatch), the allreduce
// timings of a few sizes and of the policy's parameter count (none on one rank), the
// projection to 2..512 ranks on DefaultNetworks(), and the model evaluated with this
// machine's own allreduce (alpha from the 1-float sum, the bandwidth measured at the
// policy's size) beside the communicating time measured per update. Complete on rank 0;
// the other ranks get their own timings only.
struct MpiBenchResult {
  int ranks = 1;
  std::vector<AllreduceTiming> timings;
  bool has_scaling = false;
  ScalingResult scaling;
  std::vector<ProjectionRow> projection;
  double modelled_communicate_seconds_here = 0, measured_communicate_seconds_here = 0;
};
Result<MpiBenchResult> RunMpiBench(const TrainBenchOptions& options, Collective& world);

}  // namespace rlt::perf

#endif  // RLT_PERF_MPI_BENCH_H_
