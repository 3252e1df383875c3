// rltrade retrieval: the two-tower trainer (see trainer.h).
#include "retrieval/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <numeric>

#include "core/rng.h"
#include "core/thread_pool.h"
#include "native/adam.h"
#include "native/gemm.h"
#include "native/tensor_file.h"
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
  need(t.tau > 0 && t.tau <= 10, "[train] tau must be in (0, 10]");
  need(t.margin >= 0 && t.margin <= 4, "[train] margin must be in [0, 4]");
  need(t.margin_weight >= 0, "[train] margin_weight must be >= 0");
  need(t.memory_bank >= 0 && t.memory_bank <= 10000000,
       "[train] memory_bank must be in [0, 10000000]");
  need(t.grad_clip >= 0, "[train] grad_clip must be >= 0 (0 = none)");
  need(t.max_batches >= 0, "[train] max_batches must be >= 0 (0 = all)");
  need(s.model.hidden >= 1 && s.model.hidden <= 8192, "[model] hidden must be in [1, 8192]");
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
  native::AdamOptions ao;
  ao.lr = settings.train.lr;
  ao.eps = 1e-8;  // torch's AdamW default
  ao.weight_decay = settings.train.weight_decay;
  for (const TowerParam& p : t->tower_->Params())
    t->adam_.push_back(std::make_unique<AdamBlock>(p, ao));
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
  const int64_t m = s_.train.memory_bank;
  for (int64_t k = 0; k < m; ++k) {
    memory_rows_[k] = static_cast<int64_t>(rng.NextU64() % data_->bank_rows);
    std::copy_n(&data_->bank[memory_rows_[k] * D], D, &memory_vectors_[k * D]);
  }
  memory_size_ = m;
  memory_head_ = 0;
}

double Trainer::Flops(int batch) const { return tower_->FlopsPerIteration(batch, data_->steps); }

