// rltrade features: the signal library, 184 causal candidate signals of one symbol's bars.
//
// What it is. A fixed catalogue of candidate signals for signal mining and for feature
// sets built from it: exactly 184 named series, in a fixed order, each with a causal
// definition. Names and order are fixed (configurations refer to signals by name); the
// one-line definition of every signal is in LibrarySignals() (library.cc), and every
// family is defined in full in docs/data.md, "The signal library". Families, in order:
//   A. bar ratios (8):     co, dv, hl, scco, vscco, dvscco, vhl, codv (vw = the bar
//                          "vwap" (2l + 2h + 3c + 3o) / 10, vr20 = v / SMA(v, 20))
//   B. technical (44):     MACD, Bollinger bands, Cutler RSI, STOCH, ATR, Williams %R,
//                          SMA slopes and distances, volume SMAs and ratios, momentum, ROC,
//                          realised volatility, all scale-free (divided by the close etc.)
//   C. swings (4):         distance to / bars since the last pivot high and low; a pivot
//                          is CONFIRMED two bars after it (never a centred window)
//   D. per-day (15):       restart at each session's first bar: return since the open,
//                          session vwap distance, session highs/lows, 5-bar session means
//   E. lags (9):           lret1 .. lret23 inside the session (the session open stands in
//                          for closes before the session's first bar)
//   F. q-variants (80):    q<name> = ts_rank(name, 5) of each signal of A..E
//   G. regime flags (22):  0/1 flags (trend_alignment in {-1,0,1}, greed/fear in 0..5)
//   H. long ranks (2):     ndv, nmomentum = ts_rank over 1,875 bars (25 sessions of 75)
// ts_rank(x, n)_t = (#{window values < x_t} + 0.5 #{other window values == x_t}) / (n - 1)
// over x_{t-n+1..t}, NaN unless all n values are finite.
//
// Causality. Value t depends on bars <= t only (leakage_test.cc perturbs every bar after
// t). Every value is NaN during its warm-up (never back-filled) and finite after it on
// positive prices: every denominator that can be zero has a stated value.
//
// Implementations. kFast is a per-bar state machine (library.cc): O(1) amortised per bar
// and signal (window sums of at most 50 values re-added, ts_rank over 5 values by direct
// comparison), O(window) per bar for the 100-bar percentile of the squeeze/expansion flags
// and the two 1,875-bar ranks (these two are computed only when selected).
// ComputeLibrary(kFast) runs the same state machine that StreamingLibrary exposes, so the
// stream equals the batch result bit for bit (library_test.cc checks all 184).
// kReference (library_reference.cc) recomputes every signal from its definition with plain
// window loops (and the plain-loop indicators of reference.h); slow, for tests.
//
// Thread safety: functions are pure; a StreamingLibrary is a value type, one per thread.
#ifndef RLT_FEATURES_LIBRARY_H_
#define RLT_FEATURES_LIBRARY_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "features/incremental.h"
#include "features/registry.h"
#include "market/bars.h"

namespace rlt::features {

// The number of signals in the library.
inline constexpr int kLibrarySize = 184;

enum class SignalKind {
  kContinuous,  // a real-valued signal of A..D and F (gets a q-variant)
  kLag,         // a session-reset log return of E (gets a q-variant)
  kRank,        // a long-horizon ts_rank of H
  kRegime,      // a binary or small-integer flag of G
};

struct LibrarySignal {
  std::string name;    // e.g. "qdv"
  std::string family;  // "bar_ratio", "technical", "swing", "per_day", "lag", "q", "regime", "rank"
  SignalKind kind;
  std::string definition;  // one line, causal
};

// The 184 signals in the library's fixed order.
const std::vector<LibrarySignal>& LibrarySignals();
std::vector<std::string> LibrarySignalNames();

// Whether `name` is one of the library's regime flags (kind kRegime): the columns the
// quantile normaliser gives `quantiles_binary` edges (normalizer.h).
bool IsRegimeSignal(const std::string& name);

// Indices of `names` in the library, in the given order. Errors: an unknown name
// (NotFound, naming it, with the nearest valid name); a name given twice (InvalidArgument).
Result<std::vector<int>> ResolveLibrarySignals(const std::vector<std::string>& names);

// Selected signals over all bars: values[k][t] is signal names[k] at bar t, NaN where it is
// undefined (warm-up).
struct LibraryColumns {
  std::vector<std::string> names;
  std::vector<std::vector<double>> values;  // (signals, bars)
};

// Computes the signals with indices `which` (in that order; empty = all 184). Errors:
// bars with columns of unequal length or without sessions assigned, an index outside
// [0, 184) (InvalidArgument).
Result<LibraryColumns> ComputeLibrary(const market::Bars& bars, std::span<const int> which = {},
                                      Implementation impl = Implementation::kFast);

// The library one bar at a time: Push(bar t) returns the selected signals at bar t, bit for
// bit equal to ComputeLibrary(bars, which, kFast) at row t. A session starts at the first
// bar pushed and wherever bar_in_session == 0. Copyable (a copy continues independently).
class StreamingLibrary {
 public:
  // Errors: an index outside [0, 184) (InvalidArgument).
  static Result<StreamingLibrary> Create(std::span<const int> which = {});
  StreamingLibrary(const StreamingLibrary& other);
  StreamingLibrary& operator=(const StreamingLibrary& other);
  StreamingLibrary(StreamingLibrary&&) noexcept;
  StreamingLibrary& operator=(StreamingLibrary&&) noexcept;
  ~StreamingLibrary();

  // Consumes the next bar; the returned values (one per selected signal, in the order of
  // names()) stay valid until the next Push.
  std::span<const double> Push(const StreamBar& bar);
  const std::vector<std::string>& names() const;
  int64_t bars_pushed() const;

  struct State;  // the per-bar state machine (library.cc)

 private:
  StreamingLibrary(std::unique_ptr<State> state, std::vector<int> which);
  std::unique_ptr<State> state_;
  std::vector<int> which_;
  std::vector<std::string> names_;
  std::vector<double> out_;
};

namespace reference {
// All 184 signals recomputed from their definitions (library_reference.cc), (184, bars).
// REQUIRES: sessions assigned, columns of equal length.
std::vector<std::vector<double>> ComputeLibrary(const market::Bars& bars);
}  // namespace reference

}  // namespace rlt::features

#endif  // RLT_FEATURES_LIBRARY_H_
