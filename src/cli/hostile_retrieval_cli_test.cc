// End-to-end regression tests of `rltrade retrieval` against a broken model looking
// perfect: each runs the command a hostile tester ran and asserts the exit code, a message
// fragment and what is (not) left on disk.
//  - A temperature below the floor is refused before anything is written; a parameter
//    that stops being finite stops training naming the tensor and the epoch (a failed
//    resume changes nothing); eval and resume refuse a checkpoint holding NaN; targets
//    whose scores are NaN are misses (Recall@k 0, MRR 1 / (B + 1)), never hits.
//  - A bank holding every vector twice ranks exactly as the bank without the copies (the
//    copies are dropped with a note) and trains the same model.
//  - An .npz with two members of the same name is refused, naming the file and member.
//  - `--resume DIR --set train.epochs=N` records N in DIR/config.toml (checksummed), and a
//    length shorter than what was trained is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "native/tensor_file.h"
#include "retrieval/npz.h"
#include "runlog/manifest.h"

namespace {

namespace fs = std::filesystem;
namespace rr = rlt::retrieval;

using rlt::cli::testing_util::CmdResult;
using rlt::cli::testing_util::RunCli;

constexpr int64_t kBank = 2048, kD = 16;

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every path under `dir` (relative), for "nothing was written" checks.
std::set<std::string> Tree(const std::string& dir) {
  std::set<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    out.insert(fs::relative(e.path(), dir).string());
  }
  return out;
}

// All rows of a float array of an .npz, with its shape (`rank` dimensions, any sizes).
std::vector<float> ReadFloats(const std::string& path, const std::string& name, size_t rank,
                              std::vector<int64_t>* shape) {
  auto f = rr::NpzFile::Open(path);
  EXPECT_TRUE(f.ok()) << f.status().message();
  if (!f.ok()) return {};
  auto a = f->Get(name, {rr::NpyDType::kFloat32}, std::vector<int64_t>(rank, -1));
  EXPECT_TRUE(a.ok()) << a.status().message();
  if (!a.ok()) return {};
  *shape = a->shape();
  std::vector<float> v(static_cast<size_t>(a->rows() * a->row_elems()));
  a->Read(0, a->rows(), v.data());
  return v;
}

// Rewrites RUN/checkpoint/file, every float32 tensor through edit(name, values), and the
// checkpoint's MANIFEST to match (so only the value checks can catch the change).
void EditCheckpoint(const std::string& run, const std::string& checkpoint, const std::string& file,
                    const std::function<void(const std::string&, std::vector<float>&)>& edit) {
  const std::string path = run + "/" + checkpoint + "/" + file;
  auto f = rlt::native::TensorFile::Read(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  rlt::native::TensorFile out;
  for (const rlt::native::NamedTensor& t : f->tensors()) {
    if (t.dtype == rlt::native::DType::kInt64) {
      out.AddInt64(t.name, t.shape, t.i64.data());
      continue;
    }
    ASSERT_EQ(t.dtype, rlt::native::DType::kFloat32) << t.name;
    std::vector<float> v = t.f32;
    edit(t.name, v);
    out.AddFloat32(t.name, t.shape, v.data());
  }
  ASSERT_TRUE(out.Write(path).ok());
  ASSERT_TRUE(rlt::runlog::WriteDirManifest(run + "/" + checkpoint).ok());
}

class HostileRetrievalCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/hostile_retrieval_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const CmdResult r = RunCli("retrieval synth --pairs " + P("pairs.npz") + " --bank " +
                               P("bank.npz") + " --n 1024 --n-val 128 --t 8 --d 16 --bank-size " +
                               std::to_string(kBank) + " --set slots=16");
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  std::string P(const std::string& name) const { return dir_ + "/" + name; }
  // A small two-epoch run (a couple of seconds).
  std::string Config(const std::string& extra = "") const {
    const std::string path = P("c.toml");
    std::ofstream(path) << "[run]\nthreads = 1\n[data]\npairs = \"" << P("pairs.npz")
                        << "\"\nbank = \"" << P("bank.npz")
                        << "\"\n[model]\nhidden = 32\n[train]\nepochs = 2\nbatch_size = 32\n"
                           "lr = 3e-3\nlr_min = 1e-4\nwarmup_steps = 10\nweight_decay = 0.0\n"
                           "tau = 0.1\nmemory_bank = 256\n[mining]\nschedule = \"1:4@2-20\"\n"
                           "[eval]\nks = [1, 10, 100]\nbest_metric = \"recall@10\"\n"
                        << extra;
    return path;
  }
  CmdResult Train(const std::string& run, const std::string& sets = "") const {
    return RunCli("retrieval train " + Config() + " --run-dir " + P(run) + " --quiet " + sets);
  }
  std::string dir_;
};

