// Tests for runlog/tensorboard: CRC32C against published vectors, and the event file
// decoded by an independent pure-Python reader (testdata/read_tfevents.py) that checks
// both CRCs of every record and parses the protobuf wire format by hand.
#include "runlog/tensorboard.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "core/status_test_util.h"
#include "runlog/test_util.h"

namespace rlt::runlog {
namespace {

using testing_util::HavePython;
using testing_util::ParseJsonLines;
using testing_util::ReadFile;
using testing_util::RunReader;
using testing_util::ScratchDir;
using testing_util::WriteFile;

std::string OnlyEventFile(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files.push_back(entry.path().string());
  }
  return files.size() == 1 ? files[0] : "";
}

TEST(Crc32c, MatchesTheStandardCheckValue) { EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u); }

TEST(Crc32c, MatchesRfc3720TestVectors) {
  const std::string zeros(32, '\0');
  const std::string ones(32, '\xff');
  std::string ascending(32, '\0');
  for (int i = 0; i < 32; ++i) ascending[i] = static_cast<char>(i);
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones.data(), ones.size()), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(ascending.data(), ascending.size()), 0x46DD794Eu);
}

TEST(Crc32c, OfNothingIsZero) { EXPECT_EQ(Crc32c("", 0), 0u); }

TEST(MaskCrc32c, RotatesRightBy15AndAddsTheTfRecordConstant) {
  // ((0x00000001 >> 15) | (0x00000001 << 17)) + 0xa282ead8 = 0x00020000 + 0xa282ead8.
  EXPECT_EQ(MaskCrc32c(1), 0xa284ead8u);
  EXPECT_EQ(MaskCrc32c(0), 0xa282ead8u);
}

TEST(EventFileWriter, NamesTheFileAfterTheTimeAndHost) {
  ScratchDir dir;
  const double before = WallTimeNow();
  Result<EventFileWriter> writer = EventFileWriter::Open(dir.path());
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  const std::string name = std::filesystem::path(writer->path()).filename().string();
  const std::string prefix = "events.out.tfevents." + std::to_string(int64_t(before));
  // The second may tick between `before` and Open; accept the next one too.
  const std::string prefix_next = "events.out.tfevents." + std::to_string(int64_t(before) + 1);
  EXPECT_TRUE(name.rfind(prefix + ".", 0) == 0 || name.rfind(prefix_next + ".", 0) == 0) << name;
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  EXPECT_EQ(name.substr(name.size() - std::strlen(host)), host);
}

TEST(EventFileWriter, WritesScalarsThatAnIndependentReaderDecodes) {
  if (!HavePython()) GTEST_SKIP() << "python3 not found";
  ScratchDir dir;
  {
    Result<EventFileWriter> writer = EventFileWriter::Open(dir.path());
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE(writer->AddScalar("train/loss", 0, 1.5f, 1700000000.25).ok());
    ASSERT_TRUE(writer->AddScalar("train/loss", 2048, 0.1f, 1700000001.5).ok());
    ASSERT_TRUE(writer->AddScalar("rollout/ep_rew_mean", 4096, -3.25e-7f, 1700000002.0).ok());
    ASSERT_TRUE(writer->AddScalar("big_step", int64_t{1} << 40, 1e30f, 1700000003.0).ok());
    ASSERT_TRUE(writer->AddScalar("negative_step", -5, 2.0f, 1700000004.0).ok());
    ASSERT_TRUE(
        writer->AddScalar("nan", 7, std::numeric_limits<float>::quiet_NaN(), 1700000005.0).ok());
    ASSERT_TRUE(writer->AddSessionStart(4097, 1700000006.0).ok());
    ASSERT_TRUE(writer->Flush().ok());
  }
  const std::string path = OnlyEventFile(dir.path());
  ASSERT_FALSE(path.empty());
  const auto result = RunReader(path);
  ASSERT_EQ(result.exit_code, 0) << result.stdout_text;
  const std::vector<nlohmann::json> events = ParseJsonLines(result.stdout_text);
  ASSERT_EQ(events.size(), 8u);

  EXPECT_EQ(events[0]["file_version"], "brain.Event:2");
  EXPECT_NEAR(events[0]["wall_time"].get<double>(), WallTimeNow(), 60.0);
  EXPECT_TRUE(events[0]["scalars"].empty());

  struct Expected {
    std::string tag;
    int64_t step;
    float value;
    double wall_time;
  };
  const std::vector<Expected> expected = {
      {"train/loss", 0, 1.5f, 1700000000.25},
      {"train/loss", 2048, 0.1f, 1700000001.5},
      {"rollout/ep_rew_mean", 4096, -3.25e-7f, 1700000002.0},
      {"big_step", int64_t{1} << 40, 1e30f, 1700000003.0},
      {"negative_step", -5, 2.0f, 1700000004.0},
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    const nlohmann::json& e = events[i + 1];
    SCOPED_TRACE(e.dump());
    EXPECT_EQ(e["step"].get<int64_t>(), expected[i].step);
    EXPECT_EQ(e["wall_time"].get<double>(), expected[i].wall_time);
    ASSERT_EQ(e["scalars"].size(), 1u);
    EXPECT_EQ(e["scalars"][0][0], expected[i].tag);
    // float → double is exact, so the reader's value must be the float bit for bit.
    EXPECT_EQ(e["scalars"][0][1].get<double>(), static_cast<double>(expected[i].value));
  }
  EXPECT_EQ(events[6]["scalars"][0][1], "nan");
  EXPECT_EQ(events[7]["session_status"], 1);
  EXPECT_EQ(events[7]["step"], 4097);
}

