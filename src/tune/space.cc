// rltrade tune: search spaces (see space.h).
#include "tune/space.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "config/toml_parse.h"
#include "core/file_io.h"

namespace rlt::tune {
namespace {

std::string Shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string Place(const std::string& name, const toml::source_region& src) {
  return config::TomlLine(name, src);
}

// The text of one scalar TOML value as --set takes it; nullopt if it is not a scalar.
std::optional<std::string> ScalarText(const toml::node& n) {
  if (auto v = n.as_integer()) return std::to_string(v->get());
  if (auto v = n.as_floating_point()) return Shortest(v->get());
  if (auto v = n.as_boolean()) return std::string(v->get() ? "true" : "false");
  if (auto v = n.as_string()) return v->get();
  return std::nullopt;
}

}  // namespace

Result<Space> ParseSpace(const std::string& text, const std::string& name) {
  Result<toml::table> parsed = config::ParseToml(text, name);
  if (!parsed.ok()) return Status::Refused(parsed.status().message());
  const toml::table& root = *parsed;
  Space space;
  std::vector<std::string> errors;
  for (const auto& [key_node, node] : root) {
    const std::string key(key_node.str());
    const std::string place = Place(name, node.source());
    const toml::table* spec = node.as_table();
    if (spec == nullptr || spec->size() != 1) {
      errors.push_back(place + ": '" + key +
                       "': expected one of { uniform = [a, b] }, { log_uniform = [a, b] }, "
                       "{ int = [a, b] }, { choice = [v1, v2, ...] }");
      continue;
    }
    Param p;
    p.key = key;
    p.place = place;
    p.line = static_cast<int>(node.source().begin.line);
    const auto entry = spec->begin();  // its proxy refers into the iterator: keep it alive
    const std::string kind(entry->first.str());
    const toml::array* list = entry->second.as_array();
    if (list == nullptr && entry->second.is_table()) {
      // `algo.lr = { ... }` unquoted is TOML for the table algo holding lr.
      errors.push_back(place + ": '" + key + "." + kind +
                       "': a dotted key must be quoted to name one parameter: \"" + key + "." +
                       kind + "\" = { ... }");
      continue;
    }
    if (list == nullptr) {
      errors.push_back(place + ": '" + key + "': " + kind + " takes an array");
      continue;
    }
    if (kind == "choice") {
      p.kind = Param::Kind::kChoice;
      bool bad = false;
      for (const toml::node& c : *list) {
        const std::optional<std::string> t = ScalarText(c);
        if (!t) {
          errors.push_back(place + ": '" + key +
                           "': choice values must be numbers, strings or "
                           "booleans");
          bad = true;
          break;
        }
        if (std::find(p.choices.begin(), p.choices.end(), *t) != p.choices.end()) {
          // A repeated value would be drawn twice as often as the others, silently.
          errors.push_back(place + ": '" + key + "': choice lists " + *t +
                           " twice; list each value once");
          bad = true;
          break;
        }
        p.choices.push_back(*t);
      }
      if (bad) continue;
      if (p.choices.empty()) {
        errors.push_back(place + ": '" + key + "': choice lists no value");
        continue;
      }
      space.params.push_back(p);
      continue;
    }
    if (kind != "uniform" && kind != "log_uniform" && kind != "int") {
      errors.push_back(place + ": '" + key + "': unknown distribution '" + kind +
                       "'; expected uniform, log_uniform, int or choice");
      continue;
    }
    if (list->size() != 2 || !(*list)[0].is_number() || !(*list)[1].is_number()) {
      errors.push_back(place + ": '" + key + "': " + kind + " takes [low, high] (two numbers)");
      continue;
    }
    // An integer bound is read as an integer: toml++ gives no double for one a double
    // cannot hold exactly, and its size is what the int rule below reports.
    auto bound = [](const toml::node& n) {
      if (auto i = n.as_integer()) return static_cast<double>(i->get());
      return n.value<double>().value_or(NAN);
    };
    p.low = bound((*list)[0]);
    p.high = bound((*list)[1]);
    p.kind = kind == "uniform"       ? Param::Kind::kUniform
             : kind == "log_uniform" ? Param::Kind::kLogUniform
                                     : Param::Kind::kInt;
    if (!(std::isfinite(p.low) && std::isfinite(p.high) && p.low < p.high)) {
      errors.push_back(place + ": '" + key + "': " + kind + " needs finite low < high");
      continue;
    }
    if (!std::isfinite(p.high - p.low)) {
      errors.push_back(place + ": '" + key + "': " + kind + " [" + Shortest(p.low) + ", " +
                       Shortest(p.high) + "]: the width high - low overflows a double");
      continue;
    }
    if (p.kind == Param::Kind::kLogUniform && p.low <= 0) {
      errors.push_back(place + ": '" + key + "': log_uniform needs low > 0");
      continue;
    }
    if (p.kind == Param::Kind::kInt &&
        (p.low != std::floor(p.low) || p.high != std::floor(p.high))) {
      errors.push_back(place + ": '" + key + "': int takes whole-number bounds");
      continue;
    }
    if (p.kind == Param::Kind::kInt &&
        (std::fabs(p.low) > kMaxIntBound || std::fabs(p.high) > kMaxIntBound)) {
      errors.push_back(place + ": '" + key + "': int [" + Shortest(p.low) + ", " +
                       Shortest(p.high) + "]: bounds must lie within -" +
                       std::to_string(static_cast<int64_t>(kMaxIntBound)) + " .. " +
                       std::to_string(static_cast<int64_t>(kMaxIntBound)) +
                       " (2^53, the whole numbers a sampled value holds exactly); the key's own "
                       "type is checked against the config before any trial runs");
      continue;
    }
    space.params.push_back(p);
  }
  // toml++ iterates keys sorted; the file's order is the order users think in.
  std::stable_sort(space.params.begin(), space.params.end(),
                   [](const Param& a, const Param& b) { return a.line < b.line; });
  if (space.params.empty() && errors.empty()) {
    errors.push_back(name + ": the space names no parameter");
  }
  if (!errors.empty()) {
    std::string msg;
    for (const std::string& e : errors) msg += (msg.empty() ? "" : "\n") + e;
    return Status::Refused(msg);
  }
  return space;
}

Result<Space> LoadSpace(const std::string& path) {
  RLT_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseSpace(text, path);
}

double ValueNumber(const Param& p, double u) {
  u = std::min(std::max(u, 0.0), std::nextafter(1.0, 0.0));
  switch (p.kind) {
    case Param::Kind::kUniform:
      return p.low + u * (p.high - p.low);
    case Param::Kind::kLogUniform:  // exp(log(x)) may round just outside [low, high]
      if (u == 0) return p.low;
      return std::clamp(std::exp(std::log(p.low) + u * (std::log(p.high) - std::log(p.low))), p.low,
                        p.high);
    case Param::Kind::kInt:
      return std::min(p.high, p.low + std::floor(u * (p.high - p.low + 1)));
    case Param::Kind::kChoice: {
      const size_t i = std::min(p.choices.size() - 1,
                                static_cast<size_t>(u * static_cast<double>(p.choices.size())));
      double v = 0;
      const std::string& t = p.choices[i];
      const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
      return r.ec == std::errc() && r.ptr == t.data() + t.size() ? v : static_cast<double>(i);
    }
  }
  return 0;
}

std::string ValueText(const Param& p, double u) {
  if (p.kind == Param::Kind::kChoice) {
    u = std::min(std::max(u, 0.0), std::nextafter(1.0, 0.0));
    return p.choices[std::min(p.choices.size() - 1,
                              static_cast<size_t>(u * static_cast<double>(p.choices.size())))];
  }
  const double v = ValueNumber(p, u);
  if (p.kind == Param::Kind::kInt) return std::to_string(static_cast<long long>(v));
  return Shortest(v);
}

}  // namespace rlt::tune
