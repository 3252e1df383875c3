// rltrade pricing tests: the oracle CSVs in ../shared/oracles (RLT_SHARED_DIR) as rows of
// options, and random options inside the documented domain. Generic helpers come from
// testing/testing.h.
#ifndef RLT_PRICING_TEST_UTIL_H_
#define RLT_PRICING_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/rng.h"
#include "pricing/pricing.h"
#include "testing/testing.h"

namespace rlt::pricing::testing_util {

// One CSV row as column name -> text.
using Row = std::map<std::string, std::string>;

// Rows of ../shared/oracles/<name>; empty when the folder is absent (tests then skip).
inline std::vector<Row> ReadOracle(const std::string& name) {
  const std::filesystem::path path = std::filesystem::path(RLT_SHARED_DIR) / "oracles" / name;
  const std::vector<std::string> lines = rlt::testing::Lines(rlt::testing::ReadFile(path));
  std::vector<Row> rows;
  if (lines.empty()) return rows;
  const std::vector<std::string> header = rlt::testing::Cells(lines[0]);
  for (size_t l = 1; l < lines.size(); ++l) {
    if (lines[l].empty()) continue;
    const std::vector<std::string> cells = rlt::testing::Cells(lines[l]);
    EXPECT_EQ(cells.size(), header.size()) << name << ": " << lines[l];
    Row row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

inline double Num(const Row& row, const std::string& key) { return std::stod(row.at(key)); }

// The option of an oracle row (columns type, strike, spot, q, r, t, vol).
inline OptionInputs InputsOf(const Row& row) {
  OptionInputs in;
  in.type = row.at("type") == "call" ? OptionType::kCall : OptionType::kPut;
  in.strike = Num(row, "strike");
  in.spot = Num(row, "spot");
  in.dividend = Num(row, "q");
  in.rate = Num(row, "r");
  in.time = Num(row, "t");
  in.vol = Num(row, "vol");
  return in;
}

// A random option in a realistic range: S 10..500, K = S * exp(N(0, 0.3)), r -0.02..0.12,
// q 0..0.08, sigma 0.05..1.0, T 1 day..5 years.
inline OptionInputs RandomOption(Rng& rng) {
  OptionInputs in;
  in.type = rng.Bernoulli(0.5) ? OptionType::kCall : OptionType::kPut;
  in.spot = rng.Uniform(10, 500);
  in.strike = in.spot * std::exp(0.3 * rng.Normal());
  in.rate = rng.Uniform(-0.02, 0.12);
  in.dividend = rng.Uniform(0, 0.08);
  in.vol = rng.Uniform(0.05, 1.0);
  in.time = std::exp(rng.Uniform(std::log(1 / 365.0), std::log(5.0)));
  return in;
}

}  // namespace rlt::pricing::testing_util

#endif  // RLT_PRICING_TEST_UTIL_H_
