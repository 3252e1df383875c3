// rltrade retrieval: hard-negative mining with FAISS on a background thread.
//
// The bank (L2-normalised rows) goes into a FAISS index: exact inner product ("flat",
// the default), or approximate ("ivf": IndexIVFFlat with nlist lists, nprobe probed;
// "hnsw": IndexHNSWFlat with hnsw_m links, ef_search). During epoch e the trainer submits
// each batch's query embeddings (already computed by the training forward pass) with the
// examples they belong to; the miner thread searches their rank_max + 1 nearest bank rows,
// drops the example's own target row, and draws `negatives` rows without replacement from
// ranks rank_min..rank_max (1 = nearest), with a generator seeded by (seed, epoch,
// example). The result is the negatives of that example during epoch e + 1.
//
// Two tables, so reads never race writes: the trainer reads `current` (filled during the
// previous epoch) while the miner writes `next`; EndEpoch() waits for the queue to drain
// and swaps them. Every entry is keyed by the example index, so a negative can only ever
// be served to the query it was mined for (the replaced system's negatives drifted out
// of line with their queries).
// Searches run on `group` batches at a time (one larger product is ~1.4x faster per
// query than one per batch); groups are cut by submission order, the last one of an
// epoch by EndEpoch(), so the result depends only on the embeddings submitted, never on
// timing. Bounded: at most max(queue, 2 * group) batches wait; Submit() blocks while the
// queue is full, which bounds both memory and how far the miner can fall behind. The
// destructor stops the thread cleanly.
#ifndef RLT_RETRIEVAL_MINER_H_
#define RLT_RETRIEVAL_MINER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "retrieval/mining_schedule.h"

namespace faiss {
struct Index;
}

namespace rlt::retrieval {

struct MinerOptions {
  std::string index = "flat";  // flat | ivf | hnsw
  int nlist = 1024;            // ivf: inverted lists (capped at bank rows / 39)
  int nprobe = 16;             // ivf: lists searched
  int hnsw_m = 32;             // hnsw: links per node
  int ef_search = 128;         // hnsw: search breadth (raised to the ranks needed)
  int group = 8;               // batches searched together (fixed, so results never
                               // depend on timing)
  int queue = 16;              // batches waiting at most (at least 2 groups)
  uint64_t seed = 1;

  template <typename V>
  void VisitFields(V& v) {
    v("index", &index, "FAISS index over the bank", {"flat", "ivf", "hnsw"});
    v("nlist", &nlist, "ivf: inverted lists");
    v("nprobe", &nprobe, "ivf: lists probed per search");
    v("hnsw_m", &hnsw_m, "hnsw: links per node");
    v("ef_search", &ef_search, "hnsw: search breadth");
    v("group", &group, "batches searched together");
    v("queue", &queue, "batches waiting for the miner at most");
  }
};

class HardNegativeMiner {
 public:
  // bank (n, d) must stay valid and unchanged while the miner lives. examples = training
  // pairs; max_negatives = the schedule's largest N (table width).
  static Result<std::unique_ptr<HardNegativeMiner>> Create(const float* bank, int64_t n, int d,
                                                           int64_t examples, int max_negatives,
                                                           const MinerOptions& options);
  ~HardNegativeMiner();

  // Queues the embeddings q (b, d) of examples (b) whose targets are bank rows
  // target_rows (b), to mine `phase` for epoch `epoch` + 1. phase.negatives = 0: nothing.
  void Submit(int epoch, const MiningPhase& phase, const int64_t* examples,
              const int64_t* target_rows, const float* q, int b);
  // Replaces the bank the index holds by `bank` (n, d) (a document tower's embeddings,
  // once per epoch). Only between epochs: after EndEpoch(), before the next Submit().
  Status Rebuild(const float* bank);
  // Waits until every submitted batch is mined, then makes them the current negatives
  // (and clears the table that will be filled next).
  void EndEpoch();
  // The current negatives of examples (b): out (b, width) bank rows, -1 = none.
  void Lookup(const int64_t* examples, int b, int64_t* out) const;
  int width() const { return width_; }
  // The current table (examples x width), for checkpoints; SetCurrent restores it.
  const std::vector<int64_t>& current() const { return current_; }
  void SetCurrent(const std::vector<int64_t>& table) {
    RLT_CHECK(table.size() == current_.size());
    current_ = table;
  }
  // Seconds the miner thread spent searching, and Submit() spent waiting (cumulative).
  double busy_seconds() const;
  double wait_seconds() const;

 private:
  struct Job {
    int epoch;
    MiningPhase phase;
    std::vector<int64_t> examples, targets;
    std::vector<float> q;
  };
  HardNegativeMiner() = default;
  Status BuildIndex(const float* bank);
  void Loop();
  void Mine(const std::vector<Job>& jobs);

  std::unique_ptr<faiss::Index> index_;
  int64_t bank_rows_ = 0, examples_ = 0;
  int d_ = 0, width_ = 0;
  MinerOptions options_;
  std::vector<int64_t> current_, next_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool busy_ = false, stop_ = false, flush_ = false;
  int capacity_ = 16;
  double busy_seconds_ = 0.0, wait_seconds_ = 0.0;
  std::thread thread_;
};

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_MINER_H_
