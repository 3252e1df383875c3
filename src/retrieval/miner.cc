// rltrade retrieval: hard-negative mining (see miner.h).
#include "retrieval/miner.h"

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVFFlat.h>
#include <omp.h>

#include <algorithm>
#include <chrono>

#include "core/rng.h"

namespace rlt::retrieval {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// An IVF index owning its coarse quantizer.
struct OwnedIvf {
  std::unique_ptr<faiss::IndexFlatIP> quantizer;
  std::unique_ptr<faiss::IndexIVFFlat> index;
};

}  // namespace

Result<std::unique_ptr<HardNegativeMiner>> HardNegativeMiner::Create(const float* bank, int64_t n,
                                                                     int d, int64_t examples,
                                                                     int max_negatives,
                                                                     const MinerOptions& o) {
  if (o.queue < 1) return Status::InvalidArgument("[mining] queue must be at least 1");
  if (o.group < 1 || o.group > 1024) {
    return Status::InvalidArgument("[mining] group must be in [1, 1024]");
  }
  std::unique_ptr<HardNegativeMiner> m(new HardNegativeMiner());
  m->bank_rows_ = n;
  m->examples_ = examples;
  m->d_ = d;
  m->width_ = std::max(max_negatives, 0);
  m->options_ = o;
  m->capacity_ = std::max(o.queue, 2 * o.group);
  m->current_.assign(examples * m->width_, -1);
  m->next_.assign(examples * m->width_, -1);
  if (m->width_ == 0) return m;  // no mining ever: no index, no thread
  RLT_RETURN_IF_ERROR(m->BuildIndex(bank));
  m->thread_ = std::thread([raw = m.get()] { raw->Loop(); });
  return m;
}

Status HardNegativeMiner::BuildIndex(const float* bank) {
  try {
    if (options_.index == "flat") {
      auto index = std::make_unique<faiss::IndexFlatIP>(d_);
      index->add(bank_rows_, bank);
      index_ = std::move(index);
    } else if (options_.index == "ivf") {
      if (options_.nlist < 1 || options_.nprobe < 1) {
        return Status::InvalidArgument("[mining] nlist and nprobe must be at least 1");
      }
      const int nlist = static_cast<int>(
          std::max<int64_t>(1, std::min<int64_t>(options_.nlist, bank_rows_ / 39)));
      auto* quantizer = new faiss::IndexFlatIP(d_);
      auto index =
          std::make_unique<faiss::IndexIVFFlat>(quantizer, d_, nlist, faiss::METRIC_INNER_PRODUCT);
      index->own_fields = true;
      index->train(bank_rows_, bank);
      index->add(bank_rows_, bank);
      index->nprobe = std::min(options_.nprobe, nlist);
      index_ = std::move(index);
    } else if (options_.index == "hnsw") {
      if (options_.hnsw_m < 2) return Status::InvalidArgument("[mining] hnsw_m must be at least 2");
      auto index =
          std::make_unique<faiss::IndexHNSWFlat>(d_, options_.hnsw_m, faiss::METRIC_INNER_PRODUCT);
      index->add(bank_rows_, bank);
      index_ = std::move(index);
    } else {
      return Status::InvalidArgument("[mining] index '" + options_.index +
                                     "': expected flat, ivf or hnsw");
    }
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("building the FAISS index over the bank: ") +
                                   e.what());
  }
  return Status::Ok();
}

Status HardNegativeMiner::Rebuild(const float* bank) {
  if (width_ == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  RLT_CHECK_MSG(queue_.empty() && !busy_, "the miner is rebuilt between epochs only");
  index_.reset();
  return BuildIndex(bank);
}

HardNegativeMiner::~HardNegativeMiner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HardNegativeMiner::Submit(int epoch, const MiningPhase& phase, const int64_t* examples,
                               const int64_t* target_rows, const float* q, int b) {
  if (phase.negatives <= 0 || width_ == 0) return;
  RLT_CHECK(phase.negatives <= width_);
  RLT_CHECK(phase.rank_max < bank_rows_);
  Job job{epoch, phase, std::vector<int64_t>(examples, examples + b),
          std::vector<int64_t>(target_rows, target_rows + b),
          std::vector<float>(q, q + static_cast<int64_t>(b) * d_)};
  const auto start = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return static_cast<int>(queue_.size()) < capacity_; });
  wait_seconds_ += Since(start);
  queue_.push_back(std::move(job));
  cv_.notify_all();
}

