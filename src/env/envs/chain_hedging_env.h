// rltrade env: ChainHedgingEnv — the hedging environment (`[env] id = "hedging"`) on
// listed option contracts along their real quoted lives, chosen by `[env] chain_file`.
//
// Where DeltaHedgingEnv (delta_hedging.h) simulates paths of a model, each episode here is
// one listed contract of an end-of-day chain (market/option_chain.h), with the conventions
// of env::HedgeChainContract (chain_hedging.h), so that the Black-Scholes delta policy
// (BsDeltaPolicy: the hedge ratio is obs[3]) reproduces `rltrade hedge --chain FILE
// --contract ID` to float rounding of the hedge ratio:
//  - The episodes: the contracts named by `contracts` ("all" or comma-separated ids or OCC
//    symbols; an unknown one is an error pointing at `rltrade hedge --chain FILE --contract
//    list`) that HedgeChainContract can hedge with at least `min_days` hedge days and whose
//    whole life, first quote date (the sale) to expiry, lies in `range` (the [split] range
//    the trainer or `rltrade eval` sets): training never marks on another range's prices. Training
//    draws one at random per episode (the env's rng); `sequential = true` walks them in order
//    (expiry, calls first, strike), cycling.
//  - Start: `quantity` contracts are sold at the first quote date's mid (the premium) into
//    cash that earns `rate` continuously over calendar days / 365 (the file's rate column
//    is not used: `rate` is the one rate, as the command's --rate).
//  - Steps: one per quote date of the file from the sale to the day before expiry (every
//    step rebalances). The action (the hedge ratio, shares per option, clipped to [-1, 1];
//    non-finite keeps the hedge) is traded at that day's underlying price paying
//    `cost` x |shares traded| x S; then the day advances to the next quote date.
//  - Marks: on a day the contract has a quote (bid > 0 and ask > 0) the option is marked
//    at the mid; on a day without one at Black-Scholes with the day's vol (below), i.e.
//    the last known vol; before any vol is known at the zero-vol limit max(phi (S - K
//    e^{-rT}), 0). At expiry the option is cash-settled at its intrinsic value on that
//    date's underlying price and the hedge is sold there (paying the cost); the episode
//    terminates.
//  - The day's vol (ChainDayVol): the row's implied vol when the day has a quote and the
//    file has one, else the vol implied from the mid, else the last known vol.
//
// Observation (DeltaHedgingEnv's layout, kObsDim 6):
//   0 calendar days to expiry / calendar days from the sale to expiry (1 at the start);
//   1 log(S / K);
//   2 the current hedge ratio (before this step's trade);
//   3 the Black-Scholes delta of the option held long at the day's vol (the baseline);
//   4 the day's vol, annualised (0 before any vol is known);
//   5 1 (every quote date rebalances).
// Reward and info: as DeltaHedgingEnv's (pnl = change of cash + shares S - quantity V;
// r = pnl - risk_aversion / 2 pnl^2; W_0 = 0 since the option is marked at the premium
// on the sale date), with `date` (days since 1970-01-01) and `contract` (the index among
// the episodes) appended to the info. The undiscounted sum of the pnl over an episode is
// HedgeChainContract's pnl (times quantity).
#ifndef RLT_ENV_ENVS_CHAIN_HEDGING_ENV_H_
#define RLT_ENV_ENVS_CHAIN_HEDGING_ENV_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "env/env.h"
#include "env/envs/chain_hedging.h"
#include "env/envs/delta_hedging.h"
#include "market/option_chain.h"

namespace rlt::env {

// The chain and the episodes' contracts, read once and shared by every env of a set.
struct HedgingChainData {
  std::string path;                      // chain_file
  market::OptionChain chain;             //
  std::vector<ChainContract> contracts;  // the episodes, in (expiry, calls first, strike) order
  std::vector<ChainHedgeResult> checks;  // HedgeChainContract's result per episode (bs delta)
};

// Reads options.chain_file and selects the episodes (see above). Errors (InvalidArgument,
// naming [env] keys): a path key set with chain_file, the file's reader errors, a range
// the file's quote dates do not cover (naming file, range and the file's dates), an unknown
// contract id, a named contract that cannot be hedged, no contract left in the range.
Result<std::shared_ptr<const HedgingChainData>> PrepareHedgingChain(const HedgingOptions& options);

class ChainHedgingEnv : public Env {
 public:
  static constexpr int kObsDim = DeltaHedgingEnv::kObsDim;
  // Info indices (the names in spec().info_names).
  static constexpr int kInfoSpot = 0, kInfoHedge = 1, kInfoCash = 2, kInfoOptionValue = 3,
                       kInfoWealth = 4, kInfoCosts = 5, kInfoPvCost = 6, kInfoDate = 7,
                       kInfoContract = 8;

  // Validates the options the chain mode uses (quantity, cost, rate, risk_aversion).
  static Result<std::unique_ptr<ChainHedgingEnv>> Create(
      const HedgingOptions& options, std::shared_ptr<const HedgingChainData> data);

  const EnvSpec& spec() const override { return spec_; }
  void Reset(float* obs, double* info) override;
  StepResult Step(const float* action, float* obs, double* info) override;
  void SaveState(StateWriter& out) const override;
  Status LoadState(StateReader& in) override;

  const HedgingChainData& data() const { return *data_; }
  int num_contracts() const { return static_cast<int>(data_->contracts.size()); }
  int contract() const { return contract_; }  // the episode's contract (index)

 private:
  ChainHedgingEnv(const HedgingOptions& options, std::shared_ptr<const HedgingChainData> data);
  // Sets day_ to `day` and computes the day's vol, delta and mark (not at expiry).
  void EnterDay(size_t day);
  void Write(float* obs, double* info) const;

  HedgingOptions options_;
  std::shared_ptr<const HedgingChainData> data_;
  EnvSpec spec_;
  int next_ = 0;  // sequential: the next episode's contract
  // Episode state.
  int contract_ = 0;
  int64_t start_day_ = 0, expiry_day_ = 0, day_ = 0;  // chain day indices
  double premium_ = 0;                                // mid at the sale, per option
  double spot_ = 0;                                   //
  double shares_ = 0;                                 // shares held
  double cash_ = 0;                                   //
  double value_ = 0;  // the option's mark per option (0 once settled)
  double delta_ = 0;  // BS delta at the day's vol
  double vol_ = 0;    // the day's vol (NaN: none known yet)
  double costs_ = 0;  //
  bool settled_ = false;
};

}  // namespace rlt::env

#endif  // RLT_ENV_ENVS_CHAIN_HEDGING_ENV_H_
