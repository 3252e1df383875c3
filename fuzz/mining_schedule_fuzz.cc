// Fuzzes the hard-negative mining schedule parser (retrieval/mining_schedule.h). An
// accepted schedule keeps its promises: phases sorted and disjoint, ranks 1 <= cmin <=
// cmax with 1 <= N <= cmax - cmin + 1, At() agreeing with the phases; a refused one names
// a character position inside the text (or one past its end).
#include <string>

#include "fuzz_util.h"
#include "retrieval/mining_schedule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(rlt::fuzz::AsText(data, size));
  auto s = rlt::retrieval::MiningSchedule::Parse(text);
  if (!s.ok()) {
    const std::string& m = s.status().message();
    // "mining schedule '<text>': at character N: ..." (the text may itself hold digits).
    const std::string head = "mining schedule '" + text + "': at character ";
    FUZZ_REQUIRE(m.compare(0, head.size(), head) == 0, "an error quotes the text and a position");
    const long pos = std::stol(m.substr(head.size()));
    FUZZ_REQUIRE(pos >= 1 && static_cast<size_t>(pos) <= text.size() + 1, "schedule promise");
    return 0;
  }
  const auto& phases = s->phases();
  for (size_t i = 0; i < phases.size(); ++i) {
    const auto& p = phases[i];
    FUZZ_REQUIRE(p.first_epoch >= 0 && p.first_epoch <= p.last_epoch, "schedule promise");
    if (i > 0) FUZZ_REQUIRE(phases[i - 1].last_epoch < p.first_epoch, "schedule promise");
    if (p.negatives > 0) {
      FUZZ_REQUIRE(p.rank_min >= 1 && p.rank_min <= p.rank_max, "schedule promise");
      FUZZ_REQUIRE(p.negatives <= p.rank_max - p.rank_min + 1, "schedule promise");
    }
    FUZZ_REQUIRE(s->At(p.first_epoch).negatives == p.negatives, "schedule promise");
    FUZZ_REQUIRE(s->At(p.last_epoch).rank_max == p.rank_max, "schedule promise");
  }
  return 0;
}
