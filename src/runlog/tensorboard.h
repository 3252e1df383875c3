// runlog/tensorboard: a TensorBoard event file writer without TensorFlow or protobuf.
//
// What it is: `EventFileWriter` appends scalar summaries to
// `<dir>/events.out.tfevents.<unix_seconds>.<hostname>`, a TFRecord file whose records
// are `tensorflow.Event` protobufs encoded by hand. TensorBoard reads it like any file
// written by TensorFlow or PyTorch's SummaryWriter.
// What it is not: a general protobuf encoder; only scalars (`simple_value`) and the
// session-start marker are written. No images, histograms or text.
//
// Format (tensorflow/core/lib/io/record_writer.cc, tensorflow/core/util/event.proto):
//   record  = uint64 length (LE) | uint32 masked_crc32c(length bytes) (LE)
//             | data | uint32 masked_crc32c(data) (LE)
//   masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8
//   Event   { double wall_time = 1; int64 step = 2; string file_version = 3;
//             Summary summary = 5; SessionLog session_log = 6; }
//   Summary { repeated Value value = 1; }   Value { string tag = 1; float simple_value = 2; }
//   SessionLog { SessionStatus status = 1; }  (START = 1)
// The first record is {wall_time, file_version: "brain.Event:2"}.
//
// Durability: records are buffered in memory and written by Flush() (and automatically
// once 64 KiB are pending, and by the destructor). A crash loses unflushed records; a torn
// last record is detected by readers through its CRC.
// Thread safety: none; one writer per thread or external locking.
#ifndef RLT_RUNLOG_TENSORBOARD_H_
#define RLT_RUNLOG_TENSORBOARD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/posix_io.h"
#include "core/status.h"

namespace rlt::runlog {

// CRC-32C (Castagnoli; reflected polynomial 0x82F63B78, init and final xor 0xFFFFFFFF), as
// used by TFRecord, iSCSI (RFC 3720) and ext4. Crc32c("123456789") == 0xE3069283.
uint32_t Crc32c(const void* data, size_t size);
// TFRecord's masking of a CRC stored next to the data it covers.
uint32_t MaskCrc32c(uint32_t crc);

// Seconds since the Unix epoch (system clock) as TensorBoard's `wall_time`.
double WallTimeNow();

// Owns an open event file. Move-only.
class EventFileWriter {
 public:
  // Creates `dir` if absent (one level) and a new event file in it, and writes the
  // file_version record. When a file of that name exists already (two writers in one
  // second), ".1", ".2", ... is appended; TensorBoard reads any name containing
  // "tfevents".
  static Result<EventFileWriter> Open(const std::string& dir);

  EventFileWriter(EventFileWriter&&) = default;
  // Flushes this writer's pending records before taking over `other`'s file.
  EventFileWriter& operator=(EventFileWriter&& other) noexcept;
  // Flushes; errors are dropped here, call Flush() to see them.
  ~EventFileWriter();

  // Appends a scalar summary {tag: value} at `step`. `wall_time` is seconds since the
  // epoch (WallTimeNow()). REQUIRES: !tag.empty().
  Status AddScalar(std::string_view tag, int64_t step, float value, double wall_time);
  // Appends SessionLog{status: START} at `step`. Written when a run resumes from a
  // checkpoint at `step - 1`: TensorBoard's Python event loader then discards the data of
  // the interrupted run with step >= `step` (purge_orphaned_data, on by default), so the
  // resumed curve shows no duplicates. Other readers may ignore it.
  Status AddSessionStart(int64_t step, double wall_time);
  // Writes the buffered records to the file (write(2); no fsync).
  Status Flush();

  const std::string& path() const { return path_; }

 private:
  EventFileWriter(posix_io::Fd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  Status AppendRecord(std::string_view data);

  posix_io::Fd fd_;
  std::string path_;
  std::string pending_;  // framed records not yet written
};

}  // namespace rlt::runlog

#endif  // RLT_RUNLOG_TENSORBOARD_H_
