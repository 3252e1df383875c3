// rltrade retrieval: the training-speed benchmark (see bench.h).
#include "retrieval/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "core/json_parse.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "native/gemm.h"
#include "retrieval/data.h"
#include "retrieval/trainer.h"

namespace rlt::retrieval {
namespace {

using Clock = std::chrono::steady_clock;

// float32 matmul GFLOP/s of one (n x n) x (n x n) product with the BLAS on `threads`.
double MatmulPeak(int threads) {
  const int n = 2048;
  std::vector<float> a(static_cast<size_t>(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size());
  native::SetBlasThreads(threads);
  native::GemmBlas(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  double best = 0.0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    native::GemmBlas(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, 2.0 * n * n * static_cast<double>(n) / s / 1e9);
  }
  return best;
}

std::unique_ptr<RetrievalData> RandomData(int64_t pairs, int steps, int dim, int64_t bank_size,
                                          uint64_t seed) {
  Rng rng(seed);
  std::vector<float> bank(bank_size * dim);
  for (float& v : bank) v = static_cast<float>(rng.Normal());
  auto data = std::make_unique<RetrievalData>();
  for (bool val : {false, true}) {
    const int64_t n = val ? 2 : pairs;
    std::vector<float> x(n * steps * dim), y(n * dim);
    for (float& v : x) v = static_cast<float>(rng.Normal());
    std::vector<int64_t> rows(n);
    for (int64_t i = 0; i < n; ++i) {
      rows[i] = static_cast<int64_t>(rng.NextU64() % bank_size);
      std::copy_n(&bank[rows[i] * dim], dim, &y[i * dim]);
    }
    Split& s = val ? data->val : data->train;
    s.x = std::make_unique<MemoryRows>(std::move(x), static_cast<int64_t>(steps) * dim, "random:X");
    s.y = std::make_unique<MemoryRows>(std::move(y), dim, "random:Y");
    s.given_rows = std::move(rows);
  }
  MemoryRows bank_rows(std::move(bank), dim, "random:vectors");
  const Status st = PrepareData(*data, bank_rows, 1);
  RLT_CHECK_MSG(st.ok(), st.message().c_str());
  return data;
}

// Micro-batches per second over `iters` after `warmup`, in the trainer's next epoch.
Result<double> TimeEpoch(Trainer& trainer, int warmup) {
  Clock::time_point start{};
  int64_t timed = 0;
  const auto t_end = [&](int64_t done, int64_t) {
    if (done == warmup) start = Clock::now();
    if (done > warmup) timed = done - warmup;
  };
  RLT_RETURN_IF_ERROR(trainer.RunEpoch(t_end).status());
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  return timed / std::max(s, 1e-9);
}

Result<std::string> RunReference(const RetrievalBenchRequest& r, const RetrievalBenchResult& b) {
  const std::string cmd = r.python + " " + r.reference + " --json --threads " +
                          std::to_string(b.threads) + " --batch " + std::to_string(b.batch) +
                          " --t " + std::to_string(b.steps) + " --d " + std::to_string(b.dim) +
                          " --hidden " + std::to_string(b.hidden) + " --memory-bank " +
                          std::to_string(b.memory_bank) + " --iters " + std::to_string(r.iters) +
                          " --warmup-iters " + std::to_string(r.warmup) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return Status::IoError("cannot run the reference: " + cmd);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int rc = pclose(p);
  // The last line that parses as JSON with the key.
  size_t end = out.size();
  while (end > 0) {
    const size_t start = out.rfind('\n', end - 1);
    const std::string line = out.substr(start == std::string::npos ? 0 : start + 1,
                                        end - (start == std::string::npos ? 0 : start + 1));
    const auto j = ParseJsonOrDiscarded<nlohmann::json>(line);
    if (!j.is_discarded() && j.is_object() && j.contains("reference_it_per_sec")) return line;
    if (start == std::string::npos) break;
    end = start;
  }
  return Status::IoError("the reference (" + cmd + ") exited " + std::to_string(rc) +
                         " without a JSON result; its output ends: " +
                         out.substr(out.size() > 600 ? out.size() - 600 : 0) +
                         " (it needs Debian's python3-torch: apt-get install python3-torch)");
}

}  // namespace

Result<RetrievalBenchResult> RunRetrievalBench(const RetrievalBenchRequest& r) {
  if (r.iters < 1 || r.warmup < 0) {
    return Status::InvalidArgument("--iters must be >= 1 and --warmup >= 0");
  }
  if (r.bank_size < 1000) return Status::InvalidArgument("--bank-size must be >= 1000");
  TrainerSettings s;
  s.train.batch_size = 32;
  s.train.accumulation = 1;
  s.train.memory_bank = 50000;
  s.model.hidden = 512;
  int steps = 100, dim = 768;
  if (!r.config.empty() || !r.sets.empty()) {
    config::Config cfg;
    if (!r.config.empty()) {
      RLT_ASSIGN_OR_RETURN(cfg, config::Config::LoadFile(r.config));
    }
    for (const std::string& set : r.sets) RLT_RETURN_IF_ERROR(cfg.ApplyOverride(set));
    RLT_RETURN_IF_ERROR(cfg.Bind("run", s.run));
    RLT_RETURN_IF_ERROR(cfg.Bind("model", s.model));
    RLT_RETURN_IF_ERROR(cfg.Bind("train", s.train));
    BenchShape shape;
    RLT_RETURN_IF_ERROR(cfg.Bind("bench", shape));
    steps = shape.t;
    dim = shape.d;
  }
  if (r.threads > 0) s.run.threads = r.threads;
  s.train.epochs = 1000000;
  s.train.max_batches = r.warmup + r.iters;
  s.eval.every = 1000000;
  s.eval.ks = {1};
  s.eval.best_metric = "recall@1";
  const int64_t pairs = static_cast<int64_t>(r.warmup + r.iters) * s.train.batch_size;
  auto data = RandomData(pairs, steps, dim, r.bank_size, s.run.seed);
  RetrievalBenchResult out;
  out.threads = std::min(ResolveThreads(s.run.threads), 2);
  out.batch = s.train.batch_size;
  out.steps = steps;
  out.dim = dim;
  out.hidden = s.model.hidden;
  out.memory_bank = s.train.memory_bank;
  out.bank_size = r.bank_size;
  {
    s.mining.schedule = "";
    RLT_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> t, Trainer::Create(s, data.get()));
    t->PrefillMemoryBank(7);
    RLT_ASSIGN_OR_RETURN(out.it_per_sec, TimeEpoch(*t, r.warmup));
    out.gflop_per_iter = t->Flops(out.batch) / 1e9;
  }
  {
    const int64_t cmax = std::min<int64_t>(200, r.bank_size - 1);
    const int64_t cmin = std::min<int64_t>(20, cmax - r.negatives + 1);
    s.mining.schedule = "0-1000000:" + std::to_string(r.negatives) + "@" + std::to_string(cmin) +
                        "-" + std::to_string(cmax);
    RLT_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> t, Trainer::Create(s, data.get()));
    t->PrefillMemoryBank(7);
    // The first epoch mines the negatives the timed epoch uses.
    RLT_RETURN_IF_ERROR(TimeEpoch(*t, r.warmup).status());
    RLT_ASSIGN_OR_RETURN(out.it_per_sec_mining, TimeEpoch(*t, r.warmup));
  }
  out.gflops = out.gflop_per_iter * out.it_per_sec;
  out.peak_gflops = MatmulPeak(out.threads);
  if (!r.reference.empty()) {
    RLT_ASSIGN_OR_RETURN(out.reference_output, RunReference(r, out));
    const auto j = nlohmann::json::parse(out.reference_output);
    out.reference_it_per_sec = j["reference_it_per_sec"].get<double>();
  }
  return out;
}

}  // namespace rlt::retrieval