EpochRecord Trainer::RunEpoch(const std::function<void(int64_t, int64_t)>& progress) {
  const TrainOptions& t = s_.train;
  const int D = data_->dim, T = data_->steps;
  const int64_t N = data_->train.x->rows();
  EpochRecord rec;
  rec.epoch = epoch_;
  // This epoch's order: a shuffle seeded by (seed, epoch).
  std::vector<int64_t> order(N);
  std::iota(order.begin(), order.end(), 0);
  Rng rng(s_.run.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(epoch_) + 1);
  for (int64_t i = N - 1; i > 0; --i) std::swap(order[i], order[rng.NextU64() % (i + 1)]);
  const MiningPhase now = schedule_.At(epoch_);
  const MiningPhase next = schedule_.At(epoch_ + 1);
  const int width = miner_->width();
  const int64_t batches = BatchesPerEpoch(t, N);
  const double busy0 = miner_->busy_seconds(), wait0 = miner_->wait_seconds();
  InfoNce loss(InfoNceOptions{t.tau, t.margin, t.margin_weight});
  std::vector<float> x, q, y, dq, hard_vectors;
  std::vector<int64_t> targets, hard_ids, table;
  const auto start = Clock::now();
  tower_->ZeroGrads();
  int pending = 0;
  for (int64_t bi = 0; bi < batches; ++bi) {
    const int64_t first = bi * t.batch_size;
    const int b = static_cast<int>(std::min<int64_t>(t.batch_size, N - first));
    const int64_t* examples = &order[first];
    x.resize(static_cast<size_t>(b) * T * D);
    data_->train.x->Gather(examples, b, x.data());
    q.resize(static_cast<size_t>(b) * D);
    dq.resize(q.size());
    tower_->Forward(x.data(), b, T, q.data(), threads_);
    targets.resize(b);
    y.resize(static_cast<size_t>(b) * D);
    for (int i = 0; i < b; ++i) {
      targets[i] = data_->train.target_row[examples[i]];
      std::copy_n(&data_->bank[targets[i] * D], D, &y[static_cast<size_t>(i) * D]);
    }
    InfoNceBatch bt;
    bt.b = b;
    bt.d = D;
    bt.q = q.data();
    bt.y = y.data();
    bt.target_ids = targets.data();
    bt.m = static_cast<int>(memory_size_);
    bt.memory = memory_vectors_.data();
    bt.memory_ids = memory_rows_.data();
    if (now.negatives > 0) {
      table.resize(static_cast<size_t>(b) * width);
      miner_->Lookup(examples, b, table.data());
      hard_ids.resize(static_cast<size_t>(b) * now.negatives);
      hard_vectors.assign(static_cast<size_t>(b) * now.negatives * D, 0.0f);
      for (int i = 0; i < b; ++i) {
        for (int l = 0; l < now.negatives; ++l) {
          const int64_t row = table[static_cast<size_t>(i) * width + l];
          hard_ids[static_cast<size_t>(i) * now.negatives + l] = row;
          if (row >= 0) {
            std::copy_n(&data_->bank[row * D], D,
                        &hard_vectors[(static_cast<size_t>(i) * now.negatives + l) * D]);
          }
        }
      }
      bt.hard = now.negatives;
      bt.hard_vectors = hard_vectors.data();
      bt.hard_ids = hard_ids.data();
    }
    const InfoNceStats st = loss.Compute(bt, 1.0 / t.accumulation, dq.data());
    rec.loss += st.loss;
    rec.margin_loss += st.margin_loss;
    rec.accuracy += st.accuracy;
    tower_->Backward(dq.data(), threads_);
    if (next.negatives > 0) {
      miner_->Submit(epoch_ + 1, next, examples, targets.data(), q.data(), b);
    }
    // The memory bank takes this batch's targets (after the loss used the older ones).
    for (int i = 0; i < b && t.memory_bank > 0; ++i) {
      memory_rows_[memory_head_] = targets[i];
      std::copy_n(&y[static_cast<size_t>(i) * D], D, &memory_vectors_[memory_head_ * D]);
      memory_head_ = (memory_head_ + 1) % t.memory_bank;
      memory_size_ = std::min(memory_size_ + 1, t.memory_bank);
    }
    ++rec.micro_batches;
    if (++pending == t.accumulation || bi + 1 == batches) {
      if (t.grad_clip > 0) {
        double ss = 0.0;
        for (const auto& a : adam_) ss += native::SumOfSquares(a->param.grad, a->param.size);
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
      tower_->ZeroGrads();
      pending = 0;
      ++step_;
      ++rec.optimizer_steps;
    }
    // Contexts are read from a memory-mapped file: let go of the pages every so often,
    // so resident memory stays bounded however large the file.
    if ((bi + 1) % kReleaseEvery == 0) data_->train.x->Release();
    if (progress) progress(bi + 1, batches);
  }
  data_->train.x->Release();
  miner_->EndEpoch();
  rec.train_seconds = Since(start);
  rec.it_per_sec = rec.micro_batches / std::max(rec.train_seconds, 1e-9);
  rec.mining_busy_seconds = miner_->busy_seconds() - busy0;
  rec.mining_wait_seconds = miner_->wait_seconds() - wait0;
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
  TargetRanks(queries.data(), M, data_->bank.data(), data_->bank_rows, D,
              data_->val.target_row.data(), ranks.data());
  return MetricsFromRanks(ranks, s_.eval.ks);
}

Status Trainer::SaveParameters(const std::string& path) const {
  native::TensorFile f;
  for (const TowerParam& p : tower_->Params()) f.AddFloat32("param/" + p.name, p.shape, p.value);
  return f.Write(path);
}

Status Trainer::LoadParameters(const std::string& path) {
  RLT_ASSIGN_OR_RETURN(native::TensorFile f, native::TensorFile::Read(path));
  for (const TowerParam& p : tower_->Params()) {
    RLT_ASSIGN_OR_RETURN(const native::NamedTensor* tensor,
                         f.Get("param/" + p.name, native::DType::kFloat32, p.shape, path));
    std::copy(tensor->f32.begin(), tensor->f32.end(), p.value);
  }
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
  return f.Write(path);
}

Status Trainer::Load(const std::string& path) {
  RLT_ASSIGN_OR_RETURN(native::TensorFile f, native::TensorFile::Read(path));
  for (const auto& a : adam_) {
    const TowerParam& p = a->param;
    for (const char* kind : {"param/", "adam/exp_avg/", "adam/exp_avg_sq/"}) {
      RLT_ASSIGN_OR_RETURN(const native::NamedTensor* tensor,
                           f.Get(kind + p.name, native::DType::kFloat32, p.shape, path));
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
  for (size_t k = 0; k < memory_rows_.size(); ++k) {
    if (memory_rows_[k] >= 0) {
      std::copy_n(&data_->bank[memory_rows_[k] * D], D, &memory_vectors_[k * D]);
    }
  }
  miner_->SetCurrent(mined->i64);
  return Status::Ok();
}

}  // namespace rlt::retrieval
