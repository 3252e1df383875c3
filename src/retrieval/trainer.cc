// rltrade retrieval: the two-tower trainer (see trainer.h).
#include "retrieval/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <numeric>

#include "core/rng.h"
#include "core/thread_pool.h"
#include "native/adam.h"
#include "native/gemm.h"
#include "native/tensor_file.h"
#include "retrieval/doc_tower.h"
#include "retrieval/infonce.h"
#include "retrieval/query_tower.h"

namespace rlt::retrieval {

// One parameter tensor with its AdamW state.
class AdamBlock {
 public:
  AdamBlock(const TowerParam& p, const native::AdamOptions& o) : param(p), adam(p.size, o) {}
  TowerParam param;
  native::Adam adam;
};

namespace {

using Clock = std::chrono::steady_clock;

// Micro-batches between releases of the mapped context pages (data.h RowSource::Release).
constexpr int64_t kReleaseEvery = 64;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The micro-batches of an epoch.
int64_t BatchesPerEpoch(const TrainOptions& t, int64_t pairs) {
  int64_t n = (pairs + t.batch_size - 1) / t.batch_size;
  if (t.max_batches > 0) n = std::min(n, t.max_batches);
  return n;
}

bool MetricKnown(const std::string& m, const std::vector<int>& ks) {
  if (m == "mrr") return true;
  for (int k : ks) {
    if (m == "recall@" + std::to_string(k)) return true;
  }
  return false;
}

// The first non-finite element of v (n): its index, or -1.
int64_t FirstNonFinite(const float* v, int64_t n) {
  if (std::isfinite(native::SumOfSquares(v, n))) return -1;  // summed in double: no overflow
  for (int64_t k = 0; k < n; ++k) {
    if (!std::isfinite(v[k])) return k;
  }
  return -1;
}

// %g: 1e-30, not std::to_string's 0.000000.
std::string ShortNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string ValueName(float v) { return std::isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf"; }

// A tensor of a saved model or state that is not finite: refused (a diverged run).
Status CheckFiniteTensor(const std::vector<float>& v, const std::string& name,
                         const std::string& path) {
  const int64_t bad = FirstNonFinite(v.data(), static_cast<int64_t>(v.size()));
  if (bad < 0) return Status::Ok();
  return Status::DataError(path + ": tensor " + name + " holds " + ValueName(v[bad]) +
                           " (element " + std::to_string(bad) +
                           "): the model is not finite (its training diverged) and cannot be "
                           "used; evaluate or resume an earlier checkpoint, or train again");
}

// The error that stops training at a non-finite gradient or parameter p (values v):
// names the tensor, its first bad element, the epoch, the micro-batch and the step.
Status NonFiniteTensorError(const char* what, const TowerParam& p, const float* v, int epoch,
                            int64_t bi, int64_t step) {
  const int64_t k = FirstNonFinite(v, p.size);
  return Status::DataError("training stopped: " + std::string(what) + " " + p.name + " holds " +
                           ValueName(v[std::max<int64_t>(k, 0)]) + " (element " +
                           std::to_string(k) + ") in epoch " + std::to_string(epoch) +
                           ", micro-batch " + std::to_string(bi) + " (optimizer step " +
                           std::to_string(step) +
                           "): the model diverged; lower [train] lr, raise [train] tau, keep "
                           "[train] grad_clip on, or rescale the data (nothing of this epoch "
                           "was saved)");
}

}  // namespace

Result<MiningSchedule> CheckSettings(const TrainerSettings& s, int64_t bank_rows,
                                     const std::string& bank_name) {
  std::vector<std::string> errors;
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) errors.push_back(what);
  };
  const TrainOptions& t = s.train;
  need(t.epochs >= 1, "[train] epochs must be >= 1");
  need(t.batch_size >= 2 && t.batch_size <= 65536,
       "[train] batch_size must be in [2, 65536] (in-batch negatives need 2)");
  need(t.accumulation >= 1, "[train] accumulation must be >= 1");
  need(t.lr > 0 && t.lr <= 1, "[train] lr must be in (0, 1]");
  need(t.lr_min >= 0 && t.lr_min <= t.lr, "[train] lr_min must be in [0, lr]");
  need(t.warmup_steps >= 0, "[train] warmup_steps must be >= 0");
  need(t.weight_decay >= 0 && t.weight_decay < 1, "[train] weight_decay must be in [0, 1)");
  need(t.tau >= kMinTau && t.tau <= 10,
       "[train] tau must be in [0.001, 10] (got " + ShortNumber(t.tau) +
           "): below 0.001 the float32 rounding of the similarities, divided by tau, "
           "decides the softmax and the gradients grow as 1 / tau");
  need(t.margin >= 0 && t.margin <= 4, "[train] margin must be in [0, 4]");
  need(t.margin_weight >= 0 && t.margin_weight <= 1e6, "[train] margin_weight must be in [0, 1e6]");
  need(t.memory_bank >= 0 && t.memory_bank <= 10000000,
       "[train] memory_bank must be in [0, 10000000]");
  need(t.grad_clip >= 0 && std::isfinite(t.grad_clip),
       "[train] grad_clip must be a finite number >= 0 (0 = none)");
  need(t.max_batches >= 0, "[train] max_batches must be >= 0 (0 = all)");
  need(s.model.hidden >= 1 && s.model.hidden <= 8192, "[model] hidden must be in [1, 8192]");
  need(s.model.doc_tower == "identity" || s.model.doc_tower == "mlp",
       "[model] doc_tower '" + s.model.doc_tower + "': expected identity or mlp");
  need(s.model.doc_hidden >= 0 && s.model.doc_hidden <= 65536,
       "[model] doc_hidden must be in [0, 65536] (0 = the vectors' dimension)");
  need(s.run.threads >= 0 && s.run.threads <= 4 * HardwareThreads() + 16,
       "[run] threads must be >= 0 (0 = the cores this process may use)");
  need(s.run.checkpoint_every >= 1, "[run] checkpoint_every must be >= 1 (epochs)");
  need(s.eval.every >= 1, "[eval] every must be >= 1 (epochs)");
  need(!s.eval.ks.empty(), "[eval] ks must list at least one k");
  for (int k : s.eval.ks) need(k >= 1, "[eval] ks: every k must be >= 1");
  need(MetricKnown(s.eval.best_metric, s.eval.ks),
       "[eval] best_metric '" + s.eval.best_metric +
           "': expected mrr or recall@K for a K of [eval] ks");
  if (!s.eval.gate_metric.empty()) {
    need(MetricKnown(s.eval.gate_metric, s.eval.ks),
         "[eval] gate_metric '" + s.eval.gate_metric +
             "': expected mrr or recall@K for a K of [eval] ks");
    need(s.eval.gate_epoch >= 0, "[eval] gate_epoch must be >= 0");
    need(std::isfinite(s.eval.gate_threshold),
         "[eval] gate_threshold must be a finite number (a NaN threshold never stops a run)");
  }
  auto schedule = MiningSchedule::Parse(s.mining.schedule);
  if (!schedule.ok()) {
    errors.push_back("[mining] schedule: " + schedule.status().message());
  } else {
    const Status fits = schedule->CheckAgainstBank(bank_rows, bank_name);
    if (!fits.ok()) errors.push_back("[mining] " + fits.message());
  }
  if (!errors.empty()) {
    std::string text;
    for (const std::string& e : errors) text += (text.empty() ? "" : "\n") + e;
    return Status::InvalidArgument(text);
  }
  return std::move(schedule).value();
}

