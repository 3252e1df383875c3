// Tests of datasets of several symbols (one policy trained on several symbols): each
// symbol's part is the one-symbol dataset of its bars (features and normaliser computed
// by the one-symbol path, the oracle here), the pooled normaliser is the statistics of
// every symbol's training rows taken together (computed by hand), the one-hot id columns,
// and training episodes that never leave the symbol they started in.
#include "env/market_dataset.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/status_test_util.h"
#include "env/envs/intraday.h"
#include "features/presets.h"
#include "market/synth.h"

namespace rlt::env {
namespace {

#define ASSERT_OK(status) ASSERT_TRUE((status).ok()) << (status).ToString()

constexpr int kSymbols = 3;

std::vector<market::Bars> ThreeSymbols() {
  market::SynthOptions so;
  so.num_days = 30;
  so.num_symbols = kSymbols;
  so.seed = 21;
  Result<market::MarketData> md = market::GenerateSynthetic(so);
  EXPECT_TRUE(md.ok()) << md.status().ToString();
  return md->symbols;
}

const DateRange kTrain{20230102, 20230127};

DatasetOptions Options() {
  DatasetOptions o;
  o.preset = "scaled";
  return o;
}

TEST(SymbolsDataset, EachPartIsTheOneSymbolDatasetOfItsBars) {
  const std::vector<market::Bars> symbols = ThreeSymbols();
  Result<std::shared_ptr<const MarketDataset>> all =
      PrepareSymbolsDataset(symbols, Options(), kTrain, /*by_symbol=*/true, /*symbol_id=*/false);
  ASSERT_OK(all.status());
  const MarketDataset& d = **all;
  ASSERT_EQ(d.parts.size(), static_cast<size_t>(kSymbols));
  for (int i = 0; i < kSymbols; ++i) {
    Result<std::shared_ptr<const MarketDataset>> one =
        PrepareMarketDataset(symbols[i], Options(), kTrain);
    ASSERT_OK(one.status());
    const MarketDataset& o = **one;
    const SymbolPart& p = d.parts[i];
    EXPECT_EQ(p.symbol, symbols[i].symbol);
    ASSERT_EQ(p.end_bar - p.first_bar, static_cast<int64_t>(o.bars.size()));
    ASSERT_EQ(p.end_session - p.first_session, static_cast<int32_t>(o.bars.sessions.size()));
    EXPECT_EQ(p.first_valid - p.first_bar, o.features.first_valid);
    EXPECT_EQ(d.normalizers[i].ToJson(), o.normalizer.ToJson());
    ASSERT_EQ(d.features.cols, o.features.cols);
    for (int64_t t = o.features.first_valid; t < o.features.rows; ++t) {
      for (int64_t c = 0; c < o.features.cols; ++c) {
        ASSERT_EQ(d.features.at(p.first_bar + t, c), o.features.at(t, c)) << i << " " << t;
      }
      EXPECT_EQ(d.bars.close[p.first_bar + t], o.bars.close[t]);
    }
    for (int32_t s = p.first_session; s < p.end_session; ++s) {
      EXPECT_EQ(d.PartOfSession(s), i);
      EXPECT_EQ(d.SymbolOfSession(s), symbols[i].symbol);
      const market::Session& a = d.bars.sessions[s];
      const market::Session& b = o.bars.sessions[s - p.first_session];
      EXPECT_EQ(a.date, b.date);
      EXPECT_EQ(a.begin - p.first_bar, b.begin);
      EXPECT_EQ(d.bars.session[a.begin], s);
    }
  }
}

// z-score pooled over every symbol's training rows: the mean and standard deviation of
// the raw features of those rows, computed here in long double.
TEST(SymbolsDataset, APooledNormaliserHasTheStatisticsOfEverySymbolsTrainingRows) {
  const std::vector<market::Bars> symbols = ThreeSymbols();
  Result<std::shared_ptr<const MarketDataset>> all =
      PrepareSymbolsDataset(symbols, Options(), kTrain, /*by_symbol=*/false, /*symbol_id=*/false);
  ASSERT_OK(all.status());
  ASSERT_EQ((*all)->normalizers.size(), 1u);
  const features::Normalizer& n = (*all)->normalizers.front();
  std::vector<long double> sum, sum2;
  long double rows = 0;
  for (const market::Bars& b : symbols) {
    Result<features::FeatureMatrix> fm = features::ComputeFeatures(b, "scaled");
    ASSERT_OK(fm.status());
    sum.resize(fm->cols, 0), sum2.resize(fm->cols, 0);
    for (const market::Session& s : b.sessions) {
      if (!kTrain.Contains(s.date)) continue;
      for (int64_t t = std::max<int64_t>(s.begin, fm->first_valid); t < s.end; ++t) {
        for (int64_t c = 0; c < fm->cols; ++c) {
          sum[c] += fm->at(t, c);
          sum2[c] += static_cast<long double>(fm->at(t, c)) * fm->at(t, c);
        }
        rows += 1;
      }
    }
  }
  ASSERT_EQ(n.mean().size(), sum.size());
  for (size_t c = 0; c < sum.size(); ++c) {
    const long double mean = sum[c] / rows;
    const long double var = sum2[c] / rows - mean * mean;
    const double scale = std::sqrt(static_cast<double>(sum2[c] / rows));
    EXPECT_NEAR(n.mean()[c], static_cast<double>(mean), 1e-6 * scale + 1e-300) << c;
    // Population or sample standard deviation: they differ by a factor of 1 + O(1/rows).
    EXPECT_NEAR(n.std()[c], std::sqrt(static_cast<double>(var)), 1e-3 * scale + 1e-300) << c;
  }
}

TEST(SymbolsDataset, TheSymbolIdIsAOneHotAfterTheFeatures) {
  const std::vector<market::Bars> symbols = ThreeSymbols();
  Result<std::shared_ptr<const MarketDataset>> plain =
      PrepareSymbolsDataset(symbols, Options(), kTrain, true, false);
  Result<std::shared_ptr<const MarketDataset>> with_id =
      PrepareSymbolsDataset(symbols, Options(), kTrain, true, true);
  ASSERT_OK(plain.status());
  ASSERT_OK(with_id.status());
  const MarketDataset &a = **plain, &b = **with_id;
  ASSERT_EQ(b.features.cols, a.features.cols + kSymbols);
  EXPECT_EQ(b.features.names.back(), "symbol=" + symbols.back().symbol);
  for (int i = 0; i < kSymbols; ++i) {
    const SymbolPart& p = b.parts[i];
    for (int64_t t = p.first_valid; t < p.end_bar; t += 37) {
      for (int64_t c = 0; c < a.features.cols; ++c) {
        ASSERT_EQ(b.features.at(t, c), a.features.at(t, c));
      }
      for (int k = 0; k < kSymbols; ++k) {
        EXPECT_EQ(b.features.at(t, a.features.cols + k), k == i ? 1.0f : 0.0f);
      }
    }
  }
  // One symbol's dataset with its id appended, as evaluation builds it.
  Result<std::shared_ptr<const MarketDataset>> one =
      PrepareMarketDataset(symbols[1], Options(), kTrain);
  ASSERT_OK(one.status());
  std::vector<std::string> names;
  for (const market::Bars& s : symbols) names.push_back(s.symbol);
  const std::shared_ptr<const MarketDataset> tagged = WithSymbolId(*one, names, 1);
  const SymbolPart& p = b.parts[1];
  for (int64_t t = (*one)->features.first_valid; t < (*one)->features.rows; t += 29) {
    for (int64_t c = 0; c < b.features.cols; ++c) {
      ASSERT_EQ(tagged->features.at(t, c), b.features.at(p.first_bar + t, c));
    }
  }
}

// Training draws a (symbol, session) and an episode of several sessions never moves on to
// another symbol's sessions; an evaluation walk goes through every symbol's.
TEST(SymbolsDataset, TrainingEpisodesStayWithTheirSymbol) {
  Result<std::shared_ptr<const MarketDataset>> all =
      PrepareSymbolsDataset(ThreeSymbols(), Options(), kTrain, true, false);
  ASSERT_OK(all.status());
  const MarketDataset& d = **all;
  IntradayOptions o;
  o.episode_sessions = 4;
  o.action_mode = "target_position";
  Result<std::unique_ptr<IntradayStockEnv>> env = IntradayStockEnv::Create(*all, o);
  ASSERT_OK(env.status());
  (*env)->Seed(5);
  const EnvSpec& spec = (*env)->spec();
  std::vector<float> obs(spec.obs_dim);
  std::vector<double> info(spec.info_names.size());
  std::vector<int> episodes_of(d.parts.size(), 0);
  int short_episodes = 0;
  for (int episode = 0; episode < 200; ++episode) {
    (*env)->Reset(obs.data(), info.data());
    const int32_t part = d.PartOfSession(d.bars.session[static_cast<int32_t>(info[kInfoBar])]);
    ++episodes_of[part];
    int sessions = 1;
    int32_t date = static_cast<int32_t>(info[kInfoSessionDate]);
    for (int step = 0;; ++step) {
      const float action = static_cast<float>(std::sin(0.3 * step));
      const StepResult r = (*env)->Step(&action, obs.data(), info.data());
      const auto bar = static_cast<int32_t>(info[kInfoBar]);
      ASSERT_EQ(d.PartOfSession(d.bars.session[bar]), part) << "episode " << episode;
      if (static_cast<int32_t>(info[kInfoSessionDate]) != date) {
        date = static_cast<int32_t>(info[kInfoSessionDate]);
        ++sessions;
      }
      if (r.terminated || r.truncated) break;
    }
    short_episodes += sessions < o.episode_sessions;
  }
  for (int count : episodes_of) EXPECT_GT(count, 30);  // every symbol is drawn
  EXPECT_GT(short_episodes, 0);  // episodes that reached their symbol's last session
  // Sequential (evaluation) walks every eligible session of every symbol in order.
  o.sequential = true;
  Result<std::unique_ptr<IntradayStockEnv>> walk = IntradayStockEnv::Create(*all, o);
  ASSERT_OK(walk.status());
  (*walk)->Reset(obs.data(), info.data());
  std::vector<int32_t> parts_seen = {
      d.PartOfSession(d.bars.session[static_cast<int32_t>(info[kInfoBar])])};
  for (;;) {
    const float action = 0.5f;
    const StepResult r = (*walk)->Step(&action, obs.data(), info.data());
    if (r.terminated || r.truncated) break;
    const int32_t part = d.PartOfSession(d.bars.session[static_cast<int32_t>(info[kInfoBar])]);
    if (part != parts_seen.back()) parts_seen.push_back(part);
  }
  EXPECT_EQ(parts_seen, (std::vector<int32_t>{0, 1, 2}));
}

TEST(SymbolsDataset, ASymbolWithoutTrainingRowsIsNamed) {
  std::vector<market::Bars> symbols = ThreeSymbols();
  // The third symbol's bars start after the training range.
  market::SynthOptions so;
  so.num_days = 10;
  so.start_date = 20230301;
  so.seed = 3;
  Result<market::MarketData> late = market::GenerateSynthetic(so);
  ASSERT_OK(late.status());
  symbols[2] = late->symbols.front();
  symbols[2].symbol = "LATE";
  Result<std::shared_ptr<const MarketDataset>> all =
      PrepareSymbolsDataset(symbols, Options(), kTrain, true, false);
  EXPECT_TRUE(IsError(all, Status::Code::kInvalidArgument, "of symbol 'LATE'"));
}

}  // namespace
}  // namespace rlt::env
