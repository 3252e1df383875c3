// rltrade env: OptionsPortfolioEnv — a daily portfolio of an index and listed options on it
//, with self-financing accounting.
//
// Data, prepared once per set of settings and shared read-only by every env
// (PrepareOptionsData; MakeEnvs calls it through the registry's `prepare` hook):
//  - The underlying: daily closes, synthetic by default (a GARCH(1,1) geometric random
//    walk, so that realised and implied vol move in regimes), or the closes of a daily bar
//    CSV (`underlying = "PATH"`, e.g. ../shared/data/index/GSPC_yahoo_*.csv), restricted to
//    `range`. Days are the file's (or the generator's business days).
//  - The chain: market::GenerateOptionChain over those closes (the chain_* keys are its
//    options; the env's defaults list 3 monthlies and the weeklies, moneyness 0.85-1.15),
//    priced once with market::PriceChain (the model's vol, Black-Scholes-Merton Greeks).
//  - Or a listed chain file (`chain_file = "PATH"`, read by market/option_chain_csv.h with
//    BadRowPolicy::kFail): its quote dates are the days, its underlying column the closes
//    (a file without one is an InvalidArgument naming the file and the columns looked
//    for), its bids and asks the quotes, priced once with market::PriceChain (kQuotes:
//    implied vols solved from the mids at `rate` and `dividend`). A range that the file's
//    dates do not cover (no date in it, or more than 7 calendar days between an end of the
//    range and the file's first or last date) is an InvalidArgument naming the file, the
//    range and the file's dates. The features use the history the file has (no 50-day
//    wait: shorter windows on its first days). A file with a style column (style,
//    exercise_style) holding A / American is refused: everything here is
//    Black-Scholes-Merton. A zero ask is no offer, a zero bid no bid: only offered
//    contracts are selected; a purchase needs an ask and a sale a bid (else the position
//    stays as it is); a contract without an offer (or no row) that day is unquoted and
//    marked by `missing_quote`: "surface" (default) prices it by Black-Scholes-Merton at
//    that day's implied-vol surface (SurfaceIv in options_portfolio.cc: per expiry, the
//    out-of-the-money vols of the quoted strikes, linear in ln(K / F) between neighbours,
//    flat beyond; across expiries total variance linear in time, flat vol beyond; the
//    contract's last quoted vol on a day with no quote to fit), "last" marks it at its
//    last quote's mid. Info `missing_quote_marks` counts (held contract, day) pairs
//    marked so in the episode. A bucket with nothing to select on a day (no offered
//    contract expiring after it, e.g. on the file's last expiry) is empty that day: it
//    holds nothing, shows zero features and selects again the next day.
//  - Buckets: tenors (calendar days) x moneyness x {call, put}; with the defaults 2 x 5 x 2
//    = 20, ordered tenor-major, then moneyness, calls before puts. On day d bucket
//    (tau, m, right) selects among day d's contracts of that right expiring after d the
//    expiry nearest to d + tau days (ties: the later), then the strike nearest to m S_d
//    (ties: the lower). Only the contracts some bucket can select are kept, each with its
//    quotes from the first day it can be selected to its expiry; the rest of the chain is
//    dropped after preparation.
//
// Episode: `episode_days` trading days from a start day drawn uniformly from the days
// with a full feature history (random_start) or from the first such day. Truncated at
// the episode's end or when the data ends; terminated when net worth <= 0.
//
// A bucket holds one real contract (strike, expiry) that ages day by day. When a day's
// date reaches its expiry (the first trading day on or after it: exchange holidays are
// not modelled), the position settles in cash at intrinsic value at that day's close and
// the bucket rolls to the contract it selects on that day. At reset every bucket selects.
//
// Action: Box(1 + K) in [-1, 1]: target weights of the underlying (index 0) and of each
// bucket. Target value = w max_position V (V = net worth at mids before trading); shares
// = trunc(value / S), contracts = trunc(value / (mid multiplier)) (toward zero; whole
// units; a contract whose mid is below min_option_price gets no new position). Trades
// cross the spread (buy at the ask, sell at the bid) and pay fee_per_contract per contract;
// shares trade at S (1 +- stock_cost). Cash is debited for every purchase and credited
// for every sale; it earns (or, negative, pays) `rate` and long (short) shares receive
// (pay) the dividend yield. Non-finite actions are treated as 0.
//
// Margin: requirement M = sum over long options of their mid value (paid in full: not
// marginable) + sum over short options of max(short_margin S - OTM amount,
// min_margin S) x multiplier x |contracts| + stock_margin x |shares| x S. Before trading,
// if the targets' M plus the trade's costs exceeds V, every target is scaled toward flat
// by the largest alpha in [0, 1] (bisection to 2^-12) for which the unrounded targets'
// M plus costs fit within V less one unit's trading cost per asset with a nonzero target;
// whole units rounded toward zero then need no more (their M is not larger, their costs
// less than one unit's cost more per asset), so the traded portfolio always fits.
// After the day's move, if M > V (a margin call), the whole portfolio is liquidated at that
// day's bid/ask (info `liquidations` counts them).
//
// Self-financing: every step, V_after - V_before = sum over assets of (units held after
// trading) x (mark change) + interest + dividends - costs (spread paid relative to mid,
// fees, stock costs, a liquidation's costs), where an expiring option's new mark is its
// intrinsic value. `books()` holds these terms for the last step; CheckSelfFinancing tests
// them (RLT_DCHECK every step in debug builds; options_portfolio_test.cc in all builds).
//
// Reward (reward = "log_return", the default): log(V_t+1 / V_t) - drawdown_penalty x
// drawdown - turnover_penalty x traded value / V_t, where a ruin (V <= 0) counts as
// log(1e-4). reward = "shaped" reproduces the replaced system's formula for comparison:
// 100 r + 0.3 (10 Sharpe of the last 20 step returns) + 0.2 (-50 drawdown) - 100 cost / V
// + 0.1 (5 active positions / 21) - max(0, largest |weight| - 0.3) 20, clipped to +-100,
// with r = V_t+1 / V_t - 1 and the Sharpe ratio mean/sd (sample) of up to 20 returns.
//
// Observation (7 + 9K + (K + 1) + 6 floats; 214 with 20 buckets):
//  underlying: log return x 100, realised vol 10 and 20 days (annualised), close / SMA20 - 1
//    and close / SMA50 - 1 (x 10), log momentum 5 and 20 days (x 10);
//  per bucket: mid / S x 10, spread / mid, implied vol, delta, gamma S / 10, vega / S x 10,
//    theta (per year) / S, ln(K / S) x 10, years to expiry x 4;
//  portfolio: weights (position value / V, underlying first), cash / V, net delta
//    (dollar delta / V), net gamma (dollar gamma of a 1% move / V x 100), net vega (per
//    vol point / V x 100), drawdown from the episode's peak, fraction of the episode done.
// Info (kInfo* indices): net_worth, cash, shares, costs (cumulative), drawdown,
// margin_ratio (M / V), liquidations, date (yyyymmdd), underlying (S), gross_exposure
// (sum of |position value| / V), missing_quote_marks (see chain_file above; not saved
// in states: it restarts at 0 on a resume).
#ifndef RLT_ENV_ENVS_OPTIONS_PORTFOLIO_H_
#define RLT_ENV_ENVS_OPTIONS_PORTFOLIO_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/status.h"
#include "env/env.h"
#include "market/option_chain_synth.h"