namespace {

struct MemoryParts {
  double index = 0, doc_bank = 0, params = 0, activations = 0, memory_bank = 0, miner = 0, eval = 0;
  double Total() const {
    return index + doc_bank + params + activations + memory_bank + miner + eval;
  }
};

MemoryParts EstimateParts(const TrainerSettings& s, const RetrievalData& data) {
  constexpr double kFloat = sizeof(float), kId = sizeof(int64_t);
  const double B = static_cast<double>(data.bank_rows), D = data.dim, T = data.steps;
  const double H = s.model.hidden, b = s.train.batch_size;
  const double n_train = data.train.x ? static_cast<double>(data.train.x->rows()) : 0.0;
  const double n_val = data.val.x ? static_cast<double>(data.val.x->rows()) : 0.0;
  MemoryParts m;
  int negatives = 0;
  if (auto schedule = MiningSchedule::Parse(s.mining.schedule); schedule.ok()) {
    negatives = schedule->max_negatives();
  }
  if (negatives > 0) {
    // A flat or IVF index holds a copy of the bank; HNSW adds its links (2M per node,
    // about 1.5 levels on average).
    m.index = B * D * kFloat;
    if (s.mining.miner.index == "ivf") m.index += B * kId;
    if (s.mining.miner.index == "hnsw") m.index += B * 3.0 * s.mining.miner.hnsw_m * sizeof(int);
    m.miner = 2.0 * n_train * negatives * kId +
              std::max(s.mining.miner.queue, 2 * s.mining.miner.group) * b * (D + 2) * kFloat;
  }
  const double gates = s.model.cell == "lstm" ? 4.0 : 3.0;
  double params = 2.0 * (gates * H * (D + H) + 2.0 * gates * H) + 2.0 * H * D + D;
  const double hd = s.model.doc_hidden > 0 ? s.model.doc_hidden : D;
  const double doc_rows = b * (1.0 + negatives);
  if (s.model.doc_tower == "mlp") {
    params += 2.0 * hd * D + hd + D;
    m.doc_bank = B * D * kFloat;
    m.activations += doc_rows * (5.0 * D + 3.0 * hd) * kFloat;
  }
  // Value, gradient, two AdamW moments, and a checkpoint's copy of three of them.
  m.params = 7.0 * params * kFloat;
  // The batch's contexts twice (as read and time-major), both directions' outputs and
  // their gradients, each direction's recurrent workspace (gates, states and their
  // gradients, about 12H per step and row), the hard negatives' vectors.
  m.activations +=
      b * T * (2.0 * D + 4.0 * H + 2.0 * 12.0 * H) * kFloat + b * (negatives + 4.0) * D * kFloat;
  const double mem = static_cast<double>(s.train.memory_bank);
  m.memory_bank = mem * (D * kFloat + kId) + 2.0 * b * mem * kFloat;
  m.eval = n_val * (D * kFloat + kId) + 256.0 * 4096.0 * kFloat;
  return m;
}

}  // namespace

