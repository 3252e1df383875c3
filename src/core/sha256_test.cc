// SHA-256 against the published FIPS 180-4 examples (NIST's "Example Algorithms" and the
// long-message vector of FIPS 180-2 appendix B) and against coreutils' sha256sum, an
// independent implementation, on data split into pieces of every awkward size.
#include "core/sha256.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace rlt {
namespace {

TEST(Sha256, PublishedExamples) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;
  const std::string thousand(1000, 'a');
  for (int i = 0; i < 1000; ++i) million.Update(thousand);
  EXPECT_EQ(million.Hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The digest does not depend on how the stream is cut into Update calls.
TEST(Sha256, PiecesGiveTheDigestOfTheWhole) {
  std::mt19937 rng(3);
  std::string data(3000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t piece : {1u, 7u, 55u, 56u, 63u, 64u, 65u, 127u, 1000u}) {
    Sha256 h;
    for (size_t at = 0; at < data.size(); at += piece) {
      h.Update(data.data() + at, std::min(piece, data.size() - at));
    }
    EXPECT_EQ(h.Hex(), Sha256Hex(data)) << "pieces of " << piece;
  }
}

std::string Sha256sum(const std::string& path) {
  const std::string command = "sha256sum '" + path + "'";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  char buffer[128] = {};
  const size_t n = std::fread(buffer, 1, 64, pipe);
  pclose(pipe);
  return std::string(buffer, n);
}

TEST(Sha256, FilesAgreeWithSha256sum) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rlt_sha256_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::mt19937 rng(11);
  // Sizes around the padding boundaries and the reader's 1 MiB block.
  for (size_t size : {0u, 55u, 56u, 64u, 119u, 120u, (1u << 20) - 1, (1u << 20) + 9}) {
    std::string name = "f";
    name += std::to_string(size);  // ("f" + to_string draws a false -Wrestrict from GCC 12)
    const std::string path = (dir / name).string();
    std::string data(size, '\0');
    for (char& c : data) c = static_cast<char>(rng());
    std::ofstream(path, std::ios::binary) << data;
    Result<FileDigest> d = Sha256File(path);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->size, size);
    const std::string reference = Sha256sum(path);
    ASSERT_EQ(reference.size(), 64u) << "sha256sum did not run";
    EXPECT_EQ(d->sha256, reference) << "size " << size;
  }
  std::filesystem::remove_all(dir);
  Result<FileDigest> missing = Sha256File((dir / "missing").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("missing"), std::string::npos);
}

}  // namespace
}  // namespace rlt
