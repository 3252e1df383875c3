// runlog/progress: training progress on stderr.
//
// What it is: `ProgressReporter::Update(steps_done, total_steps, fps, ep_rew_mean, extra)`
// prints a progress line at a bounded rate:
//   terminal  one line rewritten in place with '\r' at most once per
//             `terminal_interval_seconds` (default 1 s):
//               step 1,234,567/2,000,000 (61.7%) | 5,432 fps | ETA 0:02:21 | ep_rew_mean 1.234 |
//               <extra>
//   plain     (stderr redirected to a file or pipe) the same text as a normal line at most
//             once per `plain_interval_seconds` (default 10 s), so logs stay short;
//   quiet     nothing.
// Finish() prints the last state if it was held back by the rate limit, and ends the line.
// ETA is (total - done) / fps formatted H:MM:SS ("-:--:--" while fps is unknown); a
// total_steps <= 0 means "unknown" and drops the % and ETA; a NaN ep_rew_mean (no
// episode finished yet) prints as "n/a".
// What it is not: a logger — metrics go to MetricsLogger; this is for a human watching.
//
// The clock and the output stream can be injected (tests).
// Thread safety: none; call from the training loop's thread.
#ifndef RLT_RUNLOG_PROGRESS_H_
#define RLT_RUNLOG_PROGRESS_H_

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace rlt::runlog {

struct ProgressOptions {
  enum class Mode {
    kAuto,      // kTerminal when stderr is a terminal (isatty), else kPlain
    kTerminal,  // rewrite one line with '\r'
    kPlain,     // one line per report
    kQuiet,     // print nothing
  };
  Mode mode = Mode::kAuto;
  // Least time between two terminal updates.
  double terminal_interval_seconds = 1.0;
  // Least time between two plain lines.
  double plain_interval_seconds = 10.0;
  // Where to print; nullptr = std::cerr. With kAuto, isatty is asked of stderr only when
  // printing to std::cerr; another stream counts as not a terminal.
  std::ostream* out = nullptr;
  // Seconds on a monotonic clock; empty = std::chrono::steady_clock.
  std::function<double()> clock;
};

// "H:MM:SS" for a duration in seconds, rounded up to whole seconds; hours are not capped
// (100:00:00). Negative or non-finite → "-:--:--".
std::string FormatEta(double seconds);

// 1234567 → "1,234,567".
std::string FormatWithThousands(int64_t value);

class ProgressReporter {
 public:
  explicit ProgressReporter(ProgressOptions options = {});
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // Reports progress; prints only when the interval for the mode has passed since the
  // last print (the first Update always prints).
  void Update(int64_t steps_done, int64_t total_steps, double fps, double ep_rew_mean,
              std::string_view extra = {});
  // Prints the last Update if it was not printed, then ends the terminal line. Idempotent.
  void Finish();

  // The resolved mode (never kAuto).
  ProgressOptions::Mode mode() const { return mode_; }
  // The text of one report, without '\r' or '\n'.
  static std::string FormatLine(int64_t steps_done, int64_t total_steps, double fps,
                                double ep_rew_mean, std::string_view extra);

 private:
  void Print(const std::string& line);

  ProgressOptions options_;
  ProgressOptions::Mode mode_;
  std::ostream* out_;
  double last_print_time_ = 0;
  bool printed_any_ = false;
  std::string pending_line_;  // the last report, when not printed yet
  size_t last_width_ = 0;     // terminal: width of the line on screen
  bool line_open_ = false;    // terminal: a line without '\n' is on screen
};

}  // namespace rlt::runlog

#endif  // RLT_RUNLOG_PROGRESS_H_