double EstimateTrainingBytes(const TrainerSettings& s, const RetrievalData& data) {
  return EstimateParts(s, data).Total();
}

Status CheckMemory(const TrainerSettings& s, const RetrievalData& data, int64_t available) {
  const MemoryParts m = EstimateParts(s, data);
  const double bytes = m.Total();
  if (available <= 0 || bytes <= 0.8 * static_cast<double>(available)) return Status::Ok();
  // The largest part names what to lower.
  const std::pair<double, const char*> parts[] = {
      {m.activations, "train.batch_size or model.hidden (one micro-batch's activations)"},
      {m.params, "model.hidden or model.doc_hidden (parameters)"},
      {m.index + m.miner, "the bank or [mining] (the FAISS index and mined tables)"},
      {m.doc_bank, "the bank, or model.doc_tower = \"identity\" (the embedded bank)"},
      {m.memory_bank, "train.memory_bank (the memory bank)"},
      {m.eval, "the validation pairs (evaluation buffers)"}};
  const auto* top = &parts[0];
  for (const auto& p : parts) {
    if (p.first > top->first) top = &p;
  }
  char text[700];
  std::snprintf(text, sizeof text,
                "training would need about %.2f GB beyond the data (micro-batch activations "
                "%.2f GB from train.batch_size %d x T %d and model.hidden %d; parameters "
                "with gradients and AdamW %.2f GB; FAISS index and miner %.2f GB; embedded "
                "bank %.2f GB; memory bank %.2f GB; evaluation %.2f GB) but only %.2f GB is "
                "available (MemAvailable); lower %s",
                bytes / 1e9, m.activations / 1e9, s.train.batch_size, data.steps, s.model.hidden,
                m.params / 1e9, (m.index + m.miner) / 1e9, m.doc_bank / 1e9, m.memory_bank / 1e9,
                m.eval / 1e9, static_cast<double>(available) / 1e9, top->second);
  return Status::InvalidArgument(text);
}

Trainer::~Trainer() = default;

