// rltrade retrieval: .npz reading and writing (see npz.h).
#include "retrieval/npz.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "core/posix_io.h"

namespace rlt::retrieval {

// A read-only map of a whole file.
class NpzMapping {
 public:
  ~NpzMapping() {
    if (base_ != nullptr && size_ > 0) munmap(base_, size_);
  }
  static Result<std::shared_ptr<NpzMapping>> Map(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return posix_io::ErrnoStatus("open", path, errno);
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      return posix_io::ErrnoStatus("stat", path, err);
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      return Status::InvalidArgument(path + ": not a regular file (an .npz archive is expected)");
    }
    auto m = std::shared_ptr<NpzMapping>(new NpzMapping());
    m->size_ = static_cast<uint64_t>(st.st_size);
    if (m->size_ > 0) {
      void* p = mmap(nullptr, m->size_, PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        return posix_io::ErrnoStatus("mmap", path, err);
      }
      m->base_ = p;
      madvise(p, m->size_, MADV_RANDOM);  // batches gather scattered rows
    }
    ::close(fd);
    return m;
  }
  const unsigned char* data() const { return static_cast<const unsigned char*>(base_); }
  uint64_t size() const { return size_; }

 private:
  NpzMapping() = default;
  void* base_ = nullptr;
  uint64_t size_ = 0;
};

namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;
constexpr uint64_t kMax32 = 0xFFFFFFFFULL;
constexpr uint16_t kPadExtraId = 0xD935;  // an alignment pad, as zipalign writes

uint16_t U16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t U32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
uint64_t U64(const unsigned char* p) {
  return static_cast<uint64_t>(U32(p)) | static_cast<uint64_t>(U32(p + 4)) << 32;
}

void Put16(std::string& s, uint16_t v) {
  s.push_back(static_cast<char>(v & 0xFF));
  s.push_back(static_cast<char>(v >> 8));
}
void Put32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void Put64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

int ElemSize(NpyDType t) { return t == NpyDType::kFloat16 ? 2 : t == NpyDType::kInt64 ? 8 : 4; }

// The .npy header dictionary, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
Status ParseNpyDict(const std::string& dict, const std::string& where, NpyMember& m) {
  auto value_of = [&](const std::string& key) -> std::string {
    const size_t k = dict.find("'" + key + "'");
    if (k == std::string::npos) return "";
    size_t p = dict.find(':', k);
    if (p == std::string::npos) return "";
    ++p;
    while (p < dict.size() && dict[p] == ' ') ++p;
    if (p >= dict.size()) return "";
    if (dict[p] == '\'') {
      const size_t e = dict.find('\'', p + 1);
      return e == std::string::npos ? "" : dict.substr(p, e - p + 1);
    }
    if (dict[p] == '(') {
      const size_t e = dict.find(')', p);
      return e == std::string::npos ? "" : dict.substr(p, e - p + 1);
    }
    size_t e = p;
    while (e < dict.size() && dict[e] != ',' && dict[e] != '}') ++e;
    return dict.substr(p, e - p);
  };
  const std::string descr = value_of("descr");
  if (descr == "'<f4'") {
    m.dtype = NpyDType::kFloat32;
  } else if (descr == "'<f2'") {
    m.dtype = NpyDType::kFloat16;
  } else if (descr == "'<i8'") {
    m.dtype = NpyDType::kInt64;
  } else {
    return Status::DataError(where + ": dtype " + (descr.empty() ? "(missing)" : descr) +
                             " is not supported: expected float32 ('<f4'), float16 ('<f2') "
                             "or int64 ('<i8'); convert it with numpy's astype before saving");
  }
  std::string fortran = value_of("fortran_order");
  while (!fortran.empty() && fortran.back() == ' ') fortran.pop_back();
  if (fortran == "True") {
    return Status::DataError(where +
                             ": stored in Fortran order; save a C-ordered array "
                             "(numpy.ascontiguousarray) instead");
  }
  if (fortran != "False")
    return Status::DataError(where + ": the .npy header has no fortran_order");
  const std::string shape = value_of("shape");
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') {
    return Status::DataError(where + ": the .npy header has no shape tuple");
  }
  m.shape.clear();
  std::string num;
  for (size_t i = 1; i + 1 <= shape.size() - 1; ++i) {
    const char c = shape[i];
    if (c >= '0' && c <= '9') {
      num.push_back(c);
      if (num.size() > 15) return Status::DataError(where + ": a dimension is too large");
    } else if (c == ',' || c == ' ' || c == 'L') {
      if (c == ',' && num.empty()) return Status::DataError(where + ": a malformed shape " + shape);
      if (!num.empty() && c != 'L') {
        m.shape.push_back(std::stoll(num));
        num.clear();
      }
    } else {
      return Status::DataError(where + ": a malformed shape " + shape);
    }
  }
  if (!num.empty()) m.shape.push_back(std::stoll(num));
  if (m.shape.size() > 8) return Status::DataError(where + ": more than 8 dimensions");
  return Status::Ok();
}

}  // namespace

