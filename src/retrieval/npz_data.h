// rltrade retrieval: a dataset from its two .npz files, and the synthetic dataset written
// to them.
//
// Pairs file: X_train (N, T, D), Y_train (N, D), X_val (M, T, D), Y_val (M, D), float32
// or float16; optional Y_train_row (N) / Y_val_row (M) int64, the bank row of each
// target (rltrade retrieval synth writes them; without them targets are found in the
// bank by value). Bank file: vectors (B, D) float32 or float16; optional ids (B) int64.
// Contexts stay in the file (memory-mapped, or inflated once when deflated) and are read
// a batch at a time; the bank is normalised into memory. Every check of PrepareData
// (data.h) runs before training starts.
#ifndef RLT_RETRIEVAL_NPZ_DATA_H_
#define RLT_RETRIEVAL_NPZ_DATA_H_

#include <memory>
#include <string>

#include "core/status.h"
#include "retrieval/data.h"
#include "retrieval/synth.h"

namespace rlt::retrieval {

Result<std::unique_ptr<RetrievalData>> LoadRetrievalData(const std::string& pairs,
                                                         const std::string& bank, int largest_k);

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_NPZ_DATA_H_
