// Tests for runlog/metrics: the exact CSV/JSONL text for rows we state here, the column
// rules, resuming (cutting rows after the resumed step and torn lines), and the TensorBoard
// scalars decoded by the independent Python reader.
#include "runlog/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/status_test_util.h"
#include "nlohmann/json.hpp"
#include "runlog/test_util.h"

namespace rlt::runlog {
namespace {

using testing_util::HavePython;
using testing_util::ParseJsonLines;
using testing_util::ReadFile;
using testing_util::RunReader;
using testing_util::ScratchDir;
using testing_util::WriteFile;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

MetricsLoggerOptions NoTensorBoard() {
  MetricsLoggerOptions options;
  options.tensorboard = false;
  return options;
}

// Logs steps 0, 100, ..., 100 * (n - 1) with loss = step / 1000.
void LogSteps(MetricsLogger* logger, int n) {
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(logger->Log(100 * i, {{"loss", i / 10.0}}).ok());
  }
}

TEST(MetricsLogger, WritesTheHeaderFromTheFirstRowWithStepFirst) {
  ScratchDir dir;
  Result<MetricsLogger> logger = MetricsLogger::Create(dir.path(), NoTensorBoard());
  ASSERT_TRUE(logger.ok()) << logger.status().ToString();
  ASSERT_TRUE(logger->Log(0, {{"loss", 0.5}, {"lr", 3e-4}}).ok());
  ASSERT_TRUE(logger->Log(2048, {{"loss", 0.25}, {"lr", 1e-4}}).ok());
  EXPECT_EQ(logger->keys(), (std::vector<std::string>{"loss", "lr"}));
  EXPECT_EQ(ReadFile(dir / "metrics.csv"), "step,loss,lr\n0,0.5,0.0003\n2048,0.25,0.0001\n");
  EXPECT_EQ(ReadFile(dir / "metrics.jsonl"),
            "{\"step\":0,\"loss\":0.5,\"lr\":0.0003}\n"
            "{\"step\":2048,\"loss\":0.25,\"lr\":0.0001}\n");
}

TEST(MetricsLogger, EachLineIsInTheFileAsSoonAsItIsLogged) {
  ScratchDir dir;
  Result<MetricsLogger> logger = MetricsLogger::Create(dir.path(), NoTensorBoard());
  ASSERT_TRUE(logger.ok());
  ASSERT_TRUE(logger->Log(7, {{"x", 1.0}}).ok());
  // The logger is still open: nothing may wait in a user-space buffer.
  EXPECT_EQ(ReadFile(dir / "metrics.csv"), "step,x\n7,1\n");
  EXPECT_EQ(ReadFile(dir / "metrics.jsonl"), "{\"step\":7,\"x\":1.0}\n");
}

TEST(MetricsLogger, LeavesMissingKeysEmptyInCsvAndOutOfJsonl) {
  ScratchDir dir;
  Result<MetricsLogger> logger = MetricsLogger::Create(dir.path(), NoTensorBoard());
  ASSERT_TRUE(logger.ok());
  ASSERT_TRUE(logger->Log(1, {{"a", 1}, {"b", 2}, {"c", 3}}).ok());
  ASSERT_TRUE(logger->Log(2, {{"c", 30}, {"a", 10}}).ok());  // b missing, order differs
  EXPECT_EQ(ReadFile(dir / "metrics.csv"), "step,a,b,c\n1,1,2,3\n2,10,,30\n");
  const auto rows = ParseJsonLines(ReadFile(dir / "metrics.jsonl"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1], nlohmann::json({{"step", 2}, {"a", 10.0}, {"c", 30.0}}));
}

TEST(MetricsLogger, WritesNonFiniteValuesAsNullInJsonl) {
  ScratchDir dir;
  Result<MetricsLogger> logger = MetricsLogger::Create(dir.path(), NoTensorBoard());
  ASSERT_TRUE(logger.ok());
  ASSERT_TRUE(logger->Log(5, {{"nan", kNan}, {"inf", kInf}, {"ninf", -kInf}, {"ok", 0.1}}).ok());
  EXPECT_EQ(ReadFile(dir / "metrics.csv"), "step,nan,inf,ninf,ok\n5,nan,inf,-inf,0.1\n");
  EXPECT_EQ(ReadFile(dir / "metrics.jsonl"),
            "{\"step\":5,\"nan\":null,\"inf\":null,\"ninf\":null,\"ok\":0.1}\n");
}

TEST(MetricsLogger, QuotesKeysWithCommasAndQuotes) {
  ScratchDir dir;
  {
    Result<MetricsLogger> logger = MetricsLogger::Create(dir.path(), NoTensorBoard());
    ASSERT_TRUE(logger.ok());
    ASSERT_TRUE(logger->Log(1, {{"a,b", 1}, {"say \"hi\"", 2}}).ok());
  }
  EXPECT_EQ(ReadFile(dir / "metrics.csv"), "step,\"a,b\",\"say \"\"hi\"\"\"\n1,1,2\n");
  // Resuming reads the quoted header back into the same keys.
  Result<MetricsLogger> resumed = MetricsLogger::Resume(dir.path(), 1, NoTensorBoard());
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(resumed->keys(), (std::vector<std::string>{"a,b", "say \"hi\""}));
}

TEST(MetricsLoggerDeathTest, AbortsOnAKeyNotInTheFirstLog) {
  ScratchDir dir;
  Result<MetricsLogger> logger = MetricsLogger::Create(dir.path(), NoTensorBoard());
  ASSERT_TRUE(logger.ok());
  ASSERT_TRUE(logger->Log(1, {{"loss", 1}}).ok());
  EXPECT_DEATH((void)logger->Log(2, {{"loss", 1}, {"kl", 0.1}}), "'kl' was not in the first");
}

TEST(MetricsLoggerDeathTest, AbortsWhenTheStepDecreases) {
  ScratchDir dir;
  Result<MetricsLogger> logger = MetricsLogger::Create(dir.path(), NoTensorBoard());
  ASSERT_TRUE(logger.ok());
  ASSERT_TRUE(logger->Log(10, {{"loss", 1}}).ok());
  ASSERT_TRUE(logger->Log(10, {{"loss", 2}}).ok());  // equal steps are allowed
  EXPECT_DEATH((void)logger->Log(9, {{"loss", 1}}), "steps must not decrease");
}

TEST(MetricsLoggerDeathTest, AbortsOnAKeyGivenTwiceOrNamedStep) {
  ScratchDir dir;
  Result<MetricsLogger> logger = MetricsLogger::Create(dir.path(), NoTensorBoard());
  ASSERT_TRUE(logger.ok());
  EXPECT_DEATH((void)logger->Log(1, {{"step", 1}}), "not 'step'");
  EXPECT_DEATH((void)logger->Log(1, {{"a", 1}, {"a", 2}}), "'a' repeated");
}

TEST(MetricsLogger, CreateRefusesADirectoryHoldingAPreviousRun) {
  ScratchDir dir;
  {
    Result<MetricsLogger> logger = MetricsLogger::Create(dir.path(), NoTensorBoard());
    ASSERT_TRUE(logger.ok());
    ASSERT_TRUE(logger->Log(1, {{"loss", 1}}).ok());
  }
  Result<MetricsLogger> again = MetricsLogger::Create(dir.path(), NoTensorBoard());
  ASSERT_TRUE(IsError(again, Status::Code::kInvalidArgument, "metrics.csv' exists"));
  EXPECT_NE(again.status().message().find("--resume"), std::string::npos);
  EXPECT_EQ(ReadFile(dir / "metrics.csv"), "step,loss\n1,1\n");  // untouched
}

TEST(MetricsLogger, CreateMakesTheRunDirectoryButNotItsParents) {
  ScratchDir dir;
  EXPECT_TRUE(MetricsLogger::Create(dir / "run1", NoTensorBoard()).ok());
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "run1/metrics.csv"));
  Result<MetricsLogger> deep = MetricsLogger::Create(dir / "a/b/run", NoTensorBoard());
  ASSERT_TRUE(IsError(deep, Status::Code::kIoError, "a/b/run"));
}