const char* NpyDTypeName(NpyDType t) {
  switch (t) {
    case NpyDType::kFloat32:
      return "float32";
    case NpyDType::kFloat16:
      return "float16";
    case NpyDType::kInt64:
      return "int64";
  }
  return "?";
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      uint32_t m = mant;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (m & 0x3FF) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t abs = x & 0x7FFFFFFF;
  if (abs >= 0x7F800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7C00 | (abs > 0x7F800000u ? 0x200 : 0));
  }
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00);  // rounds to inf
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    const int shift = 126 - static_cast<int>(abs >> 23);  // 14 + (113 - e)
    if (shift > 24) return sign;
    const uint32_t m = (abs & 0x7FFFFF) | 0x800000;
    const uint32_t q = m >> (shift - 0);
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    uint32_t r = q;
    if (rem > half || (rem == half && (q & 1))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  const uint32_t e = (abs >> 23) - 127 + 15;
  const uint32_t m = abs & 0x7FFFFF;
  uint32_t h = e << 10 | m >> 13;
  const uint32_t rem = m & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // may carry into the exponent
  return static_cast<uint16_t>(sign | h);
}

// ------------------------------------------------------------------ reading

Result<NpzFile> NpzFile::Open(const std::string& path) {
  NpzFile f;
  f.path_ = path;
  RLT_ASSIGN_OR_RETURN(std::shared_ptr<NpzMapping> map, NpzMapping::Map(path));
  f.map_ = map;
  const unsigned char* d = map->data();
  const uint64_t size = map->size();
  auto bad = [&](const std::string& what) {
    return Status::DataError(path + ": " + what +
                             " (not a valid .npz: truncated or corrupt? write it again with "
                             "numpy.savez or rltrade retrieval synth)");
  };
  if (size < 22) return bad("too short for a zip archive");
  // End of central directory: the last signature within the comment's reach.
  uint64_t eocd = std::numeric_limits<uint64_t>::max();
  const uint64_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  for (uint64_t p = size - 22 + 1; p-- > lowest;) {
    if (U32(d + p) == kEndSig && p + 22 + U16(d + p + 20) == size) {
      eocd = p;
      break;
    }
  }
  if (eocd == std::numeric_limits<uint64_t>::max())
    return bad("no end-of-central-directory record");
  uint64_t entries = U16(d + eocd + 10);
  uint64_t cd_size = U32(d + eocd + 12), cd_offset = U32(d + eocd + 16);
  if (entries == 0xFFFF || cd_size == kMax32 || cd_offset == kMax32) {
    if (eocd < 20 || U32(d + eocd - 20) != kZip64LocatorSig) {
      return bad("the ZIP64 end-of-central-directory locator is missing");
    }
    const uint64_t z = U64(d + eocd - 20 + 8);
    if (z > size || size - z < 56 || U32(d + z) != kZip64EndSig) {
      return bad("the ZIP64 end-of-central-directory record is missing");
    }
    entries = U64(d + z + 32);
    cd_size = U64(d + z + 40);
    cd_offset = U64(d + z + 48);
  }
  if (cd_offset > size || cd_size > size - cd_offset)
    return bad("the central directory lies outside the file");
  if (entries > cd_size / 46) return bad("more entries than the central directory holds");
  uint64_t p = cd_offset;
  const uint64_t cd_end = cd_offset + cd_size;
  // Every member name once: readers disagree on which of two same-named members is the
  // array (NumPy's zipfile takes the last, a first-match scan the first).
  std::set<std::string> names;
  for (uint64_t e = 0; e < entries; ++e) {
    if (cd_end - p < 46 || U32(d + p) != kCentralSig)
      return bad("a damaged central directory entry");
    const uint16_t flags = U16(d + p + 8), method = U16(d + p + 10);
    NpyMember m;
    m.crc = U32(d + p + 16);
    m.compressed_size = U32(d + p + 20);
    m.size = U32(d + p + 24);
    const uint16_t name_len = U16(d + p + 28), extra_len = U16(d + p + 30),
                   comment_len = U16(d + p + 32);
    m.local_offset = U32(d + p + 42);
    if (cd_end - p - 46 < static_cast<uint64_t>(name_len) + extra_len + comment_len) {
      return bad("a central directory entry runs past the directory");
    }
    std::string name(reinterpret_cast<const char*>(d + p + 46), name_len);
    // ZIP64 extra field: the 0xFFFFFFFF fields, in the order size, compressed, offset.
    const unsigned char* x = d + p + 46 + name_len;
    for (uint32_t q = 0; q + 4 <= extra_len;) {
      const uint16_t id = U16(x + q), len = U16(x + q + 2);
      if (q + 4 + len > extra_len) return bad("a damaged extra field of member '" + name + "'");
      if (id == 0x0001) {
        uint32_t r = q + 4;
        auto take = [&](uint64_t& field) -> bool {
          if (field != kMax32) return true;
          if (r + 8 > q + 4 + len) return false;
          field = U64(x + r);
          r += 8;
          return true;
        };
        if (!take(m.size) || !take(m.compressed_size) || !take(m.local_offset)) {
          return bad("a short ZIP64 extra field of member '" + name + "'");
        }
      }
      q += 4 + len;
    }
    p += 46 + static_cast<uint64_t>(name_len) + extra_len + comment_len;
    if (!names.insert(name).second) {
      return Status::DataError(path + ": two members are named '" + name +
                               "' (NumPy would read the last, so which array is meant is "
                               "ambiguous); write the archive again with each array once");
    }
    if (flags & 0x1) {
      return Status::DataError(path + ": member '" + name +
                               "' is encrypted; rltrade reads "
                               "plain .npz archives only");
    }
    if (method != 0 && method != 8) {
      return Status::DataError(path + ": member '" + name + "' uses compression method " +
                               std::to_string(method) +
                               "; only stored (numpy.savez) and deflated "
                               "(numpy.savez_compressed) members are read");
    }
    m.deflated = method == 8;
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".npy") != 0) continue;  // not ours
    m.name = name.substr(0, name.size() - 4);
    // The local header: its own name and extra lengths decide where the data starts.
    if (m.local_offset > size || size - m.local_offset < 30 ||
        U32(d + m.local_offset) != kLocalSig) {
      return bad("member '" + m.name + "' has no local header where the directory says");
    }
    m.data_offset = m.local_offset + 30 + U16(d + m.local_offset + 26) +
                    static_cast<uint64_t>(U16(d + m.local_offset + 28));
    if (m.data_offset > size || m.compressed_size > size - m.data_offset) {
      return bad("member '" + m.name + "' runs past the end of the file");
    }
    if (!m.deflated && m.compressed_size != m.size) {
      return bad("stored member '" + m.name + "' has different stored and original sizes");
    }
    // The local header repeats the name; NumPy's zipfile refuses a member whose two names
    // differ, and so do we (otherwise the same bytes would be read under two names).
    const uint16_t local_name_len = U16(d + m.local_offset + 26);
    if (local_name_len != name_len ||
        std::memcmp(d + m.local_offset + 30, name.data(), name_len) != 0) {
      return bad("member '" + name + "' has another name in its local header ('" +
                 std::string(reinterpret_cast<const char*>(d + m.local_offset + 30),
                             std::min<uint16_t>(local_name_len, 120)) +
                 "')");
    }
    f.members_.push_back(std::move(m));
  }
  // NumPy's np.load(...)['X'] reads a member named exactly 'X' before 'X.npy'.
  for (const NpyMember& m : f.members_) {
    if (names.count(m.name) != 0) {
      return Status::DataError(path + ": members '" + m.name + "' and '" + m.name +
                               ".npy' are both in the archive (NumPy's np.load reads '" + m.name +
                               "' as array '" + m.name +
                               "', so which array is meant is ambiguous); drop one of them");
    }
  }
  return f;
}

