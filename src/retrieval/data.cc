// rltrade retrieval: row sources and the dataset checks (see data.h).
#include "retrieval/data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "core/rng.h"
#include "native/gemm.h"
#include "retrieval/synth.h"

namespace rlt::retrieval {
namespace {

constexpr int64_t kCheckBlockBytes = 64 << 20;  // read in blocks of ~64 MB
constexpr double kSameVectorCosine = 0.9999;

uint64_t HashRow(const float* v, int64_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &v[i], 4);
    h = (h ^ bits) * 1099511628211ULL;
  }
  return h;
}

// The error for a non-finite element (row-major index `elem`).
Status NonFinite(const RowSource& src, int64_t elem, float value) {
  const int64_t row = elem / src.row_elems();
  return Status::DataError(src.Name() + ": row " + std::to_string(row) + " holds " +
                           (std::isnan(value) ? "NaN" : "an infinite value") + " (element " +
                           std::to_string(elem % src.row_elems()) +
                           "): every value must be finite; fix or drop that row");
}

Status CheckFinite(const RowSource& src) {
  int64_t known = -1;
  float value = 0.0f;
  if (src.FiniteChecked(&known, &value)) {
    return known < 0 ? Status::Ok() : NonFinite(src, known, value);
  }
  const int64_t per =
      std::max<int64_t>(1, kCheckBlockBytes / 4 / std::max<int64_t>(1, src.row_elems()));
  std::vector<float> block;
  for (int64_t first = 0; first < src.rows(); first += per) {
    const int64_t n = std::min(per, src.rows() - first);
    block.resize(n * src.row_elems());
    src.Read(first, n, block.data());
    if ((first / per) % 16 == 15) src.Release();  // bounded memory for files larger than RAM
    for (int64_t k = 0; k < static_cast<int64_t>(block.size()); ++k) {
      if (!std::isfinite(block[k])) return NonFinite(src, first * src.row_elems() + k, block[k]);
    }
  }
  src.Release();
  return Status::Ok();
}

double Norm(const float* v, int64_t n) {
  double ss = 0.0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(v[i]) * v[i];
  return std::sqrt(ss);
}

// Exact duplicates: bank rows whose normalised vectors are equal element by element
// (-0 == +0) to an earlier row's. Returns, when there are any, the new row of every old
// row (a duplicate maps to its first copy's) and compacts data.bank to the distinct rows
// in their order (data.bank_source_rows: the file row of each); empty when there are none.
std::vector<int64_t> DeduplicateBank(RetrievalData& data, std::string* note) {
  const int64_t n = data.bank_rows, D = data.dim;
  auto hash = [&](int64_t j) {
    uint64_t h = 1469598103934665603ULL;
    for (int64_t e = 0; e < D; ++e) {
      const float v = data.bank[j * D + e] + 0.0f;  // -0 hashes as +0
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      h = (h ^ bits) * 1099511628211ULL;
    }
    return h;
  };
  auto same = [&](int64_t a, int64_t b) {
    for (int64_t e = 0; e < D; ++e) {
      if (data.bank[a * D + e] != data.bank[b * D + e]) return false;
    }
    return true;
  };
  std::vector<std::pair<uint64_t, int64_t>> keyed(n);
  for (int64_t j = 0; j < n; ++j) keyed[j] = {hash(j), j};
  std::sort(keyed.begin(), keyed.end());
  std::vector<int64_t> first_copy;  // old row -> its first copy's old row (when any)
  std::vector<int64_t> reps;
  int64_t duplicates = 0, example = -1;
  for (int64_t g = 0; g < n;) {
    int64_t end = g + 1;
    while (end < n && keyed[end].first == keyed[g].first) ++end;
    // A hash group's rows in row order: each repeats one of the distinct vectors seen so
    // far in the group (its first copy) or is a new one (linear in the group's size when
    // its rows are all the same vector).
    reps.assign(1, keyed[g].second);
    for (int64_t a = g + 1; a < end; ++a) {
      const int64_t row = keyed[a].second;
      bool repeated = false;
      for (int64_t rep : reps) {
        if (same(row, rep)) {
          if (first_copy.empty()) {
            first_copy.resize(n);
            for (int64_t j = 0; j < n; ++j) first_copy[j] = j;
          }
          first_copy[row] = rep;
          ++duplicates;
          if (example < 0 || row < example) example = row;
          repeated = true;
          break;
        }
      }
      if (!repeated) reps.push_back(row);
    }
    g = end;
  }
  if (duplicates == 0) return {};
  std::vector<int64_t> new_row(n);
  data.bank_source_rows.clear();
  int64_t kept = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (first_copy[j] != j) continue;
    if (kept != j) std::copy_n(&data.bank[j * D], D, &data.bank[kept * D]);
    data.bank_source_rows.push_back(j);
    new_row[j] = kept++;
  }
  for (int64_t j = 0; j < n; ++j) new_row[j] = new_row[first_copy[j]];
  data.bank.resize(kept * D);
  data.bank.shrink_to_fit();
  data.bank_rows = kept;
  *note = data.bank_name + ": " + std::to_string(duplicates) + " of " + std::to_string(n) +
          " rows repeat an earlier row exactly (e.g. row " + std::to_string(example) + " = row " +
          std::to_string(first_copy[example]) + "); each vector is kept once, at its first row (" +
          std::to_string(kept) +
          " distinct), so Recall@k and MRR rank distinct vectors and no copy of a target is "
          "ever its negative; targets naming a later copy use the first";
  return new_row;
}