namespace rlt::env {

// Info indices (see the file comment).
enum OptionsInfo : int {
  kOptInfoNetWorth = 0,
  kOptInfoCash,
  kOptInfoShares,
  kOptInfoCosts,
  kOptInfoDrawdown,
  kOptInfoMarginRatio,
  kOptInfoLiquidations,
  kOptInfoDate,
  kOptInfoUnderlying,
  kOptInfoGrossExposure,
  kOptInfoMissingQuoteMarks,
};

struct OptionsPortfolioOptions {
  // Data.
  FilePath underlying = "synthetic";      // "synthetic" or a daily bar CSV path
  FilePath chain_file;                    // "" (the synthetic chain) or a listed chain CSV
  std::string missing_quote = "surface";  // chain_file: mark of a held unquoted contract
  std::string range;                      // "YYYY-MM-DD:YYYY-MM-DD" of the days used ("" = all)
  int synthetic_days = 2520;              // synthetic: business days
  std::string synthetic_start = "2014-01-02";
  double synthetic_spot = 2000;   // synthetic: first close
  double synthetic_drift = 0.07;  // synthetic: drift per year
  double synthetic_vol = 0.18;    // synthetic: long-run vol per sqrt(year)
  double synthetic_alpha = 0.08;  // synthetic: GARCH(1,1) alpha (daily)
  double synthetic_beta = 0.9;    // synthetic: GARCH(1,1) beta (daily)
  uint64_t synthetic_seed = 1;    // synthetic: generator seed
  double rate = 0.02;             // risk-free rate (cash and pricing), continuous per year
  double dividend = 0.015;        // the index's dividend yield (pricing and shares)
  // Chain: market::ChainSynthOptions under `chain_` keys (VisitFields), with this
  // environment's own listing defaults; its rate, dividend and seed are the environment's
  // rate, dividend and synthetic_seed (ChainOptions in options_portfolio.cc).
  market::ChainSynthOptions chain = DefaultChain();
  // Universe and trading.
  std::vector<int> tenors = {30, 60};                               // calendar days
  std::vector<double> moneyness = {0.95, 0.975, 1.0, 1.025, 1.05};  // strike / spot
  double max_position = 0.2;       // |target value| <= max_position x V per asset
  double multiplier = 100;         // shares per contract
  double fee_per_contract = 0.65;  // currency per contract traded
  double stock_cost = 0.0001;      // fraction of traded stock value
  double min_option_price = 0.05;  // no new position in a contract with a lower mid
  double initial_cash = 1e6;
  double short_margin = 0.2;  // short option margin: max(short_margin S - OTM, min_margin S)
  double min_margin = 0.1;
  double stock_margin = 0.5;  // fraction of |shares| S required
  // Episodes and reward.
  int episode_days = 252;
  bool random_start = true;
  std::string reward = "log_return";
  double drawdown_penalty = 0;
  double turnover_penalty = 0;