bool NpzFile::Has(const std::string& name) const {
  return std::any_of(members_.begin(), members_.end(),
                     [&](const NpyMember& m) { return m.name == name; });
}

namespace {

// The inflated bytes of a deflated member (`bytes`: its compressed data), checked against
// the size and CRC-32 the archive gives; refuses a size deflate cannot produce or one
// larger than the free memory.
Result<std::shared_ptr<std::vector<char>>> InflateMember(const NpyMember& m,
                                                         const unsigned char* bytes,
                                                         const std::string& where) {
  // Deflate expands at most ~1032:1; a larger claim is a corrupt header, and the
  // inflated bytes must fit in memory.
  if (m.size / 1032 > m.compressed_size + 1024) {
    return Status::DataError(where + ": the archive claims " + std::to_string(m.size) +
                             " bytes from " + std::to_string(m.compressed_size) +
                             " deflated ones, more than deflate can produce: the file is "
                             "corrupt");
  }
  const uint64_t avail = static_cast<uint64_t>(sysconf(_SC_AVPHYS_PAGES)) *
                         static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (m.size > avail) {
    return Status::DataError(where + ": deflated, " + std::to_string(m.size >> 20) +
                             " MiB once inflated, more than the " + std::to_string(avail >> 20) +
                             " MiB of free memory; save it uncompressed (numpy.savez), "
                             "which is read in place");
  }
  auto own = std::make_shared<std::vector<char>>(m.size);
  z_stream z{};
  if (inflateInit2(&z, -15) != Z_OK) return Status::IoError(where + ": zlib init failed");
  uint64_t in_done = 0, out_done = 0;
  int rc = Z_OK;
  uLong crc = crc32(0L, Z_NULL, 0);
  while (rc != Z_STREAM_END) {
    const uint64_t in_chunk = std::min<uint64_t>(1 << 20, m.compressed_size - in_done);
    const uint64_t out_chunk = std::min<uint64_t>(1 << 20, m.size - out_done);
    z.next_in = const_cast<Bytef*>(bytes + in_done);
    z.avail_in = static_cast<uInt>(in_chunk);
    z.next_out = reinterpret_cast<Bytef*>(own->data() + out_done);
    z.avail_out = static_cast<uInt>(out_chunk);
    rc = inflate(&z, Z_NO_FLUSH);
    const uint64_t used_in = in_chunk - z.avail_in, made = out_chunk - z.avail_out;
    crc =
        crc32(crc, reinterpret_cast<const Bytef*>(own->data() + out_done), static_cast<uInt>(made));
    in_done += used_in;
    out_done += made;
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) break;
    if (used_in == 0 && made == 0) break;  // no progress: truncated or corrupt
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END || out_done != m.size) {
    return Status::DataError(where + ": the deflated data is corrupt or truncated (zlib: " +
                             (z.msg ? z.msg : "stream ended early") + ")");
  }
  if (crc != m.crc) {
    return Status::DataError(where + ": CRC-32 mismatch (the archive says " +
                             std::to_string(m.crc) + ", the data has " + std::to_string(crc) +
                             "): the file is corrupt");
  }
  return own;
}

