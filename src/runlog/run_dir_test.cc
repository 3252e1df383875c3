// The run directory's one owner (runlog/run_dir.h): which checkpoint a resume picks and
// status shows, and status.json written and read back, hostile files included.
#include "runlog/run_dir.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "runlog/manifest.h"
#include "runlog/test_util.h"

namespace rlt::runlog {
namespace {

namespace fs = std::filesystem;
using testing_util::ScratchDir;
using testing_util::WriteFile;

// A checkpoint directory with a FORMAT file (complete) and a MANIFEST over it.
void MakeCheckpoint(const fs::path& dir, bool complete = true) {
  fs::create_directories(dir);
  WriteFile((dir / "policy.rlt").string(), "weights");
  if (complete) WriteFile((dir / "FORMAT").string(), "rltrade-ppo-checkpoint 3\n");
  ASSERT_TRUE(WriteDirManifest(dir.string()).ok());
}

TEST(RunDir, TheNewestCompleteStepIsPickedByNumberNotByName) {
  ScratchDir scratch;
  const fs::path run = scratch.path();
  EXPECT_EQ(NewestCheckpoint(run), "");  // no checkpoints/ at all
  MakeCheckpoint(StepCheckpointPath(run, 900));
  MakeCheckpoint(StepCheckpointPath(run, 10000));  // sorts before step_900 as text
  MakeCheckpoint(StepCheckpointPath(run, 20000), /*complete=*/false);  // staged, no FORMAT
  MakeCheckpoint(run / "checkpoints" / "step_30000x");                 // not a step name
  MakeCheckpoint(run / "checkpoints" / "step_");
  EXPECT_EQ(NewestCheckpoint(run), StepCheckpointPath(run, 10000).string());
  EXPECT_EQ(StepCheckpointPath(run, 900), run / "checkpoints" / "step_900");
}

TEST(RunDir, FinalIsTheNewestOnlyWithoutACompleteStep) {
  ScratchDir scratch;
  const fs::path run = scratch.path();
  MakeCheckpoint(FinalCheckpointPath(run));
  EXPECT_EQ(NewestCheckpoint(run), (run / "final").string());
  MakeCheckpoint(StepCheckpointPath(run, 64));
  EXPECT_EQ(NewestCheckpoint(run), StepCheckpointPath(run, 64).string());
}

// best/ (selected on validation) at the step its selection.json names.
void MakeBest(const fs::path& run, int64_t step) {
  const fs::path best = BestCheckpointPath(run);
  fs::create_directories(best);
  WriteFile((best / kSelectionFile).string(),
            "{\"metric\": \"sharpe_ratio\", \"best_step\": " + std::to_string(step) + "}\n");
  MakeCheckpoint(best);
}

TEST(RunDir, BestIsAResumePointOnlyWhenNewerThanEveryStep) {
  ScratchDir scratch;
  const fs::path run = scratch.path();
  MakeBest(run, 300);
  EXPECT_EQ(NewestCheckpoint(run), BestCheckpointPath(run).string());  // the only one
  MakeCheckpoint(StepCheckpointPath(run, 200));
  EXPECT_EQ(NewestCheckpoint(run), BestCheckpointPath(run).string());  // newer than step 200
  MakeCheckpoint(StepCheckpointPath(run, 300));
  EXPECT_EQ(NewestCheckpoint(run), StepCheckpointPath(run, 300).string());  // a tie: the step
  fs::remove_all(run / "checkpoints");
  MakeCheckpoint(FinalCheckpointPath(run));  // written at the end: never older than best/
  EXPECT_EQ(NewestCheckpoint(run), FinalCheckpointPath(run).string());
}

TEST(RunDir, ChooseCheckpointDefaultsToBestElseFinalAndNamesTheAlternative) {
  ScratchDir scratch;
  const fs::path run = scratch.path();
  MakeCheckpoint(FinalCheckpointPath(run));
  std::string label;
  Result<std::string> chosen = ChooseCheckpoint(run, "", &label);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(*chosen, FinalCheckpointPath(run).string());
  EXPECT_EQ(label, "final");
  Result<std::string> best = ChooseCheckpoint(run, "best");
  ASSERT_FALSE(best.ok());
  EXPECT_NE(best.status().message().find("--checkpoint final"), std::string::npos);
  MakeBest(run, 64);
  chosen = ChooseCheckpoint(run, "", &label);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(*chosen, BestCheckpointPath(run).string());
  EXPECT_EQ(label, "best");
  chosen = ChooseCheckpoint(run, "final", &label);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(*chosen, FinalCheckpointPath(run).string());
  chosen = ChooseCheckpoint(run, "/some/dir", &label);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(*chosen, "/some/dir");
  EXPECT_EQ(label, "DIR");
}

TEST(RunDir, ADamagedNewestCheckpointIsNotLoadableAndNoOlderOneStandsIn) {
  ScratchDir scratch;
  const fs::path run = scratch.path();
  MakeCheckpoint(StepCheckpointPath(run, 1));
  MakeCheckpoint(StepCheckpointPath(run, 2));
  EXPECT_EQ(LoadableCheckpoint(run), StepCheckpointPath(run, 2).string());
  WriteFile((StepCheckpointPath(run, 2) / "policy.rlt").string(), "altered");
  EXPECT_EQ(NewestCheckpoint(run), StepCheckpointPath(run, 2).string());
  EXPECT_EQ(LoadableCheckpoint(run), "");
}

TEST(RunDir, StatusIsReadBackAsWritten) {
  ScratchDir scratch;
  RunStatus s;
  s.pid = 4242;
  s.start_time = 1700000000;
  s.updated_time = 1700000123;
  s.total_steps = 100000;
  s.steps = 2048;
  s.fps = 1234.5;
  s.last_checkpoint = "runs/x/checkpoints/step_2048";
  s.state = "running";
  s.message = "a \"quoted\" message";
  ASSERT_TRUE(WriteRunStatus(scratch.path(), s).ok());
  const Result<RunStatusRead> r = ReadRunStatus(scratch.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->pid, 4242);
  EXPECT_EQ(r->start_time, 1700000000);
  EXPECT_EQ(r->updated_time, 1700000123);
  EXPECT_EQ(r->total_steps, 100000);
  EXPECT_EQ(r->steps, 2048);
  EXPECT_EQ(r->fps, 1234.5);
  EXPECT_EQ(r->last_checkpoint, s.last_checkpoint);
  EXPECT_EQ(r->state, "running");
  EXPECT_EQ(r->message, s.message);
}

TEST(RunDir, AHostileStatusFileIsAnErrorOrReadsAsAbsentNeverACrash) {
  ScratchDir scratch;
  const fs::path run = scratch.path();
  Result<RunStatusRead> r = ReadRunStatus(run);
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  EXPECT_NE(r.status().message().find("status.json not found"), std::string::npos);
  WriteFile((run / "status.json").string(), "[1, 2]");
  r = ReadRunStatus(run);
  EXPECT_EQ(r.status().code(), Status::Code::kDataError);
  EXPECT_NE(r.status().message().find("is not a JSON object (got an array of 2 values)"),
            std::string::npos)
      << r.status().message();
  WriteFile((run / "status.json").string(), std::string(10000, '[') + std::string(10000, ']'));
  r = ReadRunStatus(run);
  EXPECT_EQ(r.status().code(), Status::Code::kDataError);
  EXPECT_NE(r.status().message().find("nested more than"), std::string::npos);
  // Fields of the wrong type read as absent.
  WriteFile((run / "status.json").string(),
            R"({"pid": "4242", "steps": [1], "fps": 10, "state": 3, "message": "m"})");
  r = ReadRunStatus(run);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(std::isnan(r->pid));
  EXPECT_TRUE(std::isnan(r->steps));
  EXPECT_TRUE(std::isnan(r->total_steps));
  EXPECT_EQ(r->fps, 10);
  EXPECT_EQ(r->state, "");
  EXPECT_EQ(r->message, "m");
}

}  // namespace
}  // namespace rlt::runlog