Status FindTargets(const RetrievalData& data, Split& split, const std::string& what,
                   int64_t file_rows, const std::vector<int64_t>& new_row) {
  const int64_t n = split.y->rows(), D = data.dim;
  split.target_row.assign(n, -1);
  std::vector<float> y(D);
  auto check_row = [&](int64_t i, int64_t row, int64_t file_row) -> Status {
    split.y->Read(i, 1, y.data());
    const double norm = Norm(y.data(), D);
    double dot = 0.0;
    for (int64_t e = 0; e < D; ++e) dot += static_cast<double>(y[e]) * data.bank[row * D + e];
    if (!(norm > 0.0) || dot / norm < kSameVectorCosine) {
      return Status::DataError(split.y->Name() + ": row " + std::to_string(i) +
                               " is not bank row " + std::to_string(file_row) +
                               " that the file's row array names (cosine " +
                               std::to_string(norm > 0 ? dot / norm : 0.0) +
                               "): targets and their row numbers disagree");
    }
    return Status::Ok();
  };
  if (!split.given_rows.empty()) {
    if (static_cast<int64_t>(split.given_rows.size()) != n) {
      return Status::DataError(what + ": the row array has " +
                               std::to_string(split.given_rows.size()) + " entries for " +
                               std::to_string(n) + " targets");
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t file_row = split.given_rows[i];
      if (file_row < 0 || file_row >= file_rows) {
        return Status::DataError(what + ": entry " + std::to_string(i) + " = " +
                                 std::to_string(file_row) + " is not a row of the bank (0.." +
                                 std::to_string(file_rows - 1) + ")");
      }
      const int64_t row = new_row.empty() ? file_row : new_row[file_row];
      RLT_RETURN_IF_ERROR(check_row(i, row, file_row));
      split.target_row[i] = row;
    }
    return Status::Ok();
  }
  // Bitwise match of the normalised vector first.
  std::unordered_map<uint64_t, int64_t> by_hash;
  by_hash.reserve(data.bank_rows * 2);
  for (int64_t j = 0; j < data.bank_rows; ++j) by_hash.emplace(HashRow(&data.bank[j * D], D), j);
  std::vector<int64_t> missing;
  std::vector<float> yn(D);
  for (int64_t i = 0; i < n; ++i) {
    split.y->Read(i, 1, y.data());
    const double norm = Norm(y.data(), D);
    for (int64_t e = 0; e < D; ++e) yn[e] = static_cast<float>(y[e] / norm);
    auto it = by_hash.find(HashRow(yn.data(), D));
    if (it != by_hash.end() && std::memcmp(&data.bank[it->second * D], yn.data(), D * 4) == 0) {
      split.target_row[i] = it->second;
    } else {
      missing.push_back(i);
    }
  }
  // The rest: the most similar bank row, which must be the same vector up to rounding.
  const int64_t block = 256;
  std::vector<float> queries(block * D), scores(block * 4096);
  for (size_t m0 = 0; m0 < missing.size(); m0 += block) {
    const int64_t qn = std::min<int64_t>(block, missing.size() - m0);
    for (int64_t k = 0; k < qn; ++k) {
      split.y->Read(missing[m0 + k], 1, &queries[k * D]);
      const double norm = Norm(&queries[k * D], D);
      for (int64_t e = 0; e < D; ++e)
        queries[k * D + e] = static_cast<float>(queries[k * D + e] / norm);
    }
    std::vector<float> best(qn, -2.0f);
    std::vector<int64_t> arg(qn, -1);
    for (int64_t b0 = 0; b0 < data.bank_rows; b0 += 4096) {
      const int64_t bn = std::min<int64_t>(4096, data.bank_rows - b0);
      native::Gemm(false, true, static_cast<int>(qn), static_cast<int>(bn), static_cast<int>(D),
                   1.0f, queries.data(), static_cast<int>(D), &data.bank[b0 * D],
                   static_cast<int>(D), 0.0f, scores.data(), static_cast<int>(bn));
      for (int64_t k = 0; k < qn; ++k) {
        for (int64_t j = 0; j < bn; ++j) {
          if (scores[k * bn + j] > best[k]) {
            best[k] = scores[k * bn + j];
            arg[k] = b0 + j;
          }
        }
      }
    }
    for (int64_t k = 0; k < qn; ++k) {
      if (best[k] < kSameVectorCosine) {
        return Status::DataError(
            split.y->Name() + ": target row " + std::to_string(missing[m0 + k]) +
            " is not in the bank " + data.bank_name + " (its nearest bank row " +
            std::to_string(arg[k]) + " has cosine " + std::to_string(best[k]) +
            "): every target must be a bank vector; add it to the bank or drop the pair");
      }
      split.target_row[missing[m0 + k]] = arg[k];
    }
  }
  return Status::Ok();
}

}  // namespace