nlohmann::json Json(const CmdResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return nlohmann::json::parse(r.out, nullptr, false);
}

TEST_F(HostileRetrievalCli, ATemperatureBelowTheFloorIsRefusedBeforeAnythingIsWritten) {
  for (const char* tau : {"1e-30", "0.0009", "-1"}) {
    const CmdResult r = Train("run", std::string("--set train.tau=") + tau);
    EXPECT_EQ(r.exit_code, 1) << tau << "\n" << r.out;
    EXPECT_NE(r.out.find("[train] tau must be in [0.001, 10]"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(P("run"))) << tau << ": a run directory was left";
  }
  // At the floor it trains, and its figures are finite.
  const CmdResult ok = Train("floor", "--set train.tau=0.001");
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  std::ifstream h(P("floor") + "/history.jsonl");
  for (std::string line; std::getline(h, line);) {
    const auto j = nlohmann::json::parse(line);
    ASSERT_TRUE(j["loss"].is_number()) << line;  // a NaN would be written as null
    EXPECT_TRUE(std::isfinite(j["loss"].get<double>())) << line;
  }
}

TEST_F(HostileRetrievalCli, ADivergingRunStopsNamingTheTensorAndEpochAndChangesNothing) {
  ASSERT_EQ(Train("run").exit_code, 0);
  // Finite but extreme AdamW moments in last/state.rtt (a first moment of FLT_MAX over a
  // zero second moment): the resumed run's first step makes head.bias infinite.
  EditCheckpoint(P("run"), "last", "state.rtt", [](const std::string& name, std::vector<float>& v) {
    if (name == "adam/exp_avg/head.bias") std::fill(v.begin(), v.end(), FLT_MAX);
    if (name == "adam/exp_avg_sq/head.bias") std::fill(v.begin(), v.end(), 0.0f);
  });
  const std::set<std::string> before = Tree(P("run"));
  const std::string config = Bytes(P("run") + "/config.toml");
  const std::string history = Bytes(P("run") + "/history.jsonl");
  const std::string final_model = Bytes(P("run") + "/final/model.rtt");
  const CmdResult r =
      RunCli("retrieval train --resume " + P("run") + " --set train.epochs=3 --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("training stopped: parameter head.bias holds -inf"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("in epoch 2, micro-batch 0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("recall@"), std::string::npos) << "no metrics of a diverged model\n"
                                                      << r.out;
  // Nothing of the failed resume stays: the same files, config (epochs 2), history and
  // final model.
  EXPECT_EQ(Tree(P("run")), before);
  EXPECT_EQ(Bytes(P("run") + "/config.toml"), config);
  EXPECT_EQ(Bytes(P("run") + "/history.jsonl"), history);
  EXPECT_EQ(Bytes(P("run") + "/final/model.rtt"), final_model);
  EXPECT_TRUE(rlt::runlog::VerifyManifestFiles(P("run"), {"config.toml"}).ok());
}

TEST_F(HostileRetrievalCli, EvalAndResumeRefuseACheckpointHoldingNaN) {
  ASSERT_EQ(Train("run").exit_code, 0);
  // A NaN written into best/model.rtt (its MANIFEST rewritten to match, so only the value
  // check can catch it) and into last/state.rtt.
  auto poison = [&](const std::string& checkpoint, const std::string& file,
                    const std::string& tensor) {
    EditCheckpoint(P("run"), checkpoint, file, [&](const std::string& name, std::vector<float>& v) {
      if (name == tensor) v[3] = std::nanf("");
    });
  };
  poison("best", "model.rtt", "param/head.weight");
  poison("last", "state.rtt", "param/gru.weight_hh_l0");
  const std::set<std::string> before = Tree(P("run"));
  const std::string config = Bytes(P("run") + "/config.toml");
  const CmdResult eval = RunCli("retrieval eval " + P("run") + " --json");
  EXPECT_EQ(eval.exit_code, 1) << eval.out;
  EXPECT_NE(eval.out.find("best/model.rtt: tensor param/head.weight holds NaN (element 3)"),
            std::string::npos)
      << eval.out;
  EXPECT_EQ(eval.out.find("\"mrr\""), std::string::npos) << eval.out;
  const CmdResult last = RunCli("retrieval eval " + P("run") + " --checkpoint last --json");
  EXPECT_EQ(last.exit_code, 1) << last.out;
  EXPECT_NE(last.out.find("tensor param/gru.weight_hh_l0 holds NaN"), std::string::npos)
      << last.out;
  const CmdResult resume =
      RunCli("retrieval train --resume " + P("run") + " --set train.epochs=3 --quiet");
  EXPECT_EQ(resume.exit_code, 1) << resume.out;
  EXPECT_NE(resume.out.find("last/state.rtt: tensor param/gru.weight_hh_l0 holds NaN"),
            std::string::npos)
      << resume.out;
  // Nothing was written: the same files, the same config (epochs still 2).
  EXPECT_EQ(Tree(P("run")), before);
  EXPECT_EQ(Bytes(P("run") + "/config.toml"), config);
  // The untouched final/ still evaluates.
  EXPECT_TRUE(
      Json(RunCli("retrieval eval " + P("run") + " --checkpoint final --json")).contains("mrr"));
}

TEST_F(HostileRetrievalCli, TargetsWhoseScoresAreNaNAreMissesNotHits) {
  ASSERT_EQ(Train("run", "--set model.doc_tower=mlp --set model.doc_hidden=8").exit_code, 0);
  // A document tower with finite but extreme parameters: relu(W1 v + FLT_MAX) x FLT_MAX
  // overflows to +inf in every coordinate, so every bank embedding is inf / inf = NaN and
  // so is every target's score. NaN outranked nothing before: Recall@k = MRR = 1.
  EditCheckpoint(P("run"), "final", "model.rtt",
                 [](const std::string& name, std::vector<float>& v) {
                   if (name == "doc.fc1.bias" || name == "param/doc.fc1.bias" ||
                       name == "doc.fc2.weight" || name == "param/doc.fc2.weight") {
                     std::fill(v.begin(), v.end(), FLT_MAX);
                   }
                 });
  const nlohmann::json j =
      Json(RunCli("retrieval eval " + P("run") + " --checkpoint final --json"));
  ASSERT_TRUE(j.contains("recall@100")) << j.dump();
  EXPECT_EQ(j["recall@1"].get<double>(), 0.0) << j.dump();
  EXPECT_EQ(j["recall@100"].get<double>(), 0.0) << j.dump();
  // Each target ranked after every one of the 2,048 bank rows: MRR = 1 / 2049.
  EXPECT_NEAR(j["mrr"].get<double>(), 1.0 / (kBank + 1), 1e-9 / kBank) << j.dump();
}

TEST_F(HostileRetrievalCli, ABankHoldingEveryVectorTwiceRanksAsTheBankWithoutCopies) {
  // The bank twice over ([V; V]: row j and row 2048 + j are the same vector).
  std::vector<int64_t> shape;
  std::vector<float> v = ReadFloats(P("bank.npz"), "vectors", 2, &shape);
  ASSERT_EQ(shape, (std::vector<int64_t>{kBank, kD}));
  std::vector<float> twice = v;
  twice.insert(twice.end(), v.begin(), v.end());
  {
    auto w = rr::NpzWriter::Create(P("twice.npz"));
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->AddFloat32("vectors", {2 * kBank, kD}, twice.data()).ok());
    ASSERT_TRUE(w->Finish().ok());
  }
  ASSERT_EQ(Train("run").exit_code, 0);
  // The same model, evaluated against both banks: the same figures exactly.
  const CmdResult plain =
      RunCli("retrieval eval " + P("run") + " --checkpoint final --json", "", P("plain.err"));
  const CmdResult doubled =
      RunCli("retrieval eval " + P("run") + " --checkpoint final --json --bank " + P("twice.npz"),
             "", P("doubled.err"));
  const nlohmann::json a = Json(plain), b = Json(doubled);
  for (const char* key : {"recall@1", "recall@10", "recall@100", "mrr"}) {
    ASSERT_TRUE(a.contains(key) && b.contains(key)) << a.dump() << b.dump();
    EXPECT_EQ(a[key].get<double>(), b[key].get<double>()) << key;
  }
  EXPECT_GT(a["recall@100"].get<double>(), 0.0) << a.dump();  // a model that ranks something
  EXPECT_EQ(Bytes(P("plain.err")), "");
  EXPECT_NE(Bytes(P("doubled.err"))
                .find("note: " + P("twice.npz") +
                      ":vectors: 2048 of 4096 rows repeat an earlier row exactly"),
            std::string::npos)
      << Bytes(P("doubled.err"));
  // Training against the doubled bank: the same run, epoch for epoch (a copy of the target
  // is never its negative), and the note even with --quiet.
  const CmdResult t = RunCli("retrieval train " + Config() + " --run-dir " + P("run2") +
                             " --quiet --set " + "data.bank=" + P("twice.npz"));
  ASSERT_EQ(t.exit_code, 0) << t.out;
  EXPECT_NE(t.out.find("note: "), std::string::npos) << t.out;
  EXPECT_EQ(Bytes(P("run") + "/final/model.rtt"), Bytes(P("run2") + "/final/model.rtt"))
      << "training against the doubled bank gave another model";
}