TEST(EventFileWriter, ReaderRejectsAFileWithOneCorruptedByte) {
  if (!HavePython()) GTEST_SKIP() << "python3 not found";
  ScratchDir dir;
  {
    Result<EventFileWriter> writer = EventFileWriter::Open(dir.path());
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE(writer->AddScalar("loss", 10, 0.5f, 1700000000.0).ok());
  }
  const std::string path = OnlyEventFile(dir.path());
  ASSERT_FALSE(path.empty());
  ASSERT_EQ(RunReader(path).exit_code, 0);  // intact: accepted
  const std::string intact = ReadFile(path);

  // A flipped bit in each part of the second record — length, length CRC, data, data
  // CRC — must be detected. (Each check starts python3, so one byte per part.)
  const size_t first_length = static_cast<unsigned char>(intact[0]);  // < 256 here
  const size_t second_start = 8 + 4 + first_length + 4;
  ASSERT_LT(second_start + 16, intact.size());
  const size_t second_length = static_cast<unsigned char>(intact[second_start]);
  ASSERT_EQ(second_start + 8 + 4 + second_length + 4, intact.size());
  for (size_t i :
       {second_start, second_start + 9, second_start + 12 + second_length / 2, intact.size() - 1}) {
    std::string corrupt = intact;
    corrupt[i] = static_cast<char>(corrupt[i] ^ 0x01);
    WriteFile(path, corrupt);
    EXPECT_EQ(RunReader(path).exit_code, 1) << "corrupted byte " << i << " was accepted";
  }
  // A torn last record (crash mid-write) is rejected too.
  WriteFile(path, intact.substr(0, intact.size() - 3));
  EXPECT_EQ(RunReader(path).exit_code, 1);
}

TEST(EventFileWriter, ReaderSelfTestPassesTheCrcVectors) {
  if (!HavePython()) GTEST_SKIP() << "python3 not found";
  EXPECT_EQ(RunReader("--selftest").exit_code, 0);
}

TEST(EventFileWriter, TwoWritersInOneDirectoryGetDistinctFiles) {
  ScratchDir dir;
  Result<EventFileWriter> a = EventFileWriter::Open(dir.path());
  Result<EventFileWriter> b = EventFileWriter::Open(dir.path());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->path(), b->path());
}

TEST(EventFileWriter, OpenReportsAMissingParentDirectory) {
  ScratchDir dir;
  Result<EventFileWriter> writer = EventFileWriter::Open(dir / "no/such/dir");
  ASSERT_TRUE(IsError(writer, Status::Code::kIoError, "no/such/dir"));
  EXPECT_NE(writer.status().message().find("No such file or directory"), std::string::npos);
}

}  // namespace
}  // namespace rlt::runlog