void HardNegativeMiner::EndEpoch() {
  std::unique_lock<std::mutex> lock(mu_);
  const auto start = Clock::now();
  flush_ = true;  // the last, possibly smaller, group
  cv_.notify_all();
  cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
  flush_ = false;
  wait_seconds_ += Since(start);
  current_.swap(next_);
  std::fill(next_.begin(), next_.end(), -1);
}

void HardNegativeMiner::Lookup(const int64_t* examples, int b, int64_t* out) const {
  for (int i = 0; i < b; ++i) {
    RLT_CHECK(examples[i] >= 0 && examples[i] < examples_);
    std::copy_n(&current_[examples[i] * width_], width_, out + static_cast<int64_t>(i) * width_);
  }
}

double HardNegativeMiner::busy_seconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return busy_seconds_;
}

double HardNegativeMiner::wait_seconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return wait_seconds_;
}

void HardNegativeMiner::Loop() {
  omp_set_num_threads(1);  // FAISS's loops stay on this thread: training has the cores
  std::vector<Job> jobs;
  while (true) {
    jobs.clear();
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] {
        return stop_ || static_cast<int>(queue_.size()) >= options_.group ||
               (flush_ && !queue_.empty());
      });
      if (stop_) return;
      while (!queue_.empty() && static_cast<int>(jobs.size()) < options_.group) {
        jobs.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      busy_ = true;
    }
    cv_.notify_all();  // a Submit() may wait for room
    const auto start = Clock::now();
    Mine(jobs);
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
      busy_seconds_ += Since(start);
    }
    cv_.notify_all();
  }
}

void HardNegativeMiner::Mine(const std::vector<Job>& jobs) {
  // One search for every query of the group, with the deepest rank any job needs.
  int64_t k = 0, total = 0;
  for (const Job& job : jobs) {
    k = std::max<int64_t>(k, job.phase.rank_max + 1);  // the target may be among them
    total += static_cast<int64_t>(job.examples.size());
  }
  std::vector<float> q(total * d_);
  {
    int64_t at = 0;
    for (const Job& job : jobs) {
      std::copy(job.q.begin(), job.q.end(), q.begin() + at * d_);
      at += static_cast<int64_t>(job.examples.size());
    }
  }
  std::vector<float> distances(total * k);
  std::vector<faiss::Index::idx_t> labels(total * k);
  if (auto* hnsw = dynamic_cast<faiss::IndexHNSWFlat*>(index_.get())) {
    hnsw->hnsw.efSearch = std::max<int>(options_.ef_search, static_cast<int>(k));
  }
  index_->search(total, q.data(), k, distances.data(), labels.data());
  std::vector<int64_t> ranked, candidates;
  int64_t at = 0;
  for (const Job& job : jobs) {
    for (size_t i = 0; i < job.examples.size(); ++i, ++at) {
      // Neighbours in rank order without the example's own target: rank r is at r - 1.
      ranked.clear();
      for (int64_t r = 0; r < k; ++r) {
        const int64_t row = labels[at * k + r];
        if (row >= 0 && row != job.targets[i]) ranked.push_back(row);
      }
      candidates.clear();
      for (int64_t r = job.phase.rank_min; r <= job.phase.rank_max; ++r) {
        if (r - 1 < static_cast<int64_t>(ranked.size())) candidates.push_back(ranked[r - 1]);
      }
      const uint64_t key = options_.seed * 0x9E3779B97F4A7C15ULL +
                           static_cast<uint64_t>(job.epoch) * 0xBF58476D1CE4E5B9ULL +
                           static_cast<uint64_t>(job.examples[i]) * 0x94D049BB133111EBULL;
      Rng rng(key ^ (key >> 29));
      int64_t* row = &next_[job.examples[i] * width_];
      std::fill(row, row + width_, -1);
      const int take = std::min<int>(job.phase.negatives, static_cast<int>(candidates.size()));
      for (int j = 0; j < take; ++j) {
        const size_t pick = j + rng.NextU64() % (candidates.size() - j);
        std::swap(candidates[j], candidates[pick]);
        row[j] = candidates[j];
      }
    }
  }
}

}  // namespace rlt::retrieval
