// runlog/progress: rate-limited progress lines (see progress.h).
#include "runlog/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

#include "fmt/format.h"

namespace rlt::runlog {

std::string FormatEta(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-:--:--";
  const auto total = static_cast<int64_t>(std::ceil(seconds));
  return fmt::format("{}:{:02d}:{:02d}", total / 3600, (total / 60) % 60, total % 60);
}

std::string FormatWithThousands(int64_t value) {
  const std::string digits = std::to_string(value < 0 ? -(value + 1) + uint64_t{1} : value);
  std::string out = value < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string ProgressReporter::FormatLine(int64_t steps_done, int64_t total_steps, double fps,
                                         double ep_rew_mean, std::string_view extra) {
  std::string line = "step " + FormatWithThousands(steps_done);
  if (total_steps > 0) {
    line += fmt::format("/{} ({:.1f}%)", FormatWithThousands(total_steps),
                        100.0 * static_cast<double>(steps_done) / static_cast<double>(total_steps));
  }
  const bool fps_known = std::isfinite(fps) && fps > 0;
  line += " | " + (fps_known ? FormatWithThousands(std::llround(fps)) : std::string("?")) + " fps";
  if (total_steps > 0) {
    const double remaining = static_cast<double>(std::max<int64_t>(total_steps - steps_done, 0));
    line += " | ETA " + FormatEta(fps_known ? remaining / fps : -1.0);
  }
  line += " | ep_rew_mean " +
          (std::isnan(ep_rew_mean) ? std::string("n/a") : fmt::format("{:.4g}", ep_rew_mean));
  if (!extra.empty()) line += fmt::format(" | {}", extra);
  return line;
}

ProgressReporter::ProgressReporter(ProgressOptions options)
    : options_(std::move(options)), mode_(options_.mode) {
  out_ = options_.out != nullptr ? options_.out : &std::cerr;
  if (!options_.clock) {
    options_.clock = [] {
      using std::chrono::steady_clock;
      return std::chrono::duration<double>(steady_clock::now().time_since_epoch()).count();
    };
  }
  if (mode_ == ProgressOptions::Mode::kAuto) {
    const bool tty = out_ == &std::cerr && ::isatty(STDERR_FILENO) == 1;
    mode_ = tty ? ProgressOptions::Mode::kTerminal : ProgressOptions::Mode::kPlain;
  }
}

void ProgressReporter::Update(int64_t steps_done, int64_t total_steps, double fps,
                              double ep_rew_mean, std::string_view extra) {
  if (mode_ == ProgressOptions::Mode::kQuiet) return;
  const double now = options_.clock();
  const double interval = mode_ == ProgressOptions::Mode::kTerminal
                              ? options_.terminal_interval_seconds
                              : options_.plain_interval_seconds;
  pending_line_ = FormatLine(steps_done, total_steps, fps, ep_rew_mean, extra);
  if (printed_any_ && now - last_print_time_ < interval) return;
  last_print_time_ = now;
  printed_any_ = true;
  Print(pending_line_);
  pending_line_.clear();
}

void ProgressReporter::Finish() {
  if (mode_ == ProgressOptions::Mode::kQuiet) return;
  if (!pending_line_.empty()) Print(pending_line_);
  pending_line_.clear();
  if (line_open_) {
    *out_ << '\n';
    out_->flush();
    line_open_ = false;
    last_width_ = 0;
  }
}

void ProgressReporter::Print(const std::string& line) {
  if (mode_ == ProgressOptions::Mode::kTerminal) {
    // Pad with spaces to erase the tail of a longer previous line.
    const size_t pad = last_width_ > line.size() ? last_width_ - line.size() : 0;
    *out_ << '\r' << line << std::string(pad, ' ');
    last_width_ = line.size();
    line_open_ = true;
  } else {
    *out_ << line << '\n';
  }
  out_->flush();
}

}  // namespace rlt::runlog
