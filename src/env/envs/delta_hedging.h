// rltrade env: DeltaHedgingEnv — hedge a short European option with its underlying
//, and the Monte Carlo hedging simulation behind `rltrade hedge`.
//
// The task. At t = 0 the agent sells `quantity` European options (call or put, strike K,
// maturity T = maturity_weeks / 52 years) at their Black-Scholes price with volatility
// `vol` and rate `rate` (no dividends) and puts the premium in a cash account that earns
// `rate`, continuously compounded. The underlying moves on a grid of steps of step_weeks
// (the last step is shorter when step_weeks does not divide maturity_weeks); every
// `rebalance_every` steps (at steps 0, k, 2k, ...) the agent's action sets the hedge, at
// the other steps the action is ignored and the hedge is held. Trades pay a proportional
// cost `cost` x |shares traded| x S. At maturity the option is cash-settled (the agent
// pays the payoff) and the hedge is sold at S_T, paying the proportional cost too.
//
// Paths (real-world measure):
//  - "gbm": S_{i+1} = S_i exp((drift - vol^2/2) dt + vol sqrt(dt) Z).
//  - "garch": GARCH(1,1) log returns per step, r = drift dt - h/2 + sqrt(h) Z with
//    h_{i+1} = omega + garch_alpha (r_i - drift dt + h_i/2)^2 + garch_beta h_i, the
//    unconditional variance omega / (1 - alpha - beta) = vol^2 dt (so `vol` is the
//    long-run annual volatility), h_0 = vol^2 dt. alpha and beta are per simulation step.
//    The option is still marked and hedged at the Black-Scholes vol `vol`: the gap between
//    the paths' volatility and the model's is the model risk an agent can learn about.
//
// Action: Box(1) in [-1, 1]: the hedge ratio h, shares of the underlying held per option
// sold (positive = long shares). A short call's Black-Scholes hedge is +N(d1) in [0, 1],
// a short put's N(d1) - 1 in [-1, 0], so the box holds every delta hedge of either.
// Actions outside the box are clipped; a non-finite action keeps the current hedge.
//
// Observation (obs_dim 6):
//   0 time to maturity / T (1 at the start, the last step's length / T before it);
//   1 log(S / K);
//   2 the current hedge ratio h (shares per option, before this step's trade);
//   3 the Black-Scholes delta of the option held long (call N(d1), put N(d1) - 1): the
//     hedge ratio of the baseline policy, a feature an agent may use;
//   4 the volatility of the next step, annualised (vol; GARCH: sqrt(h / dt));
//   5 1 when this step's action is applied (a rebalancing step), else 0.
//
// Reward (mean-variance): per step, pnl = change of the portfolio's value W = cash +
// shares S - quantity V, where V is the option's Black-Scholes value at the remaining
// time (its payoff at maturity), in currency units; r = pnl - (risk_aversion / 2) pnl^2.
// W_0 = 0 (premium in, option marked at the same price), so the undiscounted sum of the
// pnl over an episode is the terminal wealth W_T = quantity V_0 e^{rT} - (cost of
// hedging at T). risk_aversion is in 1/currency: with quantity 1 and S ~ 100, pnl per
// step is ~0.1-1 and risk_aversion 1 weighs variance and mean comparably.
// The episode terminates at maturity (no truncation).
//
// Info: spot, hedge (shares per option), cash, option_value (quantity V), wealth (W),
// costs (transaction costs paid so far), pv_cost: the present value at t = 0 of the cost
// of hedging so far, quantity V_0 - e^{-r t} W_t. At maturity pv_cost is the PV of the
// hedging cost of Hull's "performance of delta hedging" (Options, Futures and Other
// Derivatives, ch. 19): the premium not included, the option's payoff and the hedge's
// trades, costs and interest included.
//
// Listed contracts: with chain_file set, MakeHedgingEnv builds a ChainHedgingEnv
// (chain_hedging_env.h) instead, each episode one listed contract's quoted life; the keys
// contracts, min_days, range and sequential apply to it only and the path keys are refused.
//
// Not: an American option, or a market with bid/ask spreads on the underlying beyond the
// proportional cost.
#ifndef RLT_ENV_ENVS_DELTA_HEDGING_H_
#define RLT_ENV_ENVS_DELTA_HEDGING_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/status.h"
#include "env/env.h"

