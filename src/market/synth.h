// rltrade market: synthetic bar generator for tests, demos and benchmarks.
//
// GenerateSynthetic() builds MarketData with the same layout the CSV reader returns, so
// everything downstream can run without real data. Two kinds:
//  - intraday: weekday sessions of fixed bars (default 09:15-15:30 Asia/Kolkata, 5-min
//    bars: 75 bars a session, each bar stamped with its start time);
//  - daily: one bar per weekday, stamped at the local session close time.
// Return model, per bar t of a session with bars k = 0..B-1 (all log-returns):
//    r_t = drift + c * (r_{t-1} + ... + r_{t-L}) + s_k * e_t  [+ gap at k = 0] [+ jump]
//    e_t = sqrt(h_t) z_t,  h_{t+1} = omega + alpha e_t^2 + beta h_t     (GARCH(1,1),
//    Bollerslev 1986; GBM is alpha = beta = 0, h = omega / (1 - 0) constant)
// s_k is an intraday U-shape multiplier on volatility (larger at the open and close,
// mean of s_k^2 = 1). omega is derived from annual_vol so that the unconditional
// variance matches it: per-bar variance v = (1 - overnight_fraction) * annual_vol^2 /
// (252 * B) and omega = (1 - alpha - beta) * v (e.g. 25% vol, 75 bars, 20% overnight:
// v = 2.65e-6, omega = 2.6e-8 with the default alpha = 0.05, beta = 0.94).
// The predictable part c * sum(last L returns) is scaled so that std(predictable) /
// std(noise) ~= signal_to_noise, assuming roughly uncorrelated returns:
// c = snr / sqrt(L (1 + snr^2)). Positive snr is momentum, negative mean reversion,
// 0 (default) none. |snr| must keep c * L < 1 (for L = 5, |snr| < 0.5) or the process
// would explode.
//
// Not a market simulator: no order book, no cross-symbol correlation, no holidays.
// Deterministic: symbol i draws from Rng(seed + i); same options -> identical data.
#ifndef RLT_MARKET_SYNTH_H_
#define RLT_MARKET_SYNTH_H_

#include <cstdint>
#include <string>

#include "core/status.h"
#include "market/csv.h"

namespace rlt::market {

enum class SynthKind { kIntraday, kDaily };
enum class SynthModel { kGbm, kGarch };

// Parse "intraday"/"daily" and "gbm"/"garch"; errors list the valid values.
Result<SynthKind> ParseSynthKind(const std::string& text);
Result<SynthModel> ParseSynthModel(const std::string& text);

struct SynthOptions {
  SynthKind kind = SynthKind::kIntraday;
  int num_symbols = 1;            // symbols SYN0, SYN1, ...
  int num_days = 20;              // weekday sessions
  int32_t start_date = 20230102;  // yyyymmdd; first session is the first weekday >= it
  std::string timezone = "Asia/Kolkata";
  int session_open_minute = 9 * 60 + 15;  // local minutes after midnight
  int session_close_minute = 15 * 60 + 30;
  int bar_minutes = 5;  // intraday only
  uint64_t seed = 1;
  // Daily kind: kGbm (constant variance, default) or kGarch. Intraday always uses GARCH.
  SynthModel model = SynthModel::kGbm;

  double initial_price = 100.0;
  double annual_vol = 0.25;   // long-run annualised volatility (252 sessions a year)
  double annual_drift = 0.0;  // annualised mean log-return
  double garch_alpha = 0.05;
  double garch_beta = 0.94;          // persistence alpha + beta = 0.99
  double overnight_fraction = 0.2;   // intraday: share of daily variance in the opening gap
  double vol_ushape = 0.8;           // vol multiplier at the open/close is ~(1+x) x midday
  double volume_ushape = 2.0;        // same for volume
  double jump_probability = 0.0005;  // per bar
  double jump_std = 0.01;            // jump log-size standard deviation
  double base_volume = 100000.0;     // mean volume per bar (before the U-shape)
  double signal_to_noise = 0.0;      // see the file comment
  int signal_lookback = 5;
};

// REQUIRES nothing; invalid options (unknown time zone, empty session, explosive
// signal) return InvalidArgument.
Result<MarketData> GenerateSynthetic(const SynthOptions& options);

}  // namespace rlt::market

#endif  // RLT_MARKET_SYNTH_H_