Result<std::unique_ptr<Trainer>> Trainer::Create(const TrainerSettings& settings,
                                                 RetrievalData* data) {
  RLT_ASSIGN_OR_RETURN(MiningSchedule schedule,
                       CheckSettings(settings, data->bank_rows, data->bank_name));
  std::unique_ptr<Trainer> t(new Trainer());
  t->s_ = settings;
  t->data_ = data;
  t->schedule_ = std::move(schedule);
  t->threads_ = std::min(ResolveThreads(settings.run.threads), 2);
  native::SetBlasThreads(t->threads_);
  t->tower_ = std::make_unique<QueryTower>(data->dim, settings.model.hidden, settings.run.seed,
                                           settings.model.cell);
  if (settings.model.doc_tower == "mlp") {
    const int hd = settings.model.doc_hidden > 0 ? settings.model.doc_hidden : data->dim;
    t->doc_ = std::make_unique<DocTower>(data->dim, hd, settings.run.seed);
  }
  native::AdamOptions ao;
  ao.lr = settings.train.lr;
  ao.eps = 1e-8;  // torch's AdamW default
  ao.weight_decay = settings.train.weight_decay;
  for (const TowerParam& p : t->tower_->Params())
    t->adam_.push_back(std::make_unique<AdamBlock>(p, ao));
  if (t->doc_) {
    for (const TowerParam& p : t->doc_->Params())
      t->adam_.push_back(std::make_unique<AdamBlock>(p, ao));
  }
  const int64_t batches = BatchesPerEpoch(settings.train, data->train.x->rows());
  t->total_steps_ = settings.train.epochs *
                    ((batches + settings.train.accumulation - 1) / settings.train.accumulation);
  const int64_t m = settings.train.memory_bank;
  t->memory_rows_.assign(m, -1);
  t->memory_vectors_.assign(m * data->dim, 0.0f);
  MinerOptions mo = settings.mining.miner;
  mo.seed = settings.run.seed;
  RLT_ASSIGN_OR_RETURN(t->miner_, HardNegativeMiner::Create(data->bank.data(), data->bank_rows,
                                                            data->dim, data->train.x->rows(),
                                                            t->schedule_.max_negatives(), mo));
  return t;
}

double Trainer::LearningRate(int64_t step) const {
  const TrainOptions& t = s_.train;
  if (step < t.warmup_steps) return t.lr * static_cast<double>(step + 1) / t.warmup_steps;
  const double span = std::max<int64_t>(1, total_steps_ - t.warmup_steps);
  const double p = std::min(1.0, static_cast<double>(step - t.warmup_steps) / span);
  return t.lr_min + 0.5 * (t.lr - t.lr_min) * (1.0 + std::cos(std::numbers::pi * p));
}

void Trainer::PrefillMemoryBank(uint64_t seed) {
  Rng rng(seed);
  const int D = data_->dim;
  const float* bank = DocumentBank();
  const int64_t m = s_.train.memory_bank;
  for (int64_t k = 0; k < m; ++k) {
    memory_rows_[k] = static_cast<int64_t>(rng.NextU64() % data_->bank_rows);
    std::copy_n(&bank[memory_rows_[k] * D], D, &memory_vectors_[k * D]);
  }
  memory_size_ = m;
  memory_head_ = 0;
}

double Trainer::Flops(int batch) const {
  double flops = tower_->FlopsPerIteration(batch, data_->steps);
  if (doc_) {
    const int hard = schedule_.max_negatives();
    flops += 3.0 * doc_->FlopsPerRow() * batch * (1.0 + hard);
  }
  return flops;
}

const float* Trainer::DocumentBank() {
  if (!doc_) return data_->bank.data();
  // The parameters change only at optimizer steps: an embedding made since the last one
  // (the evaluation that ended the previous epoch) serves the next epoch's index too.
  if (doc_bank_step_ != step_) {
    doc_bank_.resize(static_cast<size_t>(data_->bank_rows) * data_->dim);
    doc_->Embed(data_->bank.data(), data_->bank_rows, doc_bank_.data());
    doc_bank_step_ = step_;
  }
  return doc_bank_.data();
}

// The state of one epoch that RunEpoch's phases share: its order and mining phases, the
// clocks it started from, the loss, and the current micro-batch with its buffers.
struct Trainer::EpochState {
  explicit EpochState(const InfoNceOptions& o) : loss(o) {}
  std::vector<int64_t> order;   // this epoch's shuffle of the training pairs
  MiningPhase now, next;        // the negatives used this epoch, and mined for the next
  int width = 0;                // the miner's table width
  int64_t batches = 0;          // micro-batches in the epoch
  double busy0 = 0, wait0 = 0;  // the miner's clocks when the epoch started
  Clock::time_point start;
  InfoNce loss;
  // The current micro-batch: its b examples (into order) and the batch the loss reads,
  // whose pointers point into the buffers below.
  const int64_t* examples = nullptr;
  int b = 0;
  InfoNceBatch bt;
  std::vector<float> x, q, y, dq, hard_vectors, docs, doc_emb, d_docs;
  std::vector<int64_t> targets, hard_ids, table;
};

