// rltrade cli: how `data check` and `chain check` list the problems of a data report
// (market::DataReport): grouped by rule in order of first appearance, at most
// `max_problems` per rule (0 = all), as text or as the JSON keys `problem_counts` and
// `problems`. One place, so both commands print problems the same way.
#ifndef RLT_CLI_PROBLEMS_OUTPUT_H_
#define RLT_CLI_PROBLEMS_OUTPUT_H_

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "market/csv.h"

namespace rlt::cli {

using ProblemGroups = std::vector<std::pair<std::string, std::vector<const market::DataProblem*>>>;

// Problems grouped by rule, in order of first appearance.
inline ProblemGroups GroupProblems(const market::DataReport& report) {
  ProblemGroups groups;
  for (const auto& p : report.problems) {
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == p.rule; });
    if (it == groups.end()) it = groups.insert(groups.end(), {p.rule, {}});
    it->second.push_back(&p);
  }
  return groups;
}

inline size_t ProblemsShown(int max_problems, size_t count) {
  return max_problems > 0 ? std::min<size_t>(max_problems, count) : count;
}

// "N problem(s); M row(s) <dropped_text>:", the count per rule, then each rule's problems.
inline std::string ProblemsText(const market::DataReport& report, int max_problems,
                                const std::string& dropped_text) {
  const ProblemGroups groups = GroupProblems(report);
  std::string s = fmt::format("{} problem(s); {} row(s) {}:\n", report.problems.size(),
                              report.rows_dropped, dropped_text);
  for (const auto& [rule, list] : groups) s += fmt::format("  {:>7} x {}\n", list.size(), rule);
  for (const auto& [rule, list] : groups) {
    const size_t shown = ProblemsShown(max_problems, list.size());
    s += fmt::format("{} ({} of {}):\n", rule, shown, list.size());
    for (size_t i = 0; i < shown; ++i) s += fmt::format("  {}\n", list[i]->ToString());
  }
  return s;
}

// Sets j["problem_counts"] = {rule: count} and j["problems"] = [{file, line, column, rule,
// detail, fix}, ...].
inline void AddProblemsJson(nlohmann::json& j, const market::DataReport& report, int max_problems) {
  j["problem_counts"] = nlohmann::json::object();
  j["problems"] = nlohmann::json::array();
  for (const auto& [rule, list] : GroupProblems(report)) {
    j["problem_counts"][rule] = list.size();
    const size_t shown = ProblemsShown(max_problems, list.size());
    for (size_t i = 0; i < shown; ++i) {
      const auto& p = *list[i];
      j["problems"].push_back({{"file", p.file},
                               {"line", p.line},
                               {"column", p.column},
                               {"rule", p.rule},
                               {"detail", p.detail},
                               {"fix", p.fix}});
    }
  }
}

}  // namespace rlt::cli

#endif  // RLT_CLI_PROBLEMS_OUTPUT_H_
