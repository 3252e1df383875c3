// rltrade retrieval: the two-tower trainer (`rltrade retrieval train`).
//
// One epoch: the training pairs in a seeded shuffled order, in micro-batches of
// batch_size; each micro-batch runs the query tower forward, InfoNCE over [targets |
// in-batch | memory bank | hard negatives] and the tower backward, adds its targets to
// the memory bank (a FIFO of the last memory_bank targets) and, when the next epoch
// mines, hands its embeddings to the miner thread. Every `accumulation` micro-batches the
// summed gradients are clipped (global norm) and AdamW steps with the learning rate of a
// linear warm-up then a cosine decay to lr_min over all optimizer steps. After each epoch
// the validation queries are ranked against the whole bank (Recall@k, MRR), a line goes
// to history.jsonl, checkpoints are written, and the gate (if any) is checked.
//
// Deterministic given the seed and thread count: shuffles come from (seed, epoch), the
// miner's output from the embeddings only, and a checkpoint holds everything the next
// epoch reads (parameters, AdamW moments, the memory bank, the mined negatives), so a
// resumed run continues exactly.
#ifndef RLT_RETRIEVAL_TRAINER_H_
#define RLT_RETRIEVAL_TRAINER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "retrieval/data.h"
#include "retrieval/miner.h"
#include "retrieval/mining_schedule.h"
#include "retrieval/recall.h"

namespace rlt::retrieval {

struct ModelOptions {
  std::string cell = "gru";            // the query tower's recurrent cell
  int hidden = 512;                    // H per direction
  std::string doc_tower = "identity";  // identity | mlp (doc_tower.h)
  int doc_hidden = 0;                  // hidden units of the MLP (0: D)

  template <typename V>
  void VisitFields(V& v) {
    v("cell", &cell, "recurrent cell of the query tower", {"gru", "lstm"});
    v("hidden", &hidden, "hidden units per direction");
    v("doc_tower", &doc_tower, "document tower", {"identity", "mlp"});
    v("doc_hidden", &doc_hidden, "hidden units of the document MLP (0: the vectors' D)");
  }
};

// The smallest InfoNCE temperature. The logits are float32 dot products of unit vectors
// divided by tau: a product over D terms carries rounding of up to about D x 2^-24 (3e-5
// at D = 512), so at tau = 1e-3 rounding moves a logit by at most ~0.03 and the softmax
// still reflects the similarities; much below it rounding decides the ranking of near
// ties, and the gradients, which scale as 1 / tau, overflow float32 long before tau
// reaches 1e-30 (NaN weights). Common practice is 0.01 to 0.1.
inline constexpr double kMinTau = 1e-3;

struct TrainOptions {
  int epochs = 30;
  int batch_size = 32;
  int accumulation = 1;  // micro-batches per optimizer step
  double lr = 5e-5;
  double lr_min = 1e-6;
  int64_t warmup_steps = 0;    // optimizer steps of linear warm-up
  double weight_decay = 0.01;  // AdamW, decoupled
  double tau = 0.05;
  double margin = 0.0;
  double margin_weight = 1.0;
  int64_t memory_bank = 0;  // recent targets kept as negatives
  double grad_clip = 1.0;   // global norm; 0 = none
  int64_t max_batches = 0;  // stop an epoch after this many micro-batches (0 = all)

  template <typename V>
  void VisitFields(V& v) {
    v("epochs", &epochs, "passes over the training pairs");
    v("batch_size", &batch_size, "pairs per micro-batch");
    v("accumulation", &accumulation, "micro-batches per optimizer step");
    v("lr", &lr, "peak learning rate");
    v("lr_min", &lr_min, "learning rate at the end of the cosine decay");
    v("warmup_steps", &warmup_steps, "optimizer steps of linear warm-up");
    v("weight_decay", &weight_decay, "AdamW decoupled weight decay");
    v("tau", &tau, "InfoNCE temperature");
    v("margin", &margin, "margin of the extra hinge term (0: none)");
    v("margin_weight", &margin_weight, "weight of the hinge term");
    v("memory_bank", &memory_bank, "recent targets kept as negatives (0: none)");
    v("grad_clip", &grad_clip, "global gradient norm clip (0: none)");
    v("max_batches", &max_batches, "micro-batches per epoch at most (0: all)");
  }
};

struct MiningOptions {
  std::string schedule;  // mining_schedule.h; "" = none
  MinerOptions miner;

  template <typename V>
  void VisitFields(V& v) {
    v("schedule", &schedule, "hard-negative schedule, e.g. 0-2:none,3-30:8@20-200");
    miner.VisitFields(v);
  }
};

struct EvalOptions {
  std::vector<int> ks = {10, 100, 500, 1000};
  std::string best_metric = "recall@100";  // checkpoint kept in best/
  int every = 1;                           // epochs between evaluations
  std::string gate_metric;                 // "" = no gate
  double gate_threshold = 0.0;
  int gate_epoch = 0;  // from this epoch on, metric < threshold stops the run