TEST(MetricsLogger, ResumeCutsRowsAfterTheResumedStepAndContinuesWithoutDuplicates) {
  ScratchDir dir;
  {
    Result<MetricsLogger> logger = MetricsLogger::Create(dir.path(), NoTensorBoard());
    ASSERT_TRUE(logger.ok());
    LogSteps(&*logger, 4);  // steps 0, 100, 200, 300; the checkpoint was at 200
  }
  Result<MetricsLogger> resumed = MetricsLogger::Resume(dir.path(), 200, NoTensorBoard());
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(resumed->keys(), (std::vector<std::string>{"loss"}));
  EXPECT_EQ(ReadFile(dir / "metrics.csv"), "step,loss\n0,0\n100,0.1\n200,0.2\n");
  ASSERT_TRUE(resumed->Log(300, {{"loss", 0.35}}).ok());
  EXPECT_EQ(ReadFile(dir / "metrics.csv"), "step,loss\n0,0\n100,0.1\n200,0.2\n300,0.35\n");
  EXPECT_EQ(ReadFile(dir / "metrics.jsonl"),
            "{\"step\":0,\"loss\":0.0}\n{\"step\":100,\"loss\":0.1}\n"
            "{\"step\":200,\"loss\":0.2}\n{\"step\":300,\"loss\":0.35}\n");
}