// Reads the .npy header at the start of a member's `length` bytes into m (dtype, shape,
// npy_header_bytes); returns the byte count of the data after it, which must be what
// is left of the member.
Result<uint64_t> ReadNpyHeader(const unsigned char* bytes, uint64_t length,
                               const std::string& where, NpyMember& m) {
  if (length < 10 || std::memcmp(bytes, "\x93NUMPY", 6) != 0) {
    return Status::DataError(where + ": not a .npy array (no \\x93NUMPY magic)");
  }
  const int major = bytes[6];
  uint64_t header_len, prefix;
  if (major == 1) {
    header_len = U16(bytes + 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (length < 12) return Status::DataError(where + ": a truncated .npy header");
    header_len = U32(bytes + 8);
    prefix = 12;
  } else {
    return Status::DataError(where + ": .npy format version " + std::to_string(major) +
                             " is not supported (1, 2 or 3)");
  }
  if (header_len > length - prefix || header_len > (1 << 20)) {
    return Status::DataError(where + ": the .npy header runs past the member");
  }
  RLT_RETURN_IF_ERROR(ParseNpyDict(
      std::string(reinterpret_cast<const char*>(bytes + prefix), header_len), where, m));
  m.npy_header_bytes = prefix + header_len;
  uint64_t elems = 1;
  for (int64_t dim : m.shape) {
    if (dim > 0 && elems > (uint64_t{1} << 50) / static_cast<uint64_t>(dim)) {
      return Status::DataError(where + ": the shape is absurdly large");
    }
    elems *= static_cast<uint64_t>(dim);
  }
  const uint64_t need = elems * ElemSize(m.dtype);
  if (need != length - m.npy_header_bytes) {
    return Status::DataError(where + ": the header promises " + std::to_string(need) +
                             " bytes of data but the member holds " +
                             std::to_string(length - m.npy_header_bytes));
  }
  return need;
}

// Refuses an array whose dtype is not one of `dtypes` or whose shape differs from `dims`
// (a negative dimension there: any).
Status CheckExpectedArray(const NpyMember& m, const std::string& where,
                          const std::vector<NpyDType>& dtypes, const std::vector<int64_t>& dims) {
  if (std::find(dtypes.begin(), dtypes.end(), m.dtype) == dtypes.end()) {
    std::string want;
    for (NpyDType t : dtypes) want += (want.empty() ? "" : " or ") + std::string(NpyDTypeName(t));
    return Status::DataError(where + " has dtype " + NpyDTypeName(m.dtype) + ", expected " + want);
  }
  auto shape_text = [](const std::vector<int64_t>& s, bool expected) {
    std::string t = "(";
    for (size_t i = 0; i < s.size(); ++i) {
      t += (i ? ", " : "") + (expected && s[i] < 0 ? std::string("any") : std::to_string(s[i]));
    }
    return t + ")";
  };
  bool shape_ok = m.shape.size() == dims.size();
  for (size_t i = 0; shape_ok && i < dims.size(); ++i) {
    if (dims[i] >= 0 && dims[i] != m.shape[i]) shape_ok = false;
  }
  if (!shape_ok) {
    return Status::DataError(where + " has shape " + shape_text(m.shape, false) + ", expected " +
                             shape_text(dims, true));
  }
  return Status::Ok();
}

// One pass over a member's bytes (`bytes`: its .npy header, then `need` bytes of data):
// the CRC-32 of a stored member (an inflated one was checked while inflating) and the
// index of the first non-finite value of a float array (-1: none; always -1 for int64).
// The pages read are released as the pass goes, so a member larger than memory is
// checked in bounded resident memory (they stay in the page cache).
Result<int64_t> ScanMemberData(const NpyMember& m, const unsigned char* bytes, uint64_t need,
                               const std::string& where) {
  int64_t first_nonfinite = -1;
  const bool stored = !m.deflated;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const int esize = ElemSize(m.dtype);
  uLong crc = crc32(0L, Z_NULL, 0);
  if (stored) crc = crc32(crc, bytes, static_cast<uInt>(m.npy_header_bytes));
  const unsigned char* data = bytes + m.npy_header_bytes;
  const uint64_t chunk = uint64_t{256} << 20;  // a multiple of every element size
  for (uint64_t at = 0; at < need; at += chunk) {
    const uint64_t n = std::min<uint64_t>(chunk, need - at);
    if (stored) crc = crc32(crc, data + at, static_cast<uInt>(n));
    if (first_nonfinite < 0 && m.dtype != NpyDType::kInt64) {
      for (uint64_t k = 0; k < n; k += esize) {
        bool bad;
        if (esize == 4) {
          uint32_t b;
          std::memcpy(&b, data + at + k, 4);
          bad = (b & 0x7F800000u) == 0x7F800000u;
        } else {
          uint16_t b;
          std::memcpy(&b, data + at + k, 2);
          bad = (b & 0x7C00u) == 0x7C00u;
        }
        if (bad) {
          first_nonfinite = static_cast<int64_t>((at + k) / esize);
          break;
        }
      }
    }
    if (stored) {
      const uintptr_t begin = reinterpret_cast<uintptr_t>(data + at) / page * page;
      madvise(reinterpret_cast<void*>(begin), reinterpret_cast<uintptr_t>(data + at + n) - begin,
              MADV_DONTNEED);
    }
  }
  if (stored && crc != m.crc) {
    return Status::DataError(where + ": CRC-32 mismatch (the archive says " +
                             std::to_string(m.crc) + ", the data has " + std::to_string(crc) +
                             "): the file is corrupt");
  }
  return first_nonfinite;
}
}  // namespace

