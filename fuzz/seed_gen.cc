// Writes the binary seeds of fuzz/corpus/ (the text seeds are written by hand):
//   vec_env_state_fuzz/<case>.bin   case byte + VecEnv::SaveState() after a few steps
//   tensor_file_fuzz/*.bin          control byte + a small tensor file
//   state_reader_fuzz/*.bin         program length, operations, data
// Usage: seed_gen CORPUS_DIR (e.g. fuzz/corpus). Deterministic: rerunning it rewrites the
// same bytes.
#include <cstdio>
#include <fstream>
#include <string>

#include "core/state_io.h"
#include "fuzz_util.h"
#include "native/tensor_file.h"
#include "vec_env_cases.h"

namespace {

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  FUZZ_REQUIRE(static_cast<bool>(out), "cannot write " + path);
  std::printf("%s (%zu bytes)\n", path.c_str(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: seed_gen CORPUS_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const auto& cases = rlt::fuzz::VecEnvCases();
  for (size_t k = 0; k < cases.size(); ++k) {
    auto vec = rlt::fuzz::MakeCase(cases[k]);
    rlt::fuzz::StepSome(*vec, 7);
    Write(dir + "/vec_env_state_fuzz/case" + std::to_string(k) + "_" + cases[k].id + ".bin",
          std::string(1, static_cast<char>(k)) + vec->SaveState());
  }

  rlt::native::TensorFile file;
  const float w[6] = {0.5f, -1.0f, 2.0f, 0.0f, 1e-3f, -7.25f};
  const double mean[2] = {0.1, -0.2};
  const int64_t steps[1] = {4096};
  file.AddFloat32("pi.0.weight", {2, 3}, w);
  file.AddFloat64("obs_rms.mean", {2}, mean);
  file.AddInt64("step", {}, steps);
  const std::string bytes = file.Serialize();
  Write(dir + "/tensor_file_fuzz/three_tensors.bin", std::string(1, '\0') + bytes);
  Write(dir + "/tensor_file_fuzz/three_tensors_no_checksum.bin",
        std::string(1, '\1') + bytes.substr(0, bytes.size() - 8));
  rlt::native::TensorFile empty;
  Write(dir + "/tensor_file_fuzz/empty_no_checksum.bin",
        std::string(1, '\1') + empty.Serialize().substr(0, empty.Serialize().size() - 8));

  // Programs for state_reader_fuzz: ops 0 u8, 1 i32, 2 f64, 3 bool, 4 string, 5 rng,
  // 6 floats, 7 expect u32 7, 8 expect "cartpole", 9 i64, 10 finish.
  rlt::StateWriter w1;
  w1.Put<uint32_t>(7);
  w1.PutString("cartpole");
  w1.Put<int32_t>(-3);
  w1.PutBool(true);
  rlt::RngState rng;
  rng.s[0] = 1;
  rng.s[1] = 2;
  rng.s[2] = 3;
  rng.s[3] = 4;
  w1.PutRng(rng);
  w1.PutString("hello");
  Write(dir + "/state_reader_fuzz/header_then_rng.bin",
        std::string("\x07\x07\x08\x01\x03\x05\x04\x0a", 8) + w1.data());
  rlt::StateWriter w2;
  w2.Put<double>(1.5);
  w2.Put<int64_t>(-1);
  w2.Put<uint64_t>(uint64_t{1} << 62);  // a string length far past the end
  Write(dir + "/state_reader_fuzz/long_string_length.bin",
        std::string("\x04\x02\x09\x04\x0a", 5) + w2.data());
  return 0;
}
