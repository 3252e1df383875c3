// End-to-end tests of `rltrade retrieval synth|train|eval`: a small synthetic task is
// learnt (Recall@10 > 0.9 from `eval --json`), shuffled targets stay at chance, a resumed
// run ends with the same model bytes as a straight one, the gate stops a run with exit 3,
// and bad input (a truncated archive, a missing array, NaN or zero vectors, a bank smaller
// than the largest k, mining ranks beyond the bank, a bad schedule) is an error naming
// the file, array or key, with no run directory left behind.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "retrieval/npz.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;

using rlt::cli::testing_util::CmdResult;
using rlt::cli::testing_util::RunCli;

class RetrievalCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/retrieval_cli_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  std::string P(const std::string& name) const { return dir_ + "/" + name; }
  // A small synthetic task: 16-dim vectors, 8 steps, 2,048 bank rows.
  void Synth(const std::string& extra = "") {
    const CmdResult r =
        RunCli("retrieval synth --pairs " + P("pairs.npz") + " --bank " + P("bank.npz") +
               " --n 2048 --n-val 256 --t 8 --d 16 " + "--bank-size 2048 --set slots=16 " + extra);
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  std::string Config(const std::string& extra = "") const {
    const std::string path = P("c.toml");
    std::ofstream(path) << "[run]\nthreads = 1\n[data]\npairs = \"" << P("pairs.npz")
                        << "\"\nbank = \"" << P("bank.npz")
                        << "\"\n[model]\nhidden = 32\n[train]\nepochs = 12\nbatch_size = 32\n"
                           "lr = 3e-3\nlr_min = 1e-4\nwarmup_steps = 10\nweight_decay = 0.0\n"
                           "tau = 0.1\nmemory_bank = 256\n[mining]\nschedule = \"3-5:4@2-20\"\n"
                           "[eval]\nks = [1, 10, 100]\nbest_metric = \"recall@10\"\n"
                        << extra;
    return path;
  }
  std::string dir_;
};

