// Tests of the .npz reader and writer: files written by NumPy (tests/fixtures/npz/,
// made by make_npz.py) read to the values their formulas give; our writer's files read
// back by us (stored, deflated, ZIP64) and by NumPy when Debian's python3-numpy is there;
// every truncation and many byte flips of a file give an error or the right data, never a
// crash or wrong numbers; errors name the file and the array; member names that NumPy and
// we could resolve to different arrays (twice the same name, a local header naming
// another member, 'X' beside 'X.npy') are refused.
#include "retrieval/npz.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "core/status_test_util.h"

namespace rlt::retrieval {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = std::string(RLT_SOURCE_DIR) + "/tests/fixtures/npz/";

std::vector<float> AllRows(const NpzArray& a) {
  std::vector<float> v(static_cast<size_t>(a.rows() * a.row_elems()));
  a.Read(0, a.rows(), v.data());
  return v;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

void ExpectNumpyValues(const NpzFile& f) {
  auto a = f.Get("a", {NpyDType::kFloat32}, {3, 4, 5});
  ASSERT_TRUE(a.ok()) << a.status().message();
  const std::vector<float> av = AllRows(*a);
  for (int k = 0; k < 60; ++k) EXPECT_EQ(av[k], 0.25f * k - 3.0f) << k;
  std::vector<float> row(20);
  const int64_t pick[2] = {2, 0};
  a->Gather(pick, 1, row.data());
  EXPECT_EQ(row[0], 0.25f * 40 - 3.0f);
  auto h = f.Get("h", {NpyDType::kFloat16, NpyDType::kFloat32}, {-1});
  ASSERT_TRUE(h.ok()) << h.status().message();
  const std::vector<float> hv = AllRows(*h);
  ASSERT_EQ(hv.size(), 10u);
  EXPECT_EQ(hv[0], 0.0f);
  EXPECT_TRUE(std::signbit(hv[1]));
  EXPECT_EQ(hv[2], 1.0f);
  EXPECT_EQ(hv[3], 65504.0f);
  EXPECT_EQ(hv[4], std::ldexp(1.0f, -24));           // the smallest subnormal half
  EXPECT_EQ(hv[5], std::ldexp(1.0f, -14));           // the smallest normal half
  EXPECT_EQ(hv[6], 168.0f * std::ldexp(1.0f, -24));  // 1e-5 rounds to 168 * 2^-24
  EXPECT_EQ(hv[7], std::numeric_limits<float>::infinity());
  EXPECT_EQ(hv[8], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(hv[9], 0.0999755859375f);  // 0.1 in half precision
  auto i = f.Get("i", {NpyDType::kInt64}, {4});
  ASSERT_TRUE(i.ok()) << i.status().message();
  EXPECT_EQ(i->ReadInt64(), (std::vector<int64_t>{-3, int64_t{1} << 40, 0, 7}));
}

TEST(Npz, ReadsNumpysStoredAndDeflatedArchives) {
  for (const char* name : {"numpy_stored.npz", "numpy_deflated.npz"}) {
    auto f = NpzFile::Open(kFixtures + name);
    ASSERT_TRUE(f.ok()) << f.status().message();
    EXPECT_EQ(f->members().size(), 3u);
    EXPECT_EQ(f->members()[0].deflated, std::string(name) == "numpy_deflated.npz");
    ExpectNumpyValues(*f);
  }
}

TEST(Npz, HalfPrecisionConversionsAreExactAndRoundToNearestEven) {
  // Every half value converts to float and back to itself (NaN payloads aside).
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalf(f), h) << h;
  }
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);          // rounds to infinity
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7BFF);          // the largest half
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0);  // a tie below the smallest: to even (0)
  EXPECT_EQ(FloatToHalf(std::ldexp(3.0f, -25)), 2);  // a tie between 1 and 2: to even (2)
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie: to even
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3C02);  // tie: to even
}

