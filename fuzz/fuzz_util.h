// rltrade fuzz: small helpers shared by the libFuzzer targets in fuzz/.
//
// A target feeds its input to one reader and returns; ASan/UBSan, RLT_CHECK and an
// uncaught exception turn a bug into a crash that libFuzzer reports. FUZZ_REQUIRE adds
// the reader's documented promises about what it returns (e.g. "timestamps strictly
// increase"), so an input that is accepted but yields broken data is a finding too.
#ifndef RLT_FUZZ_FUZZ_UTIL_H_
#define RLT_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace rlt::fuzz {

// Aborts (a libFuzzer finding) with `what` when `cond` is false.
#define FUZZ_REQUIRE(cond, what)                                                                \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      std::fprintf(stderr, "FUZZ_REQUIRE failed at %s:%d: %s: %s\n", __FILE__, __LINE__, #cond, \
                   std::string(what).c_str());                                                  \
      std::abort();                                                                             \
    }                                                                                           \
  } while (0)

// Splits the input into a leading control byte (0 when empty) and the rest.
inline uint8_t TakeByte(const uint8_t*& data, size_t& size) {
  if (size == 0) return 0;
  const uint8_t b = data[0];
  ++data;
  --size;
  return b;
}

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace rlt::fuzz

#endif  // RLT_FUZZ_FUZZ_UTIL_H_
