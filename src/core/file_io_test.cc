// Tests of core/file_io.h: each failure kind has its own code and names the path; memory
// stays bounded on endless or oversized inputs.
#include "core/file_io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "core/status_test_util.h"
#include "testing/testing.h"

namespace rlt {
namespace {

TEST(ReadFile, ReadsARegularFileWhole) {
  testing::ScratchDir dir;
  const std::string bytes("a\0b\nc", 5);
  testing::WriteFile(dir / "f.bin", bytes);
  Result<std::string> r = ReadFile(dir / "f.bin");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, bytes);
  testing::WriteFile(dir / "empty", "");
  EXPECT_EQ(*ReadFile(dir / "empty"), "");
}

TEST(ReadFile, MissingIsNotFoundNamingThePath) {
  testing::ScratchDir dir;
  Result<std::string> r = ReadFile(dir / "nope.toml");
  ASSERT_TRUE(IsError(r, Status::Code::kNotFound, "nope.toml"));
}

TEST(ReadFile, DirectoriesDevicesAndFifosAreRefusedBeforeReading) {
  testing::ScratchDir dir;
  Result<std::string> d = ReadFile(dir.path());
  ASSERT_TRUE(IsError(d, Status::Code::kInvalidArgument, "is a directory"));
  // /dev/zero never ends: refused from its type, not read until memory runs out.
  Result<std::string> z = ReadFile("/dev/zero");
  ASSERT_TRUE(IsError(z, Status::Code::kInvalidArgument, "is a character device"));
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  Result<std::string> f = ReadFile(dir / "fifo");  // no writer: must not hang
  ASSERT_TRUE(IsError(f, Status::Code::kInvalidArgument, "is a FIFO"));
}

TEST(ReadFile, KernelPseudoFilesAreRefusedWithoutQuotingThem) {
  // /proc/self/environ passes for a regular file of size 0; it holds the environment.
  for (const char* path :
       {"/proc/self/environ", "/proc/self/status", "/sys/kernel/uevent_seqnum"}) {
    struct stat st;
    if (::stat(path, &st) != 0) continue;  // not on every kernel
    ASSERT_TRUE(S_ISREG(st.st_mode)) << path;
    Result<std::string> r = ReadFile(path);
    ASSERT_TRUE(IsError(r, Status::Code::kInvalidArgument, "kernel pseudo-file")) << path;
    EXPECT_EQ(r.status().message().find("PATH="), std::string::npos);
  }
}

TEST(ReadFile, FilesAboveTheCapAreOutOfRange) {
  testing::ScratchDir dir;
  testing::WriteFile(dir / "big", std::string(1000, 'x'));
  Result<std::string> r = ReadFile(dir / "big", /*max_bytes=*/999);
  ASSERT_TRUE(IsError(r, Status::Code::kOutOfRange, "larger than 999"));
  EXPECT_TRUE(ReadFile(dir / "big", /*max_bytes=*/1000).ok());
}

}  // namespace
}  // namespace rlt
