// rltrade paper: risk limits (see risk.h).
#include "paper/risk.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "config/toml_parse.h"
#include "core/file_io.h"
#include "core/options.h"

namespace rlt::paper {
namespace {

std::string Fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// "HH:MM" -> minutes after midnight, or -1.
int Minutes(const std::string& s) {
  int h = -1, m = -1;
  char tail = 0;
  if (std::sscanf(s.c_str(), "%2d:%2d%c", &h, &m, &tail) != 2) return -1;
  if (s.size() != 5 || h < 0 || h > 23 || m < 0 || m > 59) return -1;
  return h * 60 + m;
}

}  // namespace

Result<RiskLimits> ParseRiskLimits(const std::string& text, const std::string& name) {
  RLT_ASSIGN_OR_RETURN(const toml::table root, config::ParseToml(text, name));
  RiskLimits l;
  const std::vector<std::string> numbers = {
      "max_position_shares", "max_position_value", "max_order_shares",  "max_gross_exposure",
      "max_daily_loss",      "price_collar",       "stale_feed_seconds"};
  double* targets[] = {&l.max_position_shares, &l.max_position_value, &l.max_order_shares,
                       &l.max_gross_exposure,  &l.max_daily_loss,     &l.price_collar,
                       &l.stale_feed_seconds};
  std::vector<std::string> keys = numbers;
  for (const char* k :
       {"max_orders_per_minute", "trading_hours", "flatten_before_close", "flatten_on_stale"}) {
    keys.push_back(k);
  }
  for (const auto& [key_node, node] : root) {
    const std::string key(key_node.str());
    const std::string place = config::TomlLine(name, node.source()) + ": '" + key + "'";
    bool known = false;
    for (size_t i = 0; i < numbers.size(); ++i) {
      if (key != numbers[i]) continue;
      known = true;
      const std::optional<double> v = node.value<double>();
      if (!v || !(*v >= 0) || !std::isfinite(*v)) {
        return Status::InvalidArgument(place + ": expected a finite number >= 0");
      }
      // 0 s would call the feed stale before every bar (every order refused).
      if (key == "stale_feed_seconds" && !(*v > 0 && *v <= RiskLimits::kMaxStaleFeedSeconds)) {
        return Status::InvalidArgument(
            place + ": expected a number of seconds > 0 and <= " +
            std::to_string(static_cast<int>(RiskLimits::kMaxStaleFeedSeconds)) +
            " (a day); leave it out for no stale-feed limit");
      }
      *targets[i] = *v;
    }
    if (key == "max_orders_per_minute") {
      known = true;
      const std::optional<int64_t> v = node.value<int64_t>();
      if (!v || *v < 1 || *v > 1000000) {
        return Status::InvalidArgument(place + ": expected a whole number of orders >= 1");
      }
      l.max_orders_per_minute = static_cast<int>(*v);
    } else if (key == "trading_hours") {
      known = true;
      const std::optional<std::string> v = node.value<std::string>();
      const size_t dash = v ? v->find('-') : std::string::npos;
      const int from = dash == std::string::npos ? -1 : Minutes(v->substr(0, dash));
      const int to = dash == std::string::npos ? -1 : Minutes(v->substr(dash + 1));
      if (from < 0 || to < 0 || to <= from) {
        return Status::InvalidArgument(place +
                                       ": expected \"HH:MM-HH:MM\" in local exchange time, the "
                                       "start before the end (e.g. \"09:30-16:00\")");
      }
      l.trading_start = from;
      l.trading_end = to;
    } else if (key == "flatten_before_close") {
      known = true;
      const std::optional<std::string> v = node.value<std::string>();
      l.flatten_before_close = v ? Minutes(*v) : -1;
      if (l.flatten_before_close < 0) {
        return Status::InvalidArgument(place + ": expected \"HH:MM\" in local exchange time");
      }
    } else if (key == "flatten_on_stale") {
      known = true;
      const std::optional<bool> v = node.value<bool>();
      if (!v) return Status::InvalidArgument(place + ": expected true or false");
      l.flatten_on_stale = *v;
    }
    if (!known) {
      return Status::InvalidArgument(place + ": unknown risk limit; did you mean '" +
                                     NearestName(key, keys) + "'?");
    }
    l.any = true;
  }
  return l;
}

Result<RiskLimits> LoadRiskLimits(const std::string& path) {
  RLT_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseRiskLimits(text, path);
}

bool RiskGate::MayOpen(int minute) const {
  if (limits_.trading_start >= 0 &&
      (minute < limits_.trading_start || minute >= limits_.trading_end)) {
    return false;
  }
  return !MustFlatten(minute);
}

bool RiskGate::MustFlatten(int minute) const {
  return limits_.flatten_before_close >= 0 && minute >= limits_.flatten_before_close;
}

std::string RiskGate::Check(const OrderCheck& o, std::string* detail) {
  const double after = o.position + o.quantity;
  const bool reduces = o.quantity != 0 && std::fabs(after) < std::fabs(o.position) &&
                       (after == 0 || (after > 0) == (o.position > 0));
  auto refuse = [&](const char* rule, const std::string& what) {
    *detail = what;
    return std::string(rule);
  };
  if (!reduces) {
    const RiskLimits& l = limits_;
    if (l.trading_start >= 0 &&
        (o.minute_of_day < l.trading_start || o.minute_of_day >= l.trading_end)) {
      return refuse("trading_hours", "order outside the trading hours");
    }
    if (MustFlatten(o.minute_of_day)) {
      return refuse("flatten_before_close", "no new exposure after the flatten time");
    }
    if (std::fabs(o.quantity) > l.max_order_shares) {
      return refuse("max_order_shares", "order of " + Fmt(std::fabs(o.quantity)) + " shares > " +
                                            Fmt(l.max_order_shares));
    }
    if (std::fabs(after) > l.max_position_shares) {
      return refuse("max_position_shares", "position of " + Fmt(std::fabs(after)) + " shares > " +
                                               Fmt(l.max_position_shares));
    }
    if (std::fabs(after) * o.price > l.max_position_value) {
      return refuse("max_position_value", "position value " + Fmt(std::fabs(after) * o.price) +
                                              " > " + Fmt(l.max_position_value));
    }
    if (o.net_worth > 0 && std::fabs(after) * o.price / o.net_worth > l.max_gross_exposure) {
      return refuse("max_gross_exposure", "exposure " +
                                              Fmt(std::fabs(after) * o.price / o.net_worth) +
                                              " > " + Fmt(l.max_gross_exposure));
    }
    if (o.last_price > 0 && std::fabs(o.price / o.last_price - 1.0) > l.price_collar) {
      return refuse("price_collar", "price " + Fmt(o.price) + " is more than " +
                                        Fmt(l.price_collar) + " from the last price " +
                                        Fmt(o.last_price));
    }
  }
  while (!sent_.empty() && sent_.front() <= o.time - 60) sent_.pop_front();
  if (!reduces && limits_.max_orders_per_minute > 0 &&
      static_cast<int>(sent_.size()) >= limits_.max_orders_per_minute) {
    return refuse("max_orders_per_minute", std::to_string(sent_.size()) +
                                               " orders in the last 60 s (limit " +
                                               std::to_string(limits_.max_orders_per_minute) + ")");
  }
  sent_.push_back(o.time);
  return "";
}

}  // namespace rlt::paper
