// Tests of the retrieval trainer's parts that need no LibTorch: the mining schedule, the
// InfoNCE loss (against a double-precision reference and closed forms), the MLP document
// tower (against central differences of a double-precision forward), the synthetic
// dataset's structure, and exact ranks, Recall@k and MRR against plain loops (NaN scores
// count against the model).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/rng.h"
#include "core/status_test_util.h"
#include "retrieval/doc_tower.h"
#include "retrieval/infonce.h"
#include "retrieval/mining_schedule.h"
#include "retrieval/recall.h"
#include "retrieval/synth.h"

namespace rlt::retrieval {
namespace {

TEST(MiningSchedule, ParsesTheIssuesExampleIntoPhases) {
  auto s = MiningSchedule::Parse("0-2:none,3-30:8@20-200");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->At(0).negatives, 0);
  EXPECT_EQ(s->At(2).negatives, 0);
  const MiningPhase p = s->At(3);
  EXPECT_EQ(p.negatives, 8);
  EXPECT_EQ(p.rank_min, 20);
  EXPECT_EQ(p.rank_max, 200);
  EXPECT_EQ(s->At(30).negatives, 8);
  EXPECT_EQ(s->At(31).negatives, 0);  // not covered: no mining
  EXPECT_EQ(s->max_negatives(), 8);
  EXPECT_EQ(s->max_rank(), 200);
  auto spaced = MiningSchedule::Parse(" 5 : 2@1-4 , 0-4: none ");
  ASSERT_TRUE(spaced.ok()) << spaced.status().message();
  EXPECT_EQ(spaced->phases().front().first_epoch, 0);  // sorted
  EXPECT_EQ(spaced->At(5).negatives, 2);
  auto empty = MiningSchedule::Parse("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->max_negatives(), 0);
}

TEST(MiningSchedule, SyntaxErrorsNameThePosition) {
  const std::map<std::string, std::string> cases = {
      {"0-2:nne", "at character 5: expected 'none' or N@cmin-cmax"},
      {"3-30:8@20", "at character 10: expected '-' between the neighbour ranks"},
      {"3-30:8 20-200", "at character 8: expected '@'"},
      {"0-2 none", "at character 5: expected ':'"},
      {"0-2:none;3-4:none", "at character 9: expected ',' or the end"},
      {"-2:none", "at character 1: expected an epoch"},
      {"0-2:none,", "at character 10: expected an epoch, found the end"},
      {"3-1:none", "at character 1: the range 3-1 ends before it starts"},
      {"0-2:none,2-4:2@1-5", "at character 10: epochs 2-4 overlap the entry 0-2"},
      {"0-1:300@1-10", "300 negatives cannot be drawn from the 10 ranks 1-10"},
      {"0-1:2@0-10", "neighbour ranks start at 1"},
      {"0-1:2@9-3", "the rank range 9-3 ends before it starts"},
      {"0-1:0@1-3", "at least 1"},
  };
  for (const auto& [text, expected] : cases) {
    auto s = MiningSchedule::Parse(text);
    ASSERT_TRUE(IsError(s, Status::Code::kInvalidArgument, expected)) << text;
    EXPECT_NE(s.status().message().find("'" + text + "'"), std::string::npos);
  }
}

TEST(MiningSchedule, RanksBeyondTheBankAreRefused) {
  auto s = MiningSchedule::Parse("0-2:none,3-30:8@20-200");
  ASSERT_TRUE(s.ok());
  const Status small = s->CheckAgainstBank(200, "bank.npz");
  ASSERT_TRUE(IsError(small, Status::Code::kInvalidArgument, "rank 200"));
  EXPECT_NE(small.message().find("bank.npz"), std::string::npos);
  EXPECT_TRUE(s->CheckAgainstBank(201, "bank.npz").ok());
}

std::vector<float> RandomUnitRows(Rng& rng, int rows, int d) {
  std::vector<float> v(static_cast<size_t>(rows) * d);
  for (int r = 0; r < rows; ++r) {
    double ss = 0.0;
    for (int e = 0; e < d; ++e) {
      v[r * d + e] = static_cast<float>(rng.Normal());
      ss += v[r * d + e] * v[r * d + e];
    }
    for (int e = 0; e < d; ++e) v[r * d + e] = static_cast<float>(v[r * d + e] / std::sqrt(ss));
  }
  return v;
}

TEST(InfoNce, ClosedFormsForTinyBatches) {
  // One query equal to its target, no negatives: the loss is 0 and so is the gradient.
  const float q[2] = {1.0f, 0.0f}, y2[4] = {1.0f, 0.0f, 0.0f, 1.0f};
  const int64_t ids[2] = {0, 1};
  InfoNce loss(InfoNceOptions{0.05, 0.0, 1.0});
  InfoNceBatch bt;
  bt.b = 1;
  bt.d = 2;
  bt.q = q;
  bt.y = y2;
  bt.target_ids = ids;
  float dq[4];
  EXPECT_NEAR(loss.Compute(bt, 1.0, dq).loss, 0.0, 1e-12);
  // Two queries equal to their orthogonal targets: loss = log(1 + exp(-1/tau)) each.
  const float q2[4] = {1.0f, 0.0f, 0.0f, 1.0f};
  bt.b = 2;
  bt.q = q2;
  const InfoNceStats s = loss.Compute(bt, 1.0, dq);
  EXPECT_NEAR(s.loss, std::log1p(std::exp(-1.0 / 0.05)), 1e-12);
  EXPECT_EQ(s.accuracy, 1.0);
  // The same targets (same bank row) are not negatives of each other: loss 0 again.
  const int64_t same[2] = {7, 7};
  bt.target_ids = same;
  EXPECT_NEAR(loss.Compute(bt, 1.0, dq).loss, 0.0, 1e-12);
}

TEST(InfoNce, MatchesTheReferenceWithMasksMemoryHardNegativesAndMargin) {
  for (double margin : {0.0, 0.5}) {
    Rng rng(3);
    const int b = 6, d = 16, m = 40, nh = 3;
    std::vector<float> q = RandomUnitRows(rng, b, d), y = RandomUnitRows(rng, b, d);
    std::vector<float> mem = RandomUnitRows(rng, m, d), hard = RandomUnitRows(rng, b * nh, d);
    std::vector<int64_t> ids = {10, 11, 12, 10, 14, 15};  // queries 0 and 3 share a target
    std::vector<int64_t> mem_ids(m);
    for (int k = 0; k < m; ++k) mem_ids[k] = 100 + k;
    mem_ids[5] = 11;  // query 1's own target sits in the memory bank
    mem_ids[9] = 14;
    std::vector<int64_t> hard_ids(b * nh);
    for (int i = 0; i < b * nh; ++i) hard_ids[i] = 200 + i;
    hard_ids[2] = -1;  // an unused slot
    hard_ids[4] = 11;  // query 1's own target offered as a negative: masked
    InfoNceBatch bt{b,          d,           q.data(),       y.data(),
                    ids.data(), m,           mem.data(),     mem_ids.data(),
                    nh,         hard.data(), hard_ids.data()};
    InfoNceOptions options{0.1, margin, 0.7};
    InfoNce loss(options);
    std::vector<float> dq(b * d), dy(b * d), dh(b * nh * d);
    const InfoNceStats s = loss.Compute(bt, 0.25, dq.data(), dy.data(), dh.data());
    std::vector<double> ref(b * d), ref_y(b * d), ref_h(b * nh * d);
    const double expected = InfoNceReference(options, bt, ref.data(), ref_y.data(), ref_h.data());
    EXPECT_NEAR(s.loss, expected, 1e-5 * std::abs(expected)) << "margin " << margin;
    auto expect_grad = [](const std::vector<float>& ours, const std::vector<double>& reference,
                          const char* what) {
      for (size_t i = 0; i < ours.size(); ++i) {
        EXPECT_NEAR(ours[i], 0.25 * reference[i], 1e-5 + 1e-4 * std::abs(reference[i]))
            << what << "[" << i << "]";
      }
    };
    expect_grad(dq, ref, "d_q");
    expect_grad(dy, ref_y, "d_y");
    expect_grad(dh, ref_h, "d_hard");
    // Without d_y and d_hard, d_q is the same.
    std::vector<float> dq_only(b * d);
    loss.Compute(bt, 0.25, dq_only.data());
    EXPECT_EQ(dq_only, dq);
    // The reference's gradients against central differences of its own loss (margin 0:
    // smooth), for queries, targets and hard negatives (masked slots: zero gradient).
    if (margin == 0.0) {
      std::vector<double> unused(b * d);
      auto check = [&](std::vector<float>& v, const std::vector<double>& grad, int idx,
                       const char* what) {
        const float keep = v[idx];
        const float h = 1e-3f;
        v[idx] = keep + h;
        const double up = InfoNceReference(options, bt, unused.data());
        v[idx] = keep - h;
        const double down = InfoNceReference(options, bt, unused.data());
        v[idx] = keep;
        const double fd = (up - down) / (static_cast<double>(keep + h) - (keep - h));
        EXPECT_NEAR(grad[idx], fd, 1e-3 * std::max(1.0, std::abs(fd))) << what << idx;
      };
      for (int idx : {0, 17, 50, 95}) check(q, ref, idx, "d_q ");
      for (int idx : {0, 17, 50, 95}) check(y, ref_y, idx, "d_y ");
      for (int idx : {1, 2 * d + 3, 4 * d + 5, 17 * d + 15}) check(hard, ref_h, idx, "d_hard ");
      EXPECT_EQ(ref_h[2 * d + 3], 0.0);  // slot 2 is unused
      EXPECT_EQ(ref_h[4 * d + 5], 0.0);  // slot 4 holds query 1's own target
    }
  }
}

TEST(SynthDataset, TargetsAreBankRowsAndContextsWalkTheCentroids) {
  SynthOptions o;
  o.n = 300;
  o.n_val = 50;
  o.t = 6;
  o.d = 12;
  o.bank_size = 16 * 8 + 5;  // 16 clusters of 8 slots and 5 distractors
  o.slots = 8;
  o.noise = 0.0;
  auto ds = SynthDataset::Create(o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  ASSERT_EQ(ds->clusters(), 16);
  const int D = o.d, T = o.t;
  std::vector<float> bank(o.bank_size * D);
  std::map<std::vector<float>, int64_t> row_of;
  for (int64_t j = 0; j < o.bank_size; ++j) {
    ds->BankRow(j, &bank[j * D]);
    double ss = 0.0;
    for (int e = 0; e < D; ++e) ss += bank[j * D + e] * bank[j * D + e];
    EXPECT_NEAR(ss, 1.0, 1e-5);
    row_of[std::vector<float>(&bank[j * D], &bank[j * D] + D)] = j;
  }
  ASSERT_EQ(row_of.size(), static_cast<size_t>(o.bank_size));  // distinct rows
  std::set<std::vector<float>> train_contexts;
  std::vector<float> x(T * D), y(D);
  for (bool val : {false, true}) {
    const int64_t n = val ? ds->n_val() : ds->n_train();
    for (int64_t i = 0; i < n; ++i) {
      ds->Pair(val, i, x.data(), y.data());
      // The target is exactly the bank row TargetRow names, never a distractor.
      const int64_t row = ds->TargetRow(val, i);
      EXPECT_EQ(std::vector<float>(y.begin(), y.end()),
                std::vector<float>(&bank[row * D], &bank[row * D] + D));
      EXPECT_LT(ds->BankId(row), 16 * 8);
      // Without noise every context vector is a bank item of the same slot, the clusters
      // advancing by one speed, and the target one more step along.
      std::vector<int64_t> items;
      for (int t = 0; t < T; ++t) {
        auto it = row_of.find(std::vector<float>(&x[t * D], &x[t * D] + D));
        ASSERT_NE(it, row_of.end());
        items.push_back(ds->BankId(it->second));
      }
      items.push_back(ds->BankId(row));
      const int64_t slot = items[0] % 8;
      const int64_t speed = ((items[1] / 8) - (items[0] / 8) + 16) % 16;
      EXPECT_GE(speed, 1);
      EXPECT_LE(speed, o.speeds);
      for (size_t t = 1; t < items.size(); ++t) {
        EXPECT_EQ(items[t] % 8, slot);
        EXPECT_EQ(((items[t] / 8) - (items[t - 1] / 8) + 16) % 16, speed);
      }
      if (!val) {
        train_contexts.insert(x);
      } else {
        EXPECT_EQ(train_contexts.count(x), 0u) << "validation context " << i << " repeats";
      }
    }
  }
  EXPECT_EQ(train_contexts.size(), 300u);  // no training context repeats either
  // The same seed gives the same data; another seed other data.
  auto again = SynthDataset::Create(o);
  std::vector<float> x2(T * D), y2(D);
  ds->Pair(false, 7, x.data(), y.data());
  again->Pair(false, 7, x2.data(), y2.data());
  EXPECT_EQ(x, x2);
  o.seed = 2;
  auto other = SynthDataset::Create(o);
  other->Pair(false, 7, x2.data(), y2.data());
  EXPECT_NE(x, x2);
}

TEST(SynthDataset, RefusesMorePairsThanDistinctSequences) {
  SynthOptions o;
  o.n = 10000;
  o.bank_size = 128;
  o.slots = 8;
  auto ds = SynthDataset::Create(o);
  ASSERT_TRUE(IsError(ds, Status::Code::kInvalidArgument, "raise --bank-size"));
}

// sum(w . e) of the MLP document tower in double, for rows v (n, d), parameters p in
// Params() order.
double DocTowerLossInDouble(const std::vector<std::vector<double>>& p, const std::vector<float>& v,
                            const std::vector<float>& w, int n, int d, int hd) {
  double total = 0.0;
  for (int i = 0; i < n; ++i) {
    std::vector<double> h(hd), out(d);
    for (int k = 0; k < hd; ++k) {
      double a = p[1][k];
      for (int e = 0; e < d; ++e) a += p[0][k * d + e] * v[i * d + e];
      h[k] = std::max(a, 0.0);
    }
    double ss = 0.0;
    for (int e = 0; e < d; ++e) {
      out[e] = v[i * d + e] + p[3][e];
      for (int k = 0; k < hd; ++k) out[e] += p[2][e * hd + k] * h[k];
      ss += out[e] * out[e];
    }
    for (int e = 0; e < d; ++e) total += w[i * d + e] * out[e] / std::sqrt(ss);
  }
  return total;
}

TEST(DocTower, StartsAsTheIdentityAndItsGradientsMatchCentralDifferences) {
  const int n = 5, d = 6, hd = 4;
  Rng rng(8);
  const std::vector<float> v = RandomUnitRows(rng, n, d);
  std::vector<float> w(n * d), e(n * d), embedded(n * d);
  for (float& x : w) x = static_cast<float>(rng.Normal());
  DocTower tower(d, hd, 3);
  tower.Forward(v.data(), n, e.data());
  for (int k = 0; k < n * d; ++k) EXPECT_NEAR(e[k], v[k], 1e-6) << k;
  // Move W2 and b2 off zero, then compare every gradient with central differences of the
  // double-precision forward.
  std::vector<TowerParam> params = tower.Params();
  ASSERT_EQ(params.size(), 4u);
  for (int j : {2, 3}) {
    for (int64_t k = 0; k < params[j].size; ++k) params[j].value[k] = 0.5f * rng.Normal();
  }
  tower.ZeroGrads();
  tower.Forward(v.data(), n, e.data());
  tower.Embed(v.data(), n, embedded.data());
  EXPECT_EQ(e, embedded);
  tower.Backward(w.data());
  std::vector<std::vector<double>> p;
  for (const TowerParam& tp : params) p.emplace_back(tp.value, tp.value + tp.size);
  for (size_t j = 0; j < params.size(); ++j) {
    for (int64_t k = 0; k < params[j].size; ++k) {
      const double keep = p[j][k], h = 1e-6;
      p[j][k] = keep + h;
      const double up = DocTowerLossInDouble(p, v, w, n, d, hd);
      p[j][k] = keep - h;
      const double down = DocTowerLossInDouble(p, v, w, n, d, hd);
      p[j][k] = keep;
      const double fd = (up - down) / (2 * h);
      EXPECT_NEAR(params[j].grad[k], fd, 1e-4 * std::max(1.0, std::abs(fd)))
          << params[j].name << "[" << k << "]";
    }
  }
}

TEST(Recall, RanksEqualABruteForceCountInDoubleAndMetricsFollow) {
  Rng rng(21);
  const int d = 24;
  const int64_t m = 300, n = 9000;  // several query and bank blocks
  std::vector<float> q = RandomUnitRows(rng, m, d), bank = RandomUnitRows(rng, n, d);
  std::vector<int64_t> targets(m), ranks(m);
  for (int64_t i = 0; i < m; ++i) targets[i] = static_cast<int64_t>(rng.NextU64() % n);
  // Make some queries close to their targets so ranks spread from 0 upwards.
  for (int64_t i = 0; i < m; i += 3) {
    for (int e = 0; e < d; ++e) q[i * d + e] = bank[targets[i] * d + e] + 0.01f * q[i * d + e];
  }
  TargetRanks(q.data(), m, bank.data(), n, d, targets.data(), ranks.data());
  std::vector<int64_t> expected(m);
  for (int64_t i = 0; i < m; ++i) {
    auto dot = [&](int64_t j) {
      double s = 0.0;
      for (int e = 0; e < d; ++e) s += static_cast<double>(q[i * d + e]) * bank[j * d + e];
      return s;
    };
    const double st = dot(targets[i]);
    int64_t above = 0;
    for (int64_t j = 0; j < n; ++j) above += (j != targets[i] && dot(j) > st) ? 1 : 0;
    expected[i] = above;
  }
  int64_t zero = 0;
  for (int64_t i = 0; i < m; ++i) {
    EXPECT_NEAR(ranks[i], expected[i], 1) << i;  // float vs double: a near-tie may move by one
    zero += ranks[i] == 0;
  }
  EXPECT_GE(zero, m / 3);
  const RetrievalMetrics metrics = MetricsFromRanks({0, 4, 9, 10, 99, 1500}, {10, 100, 1000});
  EXPECT_DOUBLE_EQ(metrics.recall.at(10), 3.0 / 6);
  EXPECT_DOUBLE_EQ(metrics.recall.at(100), 5.0 / 6);
  EXPECT_DOUBLE_EQ(metrics.recall.at(1000), 5.0 / 6);
  EXPECT_DOUBLE_EQ(metrics.mrr, (1.0 + 1.0 / 5 + 1.0 / 10 + 1.0 / 11 + 1.0 / 100 + 1.0 / 1501) / 6);
}

// The documented rule, one score at a time in double: the rank of a target is the number
// of other rows scoring above it, a NaN row counting above; a NaN target score ranks n.
std::vector<int64_t> PlainLoopRanks(const std::vector<float>& q, const std::vector<float>& bank,
                                    const std::vector<int64_t>& targets, int d) {
  const int64_t m = static_cast<int64_t>(targets.size());
  const int64_t n = static_cast<int64_t>(bank.size()) / d;
  std::vector<int64_t> ranks(m);
  for (int64_t i = 0; i < m; ++i) {
    auto dot = [&](int64_t j) {
      double s = 0.0;
      for (int e = 0; e < d; ++e) s += static_cast<double>(q[i * d + e]) * bank[j * d + e];
      return s;
    };
    const double st = dot(targets[i]);
    if (std::isnan(st)) {
      ranks[i] = n;
      continue;
    }
    int64_t above = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (j == targets[i]) continue;
      const double sj = dot(j);
      if (std::isnan(sj) || sj > st) ++above;
    }
    ranks[i] = above;
  }
  return ranks;
}

TEST(Recall, NaNScoresNeverRankFirstAndMetricsMatchAPlainLoop) {
  Rng rng(5);
  const int d = 8;
  const int64_t m = 40, n = 5000;  // two bank blocks
  std::vector<float> q = RandomUnitRows(rng, m, d), bank = RandomUnitRows(rng, n, d);
  std::vector<int64_t> targets(m);
  for (int64_t i = 0; i < m; ++i) targets[i] = static_cast<int64_t>(rng.NextU64() % n);
  // Queries equal to their targets (rank 0 unless a NaN row intervenes) ...
  for (int64_t i = 0; i < m; i += 2) {
    std::copy_n(&bank[targets[i] * d], d, &q[i * d]);
  }
  // ... query 0 all NaN (a diverged tower: every score NaN), query 1's target row NaN,
  // and bank rows 7 and 4500 NaN: they count above every target they are compared with.
  std::fill_n(&q[0], d, std::nanf(""));
  bank[targets[1] * d + 3] = std::nanf("");
  for (int64_t row : {int64_t{7}, int64_t{4500}}) {
    if (row != targets[1]) bank[row * d] = std::nanf("");
  }
  std::vector<int64_t> ranks(m);
  TargetRanks(q.data(), m, bank.data(), n, d, targets.data(), ranks.data());
  const std::vector<int64_t> expected = PlainLoopRanks(q, bank, targets, d);
  EXPECT_EQ(ranks[0], n) << "an all-NaN query is a miss, after every row";
  EXPECT_EQ(ranks[1], n) << "a NaN target score is a miss, after every row";
  int nan_rows = 0;
  for (int64_t row : {int64_t{7}, int64_t{4500}}) nan_rows += row != targets[1] ? 1 : 0;
  for (int64_t i = 2; i < m; i += 2) {
    // A query equal to its target: only the NaN rows rank above it (a near tie in float
    // may move by one).
    EXPECT_NEAR(ranks[i], nan_rows, 1) << i;
  }
  for (int64_t i = 0; i < m; ++i) EXPECT_NEAR(ranks[i], expected[i], 1) << i;
  // Recall@k and MRR from the ranks, against a plain loop over the reference ranks.
  const std::vector<int> ks = {1, 3, 10, 5000};
  const RetrievalMetrics got = MetricsFromRanks(ranks, ks);
  const RetrievalMetrics ref_from_ranks = MetricsFromRanks(expected, ks);
  for (int k : ks) {
    double hits = 0.0;
    for (int64_t r : expected) hits += r < k ? 1.0 : 0.0;
    EXPECT_NEAR(ref_from_ranks.recall.at(k), hits / m, 1e-12) << k;
    // The two rank lists may differ by one at near ties only: within 1 / m per query
    // whose rank sits at the boundary.
    EXPECT_NEAR(got.recall.at(k), hits / m, 2.0 / m) << k;
  }
  double mrr = 0.0;
  for (int64_t r : expected) mrr += 1.0 / (static_cast<double>(r) + 1.0);
  EXPECT_NEAR(ref_from_ranks.mrr, mrr / m, 1e-12 * std::max(1.0, mrr / m));
  // Recall@n: the NaN queries are misses even with k = n (rank n is not < n).
  EXPECT_LE(got.recall.at(5000), (m - 2.0) / m);
  EXPECT_NEAR(got.recall.at(5000), (m - 2.0) / m, 1e-12);
}

TEST(Recall, AllScoresNaNIsRecallZeroNotOne) {
  // The reported failure: a model whose weights are NaN scored Recall@k = MRR = 1.
  const int d = 4;
  const int64_t m = 3, n = 50;
  std::vector<float> q(m * d, std::nanf("")), bank(n * d, 0.5f);
  std::vector<int64_t> targets = {0, 17, 49}, ranks(m);
  TargetRanks(q.data(), m, bank.data(), n, d, targets.data(), ranks.data());
  const RetrievalMetrics metrics = MetricsFromRanks(ranks, {1, 10, 50});
  for (int k : {1, 10, 50}) EXPECT_EQ(metrics.recall.at(k), 0.0) << k;
  EXPECT_NEAR(metrics.mrr, 1.0 / (n + 1), 1e-15);
}

}  // namespace
}  // namespace rlt::retrieval
