// rltrade core: SHA-256 (FIPS 180-4), for fingerprints of data files a run trained on.
//
// Sha256 hashes a byte stream given in pieces (Update, then Hex or Digest once);
// Sha256Hex hashes one buffer, Sha256File a whole file read in blocks. Outputs are the
// 64 lowercase hex digits `sha256sum` prints. A fingerprint, not a secret: no constant-time
// guarantees.
#ifndef RLT_CORE_SHA256_H_
#define RLT_CORE_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace rlt {

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  void Update(std::string_view text) { Update(text.data(), text.size()); }
  // The digest of everything given so far. Call once: the object is finished after it.
  std::array<uint8_t, 32> Digest();
  std::string Hex();

 private:
  void Block(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string Sha256Hex(std::string_view data);

// The file's digest and size. Errors: the file cannot be opened or read (IoError, naming
// it).
struct FileDigest {
  std::string sha256;
  uint64_t size = 0;
};
Result<FileDigest> Sha256File(const std::string& path);

}  // namespace rlt

#endif  // RLT_CORE_SHA256_H_