TEST_F(HostileRetrievalCli, AnArchiveWithTwoMembersOfTheSameNameIsRefused) {
  // vectors.npy twice: NumPy reads the last, a first-match reader the first.
  std::vector<int64_t> shape;
  std::vector<float> v = ReadFloats(P("bank.npz"), "vectors", 2, &shape);
  std::vector<float> other(v.size());
  for (size_t k = 0; k < v.size(); ++k) other[k] = v[(k + kD) % v.size()];  // rows shifted
  {
    auto w = rr::NpzWriter::Create(P("dup.npz"));
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->AddFloat32("vectors", shape, v.data()).ok());
    ASSERT_TRUE(w->AddFloat32("vectorz", shape, other.data()).ok());
    ASSERT_TRUE(w->Finish().ok());
  }
  std::string bytes = Bytes(P("dup.npz"));
  int renamed = 0;
  for (size_t at = bytes.find("vectorz.npy"); at != std::string::npos;
       at = bytes.find("vectorz.npy", at)) {
    bytes.replace(at, 11, "vectors.npy");
    ++renamed;
  }
  ASSERT_EQ(renamed, 2);  // the local header and the central directory
  std::ofstream(P("dup.npz"), std::ios::binary | std::ios::trunc) << bytes;
  const std::string fragment = P("dup.npz") + ": two members are named 'vectors.npy'";
  const CmdResult r = Train("run", "--set data.bank=" + P("dup.npz"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(fragment), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(P("run"))) << "a run directory was left";
  // eval --bank of it too.
  ASSERT_EQ(Train("good").exit_code, 0);
  const std::set<std::string> before = Tree(P("good"));
  const CmdResult e = RunCli("retrieval eval " + P("good") + " --bank " + P("dup.npz"));
  EXPECT_EQ(e.exit_code, 1) << e.out;
  EXPECT_NE(e.out.find(fragment), std::string::npos) << e.out;
  EXPECT_EQ(Tree(P("good")), before);
}

