// rltrade retrieval: the structured synthetic dataset (see synth.h).
#include "retrieval/synth.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/rng.h"

namespace rlt::retrieval {
namespace {

// Independent streams per (kind, row): one generator per row keeps every row computable
// on its own, in any order.
Rng RowRng(uint64_t seed, uint64_t kind, int64_t row) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + kind * 0xBF58476D1CE4E5B9ULL +
               static_cast<uint64_t>(row) * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return Rng(x);
}

enum : uint64_t { kCentroids = 1, kSlots, kDistractor, kNoise, kBankOrder, kTriples };

void Normalise(std::vector<double>& v, float* out) {
  double ss = 0.0;
  for (double e : v) ss += e * e;
  const double inv = 1.0 / std::sqrt(std::max(ss, 1e-300));
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(v[i] * inv);
}

}  // namespace

Result<SynthDataset> SynthDataset::Create(const SynthOptions& o) {
  auto bad = [](const std::string& what) {
    return Status::InvalidArgument("retrieval synth: " + what);
  };
  if (o.n < 1) return bad("--n must be at least 1 (training pairs)");
  if (o.n_val < 0) return bad("--n-val must be 0 (n / 8) or more");
  if (o.t < 1 || o.t > 100000) return bad("--t must be in 1..100000 (steps per context)");
  if (o.d < 2 || o.d > 65536) return bad("--d must be in 2..65536 (vector dimensions)");
  if (o.slots < 1) return bad("slots must be at least 1");
  if (o.speeds < 1) return bad("speeds must be at least 1");
  if (o.bank_size < 2LL * o.slots) {
    return bad("--bank-size " + std::to_string(o.bank_size) + " is below 2 clusters of " +
               std::to_string(o.slots) + " slots; use at least " + std::to_string(2 * o.slots));
  }
  if (!(o.slot_weight > 0.0) || !(o.noise >= 0.0) || !std::isfinite(o.slot_weight) ||
      !std::isfinite(o.noise)) {
    return bad("slot_weight must be > 0 and noise >= 0");
  }
  if (o.dtype != "float32" && o.dtype != "float16") {
    return bad("dtype must be float32 or float16, not '" + o.dtype + "'");
  }
  SynthDataset ds;
  ds.options_ = o;
  ds.n_val_ = o.n_val > 0 ? o.n_val : std::max<int64_t>(1, o.n / 8);
  ds.clusters_ = o.bank_size / o.slots;
  const int64_t K = ds.clusters_, S = o.slots, D = o.d;
  const int64_t sequences = K * o.speeds * S;
  if (o.n + ds.n_val_ > sequences) {
    return bad(std::to_string(o.n + ds.n_val_) + " pairs need that many distinct sequences, but " +
               std::to_string(K) + " clusters x " + std::to_string(o.speeds) + " speeds x " +
               std::to_string(S) + " slots give " + std::to_string(sequences) +
               "; raise --bank-size or lower --n");
  }
  // Centroids on the orbit of a block rotation: pairs of coordinates turn by their own
  // angle per step, so mu_{k+v} is the same linear map of mu_k for every k.
  {
    Rng rng = RowRng(o.seed, kCentroids, 0);
    std::vector<double> amp(D), phase(D), angle(D);
    for (int64_t i = 0; i < D; ++i) {
      amp[i] = rng.Normal();
      phase[i] = rng.Uniform(0.0, 2.0 * std::numbers::pi);
      angle[i] = rng.Uniform(0.0, 2.0 * std::numbers::pi);
    }
    ds.centroids_.assign(K * D, 0.0);
    for (int64_t k = 0; k < K; ++k) {
      double* mu = &ds.centroids_[k * D];
      for (int64_t p = 0; p + 1 < D; p += 2) {
        const double a = std::hypot(amp[p], amp[p + 1]);
        const double th = phase[p] + static_cast<double>(k) * angle[p];
        mu[p] = a * std::cos(th);
        mu[p + 1] = a * std::sin(th);
      }
      if (D % 2 == 1) mu[D - 1] = 0.1 * amp[D - 1];
      double ss = 0.0;
      for (int64_t i = 0; i < D; ++i) ss += mu[i] * mu[i];
      for (int64_t i = 0; i < D; ++i) mu[i] /= std::sqrt(ss);
    }
  }
  ds.slots_.assign(S * D, 0.0);
  for (int64_t s = 0; s < S; ++s) {
    Rng rng = RowRng(o.seed, kSlots, s);
    double ss = 0.0;
    for (int64_t i = 0; i < D; ++i) {
      ds.slots_[s * D + i] = rng.Normal();
      ss += ds.slots_[s * D + i] * ds.slots_[s * D + i];
    }
    for (int64_t i = 0; i < D; ++i) ds.slots_[s * D + i] /= std::sqrt(ss);
  }
  // The bank's row order.
  const int64_t B = o.bank_size;
  ds.bank_item_.resize(B);
  for (int64_t j = 0; j < B; ++j) ds.bank_item_[j] = j;
  {
    Rng rng = RowRng(o.seed, kBankOrder, 0);
    for (int64_t j = B - 1; j > 0; --j) {
      std::swap(ds.bank_item_[j], ds.bank_item_[static_cast<int64_t>(rng.NextU64() % (j + 1))]);
    }
  }
  ds.item_row_.resize(B);
  for (int64_t j = 0; j < B; ++j) ds.item_row_[ds.bank_item_[j]] = j;
  // Distinct sequences: a partial shuffle of all (k0, v, s) triples.
  {
    std::vector<int64_t> all(sequences);
    for (int64_t i = 0; i < sequences; ++i) all[i] = i;
    Rng rng = RowRng(o.seed, kTriples, 0);
    const int64_t need = o.n + ds.n_val_;
    for (int64_t i = 0; i < need; ++i) {
      const int64_t j = i + static_cast<int64_t>(rng.NextU64() % (sequences - i));
      std::swap(all[i], all[j]);
    }
    all.resize(need);
    ds.triples_ = std::move(all);
  }
  return ds;
}

