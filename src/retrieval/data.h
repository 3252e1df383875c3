// rltrade retrieval: the data a two-tower run trains on, behind small row-source
// interfaces (in memory for tests, .npz files for runs), and its checks.
//
// A dataset is: training contexts X_train (N, T, D) with targets Y_train (N, D),
// validation X_val (M, T, D) / Y_val (M, D), and a bank (B, D). Every target must be a
// bank row: its row is read from Y_*_row when the pairs file has it (and checked), found
// by exact bitwise match of the vector otherwise, and else by the nearest bank row,
// which must have cosine >= 0.9999 (an error names the first target that is not in the
// bank). The bank is held L2-normalised in memory (B x D floats; the index and the
// exact recall share it); contexts are read a batch at a time, never all at once.
#ifndef RLT_RETRIEVAL_DATA_H_
#define RLT_RETRIEVAL_DATA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::retrieval {

// Rows of `row_elems` float32 values (a (T, D) context or a (D) vector).
class RowSource {
 public:
  virtual ~RowSource() = default;
  virtual int64_t rows() const = 0;
  virtual int64_t row_elems() const = 0;
  // Copies rows idx[0..n) into out (n * row_elems), converting to float32.
  virtual void Gather(const int64_t* idx, int64_t n, float* out) const = 0;
  // Rows [first, first + n), in order (bulk reads for checks).
  virtual void Read(int64_t first, int64_t n, float* out) const = 0;
  // "pairs.npz:X_train" — for messages.
  virtual std::string Name() const = 0;
  // Drops the pages read so far from this process's resident memory (a memory-mapped
  // file's pages stay in the page cache); no-op for data in memory.
  virtual void Release() const {}
  // When the source already scanned its values: true, with the first non-finite element
  // (row * row_elems + column; -1 = none) and its value.
  virtual bool FiniteChecked(int64_t* /*first_bad*/, float* /*value*/) const { return false; }
};

// A RowSource over a float vector it owns (tests, synthetic data in memory).
class MemoryRows : public RowSource {
 public:
  MemoryRows(std::vector<float> data, int64_t row_elems, std::string name);
  int64_t rows() const override { return rows_; }
  int64_t row_elems() const override { return row_elems_; }
  void Gather(const int64_t* idx, int64_t n, float* out) const override;
  void Read(int64_t first, int64_t n, float* out) const override;
  std::string Name() const override { return name_; }

 private:
  std::vector<float> data_;
  int64_t row_elems_, rows_;
  std::string name_;
};

struct Split {
  std::unique_ptr<RowSource> x;     // (n, T * D)
  std::unique_ptr<RowSource> y;     // (n, D)
  std::vector<int64_t> target_row;  // (n) bank row of each target (filled by Prepare)
  std::vector<int64_t> given_rows;  // optional rows from the file (checked by Prepare)
};

struct RetrievalData {
  int steps = 0, dim = 0;
  Split train, val;
  int64_t bank_rows = 0;    // distinct vectors (exact duplicates are kept once)
  std::vector<float> bank;  // (bank_rows, dim), L2-normalised
  std::vector<int64_t> bank_ids;
  std::string bank_name;  // "bank.npz:vectors"
  // The file row of each bank row when duplicates were dropped (empty: the same rows).
  std::vector<int64_t> bank_source_rows;
  // What the checks changed, for the user (e.g. duplicates dropped): printed as notes.
  std::vector<std::string> notes;

  // The file's ids (one per file row), kept for the rows kept.
  void SetBankIds(std::vector<int64_t> file_ids);
};

// Checks shapes, finiteness (NaN/inf anywhere is an error naming the array and row), zero
// bank rows and zero targets (cannot be normalised), normalises the bank (from `bank`,
// the raw (B, D) rows), keeps each exact duplicate once (rows whose normalised vectors are
// equal: the first copy stays, a note in data.notes says how many went; targets and
// Y_*_row entries naming a later copy use the first) and finds every target's bank row.
// `largest_k`: the bank must hold at least this many rows (Recall@k would be meaningless
// otherwise).
Status PrepareData(RetrievalData& data, const RowSource& bank, int largest_k);

// The synthetic dataset generated into memory (tests, benchmarks without files), with
// the target rows the generator knows (checked like a file's Y_*_row).
class SynthDataset;
Result<std::unique_ptr<RetrievalData>> SynthDataInMemory(const SynthDataset& synth, int largest_k);

// Shuffled-target control: permutes the training targets (and their rows) with `seed`, so
// contexts no longer predict them.
void ShuffleTrainingTargets(RetrievalData& data, uint64_t seed);

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_DATA_H_
