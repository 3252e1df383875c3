// rltrade core: helpers for options binding (edit distance, assignments, formatting).
#include "core/options.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace rlt {

int EditDistance(const std::string& a, const std::string& b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string NearestName(const std::string& key, const std::vector<std::string>& candidates) {
  std::string best;
  int best_d = 1 << 30;
  for (const auto& c : candidates) {
    const int d = EditDistance(key, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

Result<std::pair<std::string, std::string>> SplitAssignment(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument("'" + text + "': expected KEY=VALUE, e.g. nlags=5");
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

namespace internal {
std::string FormatValue(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Prefer the shortest representation that round-trips.
  for (int prec = 1; prec <= 17; ++prec) {
    char tmp[32];
    std::snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    if (std::strtod(tmp, nullptr) == v) return tmp;
  }
  return buf;
}
}  // namespace internal

}  // namespace rlt