Result<NpzArray> NpzFile::Get(const std::string& name, const std::vector<NpyDType>& dtypes,
                              const std::vector<int64_t>& dims) const {
  const std::string where = path_ + ": array '" + name + "'";
  auto it = std::find_if(members_.begin(), members_.end(),
                         [&](const NpyMember& m) { return m.name == name; });
  if (it == members_.end()) {
    std::string have;
    for (const NpyMember& m : members_) have += (have.empty() ? "" : ", ") + m.name;
    return Status::DataError(
        where + " is missing (the file holds: " + (have.empty() ? "no arrays" : have) + ")");
  }
  NpyMember m = *it;
  NpzArray a;
  a.name_ = path_ + ":" + name;
  const unsigned char* bytes = map_->data() + m.data_offset;
  uint64_t length = m.size;
  if (m.deflated) {
    RLT_ASSIGN_OR_RETURN(std::shared_ptr<std::vector<char>> own, InflateMember(m, bytes, where));
    a.own_ = own;
    bytes = reinterpret_cast<const unsigned char*>(own->data());
  } else {
    a.map_ = map_;
  }
  RLT_ASSIGN_OR_RETURN(const uint64_t need, ReadNpyHeader(bytes, length, where, m));
  // What the caller expects.
  RLT_RETURN_IF_ERROR(CheckExpectedArray(m, where, dtypes, dims));
  a.data_ = reinterpret_cast<const char*>(bytes + m.npy_header_bytes);
  a.bytes_ = static_cast<int64_t>(need);
  a.dtype_ = m.dtype;
  a.shape_ = m.shape;
  a.rows_ = m.shape.empty() ? 1 : m.shape[0];
  a.row_elems_ = 1;
  for (size_t i = 1; i < m.shape.size(); ++i) a.row_elems_ *= m.shape[i];
  RLT_ASSIGN_OR_RETURN(a.first_nonfinite_, ScanMemberData(m, bytes, need, where));
  a.finite_checked_ = m.dtype != NpyDType::kInt64;
  return a;
}

void NpzArray::Read(int64_t first, int64_t n, float* out) const {
  RLT_CHECK(first >= 0 && n >= 0 && first + n <= rows_);
  RLT_CHECK(dtype_ != NpyDType::kInt64);
  const int64_t elems = n * row_elems_;
  if (dtype_ == NpyDType::kFloat32) {
    std::memcpy(out, data_ + first * row_elems_ * 4, static_cast<size_t>(elems) * 4);
    return;
  }
  const char* src = data_ + first * row_elems_ * 2;
  for (int64_t k = 0; k < elems; ++k) {
    uint16_t h;
    std::memcpy(&h, src + 2 * k, 2);
    out[k] = HalfToFloat(h);
  }
}