void SynthDataset::Item(int64_t item, float* v) const {
  const int64_t D = options_.d, S = options_.slots;
  std::vector<double> w(D);
  if (item < clusters_ * S) {
    const int64_t k = item / S, s = item % S;
    for (int64_t i = 0; i < D; ++i) {
      w[i] = centroids_[k * D + i] + options_.slot_weight * slots_[s * D + i];
    }
  } else {
    Rng rng = RowRng(options_.seed, kDistractor, item);
    for (int64_t i = 0; i < D; ++i) w[i] = rng.Normal();
  }
  Normalise(w, v);
}

void SynthDataset::BankRow(int64_t j, float* v) const { Item(bank_item_[j], v); }

int64_t SynthDataset::TargetRow(bool val, int64_t i) const {
  const int64_t triple = triples_[(val ? options_.n : 0) + i];
  const int64_t S = options_.slots, s = triple % S;
  const int64_t kv = triple / S, v = kv % options_.speeds + 1, k0 = kv / options_.speeds;
  const int64_t k = (k0 + v * options_.t) % clusters_;
  return item_row_[k * S + s];
}

void SynthDataset::Pair(bool val, int64_t i, float* x, float* y) const {
  const int64_t index = (val ? options_.n : 0) + i;
  const int64_t triple = triples_[index];
  const int64_t D = options_.d, S = options_.slots, s = triple % S;
  const int64_t kv = triple / S, v = kv % options_.speeds + 1, k0 = kv / options_.speeds;
  Rng rng = RowRng(options_.seed, kNoise, index);
  const double sd = options_.noise / std::sqrt(static_cast<double>(D));
  std::vector<float> item(D);
  std::vector<double> w(D);
  for (int t = 0; t < options_.t; ++t) {
    Item(((k0 + v * t) % clusters_) * S + s, item.data());
    if (sd == 0.0) {  // exactly the bank's item
      std::copy(item.begin(), item.end(), x + static_cast<int64_t>(t) * D);
      continue;
    }
    for (int64_t e = 0; e < D; ++e) w[e] = item[e] + sd * rng.Normal();
    Normalise(w, x + static_cast<int64_t>(t) * D);
  }
  Item(((k0 + v * options_.t) % clusters_) * S + s, y);
}

}  // namespace rlt::retrieval
