// rltrade native: tensor file reader and writer (see tensor_file.h).
#include "native/tensor_file.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/file_io.h"

namespace rlt::native {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the tensor file writer stores the machine's bytes; add byte swapping for a "
              "big-endian host");

constexpr uint32_t kMaxNameLength = 4096;
constexpr uint32_t kMaxDims = 8;

uint64_t Fnv1a(const char* data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t k = 0; k < n; ++k) {
    h ^= static_cast<uint8_t>(data[k]);
    h *= 0x100000001b3ULL;
  }
  return h;
}

template <typename T>
void Put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

size_t ElementSize(DType d) { return d == DType::kFloat32 ? 4 : 8; }

// Sequential reader over the bytes with bounds checks and positioned error messages.
class Cursor {
 public:
  Cursor(const std::string& bytes, size_t end, const std::string& origin)
      : bytes_(bytes), end_(end), origin_(origin) {}
  size_t offset() const { return pos_; }
  bool Has(size_t n) const { return n <= end_ - pos_; }
  template <typename T>
  Status Take(T* value, const char* what) {
    if (!Has(sizeof(T))) return Truncated(what);
    std::memcpy(value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::Ok();
  }
  Status TakeBytes(void* out, size_t n, const char* what) {
    if (!Has(n)) return Truncated(what);
    if (n > 0) std::memcpy(out, bytes_.data() + pos_, n);  // an empty tensor's data() may be null
    pos_ += n;
    return Status::Ok();
  }
  Status Error(const std::string& msg) const {
    return Status::DataError(origin_ + ": byte " + std::to_string(pos_) + ": " + msg +
                             " (not an rltrade tensor file, or a damaged one; write it again "
                             "with the tool that made it)");
  }

 private:
  Status Truncated(const char* what) const {
    return Error(std::string("file ends inside ") + what + " (truncated)");
  }
  const std::string& bytes_;
  size_t end_;
  const std::string& origin_;
  size_t pos_ = 0;
};

Status ParseTensor(Cursor& c, NamedTensor* t) {
  uint32_t name_len = 0, dtype = 0, ndim = 0;
  RLT_RETURN_IF_ERROR(c.Take(&name_len, "a tensor name length"));
  if (name_len < 1 || name_len > kMaxNameLength) {
    return c.Error("tensor name length " + std::to_string(name_len) + " is not in 1..4096");
  }
  t->name.resize(name_len);
  RLT_RETURN_IF_ERROR(c.TakeBytes(t->name.data(), name_len, "a tensor name"));
  RLT_RETURN_IF_ERROR(c.Take(&dtype, "a dtype"));
  if (dtype < 1 || dtype > 3) {
    return c.Error("tensor '" + t->name + "' has unknown dtype " + std::to_string(dtype) +
                   " (expected 1 float32, 2 float64, 3 int64)");
  }
  t->dtype = static_cast<DType>(dtype);
  RLT_RETURN_IF_ERROR(c.Take(&ndim, "a dimension count"));
  if (ndim > kMaxDims) {
    return c.Error("tensor '" + t->name + "' has " + std::to_string(ndim) + " dimensions (max 8)");
  }
  t->shape.resize(ndim);
  // The product of the non-zero dimensions is at most 2^40, checked before each multiply
  // (so it cannot wrap), which also keeps every partial product of NamedTensor::numel()
  // in range whatever the order of the zeros.
  constexpr uint64_t kMaxElements = uint64_t{1} << 40;
  uint64_t numel = 1, nonzero = 1;
  for (uint32_t d = 0; d < ndim; ++d) {
    RLT_RETURN_IF_ERROR(c.Take(&t->shape[d], "a dimension"));
    if (t->shape[d] < 0) return c.Error("tensor '" + t->name + "' has a negative dimension");
    const uint64_t dim = static_cast<uint64_t>(t->shape[d]);
    if (dim > kMaxElements || (dim != 0 && nonzero > kMaxElements / dim)) {
      return c.Error("tensor '" + t->name + "' is absurdly large " + ShapeString(t->shape));
    }
    if (dim != 0) nonzero *= dim;
    numel *= dim;
  }
  const size_t n = static_cast<size_t>(numel);
  if (!c.Has(n * ElementSize(t->dtype))) {
    return c.Error("file ends inside the data of tensor '" + t->name + "' " +
                   ShapeString(t->shape) + " (truncated)");
  }
  switch (t->dtype) {
    case DType::kFloat32:
      t->f32.resize(n);
      return c.TakeBytes(t->f32.data(), n * 4, "tensor data");
    case DType::kFloat64:
      t->f64.resize(n);
      return c.TakeBytes(t->f64.data(), n * 8, "tensor data");
    case DType::kInt64:
      t->i64.resize(n);
      return c.TakeBytes(t->i64.data(), n * 8, "tensor data");
  }
  return Status::Ok();
}

const char* DTypeName(DType d) {
  switch (d) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kInt64:
      return "int64";
  }
  return "?";
}

}  // namespace

int64_t NamedTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + ")";
}

NamedTensor& TensorFile::Add(const std::string& name, const std::vector<int64_t>& shape,
                             DType dtype) {
  RLT_CHECK_MSG(!name.empty() && name.size() <= kMaxNameLength && Find(name) == nullptr,
                "tensor name '" + name + "' empty, too long or duplicated");
  RLT_CHECK(shape.size() <= kMaxDims);
  NamedTensor& t = tensors_.emplace_back();
  t.name = name;
  t.shape = shape;
  t.dtype = dtype;
  return t;
}