void NpzArray::Gather(const int64_t* idx, int64_t n, float* out) const {
  for (int64_t i = 0; i < n; ++i) Read(idx[i], 1, out + i * row_elems_);
}

bool NpzArray::FiniteChecked(int64_t* first_bad, float* value) const {
  if (!finite_checked_) return false;
  *first_bad = first_nonfinite_;
  if (first_nonfinite_ >= 0) {
    const int64_t row = first_nonfinite_ / row_elems_;
    std::vector<float> r(static_cast<size_t>(row_elems_));
    Read(row, 1, r.data());
    *value = r[static_cast<size_t>(first_nonfinite_ % row_elems_)];
  }
  return true;
}

void NpzArray::Release() const {
  if (map_ == nullptr || bytes_ == 0) return;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data_) / page * page;
  const uintptr_t end = reinterpret_cast<uintptr_t>(data_) + static_cast<uintptr_t>(bytes_);
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

std::vector<int64_t> NpzArray::ReadInt64() const {
  RLT_CHECK(dtype_ == NpyDType::kInt64);
  std::vector<int64_t> v(static_cast<size_t>(rows_ * row_elems_));
  std::memcpy(v.data(), data_, v.size() * 8);
  return v;
}

// ------------------------------------------------------------------ writing

struct NpzWriter::State {
  std::string path, temp;
  NpzWriterOptions options;
  int fd = -1;
  uint64_t offset = 0;  // bytes written so far
  bool finished = false;
  std::string central;
  uint64_t entries = 0;
  std::set<std::string> names;  // member names written (each once)
  // The member being written.
  bool open = false;
  std::string name;
  NpyDType dtype = NpyDType::kFloat32;
  uint64_t expected = 0, written_elems = 0;
  int level = 0;
  uint64_t local_offset = 0, data_start = 0, member_bytes = 0, compressed = 0;
  uLong crc = 0;
  bool zip64 = false;
  z_stream z{};
  std::string out_buf;

  Status Write(const void* p, size_t n) {
    RLT_RETURN_IF_ERROR(
        posix_io::WriteAll(fd, std::string_view(static_cast<const char*>(p), n), temp));
    offset += n;
    return Status::Ok();
  }
  Status PWrite(uint64_t at, const std::string& bytes) {
    if (pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(at)) !=
        static_cast<ssize_t>(bytes.size())) {
      return posix_io::ErrnoStatus("write", temp, errno);
    }
    return Status::Ok();
  }
  // Member bytes (the npy header and the elements): CRC, then stored or deflated.
  Status Member(const char* p, size_t n, bool last) {
    if (n > 0) crc = crc32(crc, reinterpret_cast<const Bytef*>(p), static_cast<uInt>(n));
    member_bytes += n;
    if (level == 0) {
      compressed += n;
      return Write(p, n);
    }
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p));
    z.avail_in = static_cast<uInt>(n);
    out_buf.resize(1 << 20);
    do {
      z.next_out = reinterpret_cast<Bytef*>(out_buf.data());
      z.avail_out = static_cast<uInt>(out_buf.size());
      const int rc = deflate(&z, last ? Z_FINISH : Z_NO_FLUSH);
      if (rc == Z_STREAM_ERROR) return Status::IoError(temp + ": zlib deflate failed");
      const size_t made = out_buf.size() - z.avail_out;
      compressed += made;
      RLT_RETURN_IF_ERROR(Write(out_buf.data(), made));
    } while (z.avail_out == 0 || (last && z.avail_in > 0));
    return Status::Ok();
  }
  ~State() {
    if (fd >= 0) ::close(fd);
    if (!finished && !temp.empty()) ::unlink(temp.c_str());
    if (open && level > 0) deflateEnd(&z);
  }
};

