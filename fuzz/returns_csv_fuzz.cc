// Fuzzes the returns reader (eval/returns_csv.h). An accepted file yields only finite
// returns or NaN (missing periods): the format rejects infinities.
#include <cmath>

#include "eval/returns_csv.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto result = rlt::eval::ParseReturnsCsv(rlt::fuzz::AsText(data, size), "fuzz.csv");
  if (!result.ok()) {
    FUZZ_REQUIRE(!result.status().message().empty(), "error without a message");
    return 0;
  }
  for (double r : *result) FUZZ_REQUIRE(!std::isinf(r), "an infinite return was accepted");
  return 0;
}
