// rltrade retrieval: `rltrade retrieval bench` — training iterations per second of the
// two-tower trainer on random data of a config's shapes, with mining off and on, next to
// the PyTorch reference (bench/twotower_reference.py) when asked.
//
// An iteration is one micro-batch: gather, tower forward, InfoNCE, tower backward, memory
// bank update (and the optimizer step when an accumulation completes), as in training.
// The memory bank starts full (the cost a long run pays after its first memory_bank /
// batch_size micro-batches). Mining on: the schedule mines `negatives` per query from
// ranks 20-200 (or less for a small bank) every epoch; the timed epoch is the second,
// whose negatives the first mined, so both the search (miner thread) and the use of hard
// negatives are timed.
#ifndef RLT_RETRIEVAL_BENCH_H_
#define RLT_RETRIEVAL_BENCH_H_

#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::retrieval {

// [bench] t, d of the bench's config: the data's shape (the trainer takes it from the
// files otherwise).
struct BenchShape {
  int t = 100, d = 768;
  template <typename V>
  void VisitFields(V& v) {
    v("t", &t, "steps per context");
    v("d", &d, "vector dimensions");
  }
};

struct RetrievalBenchRequest {
  std::string config;             // optional CONFIG.toml for the shapes ([model], [train])
  std::vector<std::string> sets;  // --set overrides
  int iters = 20;                 // timed micro-batches per measurement
  int warmup = 3;                 // untimed micro-batches before each measurement
  int threads = 0;                // 0: the config's [run] threads
  int64_t bank_size = 100000;
  int negatives = 8;
  // Reference: run it when non-empty (path of bench/twotower_reference.py).
  std::string reference;
  std::string python = "/usr/bin/python3";
};

struct RetrievalBenchResult {
  double it_per_sec = 0.0;            // mining off
  double it_per_sec_mining = 0.0;     // mining on
  double reference_it_per_sec = 0.0;  // 0 when not run
  double gflop_per_iter = 0.0;        // the query tower's forward + backward
  double gflops = 0.0;                // achieved, mining off
  double peak_gflops = 0.0;           // measured matmul peak at this thread count
  int threads = 0, batch = 0, steps = 0, dim = 0, hidden = 0;
  int64_t memory_bank = 0, bank_size = 0;
  std::string reference_output;  // the reference's JSON line
};

Result<RetrievalBenchResult> RunRetrievalBench(const RetrievalBenchRequest& request);

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_BENCH_H_
