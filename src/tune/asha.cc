// rltrade tune: asynchronous successive halving (see asha.h).
#include "tune/asha.h"

#include <algorithm>
#include <cmath>

#include "core/status.h"

namespace rlt::tune {

std::vector<int64_t> RungSteps(int64_t total, int eta, int64_t min_steps) {
  RLT_CHECK(total >= 1 && eta >= 2);
  if (min_steps <= 0) min_steps = std::max<int64_t>(1, total / (int64_t{eta} * eta * eta));
  // Dividing step by step (total / eta^j = (total / eta^(j-1)) / eta for integers) never
  // forms eta^j, which overflows for totals near 2^63.
  std::vector<int64_t> steps = {total};
  for (int64_t s = total / eta; s >= min_steps && s >= 1; s /= eta) steps.push_back(s);
  std::reverse(steps.begin(), steps.end());
  return steps;
}

Asha::Asha(int eta, int rungs, int max_trials)
    : eta_(eta), rungs_(rungs), max_trials_(max_trials), results_(rungs), promoted_(rungs) {
  RLT_CHECK(eta >= 2 && rungs >= 1 && max_trials >= 1);
}

AshaJob Asha::Next() {
  if (!replay_done_) {
    replay_done_ = true;
    // Trials below the highest replayed one without a rung-0 result were cut by a kill.
    std::set<int> finished;
    for (const auto& [trial, score] : results_[0]) finished.insert(trial);
    for (int t = 0; t < next_new_; ++t) {
      if (finished.count(t) == 0) restart_.push_back(t);
    }
  }
  AshaJob job;
  job.kind = AshaJob::Kind::kRun;
  if (!restart_.empty()) {
    job.trial = restart_.front();
    job.rung = 0;
    restart_.pop_front();
    ++running_;
    return job;
  }
  for (int k = rungs_ - 2; k >= 0; --k) {
    const size_t top = results_[k].size() / static_cast<size_t>(eta_);
    if (top == 0) continue;
    std::vector<std::pair<int, double>> ranked = results_[k];
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      const bool an = std::isnan(a.second), bn = std::isnan(b.second);
      if (an != bn) return bn;  // scores before failures
      if (!an && a.second != b.second) return a.second > b.second;
      return a.first < b.first;
    });
    for (size_t j = 0; j < top; ++j) {
      const auto& [trial, score] = ranked[j];
      if (std::isnan(score)) break;
      if (promoted_[k].insert(trial).second) {
        job.trial = trial;
        job.rung = k + 1;
        ++running_;
        return job;
      }
    }
  }
  if (next_new_ < max_trials_) {
    job.trial = next_new_++;
    job.rung = 0;
    ++running_;
    return job;
  }
  job.kind = running_ > 0 ? AshaJob::Kind::kWait : AshaJob::Kind::kDone;
  return job;
}

void Asha::Report(int trial, int rung, double score) {
  RLT_CHECK(running_ > 0 && rung >= 0 && rung < rungs_);
  --running_;
  results_[rung].emplace_back(trial, score);
}

void Asha::Replay(int trial, int rung, double score) {
  RLT_CHECK(!replay_done_ && rung >= 0 && rung < rungs_ && trial >= 0);
  results_[rung].emplace_back(trial, score);
  if (rung > 0) promoted_[rung - 1].insert(trial);
  next_new_ = std::max(next_new_, trial + 1);
}

}  // namespace rlt::tune
