// runlog/tensorboard: CRC32C, TFRecord framing and hand-encoded Event protobufs.
#include "runlog/tensorboard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "fmt/format.h"

namespace rlt::runlog {
namespace {

constexpr std::array<uint32_t, 256> MakeCrc32cTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
    table[i] = crc;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrc32cTable = MakeCrc32cTable();

constexpr size_t kAutoFlushBytes = 64 * 1024;

// --- Protobuf wire format (https://protobuf.dev/programming-guides/encoding/) ---
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void PutTag(std::string* out, uint32_t field, WireType type) {
  PutVarint(out, (static_cast<uint64_t>(field) << 3) | type);
}
void PutFixedLe(std::string* out, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}
void PutDouble(std::string* out, uint32_t field, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  PutTag(out, field, kFixed64);
  PutFixedLe(out, bits, 8);
}
void PutFloat(std::string* out, uint32_t field, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  PutTag(out, field, kFixed32);
  PutFixedLe(out, bits, 4);
}
void PutInt64(std::string* out, uint32_t field, int64_t v) {
  PutTag(out, field, kVarint);
  PutVarint(out, static_cast<uint64_t>(v));  // int64: two's complement, 10 bytes if < 0
}
void PutBytes(std::string* out, uint32_t field, std::string_view bytes) {
  PutTag(out, field, kLengthDelimited);
  PutVarint(out, bytes.size());
  out->append(bytes);
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

}  // namespace

uint32_t Crc32c(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) crc = kCrc32cTable[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

double WallTimeNow() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

Result<EventFileWriter> EventFileWriter::Open(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return posix_io::ErrnoStatus("create the TensorBoard directory", dir, errno);
  }
  const auto seconds = static_cast<int64_t>(WallTimeNow());
  const std::string base = fmt::format("{}/events.out.tfevents.{}.{}", dir, seconds, HostName());
  for (int suffix = 0;; ++suffix) {
    std::string path = suffix == 0 ? base : fmt::format("{}.{}", base, suffix);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST && suffix < 1000) continue;
    if (fd < 0) return posix_io::ErrnoStatus("create the TensorBoard event file", path, errno);
    EventFileWriter writer(posix_io::Fd(fd), std::move(path));
    std::string event;
    PutDouble(&event, 1, WallTimeNow());
    PutBytes(&event, 3, "brain.Event:2");
    RLT_RETURN_IF_ERROR(writer.AppendRecord(event));
    RLT_RETURN_IF_ERROR(writer.Flush());
    return writer;
  }
}

EventFileWriter& EventFileWriter::operator=(EventFileWriter&& other) noexcept {
  if (this != &other) {
    if (fd_.valid()) (void)Flush();
    fd_ = std::move(other.fd_);
    path_ = std::move(other.path_);
    pending_ = std::move(other.pending_);
  }
  return *this;
}

EventFileWriter::~EventFileWriter() {
  if (fd_.valid()) (void)Flush();
}

Status EventFileWriter::AddScalar(std::string_view tag, int64_t step, float value,
                                  double wall_time) {
  RLT_CHECK_MSG(!tag.empty(), "a TensorBoard scalar needs a tag");
  std::string summary_value;
  PutBytes(&summary_value, 1, tag);
  PutFloat(&summary_value, 2, value);
  std::string summary;
  PutBytes(&summary, 1, summary_value);
  std::string event;
  PutDouble(&event, 1, wall_time);
  PutInt64(&event, 2, step);
  PutBytes(&event, 5, summary);
  return AppendRecord(event);
}

Status EventFileWriter::AddSessionStart(int64_t step, double wall_time) {
  std::string session_log;
  PutTag(&session_log, 1, kVarint);
  PutVarint(&session_log, 1);  // SessionLog.START
  std::string event;
  PutDouble(&event, 1, wall_time);
  PutInt64(&event, 2, step);
  PutBytes(&event, 6, session_log);
  return AppendRecord(event);
}

Status EventFileWriter::AppendRecord(std::string_view data) {
  std::string header;
  PutFixedLe(&header, data.size(), 8);
  const uint32_t length_crc = MaskCrc32c(Crc32c(header.data(), header.size()));
  PutFixedLe(&header, length_crc, 4);
  pending_ += header;
  pending_.append(data);
  PutFixedLe(&pending_, MaskCrc32c(Crc32c(data.data(), data.size())), 4);
  if (pending_.size() >= kAutoFlushBytes) return Flush();
  return Status::Ok();
}

Status EventFileWriter::Flush() {
  RLT_CHECK_MSG(fd_.valid(), "EventFileWriter used after being moved from");
  if (pending_.empty()) return Status::Ok();
  Status status = posix_io::WriteAll(fd_.get(), pending_, path_);
  // On error the file may hold a torn record; readers stop there (CRC). Do not rewrite.
  pending_.clear();
  return status;
}

}  // namespace rlt::runlog
