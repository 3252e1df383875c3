// rltrade pricing (internal): unchecked scalar formulas shared by the model files.
// Callers validate first (ValidateInputs); these assume the documented domain.
#ifndef RLT_PRICING_INTERNAL_H_
#define RLT_PRICING_INTERNAL_H_

#include "pricing/pricing.h"

namespace rlt::pricing::internal {

inline double Phi(OptionType type) { return static_cast<double>(static_cast<int8_t>(type)); }
inline bool Expired(const OptionInputs& in) { return !(in.time > kExpiredTime); }

// The limit at expiry (see pricing.h).
Greeks ExpiredGreeks(const OptionInputs& in);
// max(phi (S - K), 0).
double Intrinsic(const OptionInputs& in);

// BSM with generalised cost of carry b (b = r - q for stocks), T > kExpiredTime.
double BsmPriceCarry(OptionType type, double s, double k, double t, double r, double b, double vol);
// BSM price and vega (per 1.00) for T > kExpiredTime, for the implied-vol solver.
void BsmPriceVega(const OptionInputs& in, double* price, double* vega);

}  // namespace rlt::pricing::internal

#endif  // RLT_PRICING_INTERNAL_H_
