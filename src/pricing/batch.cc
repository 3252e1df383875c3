// rltrade pricing: batched pricing over structure-of-arrays inputs.
//
// The BSM fast path is one branch-free kernel (BsmKernel) inlined into plain loops whose
// pointers are __restrict, so GCC vectorises them (-march=native: 8 doubles per AVX-512
// vector). Every transcendental comes from fast_math.h; the expiry limit and the type
// sign are selects, not branches. Float batches convert to double inside the loop
// (see pricing.h for why). The scalar reference lives in bsm.cc.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "core/thread_pool.h"
#include "pricing/fast_math.h"
#include "pricing/internal.h"
#include "pricing/pricing.h"

namespace rlt::pricing {
namespace {

struct KernelOut {
  double price, delta, gamma, vega, theta, rho, dividend_rho, elasticity;
};

// BSM price (and, when kGreeks, all Greeks) of one option; inputs in the validated domain.
template <bool kGreeks>
[[gnu::always_inline]] inline KernelOut BsmKernel(double phi, double s, double k, double r,
                                                  double q, double vol, double time) {
  using internal::CdfFromTail;
  using internal::FastExp;
  using internal::FastLog;
  using internal::FastNormalTail;
  const bool expired = !(time > kExpiredTime);
  const double t = expired ? 1.0 : time;  // keeps the live formulas finite; selected away
  const double sqrt_t = std::sqrt(t);
  const double sd = vol * sqrt_t;
  const double d1_raw = (FastLog(s / k) + (r - q + 0.5 * vol * vol) * t) / sd;
  const double d2_raw = d1_raw - sd;
  // N(+-40) is 0 or 1 to double precision and n(40) = 0: clamping changes nothing.
  const double d1 = std::clamp(d1_raw, -40.0, 40.0);
  const double d2 = std::clamp(d2_raw, -40.0, 40.0);
  const double disc_q = FastExp(-q * t);
  const double disc_r = FastExp(-r * t);
  const double s_disc = s * disc_q;
  const double k_disc = k * disc_r;
  const internal::NormalTailPdf n1 = FastNormalTail(d1);
  const internal::NormalTailPdf n2 = FastNormalTail(d2);
  const double nd1 = CdfFromTail(phi * d1, n1.tail);  // N(phi d1)
  const double nd2 = CdfFromTail(phi * d2, n2.tail);  // N(phi d2)
  const double live_price = std::max(phi * (s_disc * nd1 - k_disc * nd2), 0.0);
  const double moneyness = phi * (s - k);
  const double intrinsic = std::max(moneyness, 0.0);
  KernelOut o;
  o.price = expired ? intrinsic : live_price;
  if constexpr (kGreeks) {
    const double live_delta = phi * disc_q * nd1;
    // Payoff slope: 1 in the money, 0.5 at the strike, 0 out of it (times phi); a sum of
    // two selects, which if-converts where a nested select does not.
    const double expired_delta = phi * ((moneyness > 0 ? 1.0 : 0.0) + (s == k ? 0.5 : 0.0));
    o.delta = expired ? expired_delta : live_delta;
    const double gamma = disc_q * n1.pdf / (s * sd);
    const double vega = s_disc * n1.pdf * sqrt_t;
    const double theta =
        -s_disc * n1.pdf * vol / (2.0 * sqrt_t) - phi * r * k_disc * nd2 + phi * q * s_disc * nd1;
    const double rho = phi * t * k_disc * nd2;
    const double dividend_rho = -phi * t * s_disc * nd1;
    o.gamma = expired ? 0.0 : gamma;
    o.vega = expired ? 0.0 : vega;
    o.theta = expired ? 0.0 : theta;
    o.rho = expired ? 0.0 : rho;
    o.dividend_rho = expired ? 0.0 : dividend_rho;
    // Division on a safe denominator, then a select: no conditional division (which
    // would stop if-conversion and with it vectorisation).
    const bool has_value = o.price > (expired ? 0.0 : 1e-300);
    const double elasticity = o.delta * s / (has_value ? o.price : 1.0);
    o.elasticity = has_value ? elasticity : 0.0;
  }
  return o;
}

template <typename T>
void PriceLoop(size_t begin, size_t end, const OptionType* __restrict type,
               const T* __restrict spot, const T* __restrict strike, const T* __restrict rate,
               const T* __restrict dividend, const T* __restrict vol, const T* __restrict time,
               T* __restrict price) {
  for (size_t i = begin; i < end; ++i) {
    const KernelOut o = BsmKernel<false>(static_cast<double>(static_cast<int8_t>(type[i])), spot[i],
                                         strike[i], rate[i], dividend[i], vol[i], time[i]);
    price[i] = static_cast<T>(o.price);
  }
}

template <typename T>
void GreeksLoop(size_t begin, size_t end, const OptionType* __restrict type,
                const T* __restrict spot, const T* __restrict strike, const T* __restrict rate,
                const T* __restrict dividend, const T* __restrict vol, const T* __restrict time,
                T* __restrict price, T* __restrict delta, T* __restrict gamma, T* __restrict vega,
                T* __restrict theta, T* __restrict rho, T* __restrict dividend_rho,
                T* __restrict elasticity) {
  for (size_t i = begin; i < end; ++i) {
    const KernelOut o = BsmKernel<true>(static_cast<double>(static_cast<int8_t>(type[i])), spot[i],
                                        strike[i], rate[i], dividend[i], vol[i], time[i]);
    price[i] = static_cast<T>(o.price);
    delta[i] = static_cast<T>(o.delta);
    gamma[i] = static_cast<T>(o.gamma);
    vega[i] = static_cast<T>(o.vega);
    theta[i] = static_cast<T>(o.theta);
    rho[i] = static_cast<T>(o.rho);
    dividend_rho[i] = static_cast<T>(o.dividend_rho);
    elasticity[i] = static_cast<T>(o.elasticity);
  }
}

// Float Greeks: GCC does not if-convert the mixed float/double version of GreeksLoop, so
// float batches go through the double loop in blocks converted on the stack (L1-resident).
void GreeksLoopFloat(size_t begin, size_t end, const OptionBatch<float>& in,
                     const GreeksBatch<float>& out) {
  constexpr size_t kBlock = 256;
  alignas(64) double s[kBlock], k[kBlock], r[kBlock], q[kBlock], v[kBlock], t[kBlock];
  alignas(64) double o[8][kBlock];
  float* const dst[8] = {out.price, out.delta, out.gamma,        out.vega,
                         out.theta, out.rho,   out.dividend_rho, out.elasticity};
  for (size_t b = begin; b < end; b += kBlock) {
    const size_t m = std::min(kBlock, end - b);
    for (size_t i = 0; i < m; ++i) {
      s[i] = in.spot[b + i];
      k[i] = in.strike[b + i];
      r[i] = in.rate[b + i];
      q[i] = in.dividend[b + i];
      v[i] = in.vol[b + i];
      t[i] = in.time[b + i];
    }
    GreeksLoop<double>(0, m, in.type + b, s, k, r, q, v, t, o[0], o[1], o[2], o[3], o[4], o[5],
                       o[6], o[7]);
    for (int c = 0; c < 8; ++c) {
      for (size_t i = 0; i < m; ++i) dst[c][b + i] = static_cast<float>(o[c][i]);
    }
  }
}

template <typename T>
OptionInputs Element(const OptionBatch<T>& in, size_t i) {
  OptionInputs o;
  o.type = in.type[i];
  o.spot = in.spot[i];
  o.strike = in.strike[i];
  o.rate = in.rate[i];
  o.dividend = in.dividend[i];
  o.vol = in.vol[i];
  o.time = in.time[i];
  return o;
}

// A vectorisable domain test (the same ranges as ValidateInputs; NaN fails every
// comparison), then the scalar validator on the first failure for its message.
template <typename T>
Status ValidateBatch(const OptionBatch<T>& in) {
  RLT_CHECK_MSG(in.size == 0 || (in.type && in.spot && in.strike && in.rate && in.dividend &&
                                 in.vol && in.time),
                "OptionBatch with null arrays");
  size_t bad = 0;
  for (size_t i = 0; i < in.size; ++i) {
    const double s = in.spot[i], k = in.strike[i], r = in.rate[i], q = in.dividend[i];
    const double v = in.vol[i], t = in.time[i];
    const int8_t ty = static_cast<int8_t>(in.type[i]);
    const bool ok = (ty == 1 || ty == -1) && s >= 1e-8 && s <= 1e12 && k >= 1e-8 && k <= 1e12 &&
                    r >= -5 && r <= 5 && q >= -5 && q <= 5 && v >= 1e-6 && v <= 100 && t <= 100;
    bad += ok ? 0 : 1;
  }
  if (bad == 0) return Status::Ok();
  for (size_t i = 0; i < in.size; ++i) {
    Status st = ValidateInputs(Element(in, i));
    if (!st.ok()) {
      return Status::InvalidArgument("option " + std::to_string(i) + " of " +
                                     std::to_string(in.size) + ": " + st.message());
    }
  }
  RLT_CHECK_MSG(false, "batch and scalar validation disagree");
  return Status::Ok();
}

// Runs body(begin, end) over [0, n), split over the pool's workers when there is one.
template <typename Body>
void ForSlices(size_t n, WorkerPool* pool, const Body& body) {
  if (pool == nullptr || pool->num_workers() == 1 || n < 1024) {
    body(size_t{0}, n);
    return;
  }
  const int workers = pool->num_workers();
  pool->Run([&](int w) {
    // Slices rounded to 64 elements so that workers do not share cache lines.
    const size_t blocks = (n + 63) / 64;
    const size_t per = blocks / workers, extra = blocks % workers;
    const size_t first = w * per + std::min<size_t>(w, extra);
    const size_t count = per + (static_cast<size_t>(w) < extra ? 1 : 0);
    const size_t begin = std::min(n, first * 64), end = std::min(n, (first + count) * 64);
    if (begin < end) body(begin, end);
  });
}

template <typename T>
Status PriceBatchImpl(const OptionBatch<T>& in, T* price, WorkerPool* pool) {
  RLT_RETURN_IF_ERROR(ValidateBatch(in));
  RLT_CHECK_MSG(in.size == 0 || price != nullptr, "null price output");
  ForSlices(in.size, pool, [&](size_t b, size_t e) {
    PriceLoop<T>(b, e, in.type, in.spot, in.strike, in.rate, in.dividend, in.vol, in.time, price);
  });
  return Status::Ok();
}

template <typename T>
Status GreeksBatchImpl(const OptionBatch<T>& in, const GreeksBatch<T>& out, WorkerPool* pool) {
  RLT_RETURN_IF_ERROR(ValidateBatch(in));
  RLT_CHECK_MSG(in.size == 0 || (out.price && out.delta && out.gamma && out.vega && out.theta &&
                                 out.rho && out.dividend_rho && out.elasticity),
                "GreeksBatch with null arrays");
  ForSlices(in.size, pool, [&](size_t b, size_t e) {
    if constexpr (std::is_same_v<T, float>) {
      GreeksLoopFloat(b, e, in, out);
    } else {
      GreeksLoop<T>(b, e, in.type, in.spot, in.strike, in.rate, in.dividend, in.vol, in.time,
                    out.price, out.delta, out.gamma, out.vega, out.theta, out.rho, out.dividend_rho,
                    out.elasticity);
    }
  });
  return Status::Ok();
}

}  // namespace

Status BsmPriceBatch(const OptionBatch<double>& in, double* price, WorkerPool* pool) {
  return PriceBatchImpl(in, price, pool);
}
Status BsmPriceBatch(const OptionBatch<float>& in, float* price, WorkerPool* pool) {
  return PriceBatchImpl(in, price, pool);
}
Status BsmGreeksBatch(const OptionBatch<double>& in, const GreeksBatch<double>& out,
                      WorkerPool* pool) {
  return GreeksBatchImpl(in, out, pool);
}
Status BsmGreeksBatch(const OptionBatch<float>& in, const GreeksBatch<float>& out,
                      WorkerPool* pool) {
  return GreeksBatchImpl(in, out, pool);
}

Status BsmGreeksBatchReference(const OptionBatch<double>& in, const GreeksBatch<double>& out) {
  RLT_RETURN_IF_ERROR(ValidateBatch(in));
  for (size_t i = 0; i < in.size; ++i) {
    Result<Greeks> g = BsmGreeks(Element(in, i));
    RLT_CHECK(g.ok());
    out.price[i] = g->price;
    out.delta[i] = g->delta;
    out.gamma[i] = g->gamma;
    out.vega[i] = g->vega;
    out.theta[i] = g->theta;
    out.rho[i] = g->rho;
    out.dividend_rho[i] = g->dividend_rho;
    out.elasticity[i] = g->elasticity;
  }
  return Status::Ok();
}

Status PriceBatch(Model model, const OptionBatch<double>& in, double* price,
                  const ModelOptions& options, WorkerPool* pool) {
  if (model == Model::kBsm) return BsmPriceBatch(in, price, pool);
  RLT_RETURN_IF_ERROR(ValidateBatch(in));
  const int workers = pool == nullptr ? 1 : pool->num_workers();
  std::vector<Status> errors(workers);
  auto body = [&](int w) {
    const auto [b, e] = WorkerPool::Slice(static_cast<int>(in.size), workers, w);
    for (int i = b; i < e && errors[w].ok(); ++i) {
      Result<double> v = Price(model, Element(in, i), options);
      if (v.ok()) {
        price[i] = *v;
      } else {
        const std::string msg = "option " + std::to_string(i) + ": " + v.status().message();
        errors[w] = v.status().code() == Status::Code::kOutOfRange ? Status::OutOfRange(msg)
                                                                   : Status::InvalidArgument(msg);
      }
    }
  };
  if (workers == 1) {
    body(0);
  } else {
    pool->Run(body);
  }
  for (const Status& st : errors) RLT_RETURN_IF_ERROR(st);
  return Status::Ok();
}

}  // namespace rlt::pricing
