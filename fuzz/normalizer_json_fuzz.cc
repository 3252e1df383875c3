// Fuzzes the feature normaliser's loader (features/normalizer.h), as `rltrade signal` and
// `eval` read RUN_DIR/normalizer.json: the text is parsed without exceptions, then
// Normalizer::FromJson. A loaded normaliser is applied to a small feature matrix with its
// own names (must not crash; outputs are finite or NaN, within +-clip when clipping) and
// saved back with ToJson, which must load again.
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "features/normalizer.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json json = nlohmann::json::parse(rlt::fuzz::AsText(data, size), nullptr,
                                              /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  auto n = rlt::features::Normalizer::FromJson(json);
  (void)rlt::features::Normalizer::FromJson(json, {"ret_1", "rsi_14"});
  if (!n.ok()) {
    FUZZ_REQUIRE(!n.status().message().empty(), "error without a message");
    return 0;
  }
  const size_t cols = n->names().size();
  if (cols > 64) return 0;  // keep each run small
  rlt::features::FeatureMatrix m;
  m.names = n->names();
  m.cols = static_cast<int64_t>(cols);
  const float kValues[] = {0.0f,   std::numeric_limits<float>::quiet_NaN(), 1e30f, -1.0f, 3.5f,
                           -1e-30f};
  m.rows = 6;
  for (int64_t r = 0; r < m.rows; ++r) {
    for (size_t c = 0; c < cols; ++c) m.values.push_back(kValues[(r + c) % 6]);
  }
  n->Apply(m);
  const double clip = n->options().clip;
  for (float v : m.values) {
    FUZZ_REQUIRE(!std::isinf(v), "an infinite normalised value");
    if (clip > 0 && !std::isnan(v)) FUZZ_REQUIRE(std::fabs(v) <= clip * (1 + 1e-6), "not clipped");
  }
  auto again = rlt::features::Normalizer::FromJson(n->ToJson());
  FUZZ_REQUIRE(again.ok(), "ToJson output does not load: " + again.status().message());
  return 0;
}
