// rltrade tune: the Sobol sequence (see sobol.h).
#include "tune/sobol.h"

#include "core/rng.h"
#include "core/status.h"

namespace rlt::tune {
namespace {

// Joe and Kuo's new-joe-kuo-6.21201, dimensions 2..21: degree s of the primitive
// polynomial, its coefficients a (binary, without the leading and trailing 1), and the
// initial direction numbers m_1..m_s. Dimension 1 is the van der Corput sequence.
struct DirectionRow {
  int s;
  uint32_t a;
  uint32_t m[7];
};
constexpr DirectionRow kJoeKuo[kMaxSobolDims - 1] = {
    {1, 0, {1}},
    {2, 1, {1, 3}},
    {3, 1, {1, 3, 1}},
    {3, 2, {1, 1, 1}},
    {4, 1, {1, 1, 3, 3}},
    {4, 4, {1, 3, 5, 13}},
    {5, 2, {1, 1, 5, 5, 17}},
    {5, 4, {1, 1, 5, 5, 5}},
    {5, 7, {1, 1, 7, 11, 19}},
    {5, 11, {1, 1, 5, 1, 1}},
    {5, 13, {1, 1, 1, 3, 11}},
    {5, 14, {1, 3, 5, 5, 31}},
    {6, 1, {1, 3, 3, 9, 7, 49}},
    {6, 13, {1, 1, 1, 15, 21, 21}},
    {6, 16, {1, 3, 1, 13, 27, 49}},
    {6, 19, {1, 1, 1, 15, 7, 5}},
    {6, 22, {1, 3, 1, 15, 13, 25}},
    {6, 25, {1, 1, 5, 5, 19, 61}},
    {7, 1, {1, 3, 7, 11, 23, 15, 103}},
    {7, 4, {1, 3, 7, 13, 13, 15, 69}},
};

}  // namespace

Sobol::Sobol(int dims, bool scramble, uint64_t seed)
    : dims_(dims), v_(static_cast<size_t>(dims) * kBits), shift_(dims, 0) {
  RLT_CHECK(dims >= 1 && dims <= kMaxSobolDims);
  for (int j = 0; j < dims; ++j) {
    uint32_t* v = &v_[static_cast<size_t>(j) * kBits];
    if (j == 0) {
      for (int k = 0; k < kBits; ++k) v[k] = 1u << (kBits - 1 - k);
      continue;
    }
    const DirectionRow& row = kJoeKuo[j - 1];
    const int s = row.s;
    for (int k = 0; k < s && k < kBits; ++k) v[k] = row.m[k] << (kBits - 1 - k);
    for (int k = s; k < kBits; ++k) {
      // v_k = v_{k-s} ^ (v_{k-s} >> s) ^ sum_i a_i v_{k-i}  (Bratley and Fox's recurrence)
      uint32_t x = v[k - s] ^ (v[k - s] >> s);
      for (int i = 1; i < s; ++i) {
        if ((row.a >> (s - 1 - i)) & 1u) x ^= v[k - i];
      }
      v[k] = x;
    }
  }
  if (!scramble) return;
  Rng rng(seed * 0x9E3779B97F4A7C15ULL + 0x50B01);
  for (int j = 0; j < dims; ++j) {
    // A random lower-triangular bit matrix with a unit diagonal, applied to every
    // direction number (bit 31 is the most significant output bit, row 0).
    uint32_t lower[kBits];
    for (int r = 0; r < kBits; ++r) {
      const uint32_t below = static_cast<uint32_t>(rng.NextU64());
      const uint32_t mask = r == 0 ? 0u : ~0u << (kBits - r);  // columns left of the diagonal
      lower[r] = (below & mask) | (1u << (kBits - 1 - r));
    }
    uint32_t* v = &v_[static_cast<size_t>(j) * kBits];
    for (int k = 0; k < kBits; ++k) {
      uint32_t out = 0;
      for (int r = 0; r < kBits; ++r) {
        if (__builtin_parity(lower[r] & v[k])) out |= 1u << (kBits - 1 - r);
      }
      v[k] = out;
    }
    shift_[j] = static_cast<uint32_t>(rng.NextU64());
  }
}

std::vector<double> Sobol::Point(uint64_t index) const {
  // Gray-code order: point i = XOR of the direction numbers of the set bits of i ^ (i >> 1).
  const uint64_t gray = index ^ (index >> 1);
  std::vector<double> out(dims_);
  for (int j = 0; j < dims_; ++j) {
    uint32_t x = shift_[j];
    const uint32_t* v = &v_[static_cast<size_t>(j) * kBits];
    for (int k = 0; k < kBits; ++k) {
      if ((gray >> k) & 1u) x ^= v[k];
    }
    out[j] = static_cast<double>(x) * 0x1.0p-32;
  }
  return out;
}

}  // namespace rlt::tune