  // The listed chain of an index: three monthly expiries, strikes within 15% of the spot.
  static market::ChainSynthOptions DefaultChain() {
    market::ChainSynthOptions c;
    c.moneyness_min = 0.85;
    c.moneyness_max = 1.15;
    c.monthly_expiries = 3;
    return c;
  }

  template <typename V>
  void VisitFields(V& v) {
    v("underlying", &underlying,
      "\"synthetic\" or a daily bar CSV (Date, Close columns); with chain_file, a bar file "
      "whose close on each quote date replaces the chain's underlying column (which must "
      "agree with it within 2 %)",
      {"synthetic"});
    v("chain_file", &chain_file,
      "a listed option chain CSV (market/option_chain_csv.h): its quote dates are the days, "
      "its underlying column the closes, its bids and asks the quotes (empty: the synthetic "
      "chain)");
    v("missing_quote", &missing_quote,
      "chain_file: a held contract without a quote on a day is marked at the price of that "
      "day's implied-volatility surface (\"surface\") or at its last quote (\"last\")",
      {"surface", "last"});
    v("range", &range, "days of the underlying used, YYYY-MM-DD:YYYY-MM-DD (empty = all)");
    v("synthetic_days", &synthetic_days, "synthetic underlying: business days");
    v("synthetic_start", &synthetic_start, "synthetic underlying: first date YYYY-MM-DD");
    v("synthetic_spot", &synthetic_spot, "synthetic underlying: first close");
    v("synthetic_drift", &synthetic_drift, "synthetic underlying: drift per year");
    v("synthetic_vol", &synthetic_vol, "synthetic underlying: long-run vol per sqrt(year)");
    v("synthetic_alpha", &synthetic_alpha, "synthetic underlying: GARCH(1,1) alpha per day");
    v("synthetic_beta", &synthetic_beta, "synthetic underlying: GARCH(1,1) beta per day");
    v("synthetic_seed", &synthetic_seed, "synthetic underlying: seed");
    v("rate", &rate, "risk-free rate per year, continuous (cash, pricing)");
    v("dividend", &dividend, "dividend yield of the underlying per year, continuous");
    VisitPrefixed(v, chain, "chain_", {"rate", "dividend", "seed"});
    v("tenors", &tenors, "bucket tenors in calendar days");
    v("moneyness", &moneyness, "bucket strikes / spot");
    v("max_position", &max_position, "largest |position value| / net worth per asset");
    v("multiplier", &multiplier, "shares per option contract");
    v("fee_per_contract", &fee_per_contract, "fee per option contract traded");
    v("stock_cost", &stock_cost, "cost per unit of traded stock value");
    v("min_option_price", &min_option_price, "no new position in contracts quoted below this");
    v("initial_cash", &initial_cash, "cash at the start of an episode");
    v("short_margin", &short_margin, "short option margin: fraction of S less OTM amount");
    v("min_margin", &min_margin, "short option margin: at least this fraction of S");
    v("stock_margin", &stock_margin, "margin per unit of |shares| value");
    v("episode_days", &episode_days, "trading days per episode");
    v("random_start", &random_start, "start episodes on a random day (false: the first)");
    v("reward", &reward, "reward function", {"log_return", "shaped"});
    v("drawdown_penalty", &drawdown_penalty, "log_return: minus this x drawdown");
    v("turnover_penalty", &turnover_penalty, "log_return: minus this x traded value / V");
  }
};

// The prepared data (see the file comment). Read-only once built.
struct OptionsData {
  int num_buckets = 0;
  std::vector<int32_t> dates;  // yyyymmdd per day
  std::vector<int32_t> days;   // days since 1970-01-01 per day
  std::vector<double> close;   // S per day
  static constexpr int kUnderlyingFeatures = 7;
  std::vector<float> underlying_features;  // (days, kUnderlyingFeatures)
  int first_day = 0;                       // first day with a full feature history
  // Tracked contracts.
  std::vector<double> strike;
  std::vector<double> phi;            // +1 call, -1 put
  std::vector<int32_t> expiry_day;    // first day index on or after the expiry date
  std::vector<int32_t> first_row;     // row of the contract's first tracked day
  std::vector<int32_t> first_listed;  // that day's index
  // Rows (contract, day): quotes and the bucket features, one cache line each (a step
  // reads one row per bucket; the same contract's next day is the next line).
  static constexpr int kBucketFeatures = 9;
  // Row flags: quoted (the file quotes the contract that day, ask > 0; else mid is the
  // missing_quote mark), and which trades the quote allows.
  static constexpr int32_t kQuoted = 1, kCanBuy = 2, kCanSell = 4;
  struct alignas(64) Row {
    double bid = 0, ask = 0, mid = 0;
    float features[kBucketFeatures] = {};  // the observation's per-bucket block
    int32_t flags = kQuoted | kCanBuy | kCanSell;
  };
  std::vector<Row> rows;
  // Selection: roll[d * num_buckets + b] = the tracked contract bucket b selects on day d
  // (-1: none; a chain file may list no contract a bucket can select, e.g. on its last
  // expiry's day).
  std::vector<int32_t> roll;
  bool from_file = false;  // chain_file: quotes from the file

