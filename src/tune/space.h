// rltrade tune: the search space (SPACE.toml) and how a point of the unit cube becomes
// parameter values.
//
//   "algo.learning_rate" = { log_uniform = [1e-5, 1e-3] }
//   "algo.gae_lambda"    = { uniform = [0.8, 0.99] }
//   "algo.n_epochs"      = { int = [3, 20] }
//   "algo.batch_size"    = { choice = [128, 256, 512] }
//
// Keys are the dotted names `--set` takes (section.key); with an analytic objective
// (`--objective-fn`) they are x1, x2, ... A coordinate u in [0, 1) maps to: uniform
// a + u (b - a); log_uniform exp(ln a + u (ln b - ln a)); int a + floor(u (b - a + 1));
// choice the floor(u n)-th value. Errors name SPACE.toml:line, the key and the rule.
#ifndef RLT_TUNE_SPACE_H_
#define RLT_TUNE_SPACE_H_

#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::tune {

struct Param {
  enum class Kind { kUniform, kLogUniform, kInt, kChoice };
  std::string key;
  Kind kind = Kind::kUniform;
  double low = 0, high = 1;          // uniform, log_uniform, int
  std::vector<std::string> choices;  // choice: each value as --set text
  std::string place;                 // "SPACE.toml:3" for messages
  int line = 0;
};

struct Space {
  std::vector<Param> params;
  int dims() const { return static_cast<int>(params.size()); }
};

// The largest |bound| of an int distribution: 2^53, below which every whole number is a
// double (the unit cube maps through doubles).
inline constexpr double kMaxIntBound = 9007199254740992.0;

// Errors (Refused: the CLI exits 2; one line per problem): TOML syntax, an entry that is not one
// distribution, bounds that are not finite or not increasing, an int bound beyond
// +-kMaxIntBound, a width high - low that overflows, a choice list that is empty or holds a
// non-scalar, an unquoted dotted key. What a key means is the caller's
// (tune_run checks keys and values against the config).
Result<Space> ParseSpace(const std::string& text, const std::string& name);
Result<Space> LoadSpace(const std::string& path);

// The value of `p` at unit coordinate u, as --set text, and as a number (choice: its
// index unless the choice is numeric).
std::string ValueText(const Param& p, double u);
double ValueNumber(const Param& p, double u);

}  // namespace rlt::tune

#endif  // RLT_TUNE_SPACE_H_