Result<NpzWriter> NpzWriter::Create(const std::string& path, const NpzWriterOptions& options) {
  NpzWriter w;
  w.s_ = std::make_unique<State>();
  w.s_->path = path;
  w.s_->options = options;
  w.s_->temp = posix_io::HiddenSibling(path, "tmp");
  w.s_->fd = ::open(w.s_->temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (w.s_->fd < 0) {
    const int err = errno;
    w.s_->temp.clear();
    return posix_io::ErrnoStatus("create", path, err);
  }
  return w;
}

NpzWriter::NpzWriter(NpzWriter&& other) noexcept : s_(std::move(other.s_)) {}
NpzWriter::~NpzWriter() = default;

Status NpzWriter::BeginArray(const std::string& name, NpyDType dtype,
                             const std::vector<int64_t>& shape, int level) {
  State& s = *s_;
  RLT_CHECK(!s.open && !s.finished);
  RLT_CHECK(level >= 0 && level <= 9);
  // Each array once, and no member name NumPy's np.load could take for another array
  // (it reads a member named exactly 'X' as array 'X' before 'X.npy').
  const std::string member_name = name + ".npy";
  if (s.names.count(member_name) != 0 || s.names.count(name) != 0 ||
      s.names.count(member_name + ".npy") != 0) {
    return Status::InvalidArgument(s.path + ": array '" + name +
                                   "' is written twice (or beside an array named '" + name +
                                   ".npy' or its stem); an archive holds each array once");
  }
  s.names.insert(member_name);
  s.open = true;
  s.name = name;
  s.dtype = dtype;
  s.level = level;
  s.expected = 1;
  for (int64_t d : shape) {
    RLT_CHECK(d >= 0);
    s.expected *= static_cast<uint64_t>(d);
  }
  s.written_elems = 0;
  s.member_bytes = s.compressed = 0;
  s.crc = crc32(0L, Z_NULL, 0);
  // The .npy header, padded with spaces and a newline to a multiple of 64 bytes.
  std::string dict = std::string("{'descr': '") +
                     (dtype == NpyDType::kFloat32   ? "<f4"
                      : dtype == NpyDType::kFloat16 ? "<f2"
                                                    : "<i8") +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]) + (shape.size() == 1 ? "," : i + 1 < shape.size() ? ", " : "");
  }
  dict += "), }";
  const size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - 10 - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string npy = "\x93NUMPY";
  npy.push_back(1);
  npy.push_back(0);
  Put16(npy, static_cast<uint16_t>(dict.size()));
  npy += dict;
  const uint64_t size = npy.size() + s.expected * ElemSize(dtype);
  s.zip64 = s.options.force_zip64 || size >= kMax32 || s.offset >= kMax32;
  const std::string member = name + ".npy";
  // Local header; CRC and compressed size are patched in EndArray().
  std::string h;
  Put32(h, kLocalSig);
  Put16(h, s.zip64 ? 45 : 20);
  Put16(h, 0);                     // flags
  Put16(h, level > 0 ? 8 : 0);     // method
  Put16(h, 0);                     // time
  Put16(h, 0x21);                  // date 1980-01-01
  Put32(h, 0);                     // CRC, patched
  Put32(h, s.zip64 ? kMax32 : 0);  // compressed size, patched
  Put32(h, s.zip64 ? kMax32 : static_cast<uint32_t>(size));
  Put16(h, static_cast<uint16_t>(member.size()));
  std::string extra;
  if (s.zip64) {
    Put16(extra, 0x0001);
    Put16(extra, 16);
    Put64(extra, size);
    Put64(extra, 0);  // compressed size, patched
  }
  if (level == 0) {  // pad so that the array data starts 64-byte aligned
    const uint64_t base = s.offset + 30 + member.size() + extra.size() + 4 + npy.size();
    const uint64_t pad = (64 - base % 64) % 64;
    Put16(extra, kPadExtraId);
    Put16(extra, static_cast<uint16_t>(pad));
    extra.append(pad, '\0');
  }
  Put16(h, static_cast<uint16_t>(extra.size()));
  h += member;
  h += extra;
  s.local_offset = s.offset;
  RLT_RETURN_IF_ERROR(s.Write(h.data(), h.size()));
  s.data_start = s.offset;
  if (level > 0) {
    s.z = z_stream{};
    if (deflateInit2(&s.z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      return Status::IoError(s.temp + ": zlib init failed");
    }
  }
  return s.Member(npy.data(), npy.size(), false);
}

Status NpzWriter::AppendF32(const float* values, int64_t n) {
  State& s = *s_;
  RLT_CHECK(s.open && s.dtype != NpyDType::kInt64);
  RLT_CHECK(s.written_elems + static_cast<uint64_t>(n) <= s.expected);
  s.written_elems += static_cast<uint64_t>(n);
  if (s.dtype == NpyDType::kFloat32) {
    return s.Member(reinterpret_cast<const char*>(values), static_cast<size_t>(n) * 4, false);
  }
  std::vector<uint16_t> half(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) half[k] = FloatToHalf(values[k]);
  return s.Member(reinterpret_cast<const char*>(half.data()), half.size() * 2, false);
}

Status NpzWriter::AppendI64(const int64_t* values, int64_t n) {
  State& s = *s_;
  RLT_CHECK(s.open && s.dtype == NpyDType::kInt64);
  RLT_CHECK(s.written_elems + static_cast<uint64_t>(n) <= s.expected);
  s.written_elems += static_cast<uint64_t>(n);
  return s.Member(reinterpret_cast<const char*>(values), static_cast<size_t>(n) * 8, false);
}