TEST(Npz, OurArchivesRoundTripStoredDeflatedAndZip64) {
  const std::string dir = ::testing::TempDir() + "/npz_rt";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<float> x(7 * 3 * 5);
  for (size_t k = 0; k < x.size(); ++k) x[k] = std::sin(static_cast<float>(k)) * 10.0f;
  const std::vector<int64_t> ids = {5, -1, 1LL << 50};
  int variant = 0;
  for (bool zip64 : {false, true}) {
    for (int level : {0, 6}) {
      const std::string path = dir + "/v" + std::to_string(variant++) + ".npz";
      NpzWriterOptions o;
      o.force_zip64 = zip64;
      auto w = NpzWriter::Create(path, o);
      ASSERT_TRUE(w.ok()) << w.status().message();
      ASSERT_TRUE(w->BeginArray("X", NpyDType::kFloat32, {7, 3, 5}, level).ok());
      for (int r = 0; r < 7; ++r) ASSERT_TRUE(w->AppendF32(&x[r * 15], 15).ok());  // streamed
      ASSERT_TRUE(w->EndArray().ok());
      ASSERT_TRUE(w->BeginArray("H", NpyDType::kFloat16, {7, 15}, level).ok());
      ASSERT_TRUE(w->AppendF32(x.data(), 105).ok());
      ASSERT_TRUE(w->EndArray().ok());
      ASSERT_TRUE(w->AddInt64("ids", {3}, ids.data(), level).ok());
      EXPECT_FALSE(fs::exists(path));  // nothing at the final path before Finish()
      ASSERT_TRUE(w->Finish().ok());
      auto f = NpzFile::Open(path);
      ASSERT_TRUE(f.ok()) << f.status().message();
      auto X = f->Get("X", {NpyDType::kFloat32}, {7, 3, 5});
      ASSERT_TRUE(X.ok()) << X.status().message();
      EXPECT_EQ(AllRows(*X), x);
      if (level == 0) {
        const auto& m = f->members()[0];
        EXPECT_EQ((m.data_offset + 128) % 64, 0u) << "array data 64-byte aligned";
      }
      auto H = f->Get("H", {NpyDType::kFloat16}, {7, 15});
      ASSERT_TRUE(H.ok());
      const std::vector<float> hv = AllRows(*H);
      for (size_t k = 0; k < x.size(); ++k) EXPECT_EQ(hv[k], HalfToFloat(FloatToHalf(x[k])));
      auto I = f->Get("ids", {NpyDType::kInt64}, {3});
      ASSERT_TRUE(I.ok());
      EXPECT_EQ(I->ReadInt64(), ids);
      // NumPy reads what we wrote (when Debian's python3-numpy is installed).
      if (fs::exists("/usr/bin/python3") &&
          std::system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0) {
        const std::string check =
            "/usr/bin/python3 -c \"import numpy as np, sys; z = np.load('" + path +
            "'); x = np.sin(np.arange(105, dtype=np.float32)) * np.float32(10); "
            "ok = z['X'].shape == (7, 3, 5) and np.allclose(z['X'].ravel(), x, rtol=1e-6) and "
            "(z['H'].ravel() == x.astype(np.float16)).all() and list(z['ids']) == [5, -1, 2**50]; "
            "sys.exit(0 if ok else 1)\"";
        EXPECT_EQ(std::system(check.c_str()), 0) << path;
      }
    }
  }
}

