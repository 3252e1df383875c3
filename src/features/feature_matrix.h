// rltrade features: the dense feature array an environment reads.
//
// A FeatureMatrix is computed once per dataset (one symbol's bars) before any stepping:
// row t holds every feature at bar t, each computed from bars <= t only. Rows before
// `first_valid` are warm-up rows (some feature undefined, stored as NaN) and are never
// shown to an agent; from `first_valid` on, every value is finite.
#ifndef RLT_FEATURES_FEATURE_MATRIX_H_
#define RLT_FEATURES_FEATURE_MATRIX_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rlt::features {

struct FeatureMatrix {
  std::vector<std::string> names;  // (cols)
  int64_t rows = 0;                // one per bar
  int64_t cols = 0;                // one per feature
  int64_t first_valid = 0;         // first row where every feature is defined
  std::vector<float> values;       // (rows, cols), row-major; NaN where undefined

  const float* row(int64_t t) const { return values.data() + t * cols; }
  float at(int64_t t, int64_t c) const { return values[t * cols + c]; }
};

}  // namespace rlt::features

#endif  // RLT_FEATURES_FEATURE_MATRIX_H_