Status NpzWriter::EndArray() {
  State& s = *s_;
  RLT_CHECK(s.open);
  RLT_CHECK(s.written_elems == s.expected);
  if (s.level > 0) {
    RLT_RETURN_IF_ERROR(s.Member(nullptr, 0, true));
    deflateEnd(&s.z);
  }
  s.open = false;
  // Patch the CRC and sizes into the local header.
  std::string crc;
  Put32(crc, static_cast<uint32_t>(s.crc));
  RLT_RETURN_IF_ERROR(s.PWrite(s.local_offset + 14, crc));
  const std::string member = s.name + ".npy";
  if (s.zip64) {
    std::string c;
    Put64(c, s.compressed);
    RLT_RETURN_IF_ERROR(s.PWrite(s.local_offset + 30 + member.size() + 4 + 8, c));
  } else {
    if (s.compressed >= kMax32) {
      return Status::IoError(s.path + ": member '" + s.name +
                             "' compressed to 4 GiB or more "
                             "without ZIP64; write it stored");
    }
    std::string c;
    Put32(c, static_cast<uint32_t>(s.compressed));
    RLT_RETURN_IF_ERROR(s.PWrite(s.local_offset + 18, c));
  }
  // Its central directory entry.
  const bool z64 = s.zip64 || s.local_offset >= kMax32;
  std::string e;
  Put32(e, kCentralSig);
  Put16(e, 0x031E);  // made by: Unix, 3.0
  Put16(e, z64 ? 45 : 20);
  Put16(e, 0);
  Put16(e, s.level > 0 ? 8 : 0);
  Put16(e, 0);
  Put16(e, 0x21);
  Put32(e, static_cast<uint32_t>(s.crc));
  Put32(e, z64 ? kMax32 : static_cast<uint32_t>(s.compressed));
  Put32(e, z64 ? kMax32 : static_cast<uint32_t>(s.member_bytes));
  Put16(e, static_cast<uint16_t>(member.size()));
  Put16(e, static_cast<uint16_t>(z64 ? 28 : 0));
  Put16(e, 0);            // comment
  Put16(e, 0);            // disk
  Put16(e, 0);            // internal attributes
  Put32(e, 0x81A40000u);  // external: a regular file, 0644
  Put32(e, z64 ? kMax32 : static_cast<uint32_t>(s.local_offset));
  e += member;
  if (z64) {
    Put16(e, 0x0001);
    Put16(e, 24);
    Put64(e, s.member_bytes);
    Put64(e, s.compressed);
    Put64(e, s.local_offset);
  }
  s.central += e;
  ++s.entries;
  return Status::Ok();
}

Status NpzWriter::AddFloat32(const std::string& name, const std::vector<int64_t>& shape,
                             const float* values, int level) {
  RLT_RETURN_IF_ERROR(BeginArray(name, NpyDType::kFloat32, shape, level));
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  RLT_RETURN_IF_ERROR(AppendF32(values, n));
  return EndArray();
}

Status NpzWriter::AddInt64(const std::string& name, const std::vector<int64_t>& shape,
                           const int64_t* values, int level) {
  RLT_RETURN_IF_ERROR(BeginArray(name, NpyDType::kInt64, shape, level));
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  RLT_RETURN_IF_ERROR(AppendI64(values, n));
  return EndArray();
}

Status NpzWriter::Finish() {
  State& s = *s_;
  RLT_CHECK(!s.open && !s.finished);
  const uint64_t cd_offset = s.offset;
  RLT_RETURN_IF_ERROR(s.Write(s.central.data(), s.central.size()));
  const uint64_t cd_size = s.central.size();
  const bool z64 = s.options.force_zip64 || cd_offset >= kMax32 || s.entries >= 0xFFFF;
  std::string end;
  if (z64) {
    const uint64_t z = s.offset;
    Put32(end, kZip64EndSig);
    Put64(end, 44);
    Put16(end, 0x031E);
    Put16(end, 45);
    Put32(end, 0);
    Put32(end, 0);
    Put64(end, s.entries);
    Put64(end, s.entries);
    Put64(end, cd_size);
    Put64(end, cd_offset);
    Put32(end, kZip64LocatorSig);
    Put32(end, 0);
    Put64(end, z);
    Put32(end, 1);
  }
  Put32(end, kEndSig);
  Put16(end, 0);
  Put16(end, 0);
  Put16(end, z64 ? 0xFFFF : static_cast<uint16_t>(s.entries));
  Put16(end, z64 ? 0xFFFF : static_cast<uint16_t>(s.entries));
  Put32(end, z64 ? kMax32 : static_cast<uint32_t>(cd_size));
  Put32(end, z64 ? kMax32 : static_cast<uint32_t>(cd_offset));
  Put16(end, 0);
  RLT_RETURN_IF_ERROR(s.Write(end.data(), end.size()));
  RLT_RETURN_IF_ERROR(posix_io::FsyncFd(s.fd, s.temp));
  if (::close(s.fd) != 0) {
    s.fd = -1;
    return posix_io::ErrnoStatus("close", s.temp, errno);
  }
  s.fd = -1;
  if (::rename(s.temp.c_str(), s.path.c_str()) != 0) {
    return posix_io::ErrnoStatus("rename", s.path, errno);
  }
  s.finished = true;
  return posix_io::FsyncPath(posix_io::ParentDir(s.path));
}

}  // namespace rlt::retrieval
