// Fuzzes the native tensor file reader (native/tensor_file.h), the format of native
// checkpoints and normaliser statistics. Input: one control byte, then the file. With
// bit 0 set the input is the file without its checksum and the correct FNV-1a checksum is
// appended, so the fuzzer explores the parser behind the checksum check instead of only
// the check. An accepted file has the promised shape rules and serialises back to the
// same bytes.
#include <string>

#include "fuzz_util.h"
#include "native/tensor_file.h"

namespace {

// FNV-1a, 64 bit (the checksum tensor_file.h specifies).
uint64_t Fnv1a64(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t control = rlt::fuzz::TakeByte(data, size);
  std::string bytes(rlt::fuzz::AsText(data, size));
  if (control & 1) {
    const uint64_t sum = Fnv1a64(bytes);  // little-endian, as the format stores integers
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((sum >> (8 * i)) & 0xff));
  }
  auto file = rlt::native::TensorFile::Parse(bytes, "fuzz.rltt");
  if (!file.ok()) {
    FUZZ_REQUIRE(!file.status().message().empty(), "error without a message");
    return 0;
  }
  for (const auto& t : file->tensors()) {
    FUZZ_REQUIRE(!t.name.empty() && t.shape.size() <= 8, "bad name or rank accepted");
    const size_t n = static_cast<size_t>(t.numel());
    const size_t held = t.dtype == rlt::native::DType::kFloat32   ? t.f32.size()
                        : t.dtype == rlt::native::DType::kFloat64 ? t.f64.size()
                                                                  : t.i64.size();
    FUZZ_REQUIRE(held == n, "tensor '" + t.name + "' holds the wrong number of elements");
    FUZZ_REQUIRE(file->Find(t.name) == &t, "duplicate name accepted");
  }
  FUZZ_REQUIRE(file->Serialize() == bytes, "an accepted file serialises differently");
  return 0;
}
