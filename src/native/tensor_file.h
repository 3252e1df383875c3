// rltrade native: a small file format for named tensors that needs no LibTorch.
//
// The native engine saves its parameters, optimizer state and normaliser statistics in
// this format; the LibTorch side reads and writes it too (learn/), so a checkpoint written
// by either backend loads in the other.
//
// Layout (all integers little-endian, no padding):
//   magic      8 bytes   "RLTTENSR"
//   version    uint32    1
//   count      uint32    number of tensors
//   count times:
//     name_len uint32    1..4096, then name_len bytes of the name (UTF-8, unique in the file)
//     dtype    uint32    1 = float32, 2 = float64, 3 = int64
//     ndim     uint32    0..8, then ndim int64 dimensions (each >= 0; ndim 0 = a scalar)
//     data     prod(dims) elements of dtype, little-endian IEEE 754 / two's complement
//   checksum   uint64    FNV-1a (64-bit) of every byte before it
// Readers reject a wrong magic, an unknown version, a truncated file, trailing bytes, a
// checksum mismatch, an unknown dtype, duplicate names and absurd sizes, each with a
// message naming the file and the offset.
//
// Not thread-safe (plain value type).
#ifndef RLT_NATIVE_TENSOR_FILE_H_
#define RLT_NATIVE_TENSOR_FILE_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::native {

enum class DType : uint32_t { kFloat32 = 1, kFloat64 = 2, kInt64 = 3 };

// One named tensor. Exactly one of the data vectors is used, per dtype.
struct NamedTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<double> f64;
  std::vector<int64_t> i64;

  int64_t numel() const;
};

class TensorFile {
 public:
  static constexpr char kMagic[9] = "RLTTENSR";
  static constexpr uint32_t kVersion = 1;

  // Adds a tensor; REQUIRES: name not present yet, data has prod(shape) elements.
  void AddFloat32(const std::string& name, const std::vector<int64_t>& shape, const float* data);
  void AddFloat64(const std::string& name, const std::vector<int64_t>& shape, const double* data);
  void AddInt64(const std::string& name, const std::vector<int64_t>& shape, const int64_t* data);

  const std::vector<NamedTensor>& tensors() const { return tensors_; }
  // nullptr when absent.
  const NamedTensor* Find(const std::string& name) const;
  // The named tensor with this dtype and shape, or a DataError naming `origin`, the
  // tensor, what was expected and what was found.
  Result<const NamedTensor*> Get(const std::string& name, DType dtype,
                                 const std::vector<int64_t>& shape,
                                 const std::string& origin) const;

  std::string Serialize() const;
  // `origin` (a path) appears in error messages.
  static Result<TensorFile> Parse(const std::string& bytes, const std::string& origin);

  // Writes to `path` through a temporary file in the same directory and a rename.
  Status Write(const std::filesystem::path& path) const;
  static Result<TensorFile> Read(const std::filesystem::path& path);

 private:
  NamedTensor& Add(const std::string& name, const std::vector<int64_t>& shape, DType dtype);
  std::vector<NamedTensor> tensors_;
};

std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace rlt::native

#endif  // RLT_NATIVE_TENSOR_FILE_H_