// Micro-batch bi of the epoch, up to the loss: gathers its contexts and runs the query
// tower, gathers the targets, looks up the mined hard negatives, and runs the document
// tower over targets and negatives; fills e.bt.
void Trainer::PrepareBatch(EpochState& e, int64_t bi) {
  const TrainOptions& t = s_.train;
  const int D = data_->dim, T = data_->steps;
  const int64_t N = data_->train.x->rows();
  const int64_t first = bi * t.batch_size;
  const int b = static_cast<int>(std::min<int64_t>(t.batch_size, N - first));
  const int64_t* examples = &e.order[first];
  e.examples = examples;
  e.b = b;
  e.x.resize(static_cast<size_t>(b) * T * D);
  data_->train.x->Gather(examples, b, e.x.data());
  e.q.resize(static_cast<size_t>(b) * D);
  e.dq.resize(e.q.size());
  tower_->Forward(e.x.data(), b, T, e.q.data(), threads_);
  e.targets.resize(b);
  e.y.resize(static_cast<size_t>(b) * D);
  for (int i = 0; i < b; ++i) {
    e.targets[i] = data_->train.target_row[examples[i]];
    std::copy_n(&data_->bank[e.targets[i] * D], D, &e.y[static_cast<size_t>(i) * D]);
  }
  InfoNceBatch& bt = e.bt;
  bt = InfoNceBatch();
  bt.b = b;
  bt.d = D;
  bt.q = e.q.data();
  bt.y = e.y.data();
  bt.target_ids = e.targets.data();
  bt.m = static_cast<int>(memory_size_);
  bt.memory = memory_vectors_.data();
  bt.memory_ids = memory_rows_.data();
  const int negatives = e.now.negatives;
  if (negatives > 0) {
    e.table.resize(static_cast<size_t>(b) * e.width);
    miner_->Lookup(examples, b, e.table.data());
    e.hard_ids.resize(static_cast<size_t>(b) * negatives);
    e.hard_vectors.assign(static_cast<size_t>(b) * negatives * D, 0.0f);
    for (int i = 0; i < b; ++i) {
      for (int l = 0; l < negatives; ++l) {
        const int64_t row = e.table[static_cast<size_t>(i) * e.width + l];
        e.hard_ids[static_cast<size_t>(i) * negatives + l] = row;
        if (row >= 0) {
          std::copy_n(&data_->bank[row * D], D,
                      &e.hard_vectors[(static_cast<size_t>(i) * negatives + l) * D]);
        }
      }
    }
    bt.hard = negatives;
    bt.hard_vectors = e.hard_vectors.data();
    bt.hard_ids = e.hard_ids.data();
  }
  // The document tower: targets and hard negatives through it in one pass (with
  // gradients); the memory bank holds embeddings from earlier steps (constants).
  const int64_t doc_rows = static_cast<int64_t>(b) * (1 + bt.hard);
  if (doc_) {
    e.docs.resize(doc_rows * D);
    std::copy(e.y.begin(), e.y.end(), e.docs.begin());
    if (bt.hard > 0) {
      std::copy(e.hard_vectors.begin(), e.hard_vectors.end(), e.docs.begin() + b * D);
    }
    e.doc_emb.resize(e.docs.size());
    e.d_docs.resize(e.docs.size());
    doc_->Forward(e.docs.data(), doc_rows, e.doc_emb.data());
    std::copy_n(e.doc_emb.begin(), static_cast<int64_t>(b) * D, e.y.begin());
    bt.y = e.y.data();
    if (bt.hard > 0) bt.hard_vectors = e.doc_emb.data() + static_cast<int64_t>(b) * D;
  }
}

