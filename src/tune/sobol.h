// rltrade tune: the Sobol low-discrepancy sequence (Sobol 1967), with the direction
// numbers of Joe and Kuo (2008), "Constructing Sobol sequences with better
// two-dimensional projections", SIAM J. Sci. Comput. 30, file new-joe-kuo-6.21201, for
// up to kMaxSobolDims dimensions; points in Gray-code order (Antonov and Saleev 1979), the
// first point 0. Scrambled: a random linear matrix scramble of the direction numbers and
// a random digital shift (Matousek 1998), which keep every 2^m-point block stratified
// like the unscrambled sequence; the generator's state is its index, so point i is
// reproducible from (dims, scramble, seed, i).
#ifndef RLT_TUNE_SOBOL_H_
#define RLT_TUNE_SOBOL_H_

#include <cstdint>
#include <vector>

namespace rlt::tune {

inline constexpr int kMaxSobolDims = 21;

class Sobol {
 public:
  // REQUIRES: 1 <= dims <= kMaxSobolDims.
  Sobol(int dims, bool scramble, uint64_t seed);
  // Point `index` (0-based), each coordinate in [0, 1).
  std::vector<double> Point(uint64_t index) const;

 private:
  static constexpr int kBits = 32;
  int dims_;
  std::vector<uint32_t> v_;      // (dims, kBits) direction numbers, bit-reversed scaled
  std::vector<uint32_t> shift_;  // (dims) digital shift (0 unscrambled)
};

}  // namespace rlt::tune

#endif  // RLT_TUNE_SOBOL_H_
