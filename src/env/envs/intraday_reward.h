// rltrade env: the intraday system's original composite ("shaped") reward.
//
// Reproduced for comparison with the system rltrade replaces; the default reward is the
// plain PnL. Definitions (per step; P = this step's fill price, C0 = initial capital,
// a0 = the signed action type in [-1, 1]):
//   profit   = (net worth - C0) / C0 * 100
//   step     = step_pnl / C0 * 1000
//   action   buy: 5 if price_change > 0, else 3 if trend > 0.002, else -1;
//            sell: the mirror image; hold: 2 if |price_change| < 0.002, else 0
//            (price_change = (P - P_-1)/P_-1, trend = (P - P_-10)/P_-10, each 0 until
//            the earlier price exists)
//   position long with trend > 0.002 or short with trend < -0.002:
//            |shares| * P * |trend| * 15, +1 once held aligned for more than 5 steps;
//            otherwise 0 and the holding counter restarts
//   risk     = -max(0, (|shares * P| / C0 - 2) * 10)
//   activity = -(m - 0.25) * 60 if m = mean |a0| of the last 10 actions > 0.25, minus
//            10 x k when the last k >= 2 actions (of the last 5) all had |a0| > 0.3
//   sharpe   = mean / (std + 1e-8) * 10 of the last <= 20 step_pnl / C0, once >= 10
//            (population std)
//   balance  = (distinct kinds among buy/sell/hold in the last 20 actions - 1) * 1.5
//   daily    on the step that flattens a session, r = session pnl / C0:
//            r * (500 if r > 0 else 200) + flattening pnl / C0 * 100
//            + mean(last <= 5 session r's, this one included) * 25 once >= 3 sessions
//   R = 0.3 S(profit,.2) + 0.1 S(step,.1) + 0.1 S(action,.1) + 0.05 S(position,.15)
//       + 0.05 N(risk,.05) + 0.05 N(activity,.15) + 0.25 S(sharpe,.15)
//       + 0.05 S(balance,.05) + 0.05 S(daily,.05)
//   S(x,k) = 0 if |x| <= 1e-8 else tanh(k x); N(x,k) = 0 if x >= 0 else tanh(k x)
//   reward = clip(0.1 R, -0.1, 0.1)
// "Actions" in the histories are this and earlier steps' decoded action types.
// "Flattening pnl" is the realised PnL of the position closed at the session's close
// (against its average entry price) minus the cost of that closing trade.
// Fixed-size ring buffers: no allocation per step.
#ifndef RLT_ENV_ENVS_INTRADAY_REWARD_H_
#define RLT_ENV_ENVS_INTRADAY_REWARD_H_

#include <array>
#include <cstdint>

#include "core/state_io.h"
#include "core/status.h"

namespace rlt::env {

enum class ActionKind : uint8_t { kHold = 0, kBuy = 1, kSell = 2 };

struct ShapedStepInput {
  double initial_capital = 0;
  double net_worth = 0;   // after this step (after any flattening)
  double step_pnl = 0;    // net worth change over this step
  double fill_price = 0;  // P, per unit of `shares` (per lot: price x lot_size)
  int64_t shares = 0;     // position after this step's trade, before any flattening (lots)
  float a0 = 0;           // signed action type, clipped to [-1, 1]
  ActionKind kind = ActionKind::kHold;
  bool session_end = false;
  double session_pnl = 0;  // net worth change over the session (session_end only)
  double flatten_pnl = 0;  // see the file comment (session_end only)
};

struct ShapedComponents {
  double profit = 0, step = 0, action = 0, position = 0, risk = 0, activity = 0, sharpe = 0,
         balance = 0, daily = 0, total = 0;
};

class ShapedReward {
 public:
  void Reset();
  // Updates the histories with this step and returns the reward.
  float Step(const ShapedStepInput& in);
  const ShapedComponents& last() const { return last_; }
  // Every history and counter (what Reset()/Step() change).
  void SaveState(StateWriter& out) const;
  // On error the reward's state is unspecified (Reset() it).
  Status LoadState(StateReader& in);

 private:
  template <int N>
  struct Ring {
    std::array<double, N> v{};
    int count = 0, head = 0;  // head = next write position
    void Push(double x) {
      v[head] = x;
      head = (head + 1) % N;
      if (count < N) ++count;
    }
    // k-th most recent (0 = newest). REQUIRES: k < count.
    double Back(int k) const { return v[(head - 1 - k + 2 * N) % N]; }
    void Save(StateWriter& out) const {
      out.PutArray(v.data(), N);
      out.Put<int32_t>(count);
      out.Put<int32_t>(head);
    }
    Status Load(StateReader& in, const char* name) {
      int32_t c = 0, h = 0;
      RLT_RETURN_IF_ERROR(in.GetArray(v.data(), N, name));
      RLT_RETURN_IF_ERROR(in.Get(&c, name));
      RLT_RETURN_IF_ERROR(in.Get(&h, name));
      if (c < 0 || c > N || h < 0 || h >= N) {
        return in.Error(std::string(name) + ": ring count/head out of range");
      }
      count = c;
      head = h;
      return Status::Ok();
    }
  };

  Ring<11> prices_;        // fill prices, newest last
  Ring<20> step_returns_;  // step_pnl / C0
  Ring<20> kinds_;         // ActionKind as double
  Ring<10> abs_a0_;
  Ring<5> session_returns_;
  int aligned_steps_ = 0;
  ShapedComponents last_;
};

}  // namespace rlt::env

#endif  // RLT_ENV_ENVS_INTRADAY_REWARD_H_
