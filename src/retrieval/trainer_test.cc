// Tests of the two-tower trainer on the synthetic dataset in memory: it learns the
// structured task, learns nothing from shuffled targets, resumes exactly, refuses bad
// settings before training, stops at a non-finite loss or parameter, refuses a non-finite
// model, and ranks a bank with exact duplicates as the bank without them.
#include "retrieval/trainer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "core/status_test_util.h"
#include "native/tensor_file.h"
#include "retrieval/data.h"
#include "retrieval/synth.h"

namespace rlt::retrieval {
namespace {

SynthOptions SmallSynth() {
  SynthOptions o;
  o.n = 1536;
  o.n_val = 256;
  o.t = 8;
  o.d = 16;
  o.bank_size = 1024;
  o.slots = 16;
  o.noise = 0.2;
  o.seed = 3;
  return o;
}

TrainerSettings SmallSettings() {
  TrainerSettings s;
  s.run.seed = 5;
  s.run.threads = 1;
  s.model.hidden = 32;
  s.train.epochs = 24;
  s.train.batch_size = 32;
  s.train.lr = 3e-3;
  s.train.lr_min = 1e-4;
  s.train.warmup_steps = 10;
  s.train.weight_decay = 0.0;
  s.train.tau = 0.1;
  s.train.memory_bank = 256;
  s.mining.schedule = "0-5:none,6-23:4@2-20";
  s.eval.ks = {1, 10, 100};
  s.eval.best_metric = "recall@10";
  return s;
}

// One epoch, which must succeed.
EpochRecord Epoch(Trainer& t) {
  Result<EpochRecord> r = t.RunEpoch({});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : EpochRecord{};
}

std::unique_ptr<RetrievalData> Data(const SynthOptions& o) {
  auto synth = SynthDataset::Create(o);
  EXPECT_TRUE(synth.ok()) << synth.status().message();
  auto data = SynthDataInMemory(*synth, 100);
  EXPECT_TRUE(data.ok()) << data.status().message();
  return std::move(data).value();
}

TEST(Trainer, LearnsTheSyntheticTaskAndNothingFromShuffledTargets) {
  for (bool shuffled : {false, true}) {
    auto data = Data(SmallSynth());
    if (shuffled) ShuffleTrainingTargets(*data, 11);
    auto trainer = Trainer::Create(SmallSettings(), data.get());
    ASSERT_TRUE(trainer.ok()) << trainer.status().message();
    const RetrievalMetrics before = (*trainer)->Evaluate();
    EpochRecord last;
    for (int e = 0; e < SmallSettings().train.epochs; ++e) last = Epoch(**trainer);
    ASSERT_TRUE(last.evaluated);
    if (!shuffled) {
      EXPECT_GT(last.recall.at(10), 0.9) << "recall@10 before training " << before.recall.at(10);
      EXPECT_GT(last.mrr, before.mrr + 0.3);
    } else {
      // Chance is 10 / 1024 ~ 0.01 for Recall@10: a leak would show far above it.
      EXPECT_LT(last.recall.at(10), 0.08);
    }
  }
}

TEST(Trainer, TheLstmCellLearnsTheTaskToo) {
  auto data = Data(SmallSynth());
  TrainerSettings s = SmallSettings();
  s.model.cell = "lstm";
  auto trainer = Trainer::Create(s, data.get());
  ASSERT_TRUE(trainer.ok()) << trainer.status().message();
  EpochRecord last;
  for (int e = 0; e < s.train.epochs; ++e) last = Epoch(**trainer);
  EXPECT_GT(last.recall.at(10), 0.8);
}

TEST(Trainer, TheMlpDocumentTowerStartsAsTheIdentityAndLearnsTheTask) {
  auto data = Data(SmallSynth());
  TrainerSettings s = SmallSettings();
  auto identity = Trainer::Create(s, data.get());
  s.model.doc_tower = "mlp";
  s.model.doc_hidden = 24;
  auto mlp = Trainer::Create(s, data.get());
  ASSERT_TRUE(identity.ok() && mlp.ok());
  // W2 and b2 start at zero: the same ranks as the identity tower before training.
  const RetrievalMetrics a = (*identity)->Evaluate(), b = (*mlp)->Evaluate();
  EXPECT_NEAR(a.mrr, b.mrr, 1e-6);
  EpochRecord last;
  for (int e = 0; e < s.train.epochs; ++e) last = Epoch(**mlp);
  EXPECT_GT(last.recall.at(10), 0.8);
  // The document tower moved from its zero start (its gradients reached it).
  const std::string path = ::testing::TempDir() + "/doc_mlp.rtt";
  ASSERT_TRUE((*mlp)->SaveParameters(path).ok());
  auto f = native::TensorFile::Read(path);
  ASSERT_TRUE(f.ok());
  auto w2 = f->Get("param/doc.fc2.weight", native::DType::kFloat32, {16, 24}, path);
  ASSERT_TRUE(w2.ok()) << w2.status().message();
  double ss = 0.0;
  for (float v : (*w2)->f32) ss += static_cast<double>(v) * v;
  EXPECT_GT(ss, 1e-4);
}

TEST(Trainer, ResumingFromACheckpointContinuesExactly) {
  TrainerSettings s = SmallSettings();
  s.train.epochs = 4;
  s.mining.schedule = "1-3:3@1-10";
  s.train.accumulation = 2;
  for (int threads : {1, 2, 3}) {
    // threads 3 stands for: two threads with the MLP document tower.
    s.run.threads = std::min(threads, 2);
    s.model.doc_tower = threads == 3 ? "mlp" : "identity";
    auto data = Data(SmallSynth());
    auto straight = Trainer::Create(s, data.get());
    ASSERT_TRUE(straight.ok());
    for (int e = 0; e < 4; ++e) Epoch(**straight);
    const std::string dir = ::testing::TempDir() + "/resume_" + std::to_string(threads);
    std::filesystem::create_directories(dir);
    auto first = Trainer::Create(s, data.get());
    ASSERT_TRUE(first.ok());
    Epoch(**first);
    Epoch(**first);
    ASSERT_TRUE((*first)->Save(dir + "/state.rtt").ok());
    auto second = Trainer::Create(s, data.get());
    ASSERT_TRUE(second.ok());
    ASSERT_TRUE((*second)->Load(dir + "/state.rtt").ok());
    EXPECT_EQ((*second)->next_epoch(), 2);
    Epoch(**second);
    Epoch(**second);
    ASSERT_TRUE((*straight)->SaveParameters(dir + "/a.rtt").ok());
    ASSERT_TRUE((*second)->SaveParameters(dir + "/b.rtt").ok());
    std::ifstream a(dir + "/a.rtt", std::ios::binary), b(dir + "/b.rtt", std::ios::binary);
    const std::string ta((std::istreambuf_iterator<char>(a)), {}),
        tb((std::istreambuf_iterator<char>(b)), {});
    EXPECT_EQ(ta, tb) << "threads " << threads;
    EXPECT_EQ((*straight)->optimizer_steps(), (*second)->optimizer_steps());
  }
}

TEST(Trainer, RefusesBadSettingsBeforeTraining) {
  auto data = Data(SmallSynth());
  struct Case {
    std::function<void(TrainerSettings&)> change;
    std::string fragment;
  };
  const Case cases[] = {
      {[](TrainerSettings& s) { s.train.batch_size = 1; }, "[train] batch_size"},
      {[](TrainerSettings& s) { s.train.tau = 0; }, "[train] tau"},
      {[](TrainerSettings& s) { s.train.lr_min = 1; }, "[train] lr_min"},
      {[](TrainerSettings& s) { s.mining.schedule = "0-2:8@20"; }, "at character 9"},
      {[](TrainerSettings& s) { s.mining.schedule = "0-2:8@20-1100"; },
       "reads neighbour rank 1100, but the bank holds 1024"},
      {[](TrainerSettings& s) { s.eval.best_metric = "recall@7"; }, "[eval] best_metric"},
      {[](TrainerSettings& s) { s.mining.miner.index = "lsh"; }, "expected flat, ivf or hnsw"},
      {[](TrainerSettings& s) { s.model.doc_tower = "cnn"; }, "expected identity or mlp"},
      {[](TrainerSettings& s) { s.model.doc_hidden = -1; }, "[model] doc_hidden"},
  };
  for (const Case& c : cases) {
    TrainerSettings s = SmallSettings();
    c.change(s);
    auto t = Trainer::Create(s, data.get());
    ASSERT_TRUE(IsError(t, Status::Code::kInvalidArgument, c.fragment)) << c.fragment;
  }
}

TEST(Trainer, AMemoryEstimateAboveWhatIsAvailableIsRefusedNamingTheKeys) {
  auto data = Data(SmallSynth());
  TrainerSettings s = SmallSettings();
  const double bytes = EstimateTrainingBytes(s, *data);
  EXPECT_TRUE(CheckMemory(s, *data, static_cast<int64_t>(bytes * 2)).ok());
  EXPECT_TRUE(CheckMemory(s, *data, 0).ok());  // unknown: not checked
  // The activations grow with batch x T x hidden: a wide model names those keys.
  s.model.hidden = 4096;
  s.train.batch_size = 4096;
  const Status st = CheckMemory(s, *data, static_cast<int64_t>(1e9));
  ASSERT_TRUE(
      IsError(st, Status::Code::kInvalidArgument, "lower train.batch_size or model.hidden"));
  EXPECT_NE(st.message().find("MemAvailable"), std::string::npos);
  // One micro-batch: 4096 x 8 steps x (2 x 16 + 4 x 4096 + 24 x 4096) floats at least.
  EXPECT_GT(EstimateTrainingBytes(s, *data), 4096.0 * 8 * 28 * 4096 * 4);
  // The MLP document tower adds an embedded copy of the bank (1024 x 16 floats) and more.
  TrainerSettings with_mlp = SmallSettings();
  with_mlp.model.doc_tower = "mlp";
  EXPECT_GT(EstimateTrainingBytes(with_mlp, *data) - EstimateTrainingBytes(SmallSettings(), *data),
            1024.0 * 16 * 4);
}

TEST(RetrievalData, RejectsNaNZeroVectorsTargetsOutsideTheBankAndASmallBank) {
  SynthOptions o = SmallSynth();
  auto synth = SynthDataset::Create(o);
  ASSERT_TRUE(synth.ok());
  auto with =
      [&](const std::function<void(std::vector<float>&, std::vector<float>&, std::vector<float>&)>&
              edit,
          int largest_k) {
        const int64_t D = o.d, TD = static_cast<int64_t>(o.t) * D;
        std::vector<float> x(synth->n_train() * TD), y(synth->n_train() * D), bank(o.bank_size * D);
        for (int64_t i = 0; i < synth->n_train(); ++i) synth->Pair(false, i, &x[i * TD], &y[i * D]);
        for (int64_t j = 0; j < o.bank_size; ++j) synth->BankRow(j, &bank[j * D]);
        edit(x, y, bank);
        RetrievalData data;
        data.train.x = std::make_unique<MemoryRows>(x, TD, "p.npz:X_train");
        data.train.y = std::make_unique<MemoryRows>(y, D, "p.npz:Y_train");
        data.val.x = std::make_unique<MemoryRows>(x, TD, "p.npz:X_val");
        data.val.y = std::make_unique<MemoryRows>(y, D, "p.npz:Y_val");
        MemoryRows b(bank, D, "b.npz:vectors");
        return PrepareData(data, b, largest_k);
      };
  auto none = [](std::vector<float>&, std::vector<float>&, std::vector<float>&) {};
  EXPECT_TRUE(with(none, 100).ok());
  auto expect = [](const Status& st, const std::string& fragment) {
    ASSERT_TRUE(IsError(st, Status::Code::kDataError, fragment)) << fragment;
  };
  expect(with([](auto& x, auto&, auto&) { x[16 * 8 * 3 + 5] = NAN; }, 100),
         "p.npz:X_train: row 3 holds NaN");
  expect(with([](auto&, auto&, auto& b) { b[16 * 7 + 2] = INFINITY; }, 100),
         "b.npz:vectors: row 7 holds an infinite value");
  expect(
      with([](auto&, auto&, auto& b) { std::fill(b.begin() + 16 * 9, b.begin() + 16 * 10, 0.0f); },
           100),
      "b.npz:vectors: row 9 is all zeros");
  expect(
      with([](auto&, auto& y, auto&) { std::fill(y.begin() + 16 * 4, y.begin() + 16 * 5, 0.0f); },
           100),
      "p.npz:Y_train: row 4 is all zeros");
  expect(with([](auto&, auto& y, auto&) { y[16 * 6] += 0.5f; }, 100),
         "p.npz:Y_train: target row 6 is not in the bank");
  expect(with(none, 2000), "fewer than the largest k = 2000");
}

TEST(Trainer, TauHasAFloorAndNumericSettingsMustBeFinite) {
  auto data = Data(SmallSynth());
  struct Case {
    std::function<void(TrainerSettings&)> change;
    std::string fragment;
  };
  const Case cases[] = {
      {[](TrainerSettings& s) { s.train.tau = 1e-30; }, "[train] tau must be in [0.001, 10]"},
      {[](TrainerSettings& s) { s.train.tau = 0.9e-3; }, "[train] tau must be in [0.001, 10]"},
      {[](TrainerSettings& s) { s.train.tau = NAN; }, "[train] tau"},
      {[](TrainerSettings& s) { s.train.margin_weight = INFINITY; }, "[train] margin_weight"},
      {[](TrainerSettings& s) { s.train.grad_clip = INFINITY; }, "[train] grad_clip"},
      {[](TrainerSettings& s) {
         s.eval.gate_metric = "recall@10";
         s.eval.gate_threshold = NAN;
       },
       "[eval] gate_threshold must be a finite number"},
  };
  for (const Case& c : cases) {
    TrainerSettings s = SmallSettings();
    c.change(s);
    auto t = Trainer::Create(s, data.get());
    ASSERT_TRUE(IsError(t, Status::Code::kInvalidArgument, c.fragment)) << c.fragment;
  }
  TrainerSettings at_floor = SmallSettings();
  at_floor.train.tau = kMinTau;
  EXPECT_TRUE(Trainer::Create(at_floor, data.get()).ok());
}

// Rewrites the tensor file `path`, every float32 tensor through edit(name, values).
void EditTensors(const std::string& path,
                 const std::function<void(const std::string&, std::vector<float>&)>& edit) {
  auto f = native::TensorFile::Read(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  native::TensorFile out;
  for (const native::NamedTensor& t : f->tensors()) {
    if (t.dtype == native::DType::kFloat32) {
      std::vector<float> v = t.f32;
      edit(t.name, v);
      out.AddFloat32(t.name, t.shape, v.data());
    } else if (t.dtype == native::DType::kInt64) {
      out.AddInt64(t.name, t.shape, t.i64.data());
    } else {
      out.AddFloat64(t.name, t.shape, t.f64.data());
    }
  }
  ASSERT_TRUE(out.Write(path).ok());
}

void PoisonTensor(const std::string& path, const std::string& tensor) {
  bool found = false;
  EditTensors(path, [&](const std::string& name, std::vector<float>& v) {
    if (name != tensor) return;
    v[0] = std::nanf("");
    found = true;
  });
  EXPECT_TRUE(found) << tensor;
}

TEST(Trainer, ANonFiniteParameterStopsTrainingNamingTheTensorAndEpoch) {
  // Finite but extreme AdamW moments (a first moment of FLT_MAX over a zero second
  // moment) make the next step's update overflow: head.bias becomes infinite.
  auto data = Data(SmallSynth());
  TrainerSettings s = SmallSettings();
  auto t = Trainer::Create(s, data.get());
  ASSERT_TRUE(t.ok());
  Epoch(**t);
  const std::string dir = ::testing::TempDir() + "/diverging";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE((*t)->Save(dir + "/state.rtt").ok());
  EditTensors(dir + "/state.rtt", [](const std::string& name, std::vector<float>& v) {
    if (name == "adam/exp_avg/head.bias") std::fill(v.begin(), v.end(), FLT_MAX);
    if (name == "adam/exp_avg_sq/head.bias") std::fill(v.begin(), v.end(), 0.0f);
  });
  auto resumed = Trainer::Create(s, data.get());
  ASSERT_TRUE(resumed.ok());
  ASSERT_TRUE((*resumed)->Load(dir + "/state.rtt").ok()) << "finite values load";
  const Result<EpochRecord> r = (*resumed)->RunEpoch({});
  ASSERT_TRUE(
      IsError(r, Status::Code::kDataError, "training stopped: parameter head.bias holds -inf"))
      << (r.ok() ? "the epoch ended with loss " + std::to_string(r->loss) : "");
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("in epoch 1, micro-batch 0 (optimizer step 48)"), std::string::npos) << msg;
  // The untouched trainer goes on: the check does not fire on a sane run.
  const EpochRecord sane = Epoch(**t);
  EXPECT_TRUE(std::isfinite(sane.loss));
}

TEST(Trainer, ANonFiniteModelOrStateIsRefusedWhenLoaded) {
  auto data = Data(SmallSynth());
  TrainerSettings s = SmallSettings();
  auto t = Trainer::Create(s, data.get());
  ASSERT_TRUE(t.ok());
  const std::string dir = ::testing::TempDir() + "/nonfinite";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE((*t)->SaveParameters(dir + "/model.rtt").ok());
  ASSERT_TRUE((*t)->Save(dir + "/state.rtt").ok());
  ASSERT_TRUE((*t)->LoadParameters(dir + "/model.rtt").ok());
  ASSERT_TRUE((*t)->Load(dir + "/state.rtt").ok());
  PoisonTensor(dir + "/model.rtt", "param/head.weight");
  const Status p = (*t)->LoadParameters(dir + "/model.rtt");
  ASSERT_TRUE(IsError(p, Status::Code::kDataError,
                      dir + "/model.rtt: tensor param/head.weight holds NaN (element 0)"));
  PoisonTensor(dir + "/state.rtt", "adam/exp_avg_sq/head.bias");
  const Status st = (*t)->Load(dir + "/state.rtt");
  ASSERT_TRUE(IsError(st, Status::Code::kDataError, "tensor adam/exp_avg_sq/head.bias holds NaN"));
}

TEST(RetrievalData, ExactDuplicateBankRowsAreKeptOnceAndTheMetricsDoNotMove) {
  const SynthOptions o = SmallSynth();
  auto synth = SynthDataset::Create(o);
  ASSERT_TRUE(synth.ok());
  const int64_t D = o.d, TD = static_cast<int64_t>(o.t) * D, B = o.bank_size;
  // data(copies): the synthetic pairs against the bank repeated `copies` times (rows
  // j, B + j, ...: the same vector); with later_rows, the pairs' target rows name the
  // last copy.
  auto make = [&](int copies, bool later_rows) {
    auto data = std::make_unique<RetrievalData>();
    for (bool val : {false, true}) {
      const int64_t n = val ? synth->n_val() : synth->n_train();
      std::vector<float> x(n * TD), y(n * D);
      std::vector<int64_t> rows(n);
      for (int64_t i = 0; i < n; ++i) {
        synth->Pair(val, i, &x[i * TD], &y[i * D]);
        rows[i] = synth->TargetRow(val, i) + (later_rows ? (copies - 1) * B : 0);
      }
      Split& sp = val ? data->val : data->train;
      sp.x = std::make_unique<MemoryRows>(std::move(x), TD, "p.npz:X");
      sp.y = std::make_unique<MemoryRows>(std::move(y), D, "p.npz:Y");
      sp.given_rows = std::move(rows);
    }
    std::vector<float> bank(copies * B * D);
    for (int c = 0; c < copies; ++c) {
      for (int64_t j = 0; j < B; ++j) {
        synth->BankRow(j, &bank[(c * B + j) * D]);
        if (c == 1 && j == 5) {  // a copy scaled by 2: the same direction, the same vector
          for (int64_t e = 0; e < D; ++e) bank[(c * B + j) * D + e] *= 2.0f;
        }
      }
    }
    MemoryRows b(std::move(bank), D, "b.npz:vectors");
    const Status st = PrepareData(*data, b, 100);
    EXPECT_TRUE(st.ok()) << st.message();
    std::vector<int64_t> ids(copies * B);
    for (int64_t j = 0; j < copies * B; ++j) ids[j] = 1000 + j;
    data->SetBankIds(std::move(ids));
    return data;
  };
  auto once = make(1, false);
  auto twice = make(2, true);
  EXPECT_TRUE(once->notes.empty()) << once->notes.front();
  ASSERT_EQ(twice->notes.size(), 1u);
  EXPECT_NE(twice->notes[0].find("b.npz:vectors: " + std::to_string(B) + " of " +
                                 std::to_string(2 * B) + " rows repeat an earlier row exactly"),
            std::string::npos)
      << twice->notes[0];
  ASSERT_EQ(twice->bank_rows, B);
  EXPECT_EQ(twice->bank, once->bank);
  EXPECT_EQ(twice->train.target_row, once->train.target_row);  // later copies -> first
  EXPECT_EQ(twice->val.target_row, once->val.target_row);
  EXPECT_EQ(twice->bank_ids.size(), static_cast<size_t>(B));
  EXPECT_EQ(twice->bank_ids[7], 1007);  // the first copy's id
  // The same model ranks the same: identical metrics with and without the copies.
  TrainerSettings s = SmallSettings();
  s.train.epochs = 2;
  s.mining.schedule = "1:2@1-10";
  auto a = Trainer::Create(s, once.get());
  auto b = Trainer::Create(s, twice.get());
  ASSERT_TRUE(a.ok() && b.ok());
  for (int e = 0; e < 2; ++e) {
    const EpochRecord ra = Epoch(**a), rb = Epoch(**b);
    EXPECT_EQ(ra.loss, rb.loss) << e;
    EXPECT_EQ(ra.recall, rb.recall) << e;
    EXPECT_EQ(ra.mrr, rb.mrr) << e;
  }
  // A bank of one vector many times has too few distinct vectors for the largest k.
  RetrievalData same;
  std::vector<float> x(4 * TD, 0.1f), y(4 * D, 0.0f), bank(200 * D, 0.0f);
  for (int64_t i = 0; i < 4; ++i) y[i * D] = 1.0f;
  for (int64_t j = 0; j < 200; ++j) bank[j * D] = 1.0f;
  same.train.x = std::make_unique<MemoryRows>(x, TD, "p.npz:X_train");
  same.train.y = std::make_unique<MemoryRows>(y, D, "p.npz:Y_train");
  same.val.x = std::make_unique<MemoryRows>(x, TD, "p.npz:X_val");
  same.val.y = std::make_unique<MemoryRows>(y, D, "p.npz:Y_val");
  MemoryRows b200(bank, D, "b.npz:vectors");
  const Status st = PrepareData(same, b200, 100);
  ASSERT_TRUE(IsError(st, Status::Code::kDataError,
                      "holds 1 distinct vectors, fewer than the largest k = 100"));
}

}  // namespace
}  // namespace rlt::retrieval
