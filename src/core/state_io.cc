// rltrade core: StateWriter / StateReader (see state_io.h).
#include "core/state_io.h"

namespace rlt {

Status StateReader::GetBytes(void* out, size_t n, const char* name) {
  if (n > remaining()) {
    return Error("truncated: reading " + std::string(name) + " needs " + std::to_string(n) +
                 " bytes at offset " + std::to_string(pos_) + ", " + std::to_string(remaining()) +
                 " left (file cut short, or written by another version)");
  }
  if (n > 0) std::memcpy(out, data_.data() + pos_, n);
  pos_ += n;
  return Status::Ok();
}

Status StateReader::GetBool(bool* value, const char* name) {
  uint8_t byte = 0;
  RLT_RETURN_IF_ERROR(Get(&byte, name));
  if (byte > 1) {
    return Error(std::string(name) + " should be a bool (0 or 1), got " + std::to_string(byte));
  }
  *value = byte != 0;
  return Status::Ok();
}

Status StateReader::GetString(std::string_view* s, const char* name) {
  uint64_t size = 0;
  RLT_RETURN_IF_ERROR(Get(&size, name));
  if (size > remaining()) {
    return Error("truncated: " + std::string(name) + " has " + std::to_string(size) +
                 " bytes at offset " + std::to_string(pos_) + ", " + std::to_string(remaining()) +
                 " left");
  }
  *s = data_.substr(pos_, size);
  pos_ += size;
  return Status::Ok();
}

Status StateReader::GetRng(RngState* rng, const char* name) {
  RngState r;
  RLT_RETURN_IF_ERROR(GetArray(r.s, 4, name));
  RLT_RETURN_IF_ERROR(Get(&r.spare, name));
  RLT_RETURN_IF_ERROR(GetBool(&r.has_spare, name));
  if ((r.s[0] | r.s[1] | r.s[2] | r.s[3]) == 0) {
    return Error(std::string(name) + " is the all-zero xoshiro state, which no seed produces");
  }
  *rng = r;
  return Status::Ok();
}

Status StateReader::ExpectString(std::string_view expected, const char* name) {
  std::string_view s;
  RLT_RETURN_IF_ERROR(GetString(&s, name));
  if (s == expected) return Status::Ok();
  // Quoted by appending (g++ 12 warns falsely on "'" + std::string(...)).
  auto quoted = [](std::string_view v) {
    std::string q(1, '\'');
    q.append(v);
    q.push_back('\'');
    return q;
  };
  return Mismatch(name, quoted(s), quoted(expected));
}

Status StateReader::Finish() const {
  if (remaining() == 0) return Status::Ok();
  return Error(std::to_string(remaining()) + " unread bytes at offset " + std::to_string(pos_) +
               " (written by another version or another kind of state)");
}

Status StateReader::Error(const std::string& message) const {
  return Status::DataError(what_ + ": " + message);
}

Status StateReader::Mismatch(const char* name, const std::string& saved,
                             const std::string& here) const {
  return Error(std::string(name) + " is " + saved + " in the saved state but " + here +
               " here; restore it into an object built with the same settings");
}

}  // namespace rlt
