// The paper session's methods in process (session.h), with a policy of the test's own and
// synthetic bars: no checkpoint, no subprocess.
#include "paper/session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/status_test_util.h"
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
  EXPECT_TRUE(IsError(st, Status::Code::kRefused, "its account is"));
}

TEST_F(SessionTest, AnOrderIsBoundedByWhatTheAccountCanPayFor) {
  auto session = Make(Setup(dir_.path() + "/bound"), 0.0f);
  env::IntradayBook book;
  book.cash = 100000.0;
  // Sized at a price of 1e-300 after a close of 100: at most twice the net worth long
  // (2 x 100000 / 100 = 2000 shares), twice the net worth plus max_short_value (the
  // capital, 100000) short: 3000 shares.
  EXPECT_EQ(session->BoundedLots(9007199254740985, 1e-300, 100.0, book), 2000);
  EXPECT_EQ(session->BoundedLots(-9007199254740985, 1e-300, 100.0, book), -3000);
  // An order the environment sizes at a real price passes as it is.
  EXPECT_EQ(session->BoundedLots(990, 101.0, 100.0, book), 990);
  EXPECT_EQ(session->BoundedLots(-900, 101.0, 100.0, book), -900);
  // An order that reduces the position passes, however large the position.
  book.shares = 5000;
  EXPECT_EQ(session->BoundedLots(-4000, 1e-300, 100.0, book), -4000);
  // A flip is bounded on its new side.
  book.shares = 100;
  book.cash = 90000.0;  // worth 100000 at 100
  EXPECT_EQ(session->BoundedLots(-1000000, 1e-300, 100.0, book), -3000 - 100);
}

TEST_F(SessionTest, LiveBarsThatNoMarketMakesAreNamedAndExtendedHoursAreOutside) {
  auto session = Make(Setup(dir_.path() + "/live", "stdin"), 0.0f);
  const size_t n = bars_.size() - 1;
  const FeedBar last{bars_.time[n],
                     bars_.open[n],
                     bars_.high[n],
                     bars_.low[n],
                     bars_.close[n],
                     bars_.volume[n],
                     -1};
  bool outside = true;
  FeedBar ok = last;
  ok.time += 86400 - 300;  // the next day, the minute before the last bar's: inside
  EXPECT_EQ(session->LiveBarProblem(ok, &outside), "");
  EXPECT_FALSE(outside);
  FeedBar tiny = ok;
  tiny.open = tiny.high = tiny.low = tiny.close = 1e-300;
  EXPECT_NE(session->LiveBarProblem(tiny, &outside).find("times off the last close"),
            std::string::npos);
  FeedBar future = ok;
  future.time = 4070908800;  // 2099-01-01
  EXPECT_NE(session->LiveBarProblem(future, &outside).find("ahead of the clock"),
            std::string::npos);
  FeedBar nan = ok;
  nan.close = std::nan("");
  EXPECT_NE(session->LiveBarProblem(nan, &outside), "");
  FeedBar late = last;
  late.time += 30 * 60;  // half an hour after the usual last bar
  EXPECT_EQ(session->LiveBarProblem(late, &outside), "");
  EXPECT_TRUE(outside);
}

TEST_F(SessionTest, AFillForAnOrderTheSessionNeverSentIsRefusedNotBooked) {
  const std::string j = dir_.path() + "/unknown";
  SessionSetup s = Setup(j, "tcp:127.0.0.1:9");
  s.request.broker = "tcp:127.0.0.1:9";
  auto session = Make(std::move(s), 0.0f);
  ASSERT_TRUE(session->OpenJournal().ok());
  Fill f;
  f.client_order_id = "not-mine";
  f.symbol = bars_.symbol;
  f.quantity = 1e12;
  f.price = 100;
  ASSERT_TRUE(session->OnBrokerFill(f, {}).ok());
  EXPECT_EQ(session->book().shares, 0);
  EXPECT_EQ(session->book().cash, 100000.0);
  EXPECT_EQ(session->unknown_fills(), 1);
  for (const auto& l : Lines(j + "/journal.jsonl")) EXPECT_NE(l["type"], "fill") << l.dump();
}

TEST_F(SessionTest, AFailedSessionSaysSoInItsStatus) {
  const std::string j = dir_.path() + "/failed";
  auto session = Make(Setup(j), 0.0f);
  ASSERT_TRUE(session->OpenJournal().ok());
  session->MarkFailed(Status::DataError("the feed broke"));
  const auto st = nlohmann::json::parse(rlt::testing::ReadFile(j + "/status.json"));
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["error"], "the feed broke");
}

}  // namespace
}  // namespace rlt::paper
