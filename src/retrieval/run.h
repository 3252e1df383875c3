// rltrade retrieval: `rltrade retrieval train` and `rltrade retrieval eval` as library
// calls (the CLI parses flags and prints; tests call these directly).
//
// Run directory (written only after the config and the data passed every check, so bad
// input leaves nothing behind):
//   config.toml      the resolved config (every key, defaults included)
//   history.jsonl    one JSON line per epoch: epoch, loss, margin_loss, accuracy, lr,
//                    micro_batches, optimizer_steps, train_seconds, eval_seconds,
//                    it_per_sec, mining_busy_seconds, mining_wait_seconds, and when
//                    evaluated recall@K for each K and mrr
//   last/            state.rtt (parameters, AdamW moments, memory bank, mined negatives,
//                    counters) + MANIFEST: what --resume continues from, replaced every
//                    epoch
//   checkpoints/epoch_<E>/   the same, kept every [run] checkpoint_every epochs
//   best/            model.rtt (parameters) + metrics.json + MANIFEST: the epoch with the
//                    highest [eval] best_metric
//   final/           model.rtt + metrics.json + MANIFEST after the last epoch (or the gate)
//   .lock            held while training (one writer per run)
// Every directory is written under a temporary name and renamed into place; every file
// checksummed in its MANIFEST and verified when read.
#ifndef RLT_RETRIEVAL_RUN_H_
#define RLT_RETRIEVAL_RUN_H_

#include <map>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/status.h"
#include "retrieval/recall.h"

namespace rlt::retrieval {

// [data] of a retrieval config: the data files.
struct DataFiles {
  FilePath pairs, bank;
  bool shuffle_targets = false;  // control: targets permuted, nothing to learn

  template <typename V>
  void VisitFields(V& v) {
    v("pairs", &pairs, ".npz with X_train, Y_train, X_val, Y_val");
    v("bank", &bank, ".npz with vectors (and optional ids)");
    v("shuffle_targets", &shuffle_targets, "permute training targets (leak check)");
  }
};

struct RetrievalTrainRequest {
  std::string config;             // CONFIG.toml (empty with resume)
  std::vector<std::string> sets;  // --set section.key=value
  std::string run_dir;            // --run-dir (default runs/retrieval-<time>)
  std::string resume;             // --resume DIR
  bool quiet = false;
};

struct RetrievalTrainResult {
  std::string run_dir;
  int epochs_done = 0;
  bool gated = false;  // stopped by the gate
  std::string gate_message;
  RetrievalMetrics final_metrics;
  double it_per_sec = 0.0;  // median over the epochs of this invocation
};

Result<RetrievalTrainResult> RunRetrievalTrain(const RetrievalTrainRequest& request);

struct RetrievalEvalRequest {
  std::string run_dir;
  std::string pairs, bank;          // override the run's data files
  std::string checkpoint = "best";  // best | final | last
};

Result<RetrievalMetrics> RunRetrievalEval(const RetrievalEvalRequest& request);

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_RUN_H_