TEST(MetricsLoggerDeathTest, ResumedLoggerRejectsStepsBeforeTheKeptRows) {
  ScratchDir dir;
  {
    Result<MetricsLogger> logger = MetricsLogger::Create(dir.path(), NoTensorBoard());
    ASSERT_TRUE(logger.ok());
    LogSteps(&*logger, 3);
  }
  Result<MetricsLogger> resumed = MetricsLogger::Resume(dir.path(), 150, NoTensorBoard());
  ASSERT_TRUE(resumed.ok());
  EXPECT_DEATH((void)resumed->Log(50, {{"loss", 1}}), "steps must not decrease");
}

TEST(MetricsLogger, ResumeCutsALineTornByACrash) {
  ScratchDir dir;
  {
    Result<MetricsLogger> logger = MetricsLogger::Create(dir.path(), NoTensorBoard());
    ASSERT_TRUE(logger.ok());
    LogSteps(&*logger, 2);
  }
  WriteFile(dir / "metrics.csv", ReadFile(dir / "metrics.csv") + "200,0.");
  WriteFile(dir / "metrics.jsonl", ReadFile(dir / "metrics.jsonl") + "{\"step\":200,\"lo");
  Result<MetricsLogger> resumed = MetricsLogger::Resume(dir.path(), 1000, NoTensorBoard());
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  ASSERT_TRUE(resumed->Log(200, {{"loss", 0.2}}).ok());
  EXPECT_EQ(ReadFile(dir / "metrics.csv"), "step,loss\n0,0\n100,0.1\n200,0.2\n");
  EXPECT_EQ(ParseJsonLines(ReadFile(dir / "metrics.jsonl")).size(), 3u);
}

TEST(MetricsLogger, ResumeReportsAMalformedLineWithItsNumber) {
  ScratchDir dir;
  WriteFile(dir / "metrics.csv", "step,loss\n0,1\nzero,2\n100,3\n");
  Result<MetricsLogger> resumed = MetricsLogger::Resume(dir.path(), 100, NoTensorBoard());
  ASSERT_TRUE(IsError(resumed, Status::Code::kDataError, "metrics.csv:3"));
  EXPECT_EQ(ReadFile(dir / "metrics.csv"), "step,loss\n0,1\nzero,2\n100,3\n");  // untouched

  ScratchDir dir2;
  WriteFile(dir2 / "metrics.jsonl", "{\"step\":0}\n[1,2]\n");
  Result<MetricsLogger> resumed2 = MetricsLogger::Resume(dir2.path(), 100, NoTensorBoard());
  ASSERT_TRUE(IsError(resumed2, Status::Code::kDataError, "metrics.jsonl:2"));
}

TEST(MetricsLogger, ResumeOfADirectoryWithoutMetricsStartsAfresh) {
  ScratchDir dir;
  Result<MetricsLogger> resumed = MetricsLogger::Resume(dir.path(), 500, NoTensorBoard());
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_TRUE(resumed->keys().empty());
  ASSERT_TRUE(resumed->Log(501, {{"loss", 2}}).ok());
  EXPECT_EQ(ReadFile(dir / "metrics.csv"), "step,loss\n501,2\n");
}

TEST(MetricsLogger, WritesEveryValueAsATensorBoardScalar) {
  if (!HavePython()) GTEST_SKIP() << "python3 not found";
  ScratchDir dir;
  std::string first_file;
  {
    Result<MetricsLogger> logger = MetricsLogger::Create(dir.path());
    ASSERT_TRUE(logger.ok());
    first_file = logger->tensorboard_path();
    ASSERT_TRUE(logger->Log(0, {{"loss", 0.5}, {"lr", 0.25}}).ok());
    ASSERT_TRUE(logger->Log(10, {{"lr", 0.125}}).ok());
  }
  const auto result = RunReader(first_file);
  ASSERT_EQ(result.exit_code, 0);
  const auto events = ParseJsonLines(result.stdout_text);
  ASSERT_EQ(events.size(), 4u);  // file_version + 3 scalars
  EXPECT_EQ(events[1]["scalars"][0], nlohmann::json({"loss", 0.5}));
  EXPECT_EQ(events[2]["scalars"][0], nlohmann::json({"lr", 0.25}));
  EXPECT_EQ(events[3]["step"], 10);
  EXPECT_EQ(events[3]["scalars"][0], nlohmann::json({"lr", 0.125}));

  // A resumed run writes a new event file that starts with SessionLog START at step + 1.
  Result<MetricsLogger> resumed = MetricsLogger::Resume(dir.path(), 0);
  ASSERT_TRUE(resumed.ok());
  ASSERT_NE(resumed->tensorboard_path(), first_file);
  const auto resumed_events = ParseJsonLines(RunReader(resumed->tensorboard_path()).stdout_text);
  ASSERT_EQ(resumed_events.size(), 2u);
  EXPECT_EQ(resumed_events[1]["session_status"], 1);
  EXPECT_EQ(resumed_events[1]["step"], 1);
}

}  // namespace
}  // namespace rlt::runlog
