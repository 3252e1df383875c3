// rltrade train: the record of the dates training saw (see training_ranges.h).
#include "train/training_ranges.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "core/civil_time.h"
#include "core/json_parse.h"
#include "core/json_text.h"
#include "core/options.h"
#include "env/envs/intraday.h"
#include "market/date_range.h"

namespace rlt::train {
namespace {

constexpr const char* kEnvSource = "env.range (training envs)";
constexpr const char* kNormalizerSource = "[split] train (normaliser fit)";

Result<market::DateRange> ParseRangeText(const std::string& text, const std::string& what) {
  if (text.empty()) return market::DateRange{};  // "" = every session (as the env reads it)
  Result<market::DateRange> r = market::DateRange::Parse(text);
  if (!r.ok()) return Status::InvalidArgument(what + ": " + r.status().message());
  return *r;
}

// Observation window length before a bar (bars of history besides the current one).
Result<int> ObservationLags(const EnvSetup& setup) {
  if (setup.id != "intraday") return 0;
  env::IntradayOptions o;
  RLT_RETURN_IF_ERROR(SetOptions(o, setup.context.settings, "[env]"));
  return std::max(o.nlags, 0);
}

}  // namespace

Result<TrainingRanges> TrainingRangesOf(const EnvSetup& setup) {
  TrainingRanges out;
  const auto it = setup.context.settings.find("range");
  const std::string env_text = it == setup.context.settings.end() ? "" : it->second;
  if (!setup.context.market) {
    // A dated environment with data of its own (options): its [env] range is what it saw
    // (plus the features' look-back before the range's start, which is older data).
    if (it == setup.context.settings.end()) return out;
    RLT_ASSIGN_OR_RETURN(const market::DateRange own, ParseRangeText(env_text, "[env] range"));
    out.ranges.push_back({kEnvSource, own});
    return out;
  }
  RLT_ASSIGN_OR_RETURN(const market::DateRange env_range, ParseRangeText(env_text, "[env] range"));
  const market::DateRange fit = setup.context.market->fit_range;
  out.ranges.push_back({kEnvSource, env_range});
  out.ranges.push_back({kNormalizerSource, fit});
  RLT_ASSIGN_OR_RETURN(const int lags, ObservationLags(setup));
  const env::MarketDataset& data = *setup.context.market;
  const market::Bars& bars = data.bars;
  std::set<int32_t> dates;
  for (int32_t i = 0; i < static_cast<int32_t>(bars.sessions.size()); ++i) {
    const market::Session& s = bars.sessions[i];
    if (fit.Contains(s.date)) dates.insert(s.date);
    if (!env_range.Contains(s.date)) continue;
    dates.insert(s.date);
    // The observation at the session's first bar holds the `lags` bars before it (of the
    // same symbol: several symbols' bars follow one another in one dataset).
    const int64_t first = data.parts.empty() ? 0 : data.parts[data.PartOfSession(i)].first_bar;
    for (int64_t t = std::max<int64_t>(first, s.begin - lags); t < s.begin; ++t) {
      dates.insert(bars.sessions[bars.session[t]].date);
    }
  }
  out.sessions.assign(dates.begin(), dates.end());
  return out;
}

std::string DescribeOverlap(const TrainingRanges& ranges, const market::DateRange& dates) {
  for (const TrainingRanges::Named& n : ranges.ranges) {
    if (n.range.Overlaps(dates)) return n.source + " " + n.range.ToString();
  }
  for (int32_t d : ranges.sessions) {
    if (dates.Contains(d)) return "training session " + FormatDate(d);
  }
  return "";
}

Status CheckOutsideTest(const std::map<std::string, market::DateRange>& split,
                        const TrainingRanges& ranges) {
  const auto test = split.find("test");
  if (test == split.end()) return Status::Ok();
  const std::string overlap = DescribeOverlap(ranges, test->second);
  if (overlap.empty()) return Status::Ok();
  return Status::Refused(
      "the training range " + overlap + " overlaps [split] test " + test->second.ToString() +
      ": a policy trained on test dates cannot be evaluated honestly on them; train on dates "
      "outside test (change [env] range / --set env.range=..., or [split] test)");
}

TrainingRanges MergeTrainingRanges(const TrainingRanges& a, const TrainingRanges& b) {
  TrainingRanges out = a;
  for (const TrainingRanges::Named& n : b.ranges) {
    const bool known = std::any_of(out.ranges.begin(), out.ranges.end(), [&n](const auto& m) {
      return m.source == n.source && m.range.first == n.range.first && m.range.last == n.range.last;
    });
    if (!known) out.ranges.push_back(n);
  }
  std::set<int32_t> dates(a.sessions.begin(), a.sessions.end());
  dates.insert(b.sessions.begin(), b.sessions.end());
  out.sessions.assign(dates.begin(), dates.end());
  return out;
}

std::string TrainingRangesJson(const TrainingRanges& ranges) {
  nlohmann::ordered_json j;
  j["version"] = 1;
  j["ranges"] = nlohmann::ordered_json::array();
  for (const TrainingRanges::Named& n : ranges.ranges) {
    j["ranges"].push_back({{"source", n.source}, {"range", n.range.ToString()}});
  }
  j["sessions"] = nlohmann::ordered_json::array();
  for (int32_t d : ranges.sessions) j["sessions"].push_back(FormatDate(d));
  return JsonText(j, 2) + "\n";
}

Result<TrainingRanges> ParseTrainingRanges(const std::string& text, const std::string& path) {
  auto bad = [&path](const std::string& what) {
    return Status::DataError(path + ": " + what + " (the record of the dates training saw)");
  };
  if (JsonNestingBeyond(text, kMaxJsonDepth) != std::string::npos) {
    return bad("JSON nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  }
  const nlohmann::json j = ParseJsonOrDiscarded<nlohmann::json>(text);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  if (!j.contains("version") || j["version"] != 1) return bad("expected \"version\": 1");
  if (!j.contains("ranges") || !j["ranges"].is_array()) return bad("expected \"ranges\": [...]");
  if (!j.contains("sessions") || !j["sessions"].is_array()) {
    return bad("expected \"sessions\": [...]");
  }
  TrainingRanges out;
  for (const auto& r : j["ranges"]) {
    if (!r.is_object() || !r.contains("source") || !r["source"].is_string() ||
        !r.contains("range") || !r["range"].is_string()) {
      return bad("each range needs \"source\" and \"range\" strings");
    }
    Result<market::DateRange> range = market::DateRange::Parse(r["range"].get<std::string>());
    if (!range.ok()) return bad(range.status().message());
    out.ranges.push_back({r["source"].get<std::string>(), *range});
  }
  for (const auto& s : j["sessions"]) {
    if (!s.is_string()) return bad("sessions must be \"YYYY-MM-DD\" strings");
    const std::string d = s.get<std::string>();
    Result<market::DateRange> day = market::DateRange::Parse(d + ":" + d);
    if (!day.ok() || day->first == 0) return bad("bad session date '" + d + "'");
    out.sessions.push_back(day->first);
  }
  std::sort(out.sessions.begin(), out.sessions.end());
  return out;
}

}  // namespace rlt::train
