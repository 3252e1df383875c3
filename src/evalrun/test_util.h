// rltrade evalrun: the names the evalrun tests use for the shared test helpers
// (testing/testing.h: reading output files, splitting lines and cells).
#ifndef RLT_EVALRUN_TEST_UTIL_H_
#define RLT_EVALRUN_TEST_UTIL_H_

#include <filesystem>
#include <string>

#include "testing/testing.h"

namespace rlt::evalrun::testing_util {

inline std::string Read(const std::filesystem::path& p) { return rlt::testing::ReadFile(p); }
using rlt::testing::Cells;
using rlt::testing::Lines;

}  // namespace rlt::evalrun::testing_util

#endif  // RLT_EVALRUN_TEST_UTIL_H_
