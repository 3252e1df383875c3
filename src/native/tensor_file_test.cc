// Tests of the native tensor file format: the round trip through bytes and disk, and every
// kind of corrupt file rejected with a message naming the file and the fault.
#include "native/tensor_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/status_test_util.h"
#include "testing/testing.h"

namespace rlt::native {
namespace {

uint64_t TestFnv1a(const std::string& s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t k = 0; k < n; ++k) h = (h ^ static_cast<uint8_t>(s[k])) * 0x100000001b3ULL;
  return h;
}

// Rewrites the trailing checksum so a deliberately malformed body reaches the parser.
std::string Reseal(std::string bytes) {
  const uint64_t h = TestFnv1a(bytes, bytes.size() - 8);
  std::memcpy(bytes.data() + bytes.size() - 8, &h, 8);
  return bytes;
}

TensorFile SampleFile() {
  TensorFile f;
  const std::vector<float> w = {1.5f, -2.0f, 3.25f, 0.0f, -0.0f, 1e-30f};
  f.AddFloat32("pi_net.0.weight", {2, 3}, w.data());
  const double stats[2] = {0.1, 1e300};
  f.AddFloat64("obs_mean", {2}, stats);
  const int64_t step = 42;
  f.AddInt64("adam.step", {}, &step);
  f.AddFloat32("empty", {0, 4}, nullptr);
  return f;
}

TEST(TensorFile, RoundTripsThroughBytesAndDisk) {
  const TensorFile f = SampleFile();
  const std::string bytes = f.Serialize();
  EXPECT_EQ(bytes.substr(0, 8), "RLTTENSR");
  uint32_t version;
  std::memcpy(&version, bytes.data() + 8, 4);
  EXPECT_EQ(version, 1u);
  auto parsed = TensorFile::Parse(bytes, "mem");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->tensors().size(), 4u);
  const NamedTensor* w = parsed->Find("pi_net.0.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(w->f32, f.tensors()[0].f32);
  EXPECT_TRUE(std::signbit(w->f32[4]));
  EXPECT_EQ(parsed->Find("obs_mean")->f64[1], 1e300);
  EXPECT_EQ(parsed->Find("adam.step")->i64[0], 42);
  EXPECT_TRUE(parsed->Find("adam.step")->shape.empty());
  EXPECT_EQ(parsed->Find("empty")->numel(), 0);

  const rlt::testing::ScratchDir scratch("rlt_native_test_");
  const std::filesystem::path path = scratch / "tensors.bin";
  ASSERT_TRUE(f.Write(path).ok());
  auto read = TensorFile::Read(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->Serialize(), bytes);
  auto got = read->Get("pi_net.0.weight", DType::kFloat32, {2, 3}, path.string());
  EXPECT_TRUE(got.ok());
  auto wrong = read->Get("pi_net.0.weight", DType::kFloat32, {3, 2}, path.string());
  ASSERT_TRUE(IsError(wrong, Status::Code::kDataError,
                      "tensor 'pi_net.0.weight' is float32 (2, 3), expected float32 (3, 2)"));
  EXPECT_TRUE(IsError(read->Get("missing", DType::kFloat32, {1}, "f"), Status::Code::kDataError,
                      "f: no tensor named 'missing'"));
  std::filesystem::remove(path);
  EXPECT_EQ(TensorFile::Read(path).status().code(), Status::Code::kNotFound);
}

void ExpectRejected(const std::string& bytes, const std::string& expected_fragment) {
  auto parsed = TensorFile::Parse(bytes, "bad.bin");
  ASSERT_TRUE(IsError(parsed, Status::Code::kDataError, expected_fragment));
  EXPECT_NE(parsed.status().message().find("bad.bin"), std::string::npos);
}

TEST(TensorFile, RejectsEveryKindOfCorruptFile) {
  const std::string good = SampleFile().Serialize();
  ExpectRejected("", "too short");
  std::string magic = good;
  magic[0] = 'X';
  ExpectRejected(magic, "RLTTENSR");
  std::string version = good;
  version[8] = 2;
  ExpectRejected(version, "version 2");
  for (size_t cut : {good.size() - 1, good.size() - 9, size_t{40}, size_t{25}}) {
    ExpectRejected(good.substr(0, cut), "checksum");
  }
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x10;
  ExpectRejected(flipped, "checksum");
  std::string longer = good;
  longer.push_back('x');
  ExpectRejected(longer, "checksum");
  // Structurally bad bodies with a valid checksum.
  const size_t first = 16;  // offset of the first tensor record
  std::string bad_dtype = good;
  const uint32_t name_len = 15;  // "pi_net.0.weight"
  uint32_t dtype = 9;
  std::memcpy(bad_dtype.data() + first + 4 + name_len, &dtype, 4);
  ExpectRejected(Reseal(bad_dtype), "unknown dtype 9");
  std::string bad_dim = good;
  int64_t huge = int64_t{1} << 50;
  std::memcpy(bad_dim.data() + first + 4 + name_len + 8, &huge, 8);
  ExpectRejected(Reseal(bad_dim), "absurdly large");
  std::string neg_dim = good;
  int64_t neg = -1;
  std::memcpy(neg_dim.data() + first + 4 + name_len + 8, &neg, 8);
  ExpectRejected(Reseal(neg_dim), "negative dimension");
  std::string more = good;
  uint32_t count = 5;
  std::memcpy(more.data() + 12, &count, 4);
  ExpectRejected(Reseal(more), "truncated");
  std::string fewer = good;
  count = 3;
  std::memcpy(fewer.data() + 12, &count, 4);
  ExpectRejected(Reseal(fewer), "unexpected bytes");
  TensorFile twice;
  const float one = 1.0f;
  twice.AddFloat32("a", {1}, &one);
  twice.AddFloat32("b", {1}, &one);
  std::string dup = twice.Serialize();
  dup[16 + 4] = 'a';
  dup[16 + 4 + 1 + 4 + 4 + 8 + 4 + 4] = 'a';
  ExpectRejected(Reseal(dup), "appears twice");
}

// One float32 tensor "x" of `dims` with no data, behind a valid checksum.
std::string HeaderOnlyFile(const std::vector<int64_t>& dims) {
  std::string b = "RLTTENSR";
  auto put = [&b](const auto& v) { b.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(uint32_t{1});  // version
  put(uint32_t{1});  // count
  put(uint32_t{1});  // name length
  b += 'x';
  put(uint32_t{1});  // float32
  put(static_cast<uint32_t>(dims.size()));
  for (int64_t d : dims) put(d);
  b.append(8, '\0');  // the checksum, set by Reseal
  return Reseal(b);
}

// Found by fuzz/tensor_file_fuzz: dimensions whose product wraps around 2^64 (2^32 x
// 2^32 = 0 elements) were accepted, and NamedTensor::numel() then overflowed int64.
TEST(TensorFile, RejectsDimensionsWhoseProductOverflows) {
  const int64_t two32 = int64_t{1} << 32, two40 = int64_t{1} << 40;
  ExpectRejected(HeaderOnlyFile({two32, two32}), "absurdly large");
  ExpectRejected(HeaderOnlyFile({0, two40, two40}), "absurdly large");
  ExpectRejected(HeaderOnlyFile({two40 + 1, 0}), "absurdly large");
  auto empty = TensorFile::Parse(HeaderOnlyFile({0, two40}), "empty.bin");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->tensors().at(0).numel(), 0);
}

}  // namespace
}  // namespace rlt::native
