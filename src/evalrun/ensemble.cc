// rltrade evalrun: seed ensembles — the combination of the seeds' actions and the seeds'
// policies loaded as one (see ensemble.h).
#include "evalrun/ensemble.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "core/file_io.h"
#include "learn/inference.h"

namespace rlt::evalrun {
namespace {

namespace fs = std::filesystem;

// Element-wise mean of `rows` (each (dim)) of `actions`, accumulated in double.
void MeanOf(const float* actions, int dim, const std::vector<int>& rows, float* out) {
  for (int k = 0; k < dim; ++k) {
    double sum = 0;
    for (int i : rows) sum += actions[static_cast<size_t>(i) * dim + k];
    out[k] = static_cast<float>(sum / static_cast<double>(rows.size()));
  }
}

}  // namespace

Result<EnsembleMethod> ParseEnsembleMethod(const std::string& text) {
  if (text == "mean") return EnsembleMethod::kMean;
  if (text == "median") return EnsembleMethod::kMedian;
  if (text == "vote") return EnsembleMethod::kVote;
  return Status::InvalidArgument("--ensemble " + text +
                                 ": expected mean, median or vote (how the seeds' actions are "
                                 "combined; see docs/evaluation.md)");
}

const char* EnsembleMethodName(EnsembleMethod method) {
  switch (method) {
    case EnsembleMethod::kMean:
      return "mean";
    case EnsembleMethod::kMedian:
      return "median";
    case EnsembleMethod::kVote:
      return "vote";
  }
  return "mean";
}

EnsembleActions EnsembleActionsOf(const env::ActionSpace& space, const std::string& action_mode,
                                  double buy_threshold, double sell_threshold) {
  EnsembleActions a;
  a.action_mode = action_mode;
  a.discrete = space.discrete;
  a.dim = space.dim;
  a.n = space.n;
  a.low = space.low;
  a.high = space.high;
  a.buy_threshold = buy_threshold;
  a.sell_threshold = sell_threshold;
  return a;
}

EnsembleMethod DefaultEnsembleMethod(const EnsembleActions& actions) {
  return actions.discrete || actions.action_mode == "original" ? EnsembleMethod::kVote
                                                               : EnsembleMethod::kMean;
}

Status CheckEnsembleMethod(EnsembleMethod method, const EnsembleActions& actions) {
  if (actions.discrete && method != EnsembleMethod::kVote) {
    return Status::Refused(fmt::format(
        "--ensemble {}: this run's actions are discrete ({} choices) and an average of action "
        "indices is no action; use --ensemble vote (the default for discrete actions)",
        EnsembleMethodName(method), actions.n));
  }
  const bool decisions = actions.discrete || actions.action_mode == "target_position" ||
                         actions.action_mode == "original";
  if (method == EnsembleMethod::kVote && !decisions) {
    return Status::Refused(
        "--ensemble vote counts the seeds' decisions, but this run's environment has "
        "continuous actions without decisions; use --ensemble mean or --ensemble median");
  }
  return Status::Ok();
}

Result<EnsembleMethod> ResolveEnsembleMethod(const std::string& requested,
                                             const EnsembleActions& actions) {
  if (requested.empty()) return DefaultEnsembleMethod(actions);
  RLT_ASSIGN_OR_RETURN(const EnsembleMethod method, ParseEnsembleMethod(requested));
  RLT_RETURN_IF_ERROR(CheckEnsembleMethod(method, actions));
  return method;
}

Status CheckEnsembleFlags(const std::string& ensemble, bool seed_given, bool multi_seed,
                          const std::string& run_dir) {
  if (ensemble.empty()) return Status::Ok();
  RLT_RETURN_IF_ERROR(ParseEnsembleMethod(ensemble).status());
  if (seed_given) {
    return Status::InvalidArgument("--ensemble " + ensemble +
                                   " with --seed: --seed acts with one seed's policy and "
                                   "--ensemble combines all of them; give one of the two");
  }
  if (!multi_seed) {
    return Status::InvalidArgument(
        "--ensemble " + ensemble + ": " + run_dir +
        " is a single-seed run (no seeds.json), so there is no ensemble to combine; drop "
        "--ensemble, or train with --seeds N");
  }
  return Status::Ok();
}

Status CheckSameObservations(const std::vector<std::string>& runs) {
  if (runs.empty()) return Status::InvalidArgument("an ensemble needs at least one seed");
  const fs::path first = fs::path(runs.front()) / "normalizer.json";
  if (!fs::exists(first)) return Status::Ok();  // not a market run: nothing is normalised
  RLT_ASSIGN_OR_RETURN(const std::string reference, ReadFile(first));
  for (size_t i = 1; i < runs.size(); ++i) {
    const fs::path other = fs::path(runs[i]) / "normalizer.json";
    Result<std::string> text = ReadFile(other);
    if (!text.ok() || *text != reference) {
      return Status::Refused(other.string() + " differs from " + first.string() +
                             ": the seeds observe different features, so they cannot act on one "
                             "observation as an ensemble; give --seed S to use one seed");
    }
  }
  return Status::Ok();
}

ActionCombiner::ActionCombiner(EnsembleMethod method, EnsembleActions actions)
    : method_(method), actions_(std::move(actions)) {}

int ActionCombiner::Decision(const float* a) const {
  if (actions_.discrete) return static_cast<int>(a[0]);
  const double a0 = a[0];
  if (actions_.action_mode == "original") {
    return a0 >= actions_.buy_threshold ? 1 : (a0 <= actions_.sell_threshold ? -1 : 0);
  }
  return a0 > kTargetFlatBand ? 1 : (a0 < -kTargetFlatBand ? -1 : 0);
}

void ActionCombiner::Clip(float* a) const {
  if (actions_.discrete) {
    a[0] = std::clamp(std::round(a[0]), 0.0f, static_cast<float>(std::max(0, actions_.n - 1)));
    return;
  }
  for (int k = 0; k < actions_.dim; ++k) {
    if (k < static_cast<int>(actions_.low.size())) {
      a[k] = std::clamp(a[k], actions_.low[k], actions_.high[k]);
    }
  }
}

void ActionCombiner::Combine(float* actions, int n_seeds, float* out) const {
  const int dim = actions_.dim;
  std::vector<int> all(n_seeds);
  for (int i = 0; i < n_seeds; ++i) {
    all[i] = i;
    Clip(actions + static_cast<size_t>(i) * dim);
  }
  if (method_ == EnsembleMethod::kMean) return MeanOf(actions, dim, all, out);
  if (method_ == EnsembleMethod::kMedian) {
    std::vector<float> column(n_seeds);
    for (int k = 0; k < dim; ++k) {
      for (int i = 0; i < n_seeds; ++i) column[i] = actions[static_cast<size_t>(i) * dim + k];
      std::sort(column.begin(), column.end());
      const int h = n_seeds / 2;
      out[k] = n_seeds % 2 == 1
                   ? column[h]
                   : static_cast<float>((static_cast<double>(column[h - 1]) + column[h]) / 2.0);
    }
    return;
  }
  // vote: plurality of the decisions (in increasing order, so a discrete tie keeps the
  // smallest index).
  std::map<int, std::vector<int>> voters;
  for (int i = 0; i < n_seeds; ++i) {
    voters[Decision(actions + static_cast<size_t>(i) * dim)].push_back(i);
  }
  size_t most = 0;
  for (const auto& [decision, seeds] : voters) most = std::max(most, seeds.size());
  std::vector<int> winners, tied;
  int tied_decisions = 0;
  for (const auto& [decision, seeds] : voters) {
    if (seeds.size() != most) continue;
    if (++tied_decisions == 1) winners = seeds;
    tied.insert(tied.end(), seeds.begin(), seeds.end());
  }
  if (tied_decisions == 1 || actions_.discrete) return MeanOf(actions, dim, winners, out);
  // A tie between decisions: the neutral action (see ensemble.h).
  MeanOf(actions, dim, tied, out);
  out[0] = actions_.action_mode == "original"
               ? static_cast<float>((actions_.buy_threshold + actions_.sell_threshold) / 2.0)
               : 0.0f;
}

EnsembleRunner::EnsembleRunner(std::vector<std::unique_ptr<learn::PolicyRunner>> runners,
                               const ActionCombiner& combiner)
    : runners_(std::move(runners)),
      combiner_(combiner),
      scratch_(runners_.size() * static_cast<size_t>(combiner.actions().dim)) {}

EnsembleRunner::~EnsembleRunner() = default;

Result<std::unique_ptr<EnsembleRunner>> EnsembleRunner::Load(
    const std::vector<std::string>& checkpoints, int obs_dim, const ActionCombiner& combiner) {
  RLT_CHECK(!checkpoints.empty());
  env::ActionSpace space;
  const EnsembleActions& a = combiner.actions();
  space.discrete = a.discrete;
  space.dim = a.dim;
  space.n = a.n;
  space.low = a.low;
  space.high = a.high;
  std::vector<std::unique_ptr<learn::PolicyRunner>> runners;
  for (const std::string& dir : checkpoints) {
    RLT_ASSIGN_OR_RETURN(std::unique_ptr<learn::PolicyRunner> runner,
                         learn::PolicyRunner::Load(dir, obs_dim, space));
    runners.push_back(std::move(runner));
  }
  return std::unique_ptr<EnsembleRunner>(new EnsembleRunner(std::move(runners), combiner));
}

void EnsembleRunner::Act(const float* obs, float* action, std::vector<float>* per_seed) {
  const int dim = combiner_.actions().dim;
  for (size_t i = 0; i < runners_.size(); ++i) {
    runners_[i]->Act(obs, 1, scratch_.data() + i * dim, nullptr);
  }
  combiner_.Combine(scratch_.data(), seeds(), action);
  if (per_seed != nullptr) *per_seed = scratch_;
}

void EnsembleRunner::ResetState() {
  for (auto& r : runners_) r->ResetState();
}

bool EnsembleRunner::recurrent() const {
  for (const auto& r : runners_) {
    if (r->recurrent()) return true;
  }
  return false;
}

}  // namespace rlt::evalrun
