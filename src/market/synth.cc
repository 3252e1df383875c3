// rltrade market: the synthetic bar generator (model in synth.h).
#include "market/synth.h"

#include <algorithm>
#include <cmath>

#include "core/civil_time.h"
#include "core/rng.h"
#include "market/sessions.h"
#include "market/timezone.h"

namespace rlt::market {
namespace {

// Everything derived from the options once, shared by all symbols.
struct Plan {
  std::vector<int64_t> local_times;  // local wall-clock start of every bar, all sessions
  std::vector<int64_t> utc_times;
  std::vector<int32_t> offsets;
  int bars_per_session = 1;
  std::vector<double> vol_mult;     // (bars_per_session) s_k, mean of s_k^2 = 1
  std::vector<double> volume_mult;  // (bars_per_session) mean 1
  double bar_var = 0;               // unconditional per-bar noise variance
  double gap_std = 0;
  double omega = 0, alpha = 0, beta = 0;
  double drift = 0;
  double signal_coef = 0;
};

// U-shape over a session: 1 + amplitude * (2x - 1)^2 at the bar midpoints x.
std::vector<double> UShape(int bars, double amplitude) {
  std::vector<double> w(bars);
  for (int k = 0; k < bars; ++k) {
    const double x = (k + 0.5) / bars;
    w[k] = 1.0 + amplitude * (2 * x - 1) * (2 * x - 1);
  }
  return w;
}

Status CheckOptions(const SynthOptions& o) {
  auto bad = [](const std::string& m) { return Status::InvalidArgument(m); };
  if (o.num_symbols < 1) return bad("synthetic data needs at least 1 symbol");
  if (o.num_days < 1) return bad("synthetic data needs at least 1 day");
  if (o.bar_minutes < 1) return bad("bar_minutes must be >= 1");
  if (o.session_open_minute < 0 || o.session_close_minute > 24 * 60 ||
      o.session_close_minute - o.session_open_minute < o.bar_minutes) {
    return bad("the session must hold at least one bar (e.g. --session 09:15-15:30)");
  }
  const int y = o.start_date / 10000, m = o.start_date / 100 % 100, d = o.start_date % 100;
  if (m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, m)) {
    return bad("start date " + std::to_string(o.start_date) + " is not a valid date");
  }
  if (!(o.annual_vol > 0) || !(o.initial_price > 0)) {
    return bad("annual_vol and initial_price must be > 0");
  }
  if (o.garch_alpha < 0 || o.garch_beta < 0 || o.garch_alpha + o.garch_beta >= 1) {
    return bad("GARCH needs alpha, beta >= 0 and alpha + beta < 1");
  }
  if (o.overnight_fraction < 0 || o.overnight_fraction >= 1) {
    return bad("overnight_fraction must be in [0, 1)");
  }
  if (o.signal_lookback < 1) return bad("signal_lookback must be >= 1");
  return Status::Ok();
}

Status PlanTimes(const SynthOptions& o, const TimeZone& tz, Plan* plan) {
  const bool intraday = o.kind == SynthKind::kIntraday;
  plan->bars_per_session =
      intraday ? (o.session_close_minute - o.session_open_minute) / o.bar_minutes : 1;
  int64_t day = DaysFromCivil(o.start_date / 10000, o.start_date / 100 % 100, o.start_date % 100);
  for (int session = 0; session < o.num_days; ++day) {
    const int wd = Weekday(day);
    if (wd == 0 || wd == 6) continue;
    for (int k = 0; k < plan->bars_per_session; ++k) {
      const int64_t minute =
          intraday ? o.session_open_minute + k * o.bar_minutes : o.session_close_minute;
      const int64_t local = day * 86400 + minute * 60;
      Result<int64_t> utc = tz.LocalToUtc(local);
      if (!utc.ok()) return utc.status();
      plan->local_times.push_back(local);
      plan->utc_times.push_back(*utc);
      plan->offsets.push_back(tz.OffsetAt(*utc));
    }
    ++session;
  }
  return Status::Ok();
}

Result<Plan> MakePlan(const SynthOptions& o, const TimeZone& tz) {
  Plan plan;
  RLT_RETURN_IF_ERROR(PlanTimes(o, tz, &plan));
  const bool intraday = o.kind == SynthKind::kIntraday;
  const int bars = plan.bars_per_session;
  const double daily_var = o.annual_vol * o.annual_vol / 252.0;
  const double overnight = intraday ? o.overnight_fraction : 0.0;
  plan.bar_var = (1 - overnight) * daily_var / bars;
  plan.gap_std = std::sqrt(overnight * daily_var);
  const bool garch = intraday || o.model == SynthModel::kGarch;
  plan.alpha = garch ? o.garch_alpha : 0.0;
  plan.beta = garch ? o.garch_beta : 0.0;
  plan.omega = (1 - plan.alpha - plan.beta) * plan.bar_var;
  plan.drift = o.annual_drift / (252.0 * bars);
  // Volatility multiplier s_k normalised so that mean(s_k^2) = 1; volume to mean 1.
  plan.vol_mult = UShape(bars, intraday ? o.vol_ushape : 0.0);
  double mean_sq = 0;
  for (double s : plan.vol_mult) mean_sq += s * s / bars;
  for (double& s : plan.vol_mult) s /= std::sqrt(mean_sq);
  plan.volume_mult = UShape(bars, intraday ? o.volume_ushape : 0.0);
  double mean = 0;
  for (double v : plan.volume_mult) mean += v / bars;
  for (double& v : plan.volume_mult) v /= mean;
  const double snr = o.signal_to_noise;
  const int lookback = o.signal_lookback;
  plan.signal_coef = snr / std::sqrt(lookback * (1 + snr * snr));
  if (std::abs(plan.signal_coef) * lookback >= 0.99) {
    return Status::InvalidArgument("signal_to_noise " + std::to_string(snr) +
                                   " is too large for lookback " + std::to_string(lookback) +
                                   ": the return process would explode; use |snr| < " +
                                   std::to_string(0.99 / std::sqrt(lookback - 0.9801)));
  }
  return plan;
}

Bars GenerateSymbol(const SynthOptions& o, const Plan& plan, int index) {
  Rng rng(o.seed + static_cast<uint64_t>(index));
  Bars b;
  b.symbol = "SYN" + std::to_string(index);
  b.timezone = o.timezone;
  b.time = plan.utc_times;
  b.utc_offset = plan.offsets;
  const size_t n = plan.utc_times.size();
  for (auto* col : {&b.open, &b.high, &b.low, &b.close, &b.volume}) col->resize(n);
  std::vector<double> recent(o.signal_lookback, 0.0);  // ring of the last L returns
  double h = plan.bar_var;
  double prev_close = o.initial_price;
  for (size_t t = 0; t < n; ++t) {
    const int k = static_cast<int>(t % plan.bars_per_session);
    double trailing = 0;
    for (double r : recent) trailing += r;
    const double shock = std::sqrt(h) * rng.Normal();
    const double s = plan.vol_mult[k];
    const double gap = (k == 0 && t > 0) ? plan.gap_std * rng.Normal() : 0.0;
    const double jump = rng.Bernoulli(o.jump_probability) ? o.jump_std * rng.Normal() : 0.0;
    const double r = plan.drift + plan.signal_coef * trailing + s * shock + gap + jump;
    const double range_std = s * std::sqrt(h);
    h = plan.omega + plan.alpha * shock * shock + plan.beta * h;
    recent[t % recent.size()] = r;
    const double open = prev_close * std::exp(gap);
    const double close = prev_close * std::exp(r);
    b.open[t] = open;
    b.close[t] = close;
    b.high[t] = std::max(open, close) * std::exp(0.5 * range_std * std::abs(rng.Normal()));
    b.low[t] = std::min(open, close) * std::exp(-0.5 * range_std * std::abs(rng.Normal()));
    const double activity = std::sqrt(h / plan.bar_var);
    const double noise = std::exp(0.3 * rng.Normal() - 0.045);
    b.volume[t] =
        std::max<double>(1.0, std::round(o.base_volume * plan.volume_mult[k] * activity * noise));
    prev_close = close;
  }
  AssignSessions(b);
  return b;
}

}  // namespace

