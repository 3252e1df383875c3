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

Result<std::vector<std::string>> SplitList(const std::string& text) {
  auto trim = [](const std::string& s) {
    const size_t b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return std::string();
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
  };
  std::string body = trim(text);
  const bool open = !body.empty() && body.front() == '[';
  const bool close = !body.empty() && body.back() == ']';
  if (open != close || (open && body.size() < 2)) {
    return Status::InvalidArgument("'" + text +
                                   "': unbalanced brackets; expected a list like [64, 64]");
  }
  if (open) body = trim(body.substr(1, body.size() - 2));
  std::vector<std::string> parts;
  if (body.empty()) return parts;
  size_t start = 0;
  while (true) {
    const size_t comma = body.find(',', start);
    std::string element =
        trim(body.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (element.empty()) {
      return Status::InvalidArgument("'" + text +
                                     "': empty element; expected a list like [64, 64]");
    }
    parts.push_back(std::move(element));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
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