TEST(Npz, AWriterDestroyedBeforeFinishLeavesNothing) {
  const std::string dir = ::testing::TempDir() + "/npz_abandon";
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    auto w = NpzWriter::Create(dir + "/x.npz");
    ASSERT_TRUE(w.ok());
    const float v[2] = {1, 2};
    ASSERT_TRUE(w->AddFloat32("a", {2}, v).ok());
  }
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(Npz, ErrorsNameTheFileTheArrayAndTheRule) {
  auto f = NpzFile::Open(kFixtures + "numpy_stored.npz");
  ASSERT_TRUE(f.ok());
  auto expect = [](const Status& st, const std::vector<std::string>& fragments,
                   Status::Code code = Status::Code::kDataError) {
    for (const std::string& frag : fragments) EXPECT_TRUE(IsError(st, code, frag));
  };
  expect(f->Get("X_train", {NpyDType::kFloat32}, {-1, -1, -1}).status(),
         {"numpy_stored.npz: array 'X_train' is missing", "holds: a, h, i"});
  expect(f->Get("i", {NpyDType::kFloat32, NpyDType::kFloat16}, {4}).status(),
         {"array 'i' has dtype int64, expected float32 or float16"});
  expect(f->Get("a", {NpyDType::kFloat32}, {-1, 768}).status(),
         {"array 'a' has shape (3, 4, 5), expected (any, 768)"});
  expect(f->Get("a", {NpyDType::kFloat32}, {3, 4, 6}).status(), {"expected (3, 4, 6)"});
  auto odd = NpzFile::Open(kFixtures + "numpy_odd.npz");
  ASSERT_TRUE(odd.ok()) << odd.status().message();
  EXPECT_FALSE(odd->Has("readme"));  // not an .npy member: not an array
  expect(odd->Get("f", {NpyDType::kFloat32}, {2, 3}).status(), {"array 'f'", "Fortran order"});
  expect(odd->Get("d", {NpyDType::kFloat32}, {3}).status(), {"array 'd'", "'<f8'", "astype"});
  expect(odd->Get("short", {NpyDType::kFloat32}, {10}).status(),
         {"array 'short'", "promises 40 bytes of data but the member holds 32"});
  expect(NpzFile::Open(kFixtures + "missing.npz").status(), {"missing.npz"},
         Status::Code::kIoError);
  expect(NpzFile::Open(kFixtures).status(), {"not a regular file"}, Status::Code::kInvalidArgument);
}

TEST(Npz, TruncatedOrFlippedArchivesGiveErrorsNeverWrongData) {
  const std::string dir = ::testing::TempDir() + "/npz_hostile";
  fs::create_directories(dir);
  for (const char* name : {"numpy_stored.npz", "numpy_deflated.npz"}) {
    const std::string bytes = ReadBytes(kFixtures + name);
    const std::string path = dir + "/" + name;
    auto load_all = [&]() -> bool {  // true when every array loaded (then it must be right)
      auto f = NpzFile::Open(path);
      if (!f.ok()) {
        EXPECT_NE(f.status().message().find(path), std::string::npos) << f.status().message();
        return false;
      }
      for (const char* a : {"a", "h", "i"}) {
        if (!f->Has(a)) return false;
      }
      auto a = f->Get("a", {NpyDType::kFloat32}, {3, 4, 5});
      auto h = f->Get("h", {NpyDType::kFloat16}, {10});
      auto i = f->Get("i", {NpyDType::kInt64}, {4});
      if (!a.ok() || !h.ok() || !i.ok()) return false;
      ExpectNumpyValues(*f);
      return true;
    };
    for (size_t len = 0; len < bytes.size(); ++len) {
      WriteBytes(path, bytes.substr(0, len));
      EXPECT_FALSE(load_all()) << name << " truncated to " << len;
    }
    for (size_t at = 0; at < bytes.size(); at += 3) {
      std::string flipped = bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ 0x5A);
      WriteBytes(path, flipped);
      load_all();  // an error, or exactly the right values
    }
  }
}

TEST(Npz, ADeflatedMemberClaimingMoreThanDeflateCanProduceIsRefused) {
  // Regression (npz_fuzz): a central directory claiming a huge inflated size made the
  // reader allocate it. The claim is now checked against deflate's ~1032:1 limit.
  std::string bytes = ReadBytes(kFixtures + "numpy_deflated.npz");
  const size_t cd = bytes.find(std::string("PK\x01\x02", 4));
  ASSERT_NE(cd, std::string::npos);
  ASSERT_EQ(bytes.substr(cd + 46, 5), "a.npy");
  const uint32_t huge = 0xF0000000u;
  for (int i = 0; i < 4; ++i) bytes[cd + 24 + i] = static_cast<char>((huge >> (8 * i)) & 0xFF);
  const std::string path = ::testing::TempDir() + "/claim.npz";
  WriteBytes(path, bytes);
  auto f = NpzFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  auto a = f->Get("a", {NpyDType::kFloat32}, {3, 4, 5});
  ASSERT_TRUE(IsError(a, Status::Code::kDataError, "more than deflate can produce"));
}

