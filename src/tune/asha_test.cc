// Tests of the ASHA scheduler (tune/asha.h) on scripted sequences of results: every job it
// hands out is the one the rule of Li et al. (2020), Algorithm 2, gives — worked out by
// hand below, step by step — for sequential and asynchronous workers, failed trials and a
// journal replayed after a kill.
#include "tune/asha.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace rlt::tune {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::pair<int, int> NextRun(Asha& a) {
  const AshaJob j = a.Next();
  EXPECT_EQ(j.kind, AshaJob::Kind::kRun);
  return {j.trial, j.rung};
}

using P = std::pair<int, int>;

TEST(Asha, OneWorkerPromotesTheTopThirdOfEachRung) {
  // eta 3, rungs 0..2, 9 trials. Rung-0 scores by trial:
  const std::vector<double> s0 = {1, 2, 3, 0.5, 4, 2.5, 6, 0, 5};
  Asha a(3, 3, 9);
  EXPECT_EQ(NextRun(a), P(0, 0));
  a.Report(0, 0, s0[0]);
  EXPECT_EQ(NextRun(a), P(1, 0));  // 1 result: floor(1/3) = 0 candidates
  a.Report(1, 0, s0[1]);
  EXPECT_EQ(NextRun(a), P(2, 0));
  a.Report(2, 0, s0[2]);
  EXPECT_EQ(NextRun(a), P(2, 1));  // 3 results: the best one (trial 2, 3.0) goes up
  a.Report(2, 1, 10);
  EXPECT_EQ(NextRun(a), P(3, 0));  // rung 1: 1 result, none; rung 0: {2} already promoted
  a.Report(3, 0, s0[3]);
  EXPECT_EQ(NextRun(a), P(4, 0));  // 4 results: top 1 = {2}
  a.Report(4, 0, s0[4]);
  EXPECT_EQ(NextRun(a), P(4, 1));  // 5 results: top 1 = {4 (4.0)}
  a.Report(4, 1, 8);
  EXPECT_EQ(NextRun(a), P(5, 0));  // rung 1: 2 results, none; rung 0 top 1 = {4}
  a.Report(5, 0, s0[5]);
  EXPECT_EQ(NextRun(a), P(6, 0));  // 6 results: top 2 = {4, 2}, both promoted
  a.Report(6, 0, s0[6]);
  EXPECT_EQ(NextRun(a), P(6, 1));  // 7 results: top 2 = {6 (6.0), 4}
  a.Report(6, 1, 12);
  EXPECT_EQ(NextRun(a), P(6, 2));  // rung 1: 3 results, top 1 = {6 (12)}: the top rung first
  a.Report(6, 2, 20);
  EXPECT_EQ(NextRun(a), P(7, 0));
  a.Report(7, 0, s0[7]);
  EXPECT_EQ(NextRun(a), P(8, 0));  // 8 results: top 2 = {6, 4}
  a.Report(8, 0, s0[8]);
  EXPECT_EQ(NextRun(a), P(8, 1));  // 9 results: top 3 = {6, 8 (5.0), 4}
  a.Report(8, 1, 9);
  // Rung 1: 4 results, top 1 = {6}, promoted; rung 0: top 3 promoted; 9 trials started.
  EXPECT_EQ(a.Next().kind, AshaJob::Kind::kDone);
  EXPECT_EQ(a.results(2).size(), 1u);
  EXPECT_EQ(a.results(1).size(), 4u);
  EXPECT_EQ(a.results(0).size(), 9u);
}

TEST(Asha, TwoWorkersNeverWaitForARungToFill) {
  // eta 2, rungs 0..1, 3 trials; results arrive out of order.
  Asha a(2, 2, 3);
  EXPECT_EQ(NextRun(a), P(0, 0));
  EXPECT_EQ(NextRun(a), P(1, 0));
  a.Report(1, 0, 5);
  EXPECT_EQ(NextRun(a), P(2, 0));  // 1 result: floor(1/2) = 0 candidates, a new trial
  a.Report(0, 0, 7);
  EXPECT_EQ(NextRun(a), P(0, 1));  // 2 results: top 1 = {0 (7)}, while trial 2 still runs
  EXPECT_EQ(a.Next().kind, AshaJob::Kind::kWait);  // 3 started, 2 running, none promotable
  a.Report(2, 0, 9);
  EXPECT_EQ(NextRun(a), P(2, 1));  // 3 results: top 1 = {2 (9)}
  a.Report(0, 1, 1);
  EXPECT_EQ(a.Next().kind, AshaJob::Kind::kWait);
  a.Report(2, 1, 3);
  EXPECT_EQ(a.Next().kind, AshaJob::Kind::kDone);
}

