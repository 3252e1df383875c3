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

namespace {

// Optimal-string-alignment distance: Levenshtein plus the swap of two adjacent letters
// as one edit ("nmu_envs" is one typo away from "num_envs", not two).
int TypoDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<int>> d(a.size() + 1, std::vector<int>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

size_t CommonPrefix(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

// Fewest typos (OSA distance) first; among equals, the longest common prefix (people
// mistype the end of a word more often than its start), then the first candidate.
std::string NearestName(const std::string& key, const std::vector<std::string>& candidates) {
  std::string best;
  int best_d = 1 << 30;
  size_t best_prefix = 0;
  for (const auto& c : candidates) {
    const int d = TypoDistance(key, c);
    const size_t prefix = CommonPrefix(key, c);
    if (d < best_d || (d == best_d && prefix > best_prefix)) {
      best_d = d;
      best_prefix = prefix;
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