// Replaces every occurrence of `from` in `bytes` by `to` (same length) from `first` on;
// returns how many.
int Patch(std::string& bytes, const std::string& from, const std::string& to, size_t first = 0) {
  int n = 0;
  for (size_t at = bytes.find(from, first); at != std::string::npos; at = bytes.find(from, at)) {
    bytes.replace(at, from.size(), to);
    ++n;
  }
  return n;
}

TEST(Npz, MemberNamesReadersCouldResolveDifferentlyAreRefused) {
  const std::string dir = ::testing::TempDir() + "/npz_names";
  fs::create_directories(dir);
  const float first[2] = {1.0f, 2.0f}, second[2] = {3.0f, 4.0f};
  // Two members 'A_1.npy' and 'A_2.npy', then renamed so both are 'A_1.npy' (NumPy reads
  // the last, a first-match scan the first): refused, naming the file and the member.
  auto write_two = [&](const std::string& path, const std::string& a, const std::string& b) {
    auto w = NpzWriter::Create(path);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->AddFloat32(a, {2}, first).ok());
    ASSERT_TRUE(w->AddFloat32(b, {2}, second).ok());
    ASSERT_TRUE(w->Finish().ok());
  };
  const std::string path = dir + "/dup.npz";
  write_two(path, "A_1", "A_2");
  const std::string clean = ReadBytes(path);
  {
    auto ok = NpzFile::Open(path);
    ASSERT_TRUE(ok.ok()) << ok.status().message();
    EXPECT_EQ(ok->members().size(), 2u);
  }
  std::string dup = clean;
  ASSERT_EQ(Patch(dup, "A_2.npy", "A_1.npy"), 2);  // the local header and the directory
  WriteBytes(path, dup);
  auto twice = NpzFile::Open(path);
  ASSERT_TRUE(IsError(twice, Status::Code::kDataError, path + ": two members are named 'A_1.npy'"));
  // Only the local header renamed: its name and the directory's disagree.
  std::string local = clean;
  const size_t at = local.find("A_2.npy");
  ASSERT_NE(at, std::string::npos);
  local.replace(at, 7, "A_3.npy");
  WriteBytes(path, local);
  auto mismatch = NpzFile::Open(path);
  ASSERT_TRUE(IsError(mismatch, Status::Code::kDataError,
                      "member 'A_2.npy' has another name in its local header ('A_3.npy')"));
  // Members 'W.npy' and 'W.npy.npy': np.load(...)['W.npy'] reads the first, a reader that
  // strips '.npy' the second.
  write_two(path, "W", "Q.npy");
  std::string stem = ReadBytes(path);
  ASSERT_EQ(Patch(stem, "Q.npy.npy", "W.npy.npy"), 2);
  WriteBytes(path, stem);
  auto ambiguous = NpzFile::Open(path);
  ASSERT_TRUE(IsError(ambiguous, Status::Code::kDataError, "members 'W.npy' and 'W.npy.npy'"));
  // Our writer never makes such an archive.
  auto w = NpzWriter::Create(dir + "/w.npz");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->AddFloat32("v", {2}, first).ok());
  EXPECT_TRUE(IsError(w->AddFloat32("v", {2}, second), Status::Code::kInvalidArgument,
                      "array 'v' is written twice"));
  EXPECT_TRUE(IsError(w->AddFloat32("v.npy", {2}, second), Status::Code::kInvalidArgument,
                      "array 'v.npy' is written twice"));
  ASSERT_TRUE(w->AddFloat32("u.npy", {2}, second).ok());
  const Status stem_of = w->AddFloat32("u", {2}, first);
  ASSERT_TRUE(IsError(stem_of, Status::Code::kInvalidArgument, "array 'u' is written twice"));
  ASSERT_TRUE(w->Finish().ok());
  auto back = NpzFile::Open(dir + "/w.npz");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->members().size(), 2u);
}

}  // namespace
}  // namespace rlt::retrieval