MemoryRows::MemoryRows(std::vector<float> data, int64_t row_elems, std::string name)
    : data_(std::move(data)),
      row_elems_(row_elems),
      rows_(row_elems > 0 ? static_cast<int64_t>(data_.size()) / row_elems : 0),
      name_(std::move(name)) {
  RLT_CHECK(row_elems >= 1 && rows_ * row_elems == static_cast<int64_t>(data_.size()));
}

void MemoryRows::Gather(const int64_t* idx, int64_t n, float* out) const {
  for (int64_t i = 0; i < n; ++i) {
    RLT_CHECK(idx[i] >= 0 && idx[i] < rows_);
    std::memcpy(out + i * row_elems_, &data_[idx[i] * row_elems_], row_elems_ * 4);
  }
}

void MemoryRows::Read(int64_t first, int64_t n, float* out) const {
  RLT_CHECK(first >= 0 && n >= 0 && first + n <= rows_);
  std::memcpy(out, &data_[first * row_elems_], n * row_elems_ * 4);
}

Status PrepareData(RetrievalData& data, const RowSource& bank, int largest_k) {
  const int64_t D = bank.row_elems();
  data.dim = static_cast<int>(D);
  data.bank_rows = bank.rows();
  data.bank_name = bank.Name();
  for (Split* s : {&data.train, &data.val}) {
    const std::string which = s == &data.train ? "training" : "validation";
    if (s->x == nullptr || s->y == nullptr) {
      return Status::DataError("the " + which + " contexts and targets are missing");
    }
    if (s->x->rows() != s->y->rows()) {
      return Status::DataError(s->x->Name() + " has " + std::to_string(s->x->rows()) +
                               " rows but " + s->y->Name() + " has " +
                               std::to_string(s->y->rows()) + ": one target per context");
    }
    if (s->x->rows() < 1) return Status::DataError(s->x->Name() + " has no rows");
    if (s->y->row_elems() != D) {
      return Status::DataError(s->y->Name() + " has " + std::to_string(s->y->row_elems()) +
                               " dimensions but the bank " + bank.Name() + " has " +
                               std::to_string(D) + ": targets and bank vectors must match");
    }
    if (s->x->row_elems() % D != 0) {
      return Status::DataError(s->x->Name() + ": rows of " + std::to_string(s->x->row_elems()) +
                               " values are not (T, " + std::to_string(D) + ")");
    }
  }
  data.steps = static_cast<int>(data.train.x->row_elems() / D);
  if (data.val.x->row_elems() != data.train.x->row_elems()) {
    return Status::DataError(data.val.x->Name() + " has " +
                             std::to_string(data.val.x->row_elems() / D) + " steps but " +
                             data.train.x->Name() + " has " + std::to_string(data.steps) +
                             ": both splits need the same T");
  }
  if (data.bank_rows < largest_k) {
    return Status::DataError(bank.Name() + " holds " + std::to_string(data.bank_rows) +
                             " vectors, fewer than the largest k = " + std::to_string(largest_k) +
                             " of [eval] ks: Recall@k would be 1 by construction; lower ks "
                             "or use a larger bank");
  }
  for (const RowSource* src : std::initializer_list<const RowSource*>{
           &bank, data.train.y.get(), data.val.y.get(), data.train.x.get(), data.val.x.get()}) {
    RLT_RETURN_IF_ERROR(CheckFinite(*src));
  }
  // The bank, normalised; a zero row cannot be.
  data.bank.resize(data.bank_rows * D);
  bank.Read(0, data.bank_rows, data.bank.data());
  for (int64_t j = 0; j < data.bank_rows; ++j) {
    float* v = &data.bank[j * D];
    const double norm = Norm(v, D);
    if (!(norm > 0.0)) {
      return Status::DataError(bank.Name() + ": row " + std::to_string(j) +
                               " is all zeros and cannot be L2-normalised; drop it from the "
                               "bank");
    }
    for (int64_t e = 0; e < D; ++e) v[e] = static_cast<float>(v[e] / norm);
  }
  // Exact duplicates are kept once: a copy of the target would otherwise rank above it by
  // rounding (scored in another block of the product) and serve as its negative.
  const int64_t file_rows = data.bank_rows;
  std::string note;
  const std::vector<int64_t> new_row = DeduplicateBank(data, &note);
  if (!note.empty()) data.notes.push_back(note);
  if (data.bank_rows < largest_k) {
    return Status::DataError(
        bank.Name() + " holds " + std::to_string(data.bank_rows) +
        " distinct vectors, fewer than the largest k = " + std::to_string(largest_k) +
        " of [eval] ks: Recall@k would be 1 by construction; lower ks "
        "or use a larger bank");
  }
  for (Split* s : {&data.train, &data.val}) {
    std::vector<float> y(D);
    for (int64_t i = 0; i < s->y->rows(); ++i) {
      s->y->Read(i, 1, y.data());
      if (!(Norm(y.data(), D) > 0.0)) {
        return Status::DataError(s->y->Name() + ": row " + std::to_string(i) +
                                 " is all zeros and cannot be L2-normalised");
      }
    }
    RLT_RETURN_IF_ERROR(FindTargets(data, *s, s->y->Name(), file_rows, new_row));
  }
  return Status::Ok();
}

