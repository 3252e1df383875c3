// rltrade tune: analytic objectives (see objectives.h).
#include "tune/objectives.h"

#include <cmath>
#include <numbers>

#include "core/rng.h"

namespace rlt::tune {

double Branin(double x1, double x2) {
  constexpr double pi = std::numbers::pi;
  const double b = 5.1 / (4 * pi * pi), c = 5 / pi, t = 1 / (8 * pi);
  const double q = x2 - b * x1 * x1 + c * x1 - 6;
  return q * q + 10 * (1 - t) * std::cos(x1) + 10;
}

double Rosenbrock(const std::vector<double>& x) {
  double sum = 0;
  for (size_t i = 0; i + 1 < x.size(); ++i) {
    const double a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
    sum += 100 * a * a + b * b;
  }
  return sum;
}

double Hartmann6(const std::vector<double>& x) {
  static constexpr double kAlpha[4] = {1.0, 1.2, 3.0, 3.2};
  static constexpr double kA[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                      {0.05, 10, 17, 0.1, 8, 14},
                                      {3, 3.5, 1.7, 10, 17, 8},
                                      {17, 8, 0.05, 10, 0.1, 14}};
  static constexpr double kP[4][6] = {{1312, 1696, 5569, 124, 8283, 5886},
                                      {2329, 4135, 8307, 3736, 1004, 9991},
                                      {2348, 1451, 3522, 2883, 3047, 6650},
                                      {4047, 8828, 8732, 5743, 1091, 381}};
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    double inner = 0;
    for (int j = 0; j < 6; ++j) {
      const double d = x[j] - kP[i][j] * 1e-4;
      inner += kA[i][j] * d * d;
    }
    sum += kAlpha[i] * std::exp(-inner);
  }
  return -sum;
}

double EvaluateFunction(const std::string& fn, const std::vector<double>& x) {
  if (fn == "branin") return Branin(x[0], x[1]);
  if (fn == "hartmann6") return Hartmann6(x);
  return Rosenbrock(x);
}

double NoiseScale(const std::string& fn) { return fn == "hartmann6" ? 0.1 : 1.0; }

double ValueAtBudget(const std::string& fn, double value, uint64_t seed, int trial, int64_t steps,
                     int64_t full_steps) {
  if (full_steps <= 0 || steps >= full_steps) return value;
  // One stream per (seed, trial, steps): odd multipliers keep the three apart.
  Rng rng(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(trial) * 0xD1B54A32D192ED03ULL +
          static_cast<uint64_t>(steps) * 0x8CB92BA72F3D8DD7ULL);
  const double shrink = 1.0 - static_cast<double>(steps) / static_cast<double>(full_steps);
  return value + NoiseScale(fn) * shrink * rng.Normal();
}

Status CheckObjectiveSpace(const std::string& fn, const Space& space) {
  if (fn != "branin" && fn != "rosenbrock" && fn != "hartmann6") {
    return Status::Refused("--objective-fn " + fn + ": expected branin, rosenbrock or hartmann6");
  }
  const int n = space.dims();
  if (fn == "branin" && n != 2) {
    return Status::Refused("--objective-fn branin takes x1 and x2; the space has " +
                           std::to_string(n) + " parameters");
  }
  if (fn == "hartmann6" && n != 6) {
    return Status::Refused("--objective-fn hartmann6 takes x1 .. x6; the space has " +
                           std::to_string(n) + " parameters");
  }
  if (fn == "rosenbrock" && n < 2) {
    return Status::Refused("--objective-fn rosenbrock takes x1 .. xn, n >= 2");
  }
  for (int i = 0; i < n; ++i) {
    const Param& p = space.params[i];
    if (p.key != "x" + std::to_string(i + 1)) {
      return Status::Refused(p.place + ": '" + p.key + "': with --objective-fn the keys " +
                             "are x1, x2, ... in order; expected x" + std::to_string(i + 1));
    }
    if (p.kind == Param::Kind::kChoice) {
      return Status::Refused(p.place + ": '" + p.key +
                             "': --objective-fn needs numeric distributions");
    }
  }
  return Status::Ok();
}

double EvaluateObjective(const std::string& fn, const Space& space, const std::vector<double>& u) {
  std::vector<double> x(u.size());
  for (size_t i = 0; i < u.size(); ++i) x[i] = ValueNumber(space.params[i], u[i]);
  return EvaluateFunction(fn, x);
}

}  // namespace rlt::tune
