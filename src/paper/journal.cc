// rltrade paper: the session journal (see journal.h).
#include "paper/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "core/file_io.h"

namespace rlt::paper {

std::string Journal::KeyOf(const Json& line) {
  const std::string type = line.value("type", "");
  if (type == "order" || type == "fill" || type == "ack" || type == "reject" ||
      type == "cancelled") {
    return type + ":" + line.value("client_order_id", "");
  }
  if (type == "risk") {
    return "risk:" + line.value("client_order_id", "") + ":" + line.value("rule", "") + ":" +
           std::to_string(line.value("bar", -1));
  }
  if (type == "bar" || type == "decision" || type == "snapshot") {
    return type + ":" + std::to_string(line.value("bar", -1));
  }
  if (type == "start" || type == "end") return type;
  return "";
}

Result<Journal> Journal::Open(const std::string& path) {
  Journal j;
  j.path_ = path;
  if (std::filesystem::exists(path)) {
    RLT_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    size_t complete = 0;
    for (size_t begin = 0; begin < text.size();) {
      const size_t eol = text.find('\n', begin);
      if (eol == std::string::npos) break;  // no newline: cut by a kill
      const Json line = Json::parse(text.substr(begin, eol - begin), nullptr, false);
      if (line.is_discarded() || !line.is_object()) break;
      j.previous_.push_back(line);
      const std::string key = KeyOf(line);
      if (!key.empty()) j.done_.insert(key);
      complete = eol + 1;
      begin = eol + 1;
    }
    if (complete != text.size()) {
      std::error_code ec;
      std::filesystem::resize_file(path, complete, ec);
      if (ec) return Status::IoError(path + ": cannot cut its unfinished last line");
    }
  }
  j.fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (j.fd_ < 0) return Status::IoError(path + ": cannot open the journal");
  return j;
}

Journal::Journal(Journal&& o) noexcept
    : fd_(o.fd_),
      path_(std::move(o.path_)),
      previous_(std::move(o.previous_)),
      done_(std::move(o.done_)) {
  o.fd_ = -1;
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

Status Journal::Emit(const Json& line) {
  const std::string key = KeyOf(line);
  if (!key.empty() && !done_.insert(key).second) return Status::Ok();
  const std::string text = line.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IoError(path_ + ": cannot append (disk full?)");
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status Journal::Sync() {
  if (::fdatasync(fd_) != 0) return Status::IoError(path_ + ": fdatasync failed");
  return Status::Ok();
}

}  // namespace rlt::paper
