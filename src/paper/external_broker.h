// rltrade paper: a broker outside the process's own code — the Python package's bridge to a
// user's broker SDK (python/rltrade/paper.py) — as the session sees it.
//
// The session calls Submit for every order it sends (market orders, in shares), Cancel when
// the stale-feed rule withdraws a working order, and Positions when it starts or restarts
// (the account's positions must agree with the journal's fills). The broker answers each
// order with fills and rejects through DrivenSession (paper.h): at once, from inside Submit
// (a simulated or synchronous broker; the fill is then booked in the bar the order went out
// in), or later, before the session's next bar (an asynchronous one). An error returned by a
// call (the bridge's exception) stops the session with that error; the journal holds the
// order, which a restart sends again under the same client order id.
#ifndef RLT_PAPER_EXTERNAL_BROKER_H_
#define RLT_PAPER_EXTERNAL_BROKER_H_

#include <cstdint>
#include <map>
#include <string>

#include "core/status.h"

namespace rlt::paper {

struct ExternalOrder {
  std::string client_order_id;  // unique in the session, the same on every restart
  std::string symbol;
  bool buy = true;
  double quantity = 0;  // shares, > 0
  int32_t bar = 0;      // the session's bar the order is meant to fill in
  int64_t time = 0;     // that bar's time (seconds since the epoch, UTC)
  // The price the session sized the order at: the bar's open (or typical price with [env]
  // fill = "next_typical"), the close for the session's closing, risk and stale flattens.
  double price = 0;
  // decision | close | risk | stale | stop; "-r<n>" ids are retries of rejected orders.
  std::string reason = "decision";
};

class ExternalBroker {
 public:
  virtual ~ExternalBroker() = default;
  virtual Status Submit(const ExternalOrder& order) = 0;
  virtual Status Cancel(const std::string& client_order_id) = 0;
  // Shares held per symbol (absent: 0).
  virtual Result<std::map<std::string, double>> Positions() = 0;
};

}  // namespace rlt::paper

#endif  // RLT_PAPER_EXTERNAL_BROKER_H_
