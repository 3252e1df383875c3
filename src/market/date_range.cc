// rltrade market: DateRange (see date_range.h).
#include "market/date_range.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "core/civil_time.h"

namespace rlt::market {
namespace {

// Exactly YYYY-MM-DD with digits only (sscanf alone would take "-123" or "+12" as a year).
bool HasDateShape(const std::string& text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

}  // namespace

Result<int32_t> ParseDateKey(const std::string& text) {
  int y = 0, m = 0, d = 0;
  char tail = 0;
  if (!HasDateShape(text) || std::sscanf(text.c_str(), "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3 ||
      y < 1 || m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, m)) {
    return Status::InvalidArgument("'" + text + "': expected a date YYYY-MM-DD");
  }
  return y * 10000 + m * 100 + d;
}

bool DateRange::Overlaps(const DateRange& o) const {
  const int32_t a_last = last == 0 ? 99999999 : last;
  const int32_t b_last = o.last == 0 ? 99999999 : o.last;
  return std::max(first, o.first) <= std::min(a_last, b_last);
}

std::string DateRange::ToString() const {
  return (first == 0 ? std::string("start") : FormatDate(first)) + ":" +
         (last == 0 ? std::string("end") : FormatDate(last));
}

Result<DateRange> DateRange::Parse(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) {
    return Status::InvalidArgument("date range '" + text +
                                   "': expected START:END, e.g. 2023-01-02:2023-06-30");
  }
  DateRange r;
  const std::string a = text.substr(0, colon), b = text.substr(colon + 1);
  // "start" / "end" (as ToString() writes them) or an empty side mean unbounded.
  if (!a.empty() && a != "start") {
    RLT_ASSIGN_OR_RETURN(r.first, ParseDateKey(a));
  }
  if (!b.empty() && b != "end") {
    RLT_ASSIGN_OR_RETURN(r.last, ParseDateKey(b));
  }
  if (r.first != 0 && r.last != 0 && r.first > r.last) {
    return Status::InvalidArgument("date range '" + text + "': start is after end");
  }
  return r;
}

}  // namespace rlt::market
