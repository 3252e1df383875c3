// rltrade tune: analytic objectives (see objectives.h).
#include "tune/objectives.h"

#include <cmath>
#include <numbers>

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

Status CheckObjectiveSpace(const std::string& fn, const Space& space) {
  if (fn != "branin" && fn != "rosenbrock") {
    return Status::Refused("--objective-fn " + fn + ": expected branin or rosenbrock");
  }
  const int n = space.dims();
  if (fn == "branin" && n != 2) {
    return Status::Refused("--objective-fn branin takes x1 and x2; the space has " +
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
  return fn == "branin" ? Branin(x[0], x[1]) : Rosenbrock(x);
}

}  // namespace rlt::tune
