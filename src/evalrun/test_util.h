// rltrade evalrun: small helpers shared by the evalrun tests (reading output files).
#ifndef RLT_EVALRUN_TEST_UTIL_H_
#define RLT_EVALRUN_TEST_UTIL_H_

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace rlt::evalrun::testing_util {

inline std::string Read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

inline std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  return cells;
}

}  // namespace rlt::evalrun::testing_util

#endif  // RLT_EVALRUN_TEST_UTIL_H_