  int num_days() const { return static_cast<int>(dates.size()); }
  int64_t RowOf(int32_t contract, int day) const {
    return first_row[contract] + day - first_listed[contract];
  }
};

// Validates the options (InvalidArgument naming the key), reads or generates the
// underlying, builds and prices the chain, selects the buckets' contracts. Errors: a file
// error (the reader's, naming file:line), fewer than first_day + 2 days in `range`.
// Results are cached per settings for the life of the process (a weak cache: the data
// lives while some env holds it).
Result<std::shared_ptr<const OptionsData>> PrepareOptionsData(
    const OptionsPortfolioOptions& options);

// PrepareOptionsData with a listed chain in memory in place of chain_file's (every check
// of a chain file but its style column's; not cached). Its messages name chain_file if
// set, else the chain's underlying.
Result<std::shared_ptr<const OptionsData>> PrepareOptionsDataFromChain(
    const OptionsPortfolioOptions& options, const market::OptionChain& chain);

// One step's books (the self-financing identity's terms).
struct StepBooks {
  double value_before = 0;  // V at the old marks, before trading
  double value_after = 0;   // V at the new marks, after settlement and any liquidation
  double mark_pnl = 0;      // sum of units held after trading x mark change
  double carry = 0;         // interest on cash + dividends on shares
  double costs = 0;         // spread paid relative to mid + fees + stock costs
};
// Ok when value_after - value_before == mark_pnl + carry - costs within
// tolerance x max(1, |value_before|); else a DataError listing the terms.
Status CheckSelfFinancing(const StepBooks& books, double tolerance = 1e-9);

class OptionsPortfolioEnv : public Env {
 public:
  static Result<std::unique_ptr<OptionsPortfolioEnv>> Create(
      const OptionsPortfolioOptions& options, std::shared_ptr<const OptionsData> data);