nlohmann::json EvalJson(const std::string& run) {
  const CmdResult r = RunCli("retrieval eval " + run + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return nlohmann::json::parse(r.out, nullptr, false);
}

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(RetrievalCli, LearnsTheSyntheticTaskAndEvalPrintsTheContractKeys) {
  Synth();
  const CmdResult r = RunCli("retrieval train " + Config() + " --run-dir " + P("run") + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = EvalJson(P("run"));
  for (const char* key : {"recall@10", "recall@100", "mrr"}) {
    ASSERT_TRUE(j.contains(key)) << j.dump();
  }
  EXPECT_GT(j["recall@10"].get<double>(), 0.9) << j.dump();
  for (const char* f : {"config.toml", "history.jsonl", "best/model.rtt", "final/model.rtt",
                        "last/state.rtt", "final/MANIFEST"}) {
    EXPECT_TRUE(fs::exists(P("run") + "/" + f)) << f;
  }
  // history.jsonl: one line per epoch with the recalls.
  std::ifstream h(P("run") + "/history.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(h, line)) {
    const auto e = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(e.is_discarded()) << line;
    EXPECT_EQ(e["epoch"].get<int>(), lines);
    EXPECT_TRUE(e.contains("recall@10") && e.contains("it_per_sec") && e.contains("loss"));
    ++lines;
  }
  EXPECT_EQ(lines, 12);
  // The shuffled-target control stays at chance (Recall@10 ~ 10 / 2048).
  const CmdResult s = RunCli("retrieval train " + Config() + " --run-dir " + P("shuffled") +
                             " --quiet --set data.shuffle_targets=true");
  ASSERT_EQ(s.exit_code, 0) << s.out;
  EXPECT_LT(EvalJson(P("shuffled"))["recall@10"].get<double>(), 0.05);
}

TEST_F(RetrievalCli, TheMlpDocumentTowerTrainsAndEvalReadsItBack) {
  Synth();
  const CmdResult r = RunCli("retrieval train " + Config() + " --run-dir " + P("mlp") +
                             " --quiet --set model.doc_tower=mlp --set model.doc_hidden=12");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // eval ranks the bank through the saved document tower: the final epoch's figures.
  std::ifstream h(P("mlp") + "/history.jsonl");
  std::string line, last;
  while (std::getline(h, line)) last = line;
  const nlohmann::json final_epoch = nlohmann::json::parse(last, nullptr, false);
  const nlohmann::json j = EvalJson(P("mlp") + " --checkpoint final");
  ASSERT_TRUE(j.contains("mrr")) << j.dump();
  EXPECT_NEAR(j["mrr"].get<double>(), final_epoch["mrr"].get<double>(), 1e-9) << last;
  EXPECT_GT(j["recall@10"].get<double>(), 0.8) << j.dump();
  EXPECT_NE(Bytes(P("mlp") + "/config.toml").find("doc_tower = \"mlp\""), std::string::npos);
}

TEST_F(RetrievalCli, ARunKilledAndResumedEndsWithTheSameModelAsAStraightOne) {
  Synth();
  ASSERT_EQ(
      RunCli("retrieval train " + Config() + " --run-dir " + P("straight") + " --quiet").exit_code,
      0);
  // The same run, killed (SIGKILL) once two epochs are in its history, then resumed.
  const std::string cmd = rlt::testing::RltradeBinary() + " retrieval train " + Config() +
                          " --run-dir " + P("killed") + " --quiet > /dev/null 2>&1 & echo $!";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  long pid = 0;
  ASSERT_EQ(fscanf(p, "%ld", &pid), 1);
  pclose(p);
  bool killed = false;
  for (int wait = 0; wait < 6000 && !killed; ++wait) {
    std::ifstream h(P("killed") + "/history.jsonl");
    int lines = 0;
    for (std::string line; std::getline(h, line);) ++lines;
    if (lines >= 2) {
      killed = kill(static_cast<pid_t>(pid), SIGKILL) == 0;
      break;
    }
    usleep(10000);
  }
  ASSERT_TRUE(killed) << "the run finished or never got to epoch 2";
  usleep(100000);
  // Only the length may change on resume.
  const CmdResult changed =
      RunCli("retrieval train --resume " + P("killed") + " --set train.lr=1e-2 --quiet");
  EXPECT_EQ(changed.exit_code, 2) << changed.out;
  const CmdResult resumed = RunCli("retrieval train --resume " + P("killed") + " --quiet");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_TRUE(Bytes(P("straight") + "/final/model.rtt") == Bytes(P("killed") + "/final/model.rtt"))
      << "the resumed run's final model differs from the straight run's";
  EXPECT_TRUE(Bytes(P("straight") + "/last/state.rtt") == Bytes(P("killed") + "/last/state.rtt"));
  // The history has each epoch once.
  std::ifstream h(P("killed") + "/history.jsonl");
  int lines = 0;
  for (std::string line; std::getline(h, line);) {
    EXPECT_EQ(nlohmann::json::parse(line)["epoch"].get<int>(), lines) << line;
    ++lines;
  }
  EXPECT_EQ(lines, 12);
}

TEST_F(RetrievalCli, TheGateStopsARunWithExitThree) {
  Synth();
  const CmdResult r =
      RunCli("retrieval train " +
             Config("gate_metric = \"recall@1\"\ngate_threshold = 0.999\ngate_epoch = 1\n") +
             " --run-dir " + P("run") + " --quiet");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("gate: recall@1 ="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("after epoch 1"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(P("run") + "/final/model.rtt"));
}

TEST_F(RetrievalCli, BadInputIsAClearErrorAndLeavesNoRunDirectory) {
  Synth();
  namespace rr = rlt::retrieval;
  auto write_bank = [&](const std::string& name, const std::vector<float>& v, int64_t rows) {
    auto w = rr::NpzWriter::Create(P(name));
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->AddFloat32("vectors", {rows, 16}, v.data()).ok());
    ASSERT_TRUE(w->Finish().ok());
  };
  // Bank variants from the good one.
  auto bank = rr::NpzFile::Open(P("bank.npz"));
  ASSERT_TRUE(bank.ok());
  auto vectors = bank->Get("vectors", {rr::NpyDType::kFloat32}, {2048, 16});
  ASSERT_TRUE(vectors.ok());
  std::vector<float> v(2048 * 16);
  vectors->Read(0, 2048, v.data());
  std::vector<float> nan = v, zero = v;
  nan[5 * 16 + 3] = std::nanf("");
  std::fill(zero.begin() + 9 * 16, zero.begin() + 10 * 16, 0.0f);
  write_bank("nan.npz", nan, 2048);
  write_bank("zero.npz", zero, 2048);
  {
    auto w = rr::NpzWriter::Create(P("nobank.npz"));
    ASSERT_TRUE(w->AddFloat32("vecs", {2048, 16}, v.data()).ok());
    ASSERT_TRUE(w->Finish().ok());
  }
  const std::string good = Bytes(P("pairs.npz"));
  std::ofstream(P("truncated.npz"), std::ios::binary) << good.substr(0, good.size() / 2);
  struct Case {
    std::string sets, fragment;
  };
  const Case cases[] = {
      {"--set data.pairs=" + P("truncated.npz"), "truncated.npz"},
      {"--set data.bank=" + P("nobank.npz"), "nobank.npz: array 'vectors' is missing"},
      {"--set data.bank=" + P("nan.npz"), "nan.npz:vectors: row 5 holds NaN"},
      {"--set data.bank=" + P("zero.npz"), "zero.npz:vectors: row 9 is all zeros"},
      {"--set eval.ks=[10,5000]", "fewer than the largest k = 5000"},
      {"--set mining.schedule=0-2:8@20-4000", "reads neighbour rank 4000, but the bank holds 2048"},
      {"--set mining.schedule=0-2:8@20", "at character 9"},
      {"--set train.tau=0", "[train] tau"},
      {"--set model.doc_tower=cnn", "doc_tower"},
      {"--set train.batch_size=65536 --set model.hidden=8192", "lower train.batch_size"},
      {"--set eval.ks=[]", "[eval] ks must list at least one k"},  // was a crash
      {"--set data.pairs=" + P("absent.npz"), "absent.npz"},
  };
  for (const Case& c : cases) {
    fs::remove_all(P("run"));
    const CmdResult r =
        RunCli("retrieval train " + Config() + " --run-dir " + P("run") + " --quiet " + c.sets);
    EXPECT_NE(r.exit_code, 0) << c.sets;
    EXPECT_NE(r.out.find(c.fragment), std::string::npos) << c.sets << "\n" << r.out;
    EXPECT_FALSE(fs::exists(P("run"))) << c.sets << ": a run directory was left";
  }
  // An existing run directory is not overwritten; eval of a non-run is an error.
  fs::create_directories(P("taken"));
  const CmdResult taken =
      RunCli("retrieval train " + Config() + " --run-dir " + P("taken") + " --quiet");
  EXPECT_NE(taken.exit_code, 0);
  EXPECT_NE(taken.out.find("exists already"), std::string::npos) << taken.out;
  const CmdResult not_run = RunCli("retrieval eval " + P("taken") + " --json");
  EXPECT_NE(not_run.exit_code, 0);
  EXPECT_NE(not_run.out.find("not a retrieval run directory"), std::string::npos) << not_run.out;
}

}  // namespace
