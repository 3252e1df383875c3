// rltrade retrieval: the hard-negative mining schedule (see mining_schedule.h).
#include "retrieval/mining_schedule.h"

#include <algorithm>
#include <cctype>

namespace rlt::retrieval {
namespace {

constexpr const char* kSyntax =
    " (syntax: comma-separated a-b:none or a-b:N@cmin-cmax, e.g. 0-2:none,3-30:8@20-200)";

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  Status Error(size_t at, const std::string& what) const {
    return Status::InvalidArgument("mining schedule '" + s_ + "': at character " +
                                   std::to_string(at + 1) + ": " + what + kSyntax);
  }
  void SkipSpaces() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  bool AtEnd() {
    SkipSpaces();
    return i_ >= s_.size();
  }
  bool Accept(char c) {
    SkipSpaces();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  // A non-negative decimal integer of at most 12 digits.
  Result<int64_t> Number(const std::string& what) {
    SkipSpaces();
    const size_t start = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (i_ == start) return Error(start, "expected " + what + Found(start));
    if (i_ - start > 12) return Error(start, what + " is too large");
    return std::stoll(s_.substr(start, i_ - start));
  }
  std::string Found(size_t at) const {
    if (at >= s_.size()) return ", found the end";
    return ", found '" + std::string(1, s_[at]) + "'";
  }
  bool AcceptWord(const char* word) {
    SkipSpaces();
    const std::string w(word);
    if (s_.compare(i_, w.size(), w) == 0) {
      i_ += w.size();
      return true;
    }
    return false;
  }
  size_t pos() const { return i_; }

 private:
  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace

Result<MiningSchedule> MiningSchedule::Parse(const std::string& text) {
  MiningSchedule schedule;
  schedule.text_ = text;
  Parser p(text);
  if (p.AtEnd()) return schedule;
  std::vector<size_t> starts;
  while (true) {
    p.SkipSpaces();
    const size_t entry_start = p.pos();
    MiningPhase phase;
    auto first = p.Number("an epoch");
    if (!first.ok()) return first.status();
    int64_t last = *first;
    if (p.Accept('-')) {
      auto l = p.Number("the last epoch of the range");
      if (!l.ok()) return l.status();
      last = *l;
    }
    if (last < *first) {
      return p.Error(entry_start, "the range " + std::to_string(*first) + "-" +
                                      std::to_string(last) + " ends before it starts");
    }
    if (last > 1000000) return p.Error(entry_start, "epochs above 1000000 are not supported");
    phase.first_epoch = static_cast<int>(*first);
    phase.last_epoch = static_cast<int>(last);
    if (!p.Accept(':')) {
      return p.Error(p.pos(), "expected ':' after the epoch range" + p.Found(p.pos()));
    }
    const size_t what = p.pos();
    if (!p.AcceptWord("none")) {
      p.SkipSpaces();
      if (p.pos() >= text.size() || !std::isdigit(static_cast<unsigned char>(text[p.pos()]))) {
        return p.Error(p.pos(), "expected 'none' or N@cmin-cmax after ':'" + p.Found(p.pos()));
      }
      auto n = p.Number("the number of negatives");
      if (!n.ok()) return n.status();
      if (!p.Accept('@')) {
        return p.Error(p.pos(), "expected '@' after the number of negatives" + p.Found(p.pos()));
      }
      auto cmin = p.Number("the first neighbour rank");
      if (!cmin.ok()) return cmin.status();
      if (!p.Accept('-')) {
        return p.Error(p.pos(), "expected '-' between the neighbour ranks" + p.Found(p.pos()));
      }
      auto cmax = p.Number("the last neighbour rank");
      if (!cmax.ok()) return cmax.status();
      if (*cmin < 1) return p.Error(what, "neighbour ranks start at 1 (the nearest)");
      if (*cmax < *cmin) {
        return p.Error(what, "the rank range " + std::to_string(*cmin) + "-" +
                                 std::to_string(*cmax) + " ends before it starts");
      }
      if (*n < 1) return p.Error(what, "the number of negatives must be at least 1 (or 'none')");
      if (*n > *cmax - *cmin + 1) {
        return p.Error(what, std::to_string(*n) + " negatives cannot be drawn from the " +
                                 std::to_string(*cmax - *cmin + 1) + " ranks " +
                                 std::to_string(*cmin) + "-" + std::to_string(*cmax));
      }
      if (*n > 4096) return p.Error(what, "at most 4096 negatives per query");
      phase.negatives = static_cast<int>(*n);
      phase.rank_min = *cmin;
      phase.rank_max = *cmax;
    }
    schedule.phases_.push_back(phase);
    starts.push_back(entry_start);
    if (p.AtEnd()) break;
    if (!p.Accept(',')) {
      return p.Error(p.pos(), "expected ',' or the end after an entry" + p.Found(p.pos()));
    }
  }
  // No two entries may claim the same epoch.
  for (size_t a = 0; a < schedule.phases_.size(); ++a) {
    for (size_t b = 0; b < a; ++b) {
      const MiningPhase& x = schedule.phases_[a];
      const MiningPhase& y = schedule.phases_[b];
      if (x.first_epoch <= y.last_epoch && y.first_epoch <= x.last_epoch) {
        return p.Error(starts[a], "epochs " + std::to_string(x.first_epoch) + "-" +
                                      std::to_string(x.last_epoch) + " overlap the entry " +
                                      std::to_string(y.first_epoch) + "-" +
                                      std::to_string(y.last_epoch));
      }
    }
  }
  std::sort(
      schedule.phases_.begin(), schedule.phases_.end(),
      [](const MiningPhase& a, const MiningPhase& b) { return a.first_epoch < b.first_epoch; });
  return schedule;
}

MiningPhase MiningSchedule::At(int epoch) const {
  for (const MiningPhase& p : phases_) {
    if (epoch >= p.first_epoch && epoch <= p.last_epoch) return p;
  }
  MiningPhase none;
  none.first_epoch = none.last_epoch = epoch;
  return none;
}

int MiningSchedule::max_negatives() const {
  int n = 0;
  for (const MiningPhase& p : phases_) n = std::max(n, p.negatives);
  return n;
}

int64_t MiningSchedule::max_rank() const {
  int64_t r = 0;
  for (const MiningPhase& p : phases_) r = std::max(r, p.negatives > 0 ? p.rank_max : 0);
  return r;
}

Status MiningSchedule::CheckAgainstBank(int64_t bank_size, const std::string& where) const {
  const int64_t need = max_rank();
  if (need > 0 && need >= bank_size) {
    return Status::InvalidArgument(where + ": mining schedule '" + text_ +
                                   "' reads neighbour rank " + std::to_string(need) +
                                   ", but the bank holds " + std::to_string(bank_size) +
                                   " vectors (one of them the query's target): lower cmax below " +
                                   std::to_string(bank_size) + " or use a larger bank");
  }
  return Status::Ok();
}

}  // namespace rlt::retrieval
