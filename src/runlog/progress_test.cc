// Tests for runlog/progress: ETA formatting, the line text, and the rate limits of the
// terminal, plain and quiet modes with an injected clock and stream.
#include "runlog/progress.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

namespace rlt::runlog {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// A reporter printing into `out` whose clock reads `*now`.
ProgressOptions Options(ProgressOptions::Mode mode, std::ostringstream* out, double* now) {
  ProgressOptions options;
  options.mode = mode;
  options.out = out;
  options.clock = [now] { return *now; };
  return options;
}

TEST(FormatEta, WritesHoursMinutesSecondsRoundedUp) {
  EXPECT_EQ(FormatEta(0), "0:00:00");
  EXPECT_EQ(FormatEta(0.2), "0:00:01");
  EXPECT_EQ(FormatEta(59), "0:00:59");
  EXPECT_EQ(FormatEta(61), "0:01:01");
  EXPECT_EQ(FormatEta(3600 + 2 * 60 + 3), "1:02:03");
  EXPECT_EQ(FormatEta(100 * 3600), "100:00:00");
}

TEST(FormatEta, WritesDashesWhenUnknown) {
  EXPECT_EQ(FormatEta(-1), "-:--:--");
  EXPECT_EQ(FormatEta(kNan), "-:--:--");
  EXPECT_EQ(FormatEta(std::numeric_limits<double>::infinity()), "-:--:--");
}

TEST(FormatWithThousands, GroupsDigitsByThree) {
  EXPECT_EQ(FormatWithThousands(0), "0");
  EXPECT_EQ(FormatWithThousands(999), "999");
  EXPECT_EQ(FormatWithThousands(1000), "1,000");
  EXPECT_EQ(FormatWithThousands(1234567), "1,234,567");
  EXPECT_EQ(FormatWithThousands(-1234), "-1,234");
  EXPECT_EQ(FormatWithThousands(std::numeric_limits<int64_t>::min()), "-9,223,372,036,854,775,808");
}

TEST(ProgressReporter, LineShowsStepsPercentFpsEtaAndReward) {
  // 1,000 of 10,000 steps at 100 fps: 9,000 steps left = 90 s.
  EXPECT_EQ(ProgressReporter::FormatLine(1000, 10000, 100.0, 1.5, "kl 0.01"),
            "step 1,000/10,000 (10.0%) | 100 fps | ETA 0:01:30 | ep_rew_mean 1.5 | kl 0.01");
  EXPECT_EQ(ProgressReporter::FormatLine(5, 0, 0.0, kNan, ""), "step 5 | ? fps | ep_rew_mean n/a");
  EXPECT_EQ(ProgressReporter::FormatLine(0, 100, 0.0, -2.0, ""),
            "step 0/100 (0.0%) | ? fps | ETA -:--:-- | ep_rew_mean -2");
}

TEST(ProgressReporter, TerminalRewritesOneLineAtMostOncePerSecond) {
  std::ostringstream out;
  double now = 100.0;
  ProgressReporter reporter(Options(ProgressOptions::Mode::kTerminal, &out, &now));
  reporter.Update(10, 100, 10.0, 1.0);  // first: printed
  now = 100.5;
  reporter.Update(20, 100, 10.0, 1.0);  // 0.5 s later: held back
  now = 101.0;
  reporter.Update(30, 100, 10.0, 1.0);  // 1 s after the first print: printed
  reporter.Finish();
  const std::string expected = std::string("\r") +
                               ProgressReporter::FormatLine(10, 100, 10.0, 1.0, "") + "\r" +
                               ProgressReporter::FormatLine(30, 100, 10.0, 1.0, "") + "\n";
  EXPECT_EQ(out.str(), expected);
}

TEST(ProgressReporter, TerminalPadsAShorterLineToEraseTheOldOne) {
  std::ostringstream out;
  double now = 0;
  ProgressReporter reporter(Options(ProgressOptions::Mode::kTerminal, &out, &now));
  reporter.Update(1, 10, 1.0, 0.0, "a long extra text");
  now = 5;
  reporter.Update(2, 10, 1.0, 0.0);
  const std::string first = ProgressReporter::FormatLine(1, 10, 1.0, 0.0, "a long extra text");
  const std::string second = ProgressReporter::FormatLine(2, 10, 1.0, 0.0, "");
  EXPECT_EQ(out.str(), std::string("\r") + first + "\r" + second +
                           std::string(first.size() - second.size(), ' '));
}

TEST(ProgressReporter, FinishPrintsTheLastHeldBackUpdate) {
  std::ostringstream out;
  double now = 0;
  ProgressReporter reporter(Options(ProgressOptions::Mode::kTerminal, &out, &now));
  reporter.Update(1, 2, 1.0, 0.0);
  now = 0.1;
  reporter.Update(2, 2, 1.0, 0.0);  // held back, but it is the final state
  reporter.Finish();
  reporter.Finish();  // idempotent
  const std::string expected = std::string("\r") +
                               ProgressReporter::FormatLine(1, 2, 1.0, 0.0, "") + "\r" +
                               ProgressReporter::FormatLine(2, 2, 1.0, 0.0, "") + "\n";
  EXPECT_EQ(out.str(), expected);
}

TEST(ProgressReporter, PlainPrintsWholeLinesEveryTenSecondsByDefault) {
  std::ostringstream out;
  double now = 0;
  ProgressReporter reporter(Options(ProgressOptions::Mode::kPlain, &out, &now));
  for (int second = 0; second <= 25; ++second) {  // an update every second
    now = second;
    reporter.Update(second, 100, 1.0, 0.0);
  }
  reporter.Finish();  // prints step 25, held back since the print at 20
  std::string expected;
  for (int step : {0, 10, 20, 25}) {
    expected += ProgressReporter::FormatLine(step, 100, 1.0, 0.0, "") + "\n";
  }
  EXPECT_EQ(out.str(), expected);
  EXPECT_EQ(out.str().find('\r'), std::string::npos);
}

TEST(ProgressReporter, QuietPrintsNothing) {
  std::ostringstream out;
  double now = 0;
  ProgressReporter reporter(Options(ProgressOptions::Mode::kQuiet, &out, &now));
  for (int i = 0; i < 30; ++i) {
    now = 100.0 * i;
    reporter.Update(i, 30, 1.0, 0.0);
  }
  reporter.Finish();
  EXPECT_EQ(out.str(), "");
}

TEST(ProgressReporter, AutoModeTreatsAnInjectedStreamAsNotATerminal) {
  std::ostringstream out;
  double now = 0;
  ProgressReporter reporter(Options(ProgressOptions::Mode::kAuto, &out, &now));
  EXPECT_EQ(reporter.mode(), ProgressOptions::Mode::kPlain);
}

}  // namespace
}  // namespace rlt::runlog
