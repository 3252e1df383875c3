// Fuzzes StateReader (core/state_io.h), the bounds-checked reader under every saved
// environment state. Input: a program length k (first byte, mod 32), k operation bytes,
// then the data the operations read. Whatever the data, a read either succeeds within
// the data or fails with a message; remaining() never grows, and a string view points
// into the data.
#include <string>
#include <string_view>

#include "core/rng.h"
#include "core/state_io.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t k = rlt::fuzz::TakeByte(data, size) % 32;
  if (k > size) k = size;
  const uint8_t* ops = data;
  const std::string_view bytes = rlt::fuzz::AsText(data + k, size - k);
  rlt::StateReader in(bytes, "fuzz state");
  for (size_t i = 0; i < k; ++i) {
    const size_t before = in.remaining();
    rlt::Status s;
    switch (ops[i] % 11) {
      case 0: {
        uint8_t v;
        s = in.Get(&v, "u8");
        break;
      }
      case 1: {
        int32_t v;
        s = in.Get(&v, "i32");
        break;
      }
      case 2: {
        double v;
        s = in.Get(&v, "f64");
        break;
      }
      case 3: {
        bool v;
        s = in.GetBool(&v, "flag");
        break;
      }
      case 4: {
        std::string_view v;
        s = in.GetString(&v, "name");
        if (s.ok() && !v.empty()) {
          FUZZ_REQUIRE(
              v.data() >= bytes.data() && v.data() + v.size() <= bytes.data() + bytes.size(),
              "string view outside the data");
        }
        break;
      }
      case 5: {
        rlt::RngState v;
        s = in.GetRng(&v, "rng");
        break;
      }
      case 6: {
        float v[7];
        s = in.GetArray(v, ops[i] / 11 % 8, "floats");
        break;
      }
      case 7:
        s = in.Expect<uint32_t>(7, "version");
        break;
      case 8:
        s = in.ExpectString("cartpole", "env id");
        break;
      case 9: {
        int64_t v;
        s = in.Get(&v, "i64");
        break;
      }
      default:
        s = in.Finish();
        FUZZ_REQUIRE(s.ok() == (in.remaining() == 0), "Finish disagrees with remaining()");
        break;
    }
    FUZZ_REQUIRE(in.remaining() <= before, "remaining() grew");
    if (!s.ok()) FUZZ_REQUIRE(!s.message().empty(), "error without a message");
  }
  return 0;
}