// Micro-batch bi from the loss on (PrepareBatch came first): the InfoNCE loss, refused
// when not finite, into rec; the gradients of both towers (accumulated); the queries
// submitted to the miner for the next epoch's negatives; the targets into the memory bank.
Status Trainer::LearnFromBatch(EpochState& e, int64_t bi, EpochRecord& rec) {
  const TrainOptions& t = s_.train;
  const int D = data_->dim;
  const int b = e.b;
  const InfoNceBatch& bt = e.bt;
  const InfoNceStats st =
      e.loss.Compute(bt, 1.0 / t.accumulation, e.dq.data(), doc_ ? e.d_docs.data() : nullptr,
                     doc_ && bt.hard > 0 ? e.d_docs.data() + static_cast<int64_t>(b) * D : nullptr);
  if (!std::isfinite(st.loss)) {
    return Status::DataError(
        "training stopped: the InfoNCE loss is " + ValueName(static_cast<float>(st.loss)) +
        " in epoch " + std::to_string(epoch_) + ", micro-batch " + std::to_string(bi) +
        " (optimizer step " + std::to_string(step_) +
        "): the model diverged or the contexts overflow float32; lower [train] lr, raise "
        "[train] tau or rescale the data (nothing of this epoch was saved)");
  }
  rec.loss += st.loss;
  rec.margin_loss += st.margin_loss;
  rec.accuracy += st.accuracy;
  tower_->Backward(e.dq.data(), threads_);
  if (doc_) doc_->Backward(e.d_docs.data());
  if (e.next.negatives > 0) {
    miner_->Submit(epoch_ + 1, e.next, e.examples, e.targets.data(), e.q.data(), b);
  }
  // The memory bank takes this batch's targets (after the loss used the older ones).
  for (int i = 0; i < b && t.memory_bank > 0; ++i) {
    memory_rows_[memory_head_] = e.targets[i];
    std::copy_n(&e.y[static_cast<size_t>(i) * D], D, &memory_vectors_[memory_head_ * D]);
    memory_head_ = (memory_head_ + 1) % t.memory_bank;
    memory_size_ = std::min(memory_size_ + 1, t.memory_bank);
  }
  ++rec.micro_batches;
  return Status::Ok();
}

// One optimizer step after micro-batch bi: the accumulated gradients checked and clipped,
// AdamW at this step's learning rate (into rec), the new parameters checked, the
// gradients zeroed. A non-finite gradient or parameter stops training, naming the tensor.
Status Trainer::OptimizerStep(int64_t bi, EpochRecord& rec) {
  const TrainOptions& t = s_.train;
  // A non-finite gradient or parameter stops training (naming the tensor): one pass
  // over each, cheap next to the towers' products.
  double ss = 0.0;
  for (const auto& a : adam_) {
    const double g = native::SumOfSquares(a->param.grad, a->param.size);
    if (!std::isfinite(g)) {
      return NonFiniteTensorError("the gradient of", a->param, a->param.grad, epoch_, bi, step_);
    }
    ss += g;
  }
  if (t.grad_clip > 0) {
    const double coef = t.grad_clip / (std::sqrt(ss) + 1e-6);
    if (coef < 1.0) {
      for (const auto& a : adam_)
        native::Scale(a->param.grad, a->param.size, static_cast<float>(coef));
    }
  }
  rec.lr = LearningRate(step_);
  for (const auto& a : adam_) {
    a->adam.set_lr(rec.lr);
    a->adam.Step(a->param.value, a->param.grad);
  }
  for (const auto& a : adam_) {
    if (FirstNonFinite(a->param.value, a->param.size) >= 0) {
      return NonFiniteTensorError("parameter", a->param, a->param.value, epoch_, bi, step_);
    }
  }
  tower_->ZeroGrads();
  if (doc_) doc_->ZeroGrads();
  ++step_;
  ++rec.optimizer_steps;
  return Status::Ok();
}

// The end of an epoch whose micro-batches all trained: the contexts' pages released, the
// miner's queue drained, the timings and the per-micro-batch means into rec, and the
// evaluation when one is due.
void Trainer::CloseEpoch(const EpochState& e, EpochRecord& rec) {
  const TrainOptions& t = s_.train;
  data_->train.x->Release();
  miner_->EndEpoch();
  rec.train_seconds = Since(e.start);
  rec.it_per_sec = rec.micro_batches / std::max(rec.train_seconds, 1e-9);
  rec.mining_busy_seconds = miner_->busy_seconds() - e.busy0;
  rec.mining_wait_seconds = miner_->wait_seconds() - e.wait0;
  rec.loss /= std::max<int64_t>(1, rec.micro_batches);
  rec.margin_loss /= std::max<int64_t>(1, rec.micro_batches);
  rec.accuracy /= std::max<int64_t>(1, rec.micro_batches);
  if ((epoch_ + 1) % s_.eval.every == 0 || epoch_ + 1 == t.epochs) {
    const auto eval_start = Clock::now();
    const RetrievalMetrics m = Evaluate();
    rec.evaluated = true;
    rec.recall = m.recall;
    rec.mrr = m.mrr;
    rec.eval_seconds = Since(eval_start);
  }
}