namespace rlt::env {

struct HedgingOptions {
  std::string option_type = "call";  // the option sold: call or put
  double spot = 49;                  // S_0
  double strike = 50;                // K
  double rate = 0.05;                // r, continuously compounded per year
  double drift = 0.13;               // mu, the underlying's real-world drift per year
  double vol = 0.2;                  // sigma per sqrt(year): paths (GBM; GARCH long-run) and marks
  double maturity_weeks = 20;        // T in weeks (52 a year)
  double step_weeks = 1;             // length of one step in weeks
  int rebalance_every = 1;           // k: the action applies every k steps
  double quantity = 1;               // options sold
  double cost = 0;                   // proportional cost per unit of traded value
  double risk_aversion = 1;          // lambda of r = pnl - lambda/2 pnl^2 (1/currency)
  std::string paths = "gbm";         // gbm or garch
  double garch_alpha = 0.1;          // GARCH(1,1) shock weight per step
  double garch_beta = 0.85;          // GARCH(1,1) persistence per step
  // Listed contracts along their quoted lives (chain_hedging_env.h) instead of paths.
  FilePath chain_file;            // "" = simulated paths
  std::string contracts = "all";  // chain_file: "all" or comma-separated contract ids
  int min_days = 5;               // chain_file: fewest hedge days of a contract
  std::string range;              // chain_file: first quote dates of the episodes ("" = all)
  bool sequential = false;        // chain_file: walk the contracts in order (evaluation)

  template <typename V>
  void VisitFields(V& v) {
    v("option_type", &option_type, "the option sold", {"call", "put"});
    v("spot", &spot, "initial price of the underlying (> 0)");
    v("strike", &strike, "strike (> 0)");
    v("rate", &rate, "risk-free rate per year, continuous");
    v("drift", &drift, "real-world drift of the underlying per year");
    v("vol", &vol, "volatility per sqrt(year) of the paths and of the option's marks");
    v("maturity_weeks", &maturity_weeks, "option maturity in weeks (52 a year)");
    v("step_weeks", &step_weeks, "length of one step in weeks (<= maturity_weeks)");
    v("rebalance_every", &rebalance_every, "the action sets the hedge every this many steps");
    v("quantity", &quantity, "number of options sold (> 0)");
    v("cost", &cost, "proportional transaction cost per unit of traded value (>= 0)");
    v("risk_aversion", &risk_aversion, "reward = pnl - risk_aversion/2 * pnl^2 (>= 0)");
    v("paths", &paths, "price paths", {"gbm", "garch"});
    v("garch_alpha", &garch_alpha, "GARCH(1,1) alpha per step (garch paths)");
    v("garch_beta", &garch_beta, "GARCH(1,1) beta per step (alpha + beta < 1)");
    v("chain_file", &chain_file,
      "a listed option chain CSV (market/option_chain_csv.h): each episode hedges one listed "
      "contract along its quoted life, rebalanced every quote date (empty: simulated paths; "
      "with a file the path keys spot, strike, option_type, maturity_weeks, step_weeks, "
      "rebalance_every, paths, drift, vol and garch_* are refused)");
    v("contracts", &contracts,
      "chain_file: \"all\" or comma-separated contract ids EXPIRY:C|P:STRIKE or OCC symbols "
      "(`rltrade hedge --chain FILE --contract list` prints them)");
    v("min_days", &min_days, "chain_file: contracts with fewer hedge days are left out (>= 1)");
    v("range", &range,
      "chain_file: YYYY-MM-DD:YYYY-MM-DD, the episodes are the contracts whose first quote "
      "date lies in it (empty = all; training sets [split] train)");
    v("sequential", &sequential,
      "chain_file, evaluation: episodes walk the contracts in order instead of drawing them");
  }
};

class DeltaHedgingEnv : public Env {
 public:
  static constexpr int kObsDim = 6;
  static constexpr float kMaxHedge = 1.0f;  // the action box is [-kMaxHedge, kMaxHedge]
  // More steps than this in an episode is an error (step_weeks too small).
  static constexpr int kMaxSteps = 1000000;

  // Validates every option (InvalidArgument naming the key, its value and the range).
  static Result<std::unique_ptr<DeltaHedgingEnv>> Create(const HedgingOptions& options);

