// rltrade retrieval: the hard-negative mining schedule.
//
// Syntax: comma-separated entries, each an inclusive epoch range and what to mine then:
//   a-b:none          no mining in epochs a..b
//   a-b:N@cmin-cmax   N negatives per query, drawn without replacement from the query's
//                     neighbours at ranks cmin..cmax (1 = nearest bank vector), never the
//                     query's own target
//   a:...             a single epoch (a-a)
// e.g. "0-2:none,3-30:8@20-200". Epochs count from 0. Spaces around tokens are allowed.
// Ranges may not overlap; epochs no entry covers mine nothing. Rules: a <= b,
// 1 <= N <= cmax - cmin + 1, 1 <= cmin <= cmax. Whether cmax fits the bank is checked
// later, against the bank (CheckAgainstBank). An empty string is "no mining ever".
//
// Errors give the 1-based character position: "mining schedule '0-2:nne': at character 5:
// expected 'none' or N@cmin-cmax after ':'".
#ifndef RLT_RETRIEVAL_MINING_SCHEDULE_H_
#define RLT_RETRIEVAL_MINING_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace rlt::retrieval {

struct MiningPhase {
  int first_epoch = 0, last_epoch = 0;  // inclusive
  int negatives = 0;                    // 0: no mining
  int64_t rank_min = 0, rank_max = 0;   // 1-based neighbour ranks, inclusive
};

class MiningSchedule {
 public:
  static Result<MiningSchedule> Parse(const std::string& text);

  // What to mine in `epoch` (negatives = 0 when nothing).
  MiningPhase At(int epoch) const;
  // The most negatives any epoch asks for, and the deepest rank any epoch reads.
  int max_negatives() const;
  int64_t max_rank() const;
  const std::vector<MiningPhase>& phases() const { return phases_; }
  // Refuses ranks the bank cannot provide: cmax must be < bank_size (the target itself
  // is among the neighbours and is skipped, so cmax + 1 vectors must exist).
  Status CheckAgainstBank(int64_t bank_size, const std::string& where) const;
  std::string text() const { return text_; }

 private:
  std::string text_;
  std::vector<MiningPhase> phases_;  // sorted by first_epoch
};

}  // namespace rlt::retrieval

#endif  // RLT_RETRIEVAL_MINING_SCHEDULE_H_