Result<EpochRecord> Trainer::RunEpoch(const std::function<void(int64_t, int64_t)>& progress) {
  const TrainOptions& t = s_.train;
  const int64_t N = data_->train.x->rows();
  EpochRecord rec;
  rec.epoch = epoch_;
  EpochState e(InfoNceOptions{t.tau, t.margin, t.margin_weight});
  // This epoch's order: a shuffle seeded by (seed, epoch).
  e.order.resize(N);
  std::iota(e.order.begin(), e.order.end(), 0);
  Rng rng(s_.run.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(epoch_) + 1);
  for (int64_t i = N - 1; i > 0; --i) std::swap(e.order[i], e.order[rng.NextU64() % (i + 1)]);
  e.now = schedule_.At(epoch_);
  e.next = schedule_.At(epoch_ + 1);
  e.width = miner_->width();
  e.batches = BatchesPerEpoch(t, N);
  e.busy0 = miner_->busy_seconds();
  e.wait0 = miner_->wait_seconds();
  e.start = Clock::now();
  // A learned document tower moves the documents: this epoch's searches (the next
  // epoch's negatives) run over the bank embedded with the parameters of its start.
  if (doc_ && e.next.negatives > 0) {
    const Status rebuilt = miner_->Rebuild(DocumentBank());
    RLT_CHECK_MSG(rebuilt.ok(), rebuilt.message().c_str());
  }
  tower_->ZeroGrads();
  if (doc_) doc_->ZeroGrads();
  // Training stops at the first non-finite loss, gradient or parameter: a diverged model
  // is never saved, evaluated or ranked.
  int pending = 0;
  for (int64_t bi = 0; bi < e.batches; ++bi) {
    PrepareBatch(e, bi);
    RLT_RETURN_IF_ERROR(LearnFromBatch(e, bi, rec));
    if (++pending == t.accumulation || bi + 1 == e.batches) {
      RLT_RETURN_IF_ERROR(OptimizerStep(bi, rec));
      pending = 0;
    }
    // Contexts are read from a memory-mapped file: let go of the pages every so often,
    // so resident memory stays bounded however large the file.
    if ((bi + 1) % kReleaseEvery == 0) data_->train.x->Release();
    if (progress) progress(bi + 1, e.batches);
  }
  CloseEpoch(e, rec);
  ++epoch_;
  return rec;
}

RetrievalMetrics Trainer::Evaluate() {
  const int D = data_->dim, T = data_->steps;
  const int64_t M = data_->val.x->rows();
  std::vector<float> queries(M * D), x;
  std::vector<int64_t> idx;
  const int b = std::max(2, s_.train.batch_size);
  for (int64_t first = 0; first < M; first += b) {
    const int n = static_cast<int>(std::min<int64_t>(b, M - first));
    idx.resize(n);
    std::iota(idx.begin(), idx.end(), first);
    x.resize(static_cast<size_t>(n) * T * D);
    data_->val.x->Gather(idx.data(), n, x.data());
    tower_->Forward(x.data(), n, T, &queries[first * D], threads_);
  }
  data_->val.x->Release();
  std::vector<int64_t> ranks(M);
  TargetRanks(queries.data(), M, DocumentBank(), data_->bank_rows, D, data_->val.target_row.data(),
              ranks.data());
  return MetricsFromRanks(ranks, s_.eval.ks);
}

Status Trainer::SaveParameters(const std::string& path) const {
  native::TensorFile f;
  for (const auto& a : adam_)
    f.AddFloat32("param/" + a->param.name, a->param.shape, a->param.value);
  return f.Write(path);
}

Status Trainer::LoadParameters(const std::string& path) {
  RLT_ASSIGN_OR_RETURN(native::TensorFile f, native::TensorFile::Read(path));
  for (const auto& a : adam_) {
    const TowerParam& p = a->param;
    RLT_ASSIGN_OR_RETURN(const native::NamedTensor* tensor,
                         f.Get("param/" + p.name, native::DType::kFloat32, p.shape, path));
    RLT_RETURN_IF_ERROR(CheckFiniteTensor(tensor->f32, "param/" + p.name, path));
    std::copy(tensor->f32.begin(), tensor->f32.end(), p.value);
  }
  doc_bank_step_ = -1;
  return Status::Ok();
}

