// Tests of the hard-negative miner: every negative belongs to its own query, comes from
// the requested ranks of that query's neighbours (checked against a brute-force ranking),
// is never the query's target, and the tables do not depend on the order or timing of
// the batches.
#include "retrieval/miner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "core/rng.h"
#include "core/status_test_util.h"

namespace rlt::retrieval {
namespace {

std::vector<float> UnitRows(Rng& rng, int64_t rows, int d) {
  std::vector<float> v(rows * d);
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0.0;
    for (int e = 0; e < d; ++e) {
      v[r * d + e] = static_cast<float>(rng.Normal());
      ss += v[r * d + e] * v[r * d + e];
    }
    for (int e = 0; e < d; ++e) v[r * d + e] = static_cast<float>(v[r * d + e] / std::sqrt(ss));
  }
  return v;
}

struct Data {
  int d = 16;
  int64_t n = 3000, examples = 200;
  std::vector<float> bank, q;
  std::vector<int64_t> targets;
};

Data MakeData() {
  Data data;
  Rng rng(5);
  data.bank = UnitRows(rng, data.n, data.d);
  data.q = UnitRows(rng, data.examples, data.d);
  data.targets.resize(data.examples);
  for (int64_t i = 0; i < data.examples; ++i) {
    data.targets[i] = static_cast<int64_t>(rng.NextU64() % data.n);
    // Half of the queries sit next to their target, so the target is among the nearest.
    if (i % 2 == 0) std::copy_n(&data.bank[data.targets[i] * data.d], data.d, &data.q[i * data.d]);
  }
  return data;
}

// Mines one epoch with the examples in `order`, batches of 32; returns the table.
std::vector<int64_t> MineOnce(const Data& data, const MiningPhase& phase,
                              const std::vector<int64_t>& order, const MinerOptions& options) {
  auto miner = HardNegativeMiner::Create(data.bank.data(), data.n, data.d, data.examples,
                                         phase.negatives, options);
  EXPECT_TRUE(miner.ok()) << miner.status().message();
  for (size_t start = 0; start < order.size(); start += 32) {
    const int b = static_cast<int>(std::min<size_t>(32, order.size() - start));
    std::vector<int64_t> ex(order.begin() + start, order.begin() + start + b), tg(b);
    std::vector<float> q(b * data.d);
    for (int i = 0; i < b; ++i) {
      tg[i] = data.targets[ex[i]];
      std::copy_n(&data.q[ex[i] * data.d], data.d, &q[i * data.d]);
    }
    (*miner)->Submit(4, phase, ex.data(), tg.data(), q.data(), b);
  }
  (*miner)->EndEpoch();
  std::vector<int64_t> all(data.examples), table(data.examples * phase.negatives);
  std::iota(all.begin(), all.end(), 0);
  (*miner)->Lookup(all.data(), static_cast<int>(data.examples), table.data());
  return table;
}

TEST(HardNegativeMiner, EveryNegativeIsFromItsOwnQuerysRanksAndNeverItsTarget) {
  const Data data = MakeData();
  MiningPhase phase;
  phase.negatives = 5;
  phase.rank_min = 3;
  phase.rank_max = 12;
  std::vector<int64_t> order(data.examples);
  std::iota(order.begin(), order.end(), 0);
  Rng shuffle(9);
  for (int64_t i = data.examples - 1; i > 0; --i) {
    std::swap(order[i], order[shuffle.NextU64() % (i + 1)]);
  }
  MinerOptions options;
  options.queue = 2;  // Submit() must wait for room sometimes
  const std::vector<int64_t> table = MineOnce(data, phase, order, options);
  for (int64_t i = 0; i < data.examples; ++i) {
    // Brute-force ranking of the bank for query i, without its target.
    std::vector<std::pair<double, int64_t>> scored;
    for (int64_t j = 0; j < data.n; ++j) {
      if (j == data.targets[i]) continue;
      double s = 0.0;
      for (int e = 0; e < data.d; ++e)
        s += static_cast<double>(data.q[i * data.d + e]) * data.bank[j * data.d + e];
      scored.push_back({-s, j});
    }
    std::sort(scored.begin(), scored.end());
    std::set<int64_t> allowed;
    for (int64_t r = phase.rank_min; r <= phase.rank_max; ++r) allowed.insert(scored[r - 1].second);
    std::set<int64_t> seen;
    for (int l = 0; l < phase.negatives; ++l) {
      const int64_t row = table[i * phase.negatives + l];
      ASSERT_GE(row, 0) << "example " << i;
      EXPECT_NE(row, data.targets[i]) << "example " << i;
      EXPECT_TRUE(allowed.count(row))
          << "example " << i << " got row " << row << " outside its ranks " << phase.rank_min << "-"
          << phase.rank_max;
      EXPECT_TRUE(seen.insert(row).second) << "example " << i << " repeats row " << row;
    }
  }
  // Another submission order (and other batch boundaries in time) gives the same table.
  std::vector<int64_t> sorted(data.examples);
  std::iota(sorted.begin(), sorted.end(), 0);
  EXPECT_EQ(MineOnce(data, phase, sorted, MinerOptions{}), table);
}

TEST(HardNegativeMiner, ApproximateIndexesNeverServeTheTargetAndTablesSwapPerEpoch) {
  const Data data = MakeData();
  MiningPhase phase;
  phase.negatives = 4;
  phase.rank_min = 1;
  phase.rank_max = 20;
  std::vector<int64_t> order(data.examples);
  std::iota(order.begin(), order.end(), 0);
  for (const char* kind : {"ivf", "hnsw"}) {
    MinerOptions options;
    options.index = kind;
    options.nlist = 16;
    options.nprobe = 4;
    const std::vector<int64_t> table = MineOnce(data, phase, order, options);
    for (int64_t i = 0; i < data.examples; ++i) {
      for (int l = 0; l < phase.negatives; ++l) {
        const int64_t row = table[i * phase.negatives + l];
        EXPECT_NE(row, data.targets[i]) << kind;
        EXPECT_LT(row, data.n) << kind;
      }
    }
  }
  // Before the first EndEpoch() nothing is served; an epoch without submissions clears.
  auto miner =
      HardNegativeMiner::Create(data.bank.data(), data.n, data.d, data.examples, 4, MinerOptions{});
  ASSERT_TRUE(miner.ok());
  std::vector<int64_t> out(4), one = {7};
  (*miner)->Lookup(one.data(), 1, out.data());
  EXPECT_EQ(out, std::vector<int64_t>(4, -1));
  (*miner)->Submit(0, phase, one.data(), &data.targets[7], &data.q[7 * data.d], 1);
  (*miner)->EndEpoch();
  (*miner)->Lookup(one.data(), 1, out.data());
  EXPECT_GE(out[0], 0);
  (*miner)->EndEpoch();
  (*miner)->Lookup(one.data(), 1, out.data());
  EXPECT_EQ(out, std::vector<int64_t>(4, -1));
}

TEST(HardNegativeMiner, RefusesAnUnknownIndex) {
  const Data data = MakeData();
  MinerOptions options;
  options.index = "lsh";
  auto miner =
      HardNegativeMiner::Create(data.bank.data(), data.n, data.d, data.examples, 2, options);
  ASSERT_TRUE(IsError(miner, Status::Code::kInvalidArgument, "[mining] index 'lsh'"));
  EXPECT_NE(miner.status().message().find("expected flat, ivf or hnsw"), std::string::npos);
}

}  // namespace
}  // namespace rlt::retrieval
