// The paper session's methods in process (session.h), with a policy of the test's own and
// synthetic bars: no checkpoint, no subprocess.
#include "paper/session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "market/synth.h"
#include "testing/testing.h"

namespace rlt::paper {
namespace {

// Always the same action: a[0] = `signal` (>= 0.3 buys, <= -0.3 sells), amount 1.
class ConstantPolicy : public SessionPolicy {
 public:
  explicit ConstantPolicy(float signal) : signal_(signal) {}
  void Act(const float*, float* action) override {
    action[0] = signal_;
    action[1] = 1.0f;
  }
  void ResetState() override {}
  bool recurrent() const override { return false; }

 private:
  float signal_;
};

market::Bars SynthBars(int days) {
  market::SynthOptions so;
  so.num_days = days;
  Result<market::MarketData> md = market::GenerateSynthetic(so);
  EXPECT_TRUE(md.ok()) << md.status().message();
  return md->symbols.front();
}

std::vector<nlohmann::json> Lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override { bars_ = SynthBars(6); }

  SessionSetup Setup(const std::string& journal, const std::string& feed = "replay:bars.csv") {
    SessionSetup s;
    s.request.run_dir = "run";
    s.request.feed = feed;
    s.request.journal_dir = journal;
    s.request.fsync = "session";
    s.request.quiet = true;
    s.feed = *ParseFeedSpec(feed);
    s.checkpoint = "run/final";
    s.journal_dir = journal;
    s.data_bars = &bars_;
    s.tz = *market::TimeZone::Load(bars_.timezone);
    return s;
  }
  std::unique_ptr<PaperSession> Make(SessionSetup s, float signal) {
    Result<features::IncrementalFeatures> stream =
        features::IncrementalFeatures::Create("fast22", nullptr);
    EXPECT_TRUE(stream.ok()) << stream.status().message();
    return std::make_unique<PaperSession>(std::move(s), std::move(*stream),
                                          std::make_unique<ConstantPolicy>(signal), nullptr,
                                          nullptr);
  }

  market::Bars bars_;
  rlt::testing::ScratchDir dir_{"rlt_paper_session_"};
};

TEST_F(SessionTest, APolicyThatNeverTradesEndsWithItsCapital) {
  const std::string j = dir_.path() + "/hold";
  auto session = Make(Setup(j), 0.0f);
  ASSERT_TRUE(session->OpenJournal().ok());
  Result<PaperOutcome> out = session->Run();
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->bars, static_cast<int64_t>(bars_.size()));
  EXPECT_GT(out->decisions, 0);
  EXPECT_EQ(out->fills, 0);
  EXPECT_EQ(out->final_net_worth, 100000.0);
  const auto lines = Lines(j + "/journal.jsonl");
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front()["type"], "start");
  EXPECT_EQ(lines.back()["type"], "end");
}

TEST_F(SessionTest, ALongPolicyPaysForEveryBuyAndIsFlatAtEachClose) {
  const std::string j = dir_.path() + "/long";
  auto session = Make(Setup(j), 1.0f);
  ASSERT_TRUE(session->OpenJournal().ok());
  Result<PaperOutcome> out = session->Run();
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_GT(out->fills, 0);
  EXPECT_EQ(session->book().shares, 0);  // flattened at the last close
  // Every buy is paid from the cash held before it (the cash after it is not negative) and
  // each fill's accounting holds: cash moves by quantity x price plus the cost.
  double cash = 100000.0, position = 0;
  for (const auto& l : Lines(j + "/journal.jsonl")) {
    if (l["type"] != "fill") continue;
    const double q = l["quantity"].get<double>() * (l["side"] == "BUY" ? 1 : -1);
    const double price = l["price"].get<double>(), cost = l["cost"].get<double>();
    cash -= q * price + cost;
    position += q;
    EXPECT_NEAR(l["cash_after"].get<double>(), cash, 1e-9 * 100000.0) << l.dump();
    EXPECT_EQ(l["position_after"].get<double>(), position) << l.dump();
    EXPECT_GE(l["cash_after"].get<double>(), 0.0) << l.dump();
  }
  EXPECT_EQ(position, 0.0);
  EXPECT_NEAR(out->final_net_worth, cash, 1e-9 * 100000.0);
}

TEST_F(SessionTest, ARestartOfAnotherSessionsJournalIsRefused) {
  const std::string j = dir_.path() + "/other";
  {
    auto session = Make(Setup(j), 0.0f);
    ASSERT_TRUE(session->OpenJournal().ok());
  }
  SessionSetup s = Setup(j);
  s.request.account = "someone-else";
  auto again = Make(std::move(s), 0.0f);
  const Status st = again->OpenJournal();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("account"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace rlt::paper
