// Fuzzes VecEnv::LoadState (env/vec_env.h) and every environment's LoadState behind it —
// the parser of a checkpoint's envs.bin, reached after its checksum is verified. Input:
// one byte choosing the environment (vec_env_cases.h), then the state bytes. A load either
// fails with a message, or succeeds; then saving gives back the same bytes (the format
// has one encoding per state) and stepping from the loaded state must not crash.
#include <string>

#include "fuzz_util.h"
#include "vec_env_cases.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& cases = rlt::fuzz::VecEnvCases();
  const auto& c = cases[rlt::fuzz::TakeByte(data, size) % cases.size()];
  auto vec = rlt::fuzz::MakeCase(c);
  const std::string_view bytes = rlt::fuzz::AsText(data, size);
  rlt::Status s = vec->LoadState(bytes, "fuzz envs.bin");
  if (!s.ok()) {
    FUZZ_REQUIRE(!s.message().empty(), "error without a message");
    return 0;
  }
  FUZZ_REQUIRE(vec->SaveState() == bytes, "a loaded state saves differently");
  rlt::fuzz::StepSome(*vec, 6);
  return 0;
}