void TensorFile::AddFloat32(const std::string& name, const std::vector<int64_t>& shape,
                            const float* data) {
  NamedTensor& t = Add(name, shape, DType::kFloat32);
  t.f32.assign(data, data + t.numel());
}

void TensorFile::AddFloat64(const std::string& name, const std::vector<int64_t>& shape,
                            const double* data) {
  NamedTensor& t = Add(name, shape, DType::kFloat64);
  t.f64.assign(data, data + t.numel());
}

void TensorFile::AddInt64(const std::string& name, const std::vector<int64_t>& shape,
                          const int64_t* data) {
  NamedTensor& t = Add(name, shape, DType::kInt64);
  t.i64.assign(data, data + t.numel());
}

const NamedTensor* TensorFile::Find(const std::string& name) const {
  for (const NamedTensor& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Result<const NamedTensor*> TensorFile::Get(const std::string& name, DType dtype,
                                           const std::vector<int64_t>& shape,
                                           const std::string& origin) const {
  const NamedTensor* t = Find(name);
  if (t == nullptr) {
    return Status::DataError(origin + ": no tensor named '" + name +
                             "' (the file was written for another architecture or program)");
  }
  if (t->dtype != dtype || t->shape != shape) {
    return Status::DataError(origin + ": tensor '" + name + "' is " + DTypeName(t->dtype) + " " +
                             ShapeString(t->shape) + ", expected " + DTypeName(dtype) + " " +
                             ShapeString(shape) +
                             " (the file was written for another architecture or env shape)");
  }
  return t;
}

std::string TensorFile::Serialize() const {
  std::string out(kMagic, 8);
  Put<uint32_t>(out, kVersion);
  Put<uint32_t>(out, static_cast<uint32_t>(tensors_.size()));
  for (const NamedTensor& t : tensors_) {
    Put<uint32_t>(out, static_cast<uint32_t>(t.name.size()));
    out += t.name;
    Put<uint32_t>(out, static_cast<uint32_t>(t.dtype));
    Put<uint32_t>(out, static_cast<uint32_t>(t.shape.size()));
    for (int64_t d : t.shape) Put<int64_t>(out, d);
    switch (t.dtype) {
      case DType::kFloat32:
        out.append(reinterpret_cast<const char*>(t.f32.data()), t.f32.size() * 4);
        break;
      case DType::kFloat64:
        out.append(reinterpret_cast<const char*>(t.f64.data()), t.f64.size() * 8);
        break;
      case DType::kInt64:
        out.append(reinterpret_cast<const char*>(t.i64.data()), t.i64.size() * 8);
        break;
    }
  }
  Put<uint64_t>(out, Fnv1a(out.data(), out.size()));
  return out;
}

Result<TensorFile> TensorFile::Parse(const std::string& bytes, const std::string& origin) {
  if (bytes.size() < 8 + 4 + 4 + 8) {
    return Status::DataError(origin + ": " + std::to_string(bytes.size()) +
                             " bytes is too short for an rltrade tensor file (truncated?)");
  }
  if (std::memcmp(bytes.data(), kMagic, 8) != 0) {
    return Status::DataError(origin +
                             ": does not start with \"RLTTENSR\" (not an rltrade "
                             "tensor file)");
  }
  const size_t end = bytes.size() - 8;
  uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + end, 8);
  Cursor c(bytes, end, origin);
  char magic[8];
  RLT_RETURN_IF_ERROR(c.TakeBytes(magic, 8, "the magic"));
  uint32_t version = 0, count = 0;
  RLT_RETURN_IF_ERROR(c.Take(&version, "the version"));
  if (version != kVersion) {
    return c.Error("version " + std::to_string(version) + ", this build reads version " +
                   std::to_string(kVersion));
  }
  if (stored != Fnv1a(bytes.data(), end)) {
    return Status::DataError(origin +
                             ": checksum mismatch (the file is damaged or truncated; "
                             "write it again)");
  }
  RLT_RETURN_IF_ERROR(c.Take(&count, "the tensor count"));
  TensorFile file;
  for (uint32_t k = 0; k < count; ++k) {
    NamedTensor t;
    RLT_RETURN_IF_ERROR(ParseTensor(c, &t));
    if (file.Find(t.name) != nullptr) return c.Error("tensor '" + t.name + "' appears twice");
    file.tensors_.push_back(std::move(t));
  }
  if (c.offset() != end) {
    return c.Error(std::to_string(end - c.offset()) + " unexpected bytes after the last tensor");
  }
  return file;
}

Status TensorFile::Write(const std::filesystem::path& path) const {
  const std::filesystem::path tmp = path.string() + ".tmp";
  const std::string bytes = Serialize();
  errno = 0;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      return Status::IoError("cannot write " + tmp.string() + ": " +
                             (errno ? std::strerror(errno) : "write failed") +
                             " (disk full or directory not writable?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    return Status::IoError("cannot rename " + tmp.string() + " to " + path.string() + ": " +
                           ec.message());
  return Status::Ok();
}

Result<TensorFile> TensorFile::Read(const std::filesystem::path& path) {
  RLT_ASSIGN_OR_RETURN(const std::string bytes, ReadFile(path.string()));
  return Parse(bytes, path.string());
}

}  // namespace rlt::native
