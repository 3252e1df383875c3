// Fuzzes the .npz reader (retrieval/npz.h): the input is written to a file (the reader
// maps files) and opened; every member is asked for as float and as int64 arrays. An
// accepted array keeps its promises: rows x row elements match its shape, and reading
// every row (float arrays) or the whole array (int64) stays inside the member (ASan
// watches the reads); no two accepted members share a name. Seeds: archives written by NumPy and by
// our writer.
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>

#include "fuzz_util.h"
#include "retrieval/npz.h"

namespace {

std::string TempPath() {
  static const std::string path = "/tmp/npz_fuzz_" + std::to_string(getpid()) + ".npz";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using rlt::retrieval::NpyDType;
  const std::string path = TempPath();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto file = rlt::retrieval::NpzFile::Open(path);
  if (!file.ok()) {
    FUZZ_REQUIRE(file.status().message().find(path) != std::string::npos,
                 "an error names the file");
    return 0;
  }
  // Each array name once (two same-named members are ambiguous: refused by Open).
  std::set<std::string> names;
  for (const auto& m : file->members()) {
    FUZZ_REQUIRE(names.insert(m.name).second, "member names are unique");
  }
  for (const auto& m : file->members()) {
    auto floats = file->Get(m.name, {NpyDType::kFloat32, NpyDType::kFloat16},
                            std::vector<int64_t>(m.shape.size(), -1));
    if (floats.ok() && !floats->shape().empty() &&
        floats->rows() * floats->row_elems() < (1 << 20)) {
      int64_t elems = 1;
      for (int64_t d : floats->shape()) elems *= d;
      FUZZ_REQUIRE(floats->rows() * floats->row_elems() == elems, "rows x row elements = size");
      std::vector<float> out(static_cast<size_t>(elems));
      if (elems > 0) floats->Read(0, floats->rows(), out.data());
    }
    auto ints = file->Get(m.name, {NpyDType::kInt64}, std::vector<int64_t>(m.shape.size(), -1));
    if (ints.ok() && ints->rows() * ints->row_elems() < (1 << 20)) (void)ints->ReadInt64();
  }
  return 0;
}