  const EnvSpec& spec() const override { return spec_; }
  void Reset(float* obs, double* info) override;
  StepResult Step(const float* action, float* obs, double* info) override;
  void SaveState(StateWriter& out) const override;
  Status LoadState(StateReader& in) override;

  const OptionsData& data() const { return *data_; }
  const StepBooks& books() const { return books_; }
  // Current holdings: index 0 shares, 1 + b bucket b's contracts; and bucket b's contract.
  double units(int asset) const { return units_[asset]; }
  int32_t contract(int bucket) const { return contract_[bucket]; }
  int day() const { return day_; }
  double cash() const { return cash_; }
  // (held contract, day) pairs of the episode marked without a quote (chain_file).
  int64_t missing_quote_marks() const { return missing_marks_; }
  double NetWorth() const;

 private:
  OptionsPortfolioEnv(const OptionsPortfolioOptions& options,
                      std::shared_ptr<const OptionsData> data);
  // Mark of asset a on the current day (S, or the contract's mid).
  double Mark(int asset) const;
  // Fills the per-unit arrays below from the current day's quotes.
  void PrepareDay();
  // Margin requirement of holding `units` (PrepareDay()'s day).
  double Margin(const double* units) const;
  // Trades from units_ to `target` at the current day's quotes; returns the costs and
  // adds the traded value to *traded.
  double Trade(const double* target, double* traded);
  // Requirement plus trading costs of the unrounded targets alpha x target_, given the
  // requirement of target_ (PrepareDay()'s day).
  double ScaledNeed(double alpha, double target_margin) const;
  void Liquidate(double* costs, double* traded);
  // v: net worth; margin: the requirement of the current holdings.
  void Write(float* obs, double* info, double v, double margin) const;

  OptionsPortfolioOptions options_;
  std::shared_ptr<const OptionsData> data_;
  EnvSpec spec_;
  int assets_ = 0;
  bool shaped_ = false;
  // Episode state.
  int day_ = 0, start_day_ = 0, end_day_ = 0;
  double cash_ = 0, peak_ = 0, costs_total_ = 0;
  int64_t liquidations_ = 0;
  int64_t missing_marks_ = 0;      // (held contract, day) pairs marked without a quote
  std::vector<double> units_;      // (assets)
  std::vector<int32_t> contract_;  // (buckets)
  std::vector<double> recent_;     // shaped: the last 20 step returns, ring
  int recent_count_ = 0, recent_next_ = 0;
  // Scratch (not state).
  std::vector<double> target_, scaled_;
  // Per unit of each asset on the prepared day: value at mid, trading cost (half spread
  // and fee, or stock cost), margin held long and short.
  std::vector<double> unit_value_, unit_cost_, long_margin_, short_margin_;
  std::vector<uint8_t> can_buy_, can_sell_;  // the quote allows a purchase / a sale
  int prepared_day_ = -1;                    // the day (and contracts) the arrays above hold
  StepBooks books_;
};

Result<std::unique_ptr<Env>> MakeOptionsPortfolioEnv(
    const std::map<std::string, std::string>& settings, std::shared_ptr<const void> prepared);
// The registry's prepare hook: PrepareOptionsData of the settings.
Result<std::shared_ptr<const void>> PrepareOptionsPortfolio(
    const std::map<std::string, std::string>& settings);

}  // namespace rlt::env

#endif  // RLT_ENV_ENVS_OPTIONS_PORTFOLIO_H_