Result<SynthKind> ParseSynthKind(const std::string& text) {
  if (text == "intraday") return SynthKind::kIntraday;
  if (text == "daily") return SynthKind::kDaily;
  return Status::InvalidArgument("unknown kind '" + text + "'; valid kinds: intraday, daily");
}

Result<SynthModel> ParseSynthModel(const std::string& text) {
  if (text == "gbm") return SynthModel::kGbm;
  if (text == "garch") return SynthModel::kGarch;
  return Status::InvalidArgument("unknown model '" + text + "'; valid models: gbm, garch");
}

Result<MarketData> GenerateSynthetic(const SynthOptions& options) {
  RLT_RETURN_IF_ERROR(CheckOptions(options));
  RLT_ASSIGN_OR_RETURN(TimeZone tz, TimeZone::Load(options.timezone));
  RLT_ASSIGN_OR_RETURN(Plan plan, MakePlan(options, tz));
  MarketData data;
  for (int i = 0; i < options.num_symbols; ++i) {
    data.symbols.push_back(GenerateSymbol(options, plan, i));
  }
  // The reader returns symbols sorted by name ("SYN10" < "SYN2"); match it.
  std::sort(data.symbols.begin(), data.symbols.end(),
            [](const Bars& a, const Bars& b) { return a.symbol < b.symbol; });
  return data;
}

}  // namespace rlt::market
