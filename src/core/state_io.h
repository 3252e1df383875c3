// rltrade core: a tiny binary format for saving and restoring in-memory state.
//
// StateWriter appends values to a byte string; StateReader reads them back in the same
// order. There are no field names or type tags: the reader must ask for exactly what the
// writer wrote. What the format is for: the mutable state of environments (env/env.h,
// env/vec_env.h) inside a checkpoint, written and read by the same build.
// What it is not: a portable or self-describing format. Values are stored in the host's
// byte order and representation (checkpoints move between machines of one architecture),
// and callers version their own layouts (e.g. a magic string and a version number first).
//
// Only trivially copyable scalars and arrays of them are written raw. Write a struct
// field by field: padding bytes would make the output depend on uninitialised memory.
// Reads are bounds-checked: running past the end, or a length or an expected value that
// does not match, is a Status (DataError) naming what was being read, never a crash.
// Not thread-safe.
#ifndef RLT_CORE_STATE_IO_H_
#define RLT_CORE_STATE_IO_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/rng.h"
#include "core/status.h"

namespace rlt {

class StateWriter {
 public:
  template <typename T>
  void Put(const T& value) {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>, "write structs field by field");
    out_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  // n values, without a length (the reader must know n).
  template <typename T>
  void PutArray(const T* values, size_t n) {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>, "write structs field by field");
    out_.append(reinterpret_cast<const char*>(values), sizeof(T) * n);
  }
  void PutBool(bool value) { Put<uint8_t>(value ? 1 : 0); }
  // A uint64 length, then the bytes.
  void PutString(std::string_view s) {
    Put<uint64_t>(s.size());
    out_.append(s.data(), s.size());
  }
  void PutRng(const RngState& rng) {
    PutArray(rng.s, 4);
    Put(rng.spare);
    PutBool(rng.has_spare);
  }

  const std::string& data() const { return out_; }
  std::string Release() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads from a view of bytes the caller keeps alive. `what` names the source in errors
// (e.g. "checkpoints/step_512/envs.bin").
class StateReader {
 public:
  explicit StateReader(std::string_view data, std::string what = "saved state")
      : data_(data), what_(std::move(what)) {}

  template <typename T>
  Status Get(T* value, const char* name) {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>, "read structs field by field");
    return GetBytes(value, sizeof(T), name);
  }
  template <typename T>
  Status GetArray(T* values, size_t n, const char* name) {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>, "read structs field by field");
    return GetBytes(values, sizeof(T) * n, name);
  }
  Status GetBool(bool* value, const char* name);
  // A view into the reader's data (valid as long as that data).
  Status GetString(std::string_view* s, const char* name);
  Status GetRng(RngState* rng, const char* name);
  // Reads a value and fails unless it equals `expected` ("<name> is 3 in <what>, 4 here").
  template <typename T>
  Status Expect(const T& expected, const char* name) {
    T value{};
    RLT_RETURN_IF_ERROR(Get(&value, name));
    if (value == expected) return Status::Ok();
    return Mismatch(name, ToText(value), ToText(expected));
  }
  Status ExpectString(std::string_view expected, const char* name);

  size_t remaining() const { return data_.size() - pos_; }
  const std::string& what() const { return what_; }
  // Fails unless every byte was read (a longer input means another layout).
  Status Finish() const;
  // A DataError "<what>: <message>" for callers' own checks.
  Status Error(const std::string& message) const;

 private:
  template <typename T>
  static std::string ToText(const T& v) {
    if constexpr (std::is_enum_v<T>) {
      return std::to_string(static_cast<std::underlying_type_t<T>>(v));
    } else {
      return std::to_string(v);
    }
  }
  Status GetBytes(void* out, size_t n, const char* name);
  Status Mismatch(const char* name, const std::string& saved, const std::string& here) const;

  std::string_view data_;
  size_t pos_ = 0;
  std::string what_;
};

}  // namespace rlt

#endif  // RLT_CORE_STATE_IO_H_