TEST_F(HostileRetrievalCli, AResumedRunsConfigSaysHowLongItTrained) {
  ASSERT_EQ(Train("run").exit_code, 0);
  const std::string config = P("run") + "/config.toml";
  ASSERT_NE(Bytes(config).find("epochs = 2\n"), std::string::npos) << Bytes(config);
  const CmdResult longer =
      RunCli("retrieval train --resume " + P("run") + " --set train.epochs=4 --quiet");
  ASSERT_EQ(longer.exit_code, 0) << longer.out;
  EXPECT_NE(longer.out.find("4 epochs"), std::string::npos) << longer.out;
  const std::string text = Bytes(config);
  EXPECT_NE(text.find("epochs = 4\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("epochs = 2\n"), std::string::npos) << text;
  // Checksummed: the run's MANIFEST matches the new file (eval verifies it) ...
  EXPECT_TRUE(rlt::runlog::VerifyManifestFiles(P("run"), {"config.toml"}).ok());
  EXPECT_TRUE(Json(RunCli("retrieval eval " + P("run") + " --json")).contains("mrr"));
  // ... no temporary file is left, and the history has the four epochs.
  for (const auto& e : fs::directory_iterator(P("run"))) {
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  }
  std::ifstream h(P("run") + "/history.jsonl");
  int lines = 0;
  for (std::string line; std::getline(h, line);) ++lines;
  EXPECT_EQ(lines, 4);
  // A resume without --set keeps the config as it is now (4), and trains nothing more.
  const CmdResult again = RunCli("retrieval train --resume " + P("run") + " --quiet");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(Bytes(config), text);
  // Shorter than what was trained: refused, nothing changed.
  const std::set<std::string> before = Tree(P("run"));
  const CmdResult shorter =
      RunCli("retrieval train --resume " + P("run") + " --set train.epochs=3 --quiet");
  EXPECT_EQ(shorter.exit_code, 2) << shorter.out;
  EXPECT_NE(shorter.out.find("has trained 4 epochs already"), std::string::npos) << shorter.out;
  EXPECT_EQ(Bytes(config), text);
  EXPECT_EQ(Tree(P("run")), before);
}

}  // namespace
