// rltrade retrieval: datasets in .npz files (see npz_data.h and synth.h's WriteSynth).
#include "retrieval/npz_data.h"

#include <algorithm>
#include <vector>

#include "retrieval/npz.h"

namespace rlt::retrieval {
namespace {

const std::vector<NpyDType> kFloats = {NpyDType::kFloat32, NpyDType::kFloat16};

}  // namespace

Result<std::unique_ptr<RetrievalData>> LoadRetrievalData(const std::string& pairs,
                                                         const std::string& bank, int largest_k) {
  RLT_ASSIGN_OR_RETURN(NpzFile pf, NpzFile::Open(pairs));
  RLT_ASSIGN_OR_RETURN(NpzFile bf, NpzFile::Open(bank));
  RLT_ASSIGN_OR_RETURN(NpzArray vectors, bf.Get("vectors", kFloats, {-1, -1}));
  const int64_t D = vectors.shape()[1];
  auto data = std::make_unique<RetrievalData>();
  RLT_ASSIGN_OR_RETURN(NpzArray x_train, pf.Get("X_train", kFloats, {-1, -1, D}));
  const int64_t T = x_train.shape()[1];
  const int64_t N = x_train.shape()[0];
  RLT_ASSIGN_OR_RETURN(NpzArray y_train, pf.Get("Y_train", kFloats, {N, D}));
  RLT_ASSIGN_OR_RETURN(NpzArray x_val, pf.Get("X_val", kFloats, {-1, T, D}));
  const int64_t M = x_val.shape()[0];
  RLT_ASSIGN_OR_RETURN(NpzArray y_val, pf.Get("Y_val", kFloats, {M, D}));
  if (pf.Has("Y_train_row")) {
    RLT_ASSIGN_OR_RETURN(NpzArray rows, pf.Get("Y_train_row", {NpyDType::kInt64}, {N}));
    data->train.given_rows = rows.ReadInt64();
  }
  if (pf.Has("Y_val_row")) {
    RLT_ASSIGN_OR_RETURN(NpzArray rows, pf.Get("Y_val_row", {NpyDType::kInt64}, {M}));
    data->val.given_rows = rows.ReadInt64();
  }
  data->train.x = std::make_unique<NpzArray>(std::move(x_train));
  data->train.y = std::make_unique<NpzArray>(std::move(y_train));
  data->val.x = std::make_unique<NpzArray>(std::move(x_val));
  data->val.y = std::make_unique<NpzArray>(std::move(y_val));
  RLT_RETURN_IF_ERROR(PrepareData(*data, vectors, largest_k));
  if (bf.Has("ids")) {
    RLT_ASSIGN_OR_RETURN(NpzArray ids, bf.Get("ids", {NpyDType::kInt64}, {vectors.rows()}));
    data->SetBankIds(ids.ReadInt64());
  }
  return data;
}

Status WriteSynth(const SynthOptions& options, const std::string& pairs_path,
                  const std::string& bank_path) {
  RLT_ASSIGN_OR_RETURN(SynthDataset ds, SynthDataset::Create(options));
  const NpyDType dtype = options.dtype == "float16" ? NpyDType::kFloat16 : NpyDType::kFloat32;
  const int64_t D = options.d, T = options.t;
  {
    RLT_ASSIGN_OR_RETURN(NpzWriter w, NpzWriter::Create(pairs_path));
    constexpr int64_t kBlock = 256;  // pairs generated at a time
    std::vector<float> x(kBlock * T * D), y(kBlock * D);
    for (bool val : {false, true}) {
      const int64_t n = val ? ds.n_val() : ds.n_train();
      const std::string suffix = val ? "_val" : "_train";
      // X first (the largest), then Y from a second pass (generation is cheap and keeps
      // memory at one block).
      RLT_RETURN_IF_ERROR(w.BeginArray("X" + suffix, dtype, {n, T, D}));
      for (int64_t first = 0; first < n; first += kBlock) {
        const int64_t b = std::min(kBlock, n - first);
        for (int64_t i = 0; i < b; ++i) ds.Pair(val, first + i, &x[i * T * D], &y[i * D]);
        RLT_RETURN_IF_ERROR(w.AppendF32(x.data(), b * T * D));
      }
      RLT_RETURN_IF_ERROR(w.EndArray());
      RLT_RETURN_IF_ERROR(w.BeginArray("Y" + suffix, dtype, {n, D}));
      std::vector<float> one_x(T * D);
      for (int64_t i = 0; i < n; ++i) {
        ds.Pair(val, i, one_x.data(), y.data());
        RLT_RETURN_IF_ERROR(w.AppendF32(y.data(), D));
      }
      RLT_RETURN_IF_ERROR(w.EndArray());
      std::vector<int64_t> rows(n);
      for (int64_t i = 0; i < n; ++i) rows[i] = ds.TargetRow(val, i);
      RLT_RETURN_IF_ERROR(w.AddInt64("Y" + suffix + "_row", {n}, rows.data()));
    }
    RLT_RETURN_IF_ERROR(w.Finish());
  }
  RLT_ASSIGN_OR_RETURN(NpzWriter w, NpzWriter::Create(bank_path));
  RLT_RETURN_IF_ERROR(w.BeginArray("vectors", dtype, {options.bank_size, D}));
  std::vector<float> v(D);
  for (int64_t j = 0; j < options.bank_size; ++j) {
    ds.BankRow(j, v.data());
    RLT_RETURN_IF_ERROR(w.AppendF32(v.data(), D));
  }
  RLT_RETURN_IF_ERROR(w.EndArray());
  std::vector<int64_t> ids(options.bank_size);
  for (int64_t j = 0; j < options.bank_size; ++j) ids[j] = ds.BankId(j);
  RLT_RETURN_IF_ERROR(w.AddInt64("ids", {options.bank_size}, ids.data()));
  return w.Finish();
}

}  // namespace rlt::retrieval
