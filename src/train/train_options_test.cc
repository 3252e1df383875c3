// Tests of BuildEnvSetup's input checks: [env] errors with file:line and the
// nearest key, the time-zone note for naive timestamps, [data] session, daily bars in the
// intraday environment. Fixtures are small bar files written here; expected counts follow
// from how they are written (e.g. 09:30..15:59 is 390 one-minute bars).
#include "train/train_options.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/status_test_util.h"
#include "testing/testing.h"

namespace rlt::train {
namespace {

class EnvSetupTest : public ::testing::Test {
 protected:
  // One-minute bars 04:00..20:00 (naive local times) on `days` July 2025 weekdays from
  // July 1; a smooth wave so that every feature has variance.
  std::string WriteMinuteBars(const std::string& name, int days) {
    std::string text = "date,open,high,low,close,volume\n";
    int written = 0;
    for (int day = 1; written < days; ++day) {
      const int weekday = (day + 1) % 7;  // 2025-07-01 is a Tuesday (2)
      if (weekday == 0 || weekday == 6) continue;
      ++written;
      for (int m = 4 * 60; m <= 20 * 60; ++m) {
        const double p = 100.0 + 2.0 * std::sin((day * 1000 + m) / 37.0) + 0.01 * (m % 7);
        text += fmt::format("2025-07-{:02} {:02}:{:02}:00,{},{},{},{},{}\n", day, m / 60, m % 60, p,
                            p + 0.05, p - 0.05, p + 0.01, 1000 + m % 13);
      }
    }
    const std::string path = dir_ / name;
    rlt::testing::WriteFile(path, text);
    return path;
  }
  Result<config::Config> Config(const std::string& text) {
    const std::string path = dir_ / "cfg.toml";
    rlt::testing::WriteFile(path, text);
    return config::Config::LoadFile(path);
  }
  rlt::testing::ScratchDir dir_{"rlt_env_setup_"};
};

std::string MinuteConfig(const std::string& file, const std::string& data_extra) {
  return fmt::format(
      "[data]\nsource = \"file\"\nfile = \"{}\"\n{}\n[split]\ntrain = "
      "\"2025-07-01:2025-07-03\"\n[env]\nid = \"intraday\"\nnlags = 2\n",
      file, data_extra);
}

// [env] keys are checked where the config is read, so errors name file:line, and the
// suggestion for a mistyped key includes the keys BuildEnvSetup handles (num_envs, id).
TEST_F(EnvSetupTest, EnvKeyErrorsNameFileLineAndTheNearestKey) {
  for (const auto& [typo, meant] : {std::pair<std::string, std::string>{"num_env", "num_envs"},
                                    {"cost_rat", "cost_rate"},
                                    {"intial_capital", "initial_capital"}}) {
    Result<config::Config> c = Config("[env]\nid = \"intraday\"\nnlags = 3\n" + typo + " = 2\n");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Result<EnvSetup> s = BuildEnvSetup(*c);
    ASSERT_TRUE(
        IsError(s, Status::Code::kInvalidArgument, "cfg.toml:4: [env] unknown key '" + typo + "'"))
        << typo;
    const std::string& m = s.status().message();
    EXPECT_NE(m.find("did you mean '" + meant + "'?"), std::string::npos) << m;
  }
  // The episodic environments too (their [env] has no market data to load).
  Result<config::Config> c = Config("[env]\nid = \"cartpole\"\nnum_env = 2\n");
  ASSERT_TRUE(c.ok());
  Result<EnvSetup> s = BuildEnvSetup(*c);
  ASSERT_TRUE(
      IsError(s, Status::Code::kInvalidArgument, "cfg.toml:3: [env] unknown key 'num_env'"));
  EXPECT_NE(s.status().message().find("did you mean 'num_envs'?"), std::string::npos);
}

TEST_F(EnvSetupTest, EnvBadValuesNameFileLineAndEveryProblem) {
  Result<config::Config> c =
      Config("[env]\nid = \"intraday\"\nnum_envs = 0\nnlags = \"many\"\ncost_rate = 0.001\n");
  ASSERT_TRUE(c.ok());
  Result<EnvSetup> s = BuildEnvSetup(*c);
  ASSERT_TRUE(
      IsError(s, Status::Code::kInvalidArgument, "cfg.toml:3: [env] num_envs = 0: must be >= 1"));
  const std::string& m = s.status().message();
  EXPECT_NE(m.find("cfg.toml:4: [env] "), std::string::npos) << m;
  EXPECT_NE(m.find("nlags"), std::string::npos) << m;
  EXPECT_EQ(m.find("cfg.toml:5"), std::string::npos) << m;  // cost_rate is fine
}

// Checks the environment makes itself (ranges, an unknown id) name the key's file:line too.
TEST_F(EnvSetupTest, EnvironmentChecksNameTheKeysFileLine) {
  Result<config::Config> c = Config("[env]\nid = \"cartpole\"\nmax_episode_steps = 0\n");
  ASSERT_TRUE(c.ok());
  Result<EnvSetup> s = BuildEnvSetup(*c);
  ASSERT_TRUE(IsError(s, Status::Code::kInvalidArgument,
                      "cfg.toml:3: [env] max_episode_steps must be >= 1"));
  c = Config("[run]\nseed = 1\n[env]\nid = \"cartpol\"\n");
  ASSERT_TRUE(c.ok());
  s = BuildEnvSetup(*c);
  ASSERT_TRUE(
      IsError(s, Status::Code::kInvalidArgument,
              "cfg.toml:4: [env] unknown environment id 'cartpol'; did you mean 'cartpole'?"));
  const std::string file = WriteMinuteBars("lags.csv", 3);
  c = Config(MinuteConfig(file, "timezone = \"UTC\"") + "initial_capital = -5\n");
  ASSERT_TRUE(c.ok());
  s = BuildEnvSetup(*c);
  ASSERT_TRUE(
      IsError(s, Status::Code::kInvalidArgument, "cfg.toml:10: [env] initial_capital must be > 0"));
}

// Naive timestamps read in a zone nobody chose are noted once on stderr.
TEST_F(EnvSetupTest, NaiveTimestampsInAnUngivenZoneAreNotedOnceOnStderr) {
  const std::string file = WriteMinuteBars("naive.csv", 3);
  Result<config::Config> c = Config(MinuteConfig(file, ""));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ::testing::internal::CaptureStderr();
  Result<EnvSetup> a = BuildEnvSetup(*c);
  Result<EnvSetup> b = BuildEnvSetup(*c);  // e.g. a trial setup: no second note
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const std::string note = "note: " + file +
                           " has no UTC offsets; timestamps read as UTC (set [data] timezone "
                           "or --timezone)";
  ASSERT_NE(err.find(note), std::string::npos) << err;
  EXPECT_EQ(err.find(note), err.rfind(note)) << err;
  // Given explicitly: no note.
  const std::string other = WriteMinuteBars("given.csv", 3);
  Result<config::Config> given = Config(MinuteConfig(other, "timezone = \"UTC\""));
  ASSERT_TRUE(given.ok());
  ::testing::internal::CaptureStderr();
  Result<EnvSetup> d = BuildEnvSetup(*given);
  EXPECT_EQ(::testing::internal::GetCapturedStderr().find("no UTC offsets"), std::string::npos);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
}

// [data] session keeps the regular session: 09:30..15:59 is 390 one-minute bars a day.
TEST_F(EnvSetupTest, DataSessionKeepsTheRegularSessionBars) {
  const std::string file = WriteMinuteBars("spy.csv", 3);
  Result<config::Config> c =
      Config(MinuteConfig(file, "timezone = \"America/New_York\"\nsession = \"09:30-16:00\""));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Result<EnvSetup> s = BuildEnvSetup(*c);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const market::Bars& bars = s->context.market->bars;
  ASSERT_EQ(bars.sessions.size(), 3u);
  for (const market::Session& session : bars.sessions) EXPECT_EQ(session.size(), 390);
  EXPECT_EQ(s->data.session, "09:30-16:00");

  Result<config::Config> bad = Config(MinuteConfig(file, "session = \"16:00-09:30\""));
  ASSERT_TRUE(bad.ok());
  Result<EnvSetup> b = BuildEnvSetup(*bad);
  ASSERT_TRUE(
      IsError(b, Status::Code::kInvalidArgument, "cfg.toml:4: [data] session = '16:00-09:30'"));
  EXPECT_NE(b.status().message().find("open must be before the close"), std::string::npos);
}

// Daily bars in the intraday environment are named as such.
TEST_F(EnvSetupTest, DailyBarsInTheIntradayEnvironmentAreNamedPlainly) {
  std::string text = "date,open,high,low,close,volume\n";
  for (int d = 1; d <= 28; ++d) {
    const double p = 100 + d % 5;
    text += fmt::format("2024-02-{:02},{},{},{},{},1000\n", d, p, p + 1, p - 1, p);
  }
  const std::string file = dir_ / "daily.csv";
  rlt::testing::WriteFile(file, text);
  Result<config::Config> c = Config(
      fmt::format("[data]\nsource = \"file\"\nfile = \"{}\"\ntimezone = \"UTC\"\n[split]\ntrain = "
                  "\"2024-02-01:2024-02-28\"\n[env]\nid = \"intraday\"\n",
                  file));
  ASSERT_TRUE(c.ok());
  Result<EnvSetup> s = BuildEnvSetup(*c);
  ASSERT_TRUE(
      IsError(s, Status::Code::kInvalidArgument, file + ": each of its 28 sessions has one bar"));
  const std::string& m = s.status().message();
  EXPECT_NE(m.find("needs intraday bars"), std::string::npos) << m;
}

}  // namespace
}  // namespace rlt::train