  template <typename V>
  void VisitFields(V& v) {
    v("ks", &ks, "k of Recall@k");
    v("best_metric", &best_metric, "metric that picks best/ (recall@K or mrr)");
    v("every", &every, "epochs between evaluations");
    v("gate_metric", &gate_metric, "stop when this metric stays below gate_threshold");
    v("gate_threshold", &gate_threshold, "the gate's threshold");
    v("gate_epoch", &gate_epoch, "first epoch (0-based) the gate applies to");
  }
};

struct RetrievalRunOptions {
  uint64_t seed = 1;
  int threads = 0;           // 0 = the cores this process may use (at most 2 are used)
  int checkpoint_every = 1;  // epochs between checkpoints (the last one always)

  template <typename V>
  void VisitFields(V& v) {
    v("seed", &seed, "random seed");
    v("threads", &threads, "threads (0: the cores this process may use)");
    v("checkpoint_every", &checkpoint_every, "epochs between kept checkpoints");
  }
};

struct TrainerSettings {
  RetrievalRunOptions run;
  ModelOptions model;
  TrainOptions train;
  MiningOptions mining;
  EvalOptions eval;
};

// Checks the settings against each other and against the data's shape (bank size,
// mining ranks); returns the parsed schedule.
Result<MiningSchedule> CheckSettings(const TrainerSettings& s, int64_t bank_rows,
                                     const std::string& bank_name);

// The memory training will allocate beyond the data already loaded (the FAISS index, a
// document tower's embedded bank, parameters with their gradients and AdamW moments, one
// micro-batch's activations, the memory bank, the miner's tables, evaluation buffers), in
// bytes, approximately; CheckMemory refuses more than 80% of `available` (MemAvailable;
// <= 0: unknown, not checked), naming the keys that drive it.
double EstimateTrainingBytes(const TrainerSettings& s, const RetrievalData& data);
Status CheckMemory(const TrainerSettings& s, const RetrievalData& data, int64_t available);

struct EpochRecord {
  int epoch = 0;
  double loss = 0.0, margin_loss = 0.0, accuracy = 0.0;
  double lr = 0.0;
  int64_t micro_batches = 0, optimizer_steps = 0;
  double train_seconds = 0.0, eval_seconds = 0.0, mining_busy_seconds = 0.0,
         mining_wait_seconds = 0.0;
  double it_per_sec = 0.0;  // micro-batches per second of training
  bool evaluated = false;
  std::map<int, double> recall;
  double mrr = 0.0;
};

class QueryTower;
class DocTower;

class Trainer {
 public:
  static Result<std::unique_ptr<Trainer>> Create(const TrainerSettings& settings,
                                                 RetrievalData* data);
  ~Trainer();

  // Trains one epoch (the next one), evaluates when due. progress(done, total) is called
  // after every micro-batch (may be empty). A loss, gradient or parameter that is not
  // finite stops the epoch with an error naming the tensor, the epoch and the micro-batch;
  // the trainer is then unusable (its parameters are mid-epoch) and must be discarded.
  Result<EpochRecord> RunEpoch(const std::function<void(int64_t, int64_t)>& progress);
  // Ranks of every validation target (exact, against the whole bank) for the current
  // parameters, and the metrics.
  RetrievalMetrics Evaluate();

  // Fills the memory bank with random bank rows (benchmarks: the cost of a full bank from
  // the first micro-batch on).
  void PrefillMemoryBank(uint64_t seed);

  int next_epoch() const { return epoch_; }
  int64_t optimizer_steps() const { return step_; }
  double Flops(int batch) const;

  // Everything a resume needs: parameters, AdamW state, memory bank, mined negatives.
  // Load and LoadParameters refuse a tensor holding NaN or infinity (naming the file and
  // the tensor).
  Status Save(const std::string& path) const;
  Status Load(const std::string& path);
  // Parameters only (eval, export).
  Status SaveParameters(const std::string& path) const;
  Status LoadParameters(const std::string& path);

 private:
  Trainer() = default;
  double LearningRate(int64_t step) const;
  // The bank as the document tower sees it: the normalised rows (identity), or their MLP
  // embeddings under the current parameters (computed into doc_bank_).
  const float* DocumentBank();
  // RunEpoch's phases and the state they share (trainer.cc says what each does).
  struct EpochState;
  void PrepareBatch(EpochState& e, int64_t bi);
  Status LearnFromBatch(EpochState& e, int64_t bi, EpochRecord& rec);
  Status OptimizerStep(int64_t bi, EpochRecord& rec);
  void CloseEpoch(const EpochState& e, EpochRecord& rec);

  TrainerSettings s_;
  RetrievalData* data_ = nullptr;
  MiningSchedule schedule_;
  int threads_ = 1;
  std::unique_ptr<QueryTower> tower_;
  std::unique_ptr<DocTower> doc_;  // null: the identity
  std::vector<float> doc_bank_;    // (bank_rows, dim) with doc_
  int64_t doc_bank_step_ = -1;     // the optimizer step doc_bank_ was embedded at
  std::unique_ptr<HardNegativeMiner> miner_;
  std::vector<std::unique_ptr<class AdamBlock>> adam_;
  int epoch_ = 0;
  int64_t step_ = 0, total_steps_ = 0;
  // Memory bank: a ring of recent targets (bank rows and their document embeddings at
  // the step they were added).
  std::vector<int64_t> memory_rows_;
  std::vector<float> memory_vectors_;
  int64_t memory_head_ = 0, memory_size_ = 0;
};

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_TRAINER_H_
