// rltrade retrieval: .npz archives (NumPy's zip of .npy members), read and written.
//
// Reading (NpzFile::Open): the zip's central directory (with ZIP64 records and extra
// fields, an archive comment allowed), each member's local header, and each `.npy`
// header (format 1.0, 2.0 and 3.0; dtypes '<f4', '<f2', '<i8'; C order only). Members
// stored uncompressed are used in place from a read-only memory map of the file; deflated
// members are inflated (zlib, streamed in 1 MiB chunks) into memory once, when first
// asked for. Every member's CRC-32 is checked before its data is used. Errors name the
// file, the array and what was wrong: a truncated archive, a bad signature, an encrypted
// or otherwise unsupported member, a header that promises more data than the member
// holds, a CRC mismatch, a missing array, a wrong dtype or shape.
//
// Arrays are read row by row through NpzArray (a RowSource): rows are copied out of the
// map with memcpy (members in an .npz written by NumPy start at any byte offset, so no
// pointer into the map is ever handed out), float16 converted exactly to float32.
//
// Writing (NpzWriter): members are streamed into a hidden temporary sibling of the target
// and renamed into place by Finish(); an error or a writer destroyed before Finish()
// leaves nothing behind. Stored members are padded (an extra field in the local header)
// so that the array data starts 64-byte aligned; deflated ones are compressed in chunks.
// ZIP64 records are written when a size or offset needs them (or always, force_zip64).
//
// Thread safety: an NpzFile and its arrays may be read from several threads at once
// after Get() returned (inflation happens inside Get()).
#ifndef RLT_RETRIEVAL_NPZ_H_
#define RLT_RETRIEVAL_NPZ_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "retrieval/data.h"

namespace rlt::retrieval {

enum class NpyDType { kFloat32, kFloat16, kInt64 };

const char* NpyDTypeName(NpyDType t);  // "float32", "float16", "int64"

struct NpyMember {
  std::string name;  // without ".npy"
  NpyDType dtype = NpyDType::kFloat32;
  std::vector<int64_t> shape;
  bool deflated = false;
  uint64_t local_offset = 0;  // the member's local header
  uint64_t data_offset = 0;   // the member's bytes (npy header first), set by Open
  uint64_t compressed_size = 0, size = 0;
  uint32_t crc = 0;
  uint64_t npy_header_bytes = 0;  // magic + header: the array data follows
};

class NpzMapping;

class NpzArray : public RowSource {
 public:
  NpyDType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rows() const override { return rows_; }
  int64_t row_elems() const override { return row_elems_; }
  void Gather(const int64_t* idx, int64_t n, float* out) const override;
  void Read(int64_t first, int64_t n, float* out) const override;
  std::string Name() const override { return name_; }
  // madvise(MADV_DONTNEED) over a stored member's mapped bytes (an inflated member is
  // owned memory and stays).
  void Release() const override;
  // Get() found the first non-finite element while checking the CRC (one pass).
  bool FiniteChecked(int64_t* first_bad, float* value) const override;
  // int64 arrays only.
  std::vector<int64_t> ReadInt64() const;

 private:
  friend class NpzFile;
  std::shared_ptr<const NpzMapping> map_;   // keeps a stored member's bytes alive
  std::shared_ptr<std::vector<char>> own_;  // an inflated member's bytes
  const char* data_ = nullptr;              // the array's first element
  int64_t bytes_ = 0;                       // the array's bytes
  bool finite_checked_ = false;
  int64_t first_nonfinite_ = -1;  // element index, -1 = all finite
  NpyDType dtype_ = NpyDType::kFloat32;
  std::vector<int64_t> shape_;
  int64_t rows_ = 0, row_elems_ = 1;
  std::string name_;
};

class NpzFile {
 public:
  static Result<NpzFile> Open(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<NpyMember>& members() const { return members_; }
  bool Has(const std::string& name) const;
  // The array `name`, checked: dtype one of `dtypes`, rank = dims.size(), and each dim of
  // `dims` that is >= 0 equal (-1: any). Verifies the member's CRC-32 (and inflates a
  // deflated member) first.
  Result<NpzArray> Get(const std::string& name, const std::vector<NpyDType>& dtypes,
                       const std::vector<int64_t>& dims) const;

 private:
  std::string path_;
  std::shared_ptr<const NpzMapping> map_;
  std::vector<NpyMember> members_;
};

struct NpzWriterOptions {
  bool force_zip64 = false;
};

class NpzWriter {
 public:
  static Result<NpzWriter> Create(const std::string& path, const NpzWriterOptions& options = {});
  NpzWriter(NpzWriter&& other) noexcept;
  NpzWriter& operator=(NpzWriter&&) = delete;
  NpzWriter(const NpzWriter&) = delete;
  ~NpzWriter();  // removes the temporary file unless Finish() succeeded

  // Streams one member: BeginArray, then Append the elements in C order (any number of
  // calls; float32 input for float32 and float16 arrays, int64 for int64), then
  // EndArray. level: 0 = stored, 1..9 = deflated at that zlib level.
  Status BeginArray(const std::string& name, NpyDType dtype, const std::vector<int64_t>& shape,
                    int level = 0);
  Status AppendF32(const float* values, int64_t n);
  Status AppendI64(const int64_t* values, int64_t n);
  Status EndArray();
  // Whole arrays in one call.
  Status AddFloat32(const std::string& name, const std::vector<int64_t>& shape, const float* values,
                    int level = 0);
  Status AddInt64(const std::string& name, const std::vector<int64_t>& shape, const int64_t* values,
                  int level = 0);
  // Writes the central directory, fsyncs and renames the file into place.
  Status Finish();

 private:
  NpzWriter() = default;
  struct State;
  std::unique_ptr<State> s_;
};

// IEEE half to single precision, exact (subnormals, infinities, NaN payload's top bits).
float HalfToFloat(uint16_t h);
// Single to half precision, rounding to nearest even (overflow to infinity).
uint16_t FloatToHalf(float f);

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_NPZ_H_