TEST(Asha, FailedTrialsAreNeverPromoted) {
  Asha a(2, 2, 4);
  EXPECT_EQ(NextRun(a), P(0, 0));
  a.Report(0, 0, kNaN);
  EXPECT_EQ(NextRun(a), P(1, 0));
  a.Report(1, 0, kNaN);
  EXPECT_EQ(NextRun(a), P(2, 0));  // 2 results, top 1 = a failure: nothing to promote
  a.Report(2, 0, 4);
  EXPECT_EQ(NextRun(a), P(2, 1));  // 3 results, top 1 = {2}: failures rank last
  a.Report(2, 1, 1);
  EXPECT_EQ(NextRun(a), P(3, 0));
  a.Report(3, 0, -7);
  EXPECT_EQ(NextRun(a), P(3, 1));  // 4 results, top 2 = {2, 3}: -7 still beats a failure
  a.Report(3, 1, 0);
  EXPECT_EQ(a.Next().kind, AshaJob::Kind::kDone);
}

TEST(Asha, TiesGoToTheLowerTrial) {
  Asha a(2, 2, 2);
  EXPECT_EQ(NextRun(a), P(0, 0));
  EXPECT_EQ(NextRun(a), P(1, 0));
  a.Report(1, 0, 5);
  a.Report(0, 0, 5);
  EXPECT_EQ(NextRun(a), P(0, 1));
}

TEST(Asha, ReplayedJournalRestartsTheTrialAKillCut) {
  // The first jobs of OneWorkerPromotesTheTopThirdOfEachRung, as a journal where trial 3's
  // rung-0 run was cut by a kill (two workers: trial 4 finished, trial 3 did not).
  Asha a(3, 3, 9);
  a.Replay(0, 0, 1);
  a.Replay(1, 0, 2);
  a.Replay(2, 0, 3);
  a.Replay(2, 1, 10);
  a.Replay(4, 0, 4);
  EXPECT_EQ(NextRun(a), P(3, 0));  // the cut trial first
  a.Report(3, 0, 0.5);
  EXPECT_EQ(NextRun(a), P(4, 1));  // then exactly what the uninterrupted study did
  a.Report(4, 1, 8);
  EXPECT_EQ(NextRun(a), P(5, 0));
}

TEST(Asha, RungBudgetsGrowByEtaUpToTheFullRun) {
  EXPECT_EQ(RungSteps(100000, 3, 0), (std::vector<int64_t>{3703, 11111, 33333, 100000}));
  EXPECT_EQ(RungSteps(81, 3, 1), (std::vector<int64_t>{1, 3, 9, 27, 81}));
  EXPECT_EQ(RungSteps(100000, 2, 20000), (std::vector<int64_t>{25000, 50000, 100000}));
  EXPECT_EQ(RungSteps(5, 3, 10), (std::vector<int64_t>{5}));  // one rung: no halving
  // Near 2^63: 3^39 < 2^63 - 1 < 3^40, so eta^R is never formed (it would overflow).
  int64_t p39 = 1;
  for (int i = 0; i < 39; ++i) p39 *= 3;
  EXPECT_EQ(RungSteps(p39, 3, p39 / 27), (std::vector<int64_t>{p39 / 27, p39 / 9, p39 / 3, p39}));
  EXPECT_EQ(RungSteps(INT64_MAX, 2, 0).back(), INT64_MAX);
  EXPECT_EQ(RungSteps(INT64_MAX, 2, 0).size(), 4u);
}

}  // namespace
}  // namespace rlt::tune
