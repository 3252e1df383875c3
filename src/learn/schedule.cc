// rltrade learn: Schedule implementation (see schedule.h).
#include "learn/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "core/options.h"

namespace rlt::learn {
namespace {

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Splits "name(a, b, c)" into name and the trimmed arguments.
bool SplitCall(const std::string& text, std::string* name, std::vector<std::string>* args) {
  const size_t open = text.find('(');
  if (open == std::string::npos || text.back() != ')') return false;
  *name = Trim(text.substr(0, open));
  std::string inner = text.substr(open + 1, text.size() - open - 2);
  size_t start = 0;
  while (true) {
    const size_t comma = inner.find(',', start);
    args->push_back(Trim(inner.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

}  // namespace

Schedule Schedule::Linear(double start, double end) {
  Schedule s(start);
  s.kind_ = Kind::kLinear;
  s.b_ = end;
  return s;
}

Schedule Schedule::WarmupCosine(double peak, int64_t warmup_updates, double final_fraction) {
  Schedule s(peak);
  s.kind_ = Kind::kWarmupCosine;
  s.b_ = static_cast<double>(warmup_updates);
  s.c_ = final_fraction;
  return s;
}

Result<Schedule> Schedule::Parse(const std::string& raw) {
  const std::string text = Trim(raw);
  double value;
  if (rlt::ParseValue(text, &value).ok()) return Schedule(value);
  std::string name;
  std::vector<std::string> args;
  const std::string forms =
      "expected a number, linear(start, end) or warmup_cosine(peak, warmup_updates, "
      "final_fraction)";
  if (!SplitCall(text, &name, &args)) return Status::InvalidArgument(forms);
  std::vector<double> v(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!rlt::ParseValue(args[i], &v[i]).ok()) {
      return Status::InvalidArgument("argument '" + args[i] + "' is not a number; " + forms);
    }
  }
  if (name == "linear" && v.size() == 2) return Linear(v[0], v[1]);
  if (name == "warmup_cosine" && v.size() == 3) {
    if (v[1] < 0 || v[1] != std::floor(v[1])) {
      return Status::InvalidArgument("warmup_updates must be a whole number >= 0");
    }
    return WarmupCosine(v[0], static_cast<int64_t>(v[1]), v[2]);
  }
  return Status::InvalidArgument(forms);
}

double Schedule::Value(const TrainingProgress& p) const {
  switch (kind_) {
    case Kind::kConstant:
      return a_;
    case Kind::kLinear:
      // Clamped like SB3's get_linear_fn: the last rollout may overshoot total_timesteps
      // (progress_remaining < 0), and the value then stays at `end`.
      return a_ + (1.0 - std::clamp(p.progress_remaining, 0.0, 1.0)) * (b_ - a_);
    case Kind::kWarmupCosine: {
      const double u = static_cast<double>(p.update);
      const double warmup = b_;
      if (u <= warmup) return a_ * u / warmup;
      const double span = std::max(1.0, static_cast<double>(p.total_updates) - warmup);
      const double frac = std::clamp((u - warmup) / span, 0.0, 1.0);
      return a_ * (c_ + (1.0 - c_) * 0.5 * (1.0 + std::cos(std::numbers::pi * frac)));
    }
  }
  return a_;
}

std::string Schedule::ToString() const {
  using rlt::FormatValue;
  switch (kind_) {
    case Kind::kConstant:
      return FormatValue(a_);
    case Kind::kLinear:
      return "linear(" + FormatValue(a_) + ", " + FormatValue(b_) + ")";
    case Kind::kWarmupCosine:
      return "warmup_cosine(" + FormatValue(a_) + ", " + FormatValue(b_) + ", " + FormatValue(c_) +
             ")";
  }
  return "";
}

Status ParseValue(const std::string& text, Schedule* out) {
  RLT_ASSIGN_OR_RETURN(*out, Schedule::Parse(text));
  return Status::Ok();
}

std::string FormatValue(const Schedule& schedule) { return schedule.ToString(); }

}  // namespace rlt::learn
