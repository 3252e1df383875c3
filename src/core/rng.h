// rltrade core: deterministic random numbers.
//
// Rng is xoshiro256++ (Blackman & Vigna, 2019) seeded through splitmix64. We use our own
// generator and our own distributions (not <random>'s, whose outputs are
// implementation-defined) so that the same seed produces the same numbers with any
// standard library. Not thread-safe: one Rng per environment / per thread.
// state()/set_state() expose the complete state (the four words and the cached spare
// normal) so checkpoints can continue a stream exactly.
#ifndef RLT_CORE_RNG_H_
#define RLT_CORE_RNG_H_

#include <cmath>
#include <cstdint>

namespace rlt {

// The complete state of an Rng: after set_state(x), the Rng produces exactly what the Rng
// whose state() was x would have produced.
struct RngState {
  uint64_t s[4] = {0, 0, 0, 0};  // xoshiro256++ words
  double spare = 0.0;            // the cached second output of the polar method
  bool has_spare = false;        // whether `spare` is returned by the next Normal()
};

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { Seed(seed); }

  void Seed(uint64_t seed) {
    uint64_t x = seed;
    for (auto& s : s_) s = SplitMix64(x);
    has_spare_normal_ = false;
  }

  RngState state() const {
    RngState r;
    for (int i = 0; i < 4; ++i) r.s[i] = s_[i];
    r.spare = spare_normal_;
    r.has_spare = has_spare_normal_;
    return r;
  }
  // REQUIRES: state.s is not all zero (xoshiro's one fixed point; never reached by Seed()).
  void set_state(const RngState& state) {
    for (int i = 0; i < 4; ++i) s_[i] = state.s[i];
    spare_normal_ = state.spare;
    has_spare_normal_ = state.has_spare;
  }

  // Uniform 64-bit integer.
  uint64_t NextU64() {
    const uint64_t result = Rotl(s_[0] + s_[3], 23) + s_[0];
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  // Uniform float in [0, 1) with 24 random bits.
  float UniformFloat() { return static_cast<float>(NextU64() >> 40) * 0x1.0p-24f; }
  // Uniform integer in [0, n). REQUIRES: n > 0. (Lemire's multiply-shift; bias < n/2^64.)
  uint64_t UniformInt(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(NextU64()) * n) >> 64);
  }
  // Standard normal by the Marsaglia polar method.
  double Normal() {
    if (has_spare_normal_) {
      has_spare_normal_ = false;
      return spare_normal_;
    }
    double u, v, s;
    do {
      u = 2.0 * Uniform() - 1.0;
      v = 2.0 * Uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double m = std::sqrt(-2.0 * std::log(s) / s);
    spare_normal_ = v * m;
    has_spare_normal_ = true;
    return u * m;
  }
  double Normal(double mean, double stddev) { return mean + stddev * Normal(); }
  bool Bernoulli(double p) { return Uniform() < p; }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
  double spare_normal_ = 0.0;
  bool has_spare_normal_ = false;
};

}  // namespace rlt

#endif  // RLT_CORE_RNG_H_