Status Trainer::Save(const std::string& path) const {
  native::TensorFile f;
  for (const auto& a : adam_) {
    const TowerParam& p = a->param;
    f.AddFloat32("param/" + p.name, p.shape, p.value);
    f.AddFloat32("adam/exp_avg/" + p.name, p.shape, a->adam.exp_avg().data());
    f.AddFloat32("adam/exp_avg_sq/" + p.name, p.shape, a->adam.exp_avg_sq().data());
  }
  const int64_t adam_step = adam_.empty() ? 0 : adam_.front()->adam.step();
  const int64_t counters[5] = {epoch_, step_, adam_step, memory_head_, memory_size_};
  f.AddInt64("state/counters", {5}, counters);
  f.AddInt64("state/memory_rows", {static_cast<int64_t>(memory_rows_.size())}, memory_rows_.data());
  f.AddInt64("state/mined", {static_cast<int64_t>(miner_->current().size())},
             miner_->current().data());
  // A learned document tower's memory-bank embeddings date from the steps that added
  // them: kept, so a resumed run continues exactly.
  if (doc_) {
    f.AddFloat32("state/memory_vectors", {s_.train.memory_bank, data_->dim},
                 memory_vectors_.data());
  }
  return f.Write(path);
}

Status Trainer::Load(const std::string& path) {
  RLT_ASSIGN_OR_RETURN(native::TensorFile f, native::TensorFile::Read(path));
  for (const auto& a : adam_) {
    const TowerParam& p = a->param;
    for (const char* kind : {"param/", "adam/exp_avg/", "adam/exp_avg_sq/"}) {
      RLT_ASSIGN_OR_RETURN(const native::NamedTensor* tensor,
                           f.Get(kind + p.name, native::DType::kFloat32, p.shape, path));
      RLT_RETURN_IF_ERROR(CheckFiniteTensor(tensor->f32, kind + p.name, path));
      float* dst = std::string(kind) == "param/"          ? p.value
                   : std::string(kind) == "adam/exp_avg/" ? a->adam.exp_avg().data()
                                                          : a->adam.exp_avg_sq().data();
      std::copy(tensor->f32.begin(), tensor->f32.end(), dst);
    }
  }
  RLT_ASSIGN_OR_RETURN(const native::NamedTensor* counters,
                       f.Get("state/counters", native::DType::kInt64, {5}, path));
  RLT_ASSIGN_OR_RETURN(const native::NamedTensor* memory,
                       f.Get("state/memory_rows", native::DType::kInt64,
                             {static_cast<int64_t>(memory_rows_.size())}, path));
  RLT_ASSIGN_OR_RETURN(const native::NamedTensor* mined,
                       f.Get("state/mined", native::DType::kInt64,
                             {static_cast<int64_t>(miner_->current().size())}, path));
  const std::vector<int64_t>& c = counters->i64;
  if (c[0] < 0 || c[1] < 0 || c[2] < 0 || c[3] < 0 || c[4] < 0 ||
      c[4] > static_cast<int64_t>(memory_rows_.size()) ||
      (c[3] > 0 && c[3] >= static_cast<int64_t>(memory_rows_.size()))) {
    return Status::DataError(path + ": state/counters out of range");
  }
  for (int64_t row : memory->i64) {
    if (row < -1 || row >= data_->bank_rows) {
      return Status::DataError(path + ": state/memory_rows names a row outside the bank");
    }
  }
  for (int64_t row : mined->i64) {
    if (row < -1 || row >= data_->bank_rows) {
      return Status::DataError(path + ": state/mined names a row outside the bank");
    }
  }
  epoch_ = static_cast<int>(c[0]);
  step_ = c[1];
  for (const auto& a : adam_) a->adam.set_step(c[2]);
  memory_head_ = c[3];
  memory_size_ = c[4];
  memory_rows_ = memory->i64;
  const int D = data_->dim;
  if (doc_) {
    RLT_ASSIGN_OR_RETURN(
        const native::NamedTensor* vectors,
        f.Get("state/memory_vectors", native::DType::kFloat32, {s_.train.memory_bank, D}, path));
    RLT_RETURN_IF_ERROR(CheckFiniteTensor(vectors->f32, "state/memory_vectors", path));
    std::copy(vectors->f32.begin(), vectors->f32.end(), memory_vectors_.begin());
  } else {
    for (size_t k = 0; k < memory_rows_.size(); ++k) {
      if (memory_rows_[k] >= 0) {
        std::copy_n(&data_->bank[memory_rows_[k] * D], D, &memory_vectors_[k * D]);
      }
    }
  }
  miner_->SetCurrent(mined->i64);
  doc_bank_step_ = -1;
  return Status::Ok();
}

}  // namespace rlt::retrieval