Result<std::unique_ptr<RetrievalData>> SynthDataInMemory(const SynthDataset& synth, int largest_k) {
  const SynthOptions& o = synth.options();
  const int64_t D = o.d, TD = static_cast<int64_t>(o.t) * o.d;
  auto data = std::make_unique<RetrievalData>();
  for (bool val : {false, true}) {
    const int64_t n = val ? synth.n_val() : synth.n_train();
    std::vector<float> x(n * TD), y(n * D);
    std::vector<int64_t> rows(n);
    for (int64_t i = 0; i < n; ++i) {
      synth.Pair(val, i, &x[i * TD], &y[i * D]);
      rows[i] = synth.TargetRow(val, i);
    }
    Split& s = val ? data->val : data->train;
    s.x = std::make_unique<MemoryRows>(std::move(x), TD,
                                       val ? "synthetic:X_val" : "synthetic:X_train");
    s.y = std::make_unique<MemoryRows>(std::move(y), D,
                                       val ? "synthetic:Y_val" : "synthetic:Y_train");
    s.given_rows = std::move(rows);
  }
  std::vector<float> bank(o.bank_size * D);
  for (int64_t j = 0; j < o.bank_size; ++j) synth.BankRow(j, &bank[j * D]);
  MemoryRows bank_rows(std::move(bank), D, "synthetic:vectors");
  RLT_RETURN_IF_ERROR(PrepareData(*data, bank_rows, largest_k));
  std::vector<int64_t> ids(o.bank_size);
  for (int64_t j = 0; j < o.bank_size; ++j) ids[j] = synth.BankId(j);
  data->SetBankIds(std::move(ids));
  return data;
}

void RetrievalData::SetBankIds(std::vector<int64_t> file_ids) {
  if (bank_source_rows.empty()) {
    bank_ids = std::move(file_ids);
    return;
  }
  bank_ids.resize(bank_source_rows.size());
  for (size_t j = 0; j < bank_source_rows.size(); ++j) bank_ids[j] = file_ids[bank_source_rows[j]];
}

void ShuffleTrainingTargets(RetrievalData& data, uint64_t seed) {
  Rng rng(seed ^ 0x5bd1e995ULL);
  auto& rows = data.train.target_row;
  for (int64_t i = static_cast<int64_t>(rows.size()) - 1; i > 0; --i) {
    std::swap(rows[i], rows[static_cast<int64_t>(rng.NextU64() % (i + 1))]);
  }
}

}  // namespace rlt::retrieval