  const EnvSpec& spec() const override { return spec_; }
  void Reset(float* obs, double* info) override;
  StepResult Step(const float* action, float* obs, double* info) override;
  void SaveState(StateWriter& out) const override;
  Status LoadState(StateReader& in) override;

  // Steps in an episode: ceil(maturity_weeks / step_weeks) (up to a 1e-9 relative slack).
  int num_steps() const { return num_steps_; }
  // The Black-Scholes price of one option at t = 0 (the premium per option).
  double premium() const { return premium_; }

 private:
  explicit DeltaHedgingEnv(const HedgingOptions& options);
  double StepYears(int step) const;
  // Black-Scholes value and delta (option held long) of one option at spot s with
  // `remaining` years left; at remaining <= 0 the payoff and its slope.
  void Mark(double s, double remaining, double* value, double* delta) const;
  void Write(float* obs, double* info) const;

  HedgingOptions options_;
  EnvSpec spec_;
  double phi_ = 1;          // +1 call, -1 put
  bool garch_ = false;      // paths == "garch"
  double maturity_ = 0;     // T in years
  double step_years_ = 0;   // dt of a full step
  int num_steps_ = 0;       //
  double premium_ = 0;      // V_0 per option
  double garch_omega_ = 0;  // per step
  double base_var_ = 0;     // vol^2 dt: h_0 and the long-run variance per step
  // Episode state.
  int step_ = 0;     // steps taken
  double time_ = 0;  // years elapsed
  double spot_ = 0;
  double shares_ = 0;  // hedge: shares held (hedge ratio x quantity)
  double cash_ = 0;
  double value_ = 0;  // V per option at (spot_, T - time_)
  double delta_ = 0;  // its delta
  double var_ = 0;    // GARCH conditional variance of the next step's return
  double costs_ = 0;  // transaction costs paid
};

// With chain_file set the env is a ChainHedgingEnv (chain_hedging_env.h) on `prepared`
// (PrepareHedging's; read here when null), else a DeltaHedgingEnv.
Result<std::unique_ptr<Env>> MakeHedgingEnv(const std::map<std::string, std::string>& settings,
                                            const std::shared_ptr<const void>& prepared = nullptr);
// The registry's prepare hook: the chain and its selected contracts when chain_file is set
// (PrepareHedgingChain), else null.
Result<std::shared_ptr<const void>> PrepareHedging(
    const std::map<std::string, std::string>& settings);

// ---------------------------------------------------------------------------------------
// Monte Carlo hedging: `rltrade hedge` and the baseline.

// A hedging policy for `n` environments at once: obs (n, kObsDim) -> actions (n, 1).
// `first_step` is true at the first step of a new set of episodes (a recurrent policy
// resets its state there).
using HedgePolicy = std::function<void(const float* obs, int n, float* actions, bool first_step)>;

// The Black-Scholes delta baseline: the hedge ratio is the observation's delta (obs[3]),
// i.e. a short option hedged with +delta shares per option.
void BsDeltaPolicy(const float* obs, int n, float* actions, bool first_step);

struct HedgeSimulation {
  double bs_price = 0;        // Black-Scholes price of the options sold (quantity x V_0)
  double mean_cost = 0;       // mean over paths of the PV of the hedging cost
  double sd_cost = 0;         // its sample standard deviation (n - 1)
  double sd_over_price = 0;   // sd_cost / bs_price (Hull's performance measure)
  double mean_reward = 0;     // mean over paths of the episode's summed reward
  std::vector<double> costs;  // PV of the hedging cost per path (paths)
};

// Runs `paths` episodes (path i on an env seeded seed + i, the engine's rule) in lock-step
// in chunks of kHedgeChunk paths, the policy acting on a whole chunk at every step. The PV of each
// path's hedging cost is its terminal pv_cost (see above). Errors: bad options (Create's), paths <
// 1 or paths > kMaxHedgePaths.
inline constexpr int kMaxHedgePaths = 10000000;
inline constexpr int kHedgeChunk = 4096;
Result<HedgeSimulation> SimulateHedging(const HedgingOptions& options, int paths, uint64_t seed,
                                        const HedgePolicy& policy);

}  // namespace rlt::env

#endif  // RLT_ENV_ENVS_DELTA_HEDGING_H_
