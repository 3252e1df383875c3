// Tests of the two-tower trainer on the synthetic dataset in memory: it learns the
// structured task, learns nothing from shuffled targets, resumes exactly, and refuses bad
// settings before training.
#include "retrieval/trainer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

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
    for (int e = 0; e < SmallSettings().train.epochs; ++e) last = (*trainer)->RunEpoch({});
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
  for (int e = 0; e < s.train.epochs; ++e) last = (*trainer)->RunEpoch({});
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
  for (int e = 0; e < s.train.epochs; ++e) last = (*mlp)->RunEpoch({});
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
    for (int e = 0; e < 4; ++e) (*straight)->RunEpoch({});
    const std::string dir = ::testing::TempDir() + "/resume_" + std::to_string(threads);
    std::filesystem::create_directories(dir);
    auto first = Trainer::Create(s, data.get());
    ASSERT_TRUE(first.ok());
    (*first)->RunEpoch({});
    (*first)->RunEpoch({});
    ASSERT_TRUE((*first)->Save(dir + "/state.rtt").ok());
    auto second = Trainer::Create(s, data.get());
    ASSERT_TRUE(second.ok());
    ASSERT_TRUE((*second)->Load(dir + "/state.rtt").ok());
    EXPECT_EQ((*second)->next_epoch(), 2);
    (*second)->RunEpoch({});
    (*second)->RunEpoch({});
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
    ASSERT_FALSE(t.ok()) << c.fragment;
    EXPECT_NE(t.status().message().find(c.fragment), std::string::npos) << t.status().message();
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
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("lower train.batch_size or model.hidden"), std::string::npos)
      << st.message();
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
    ASSERT_FALSE(st.ok()) << fragment;
    EXPECT_NE(st.message().find(fragment), std::string::npos) << st.message();
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

}  // namespace
}  // namespace rlt::retrieval
