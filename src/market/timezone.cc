// rltrade market: TZif parsing, POSIX TZ rules and local/UTC conversion.
// Formats: RFC 8536 (TZif) and POSIX.1-2017 section 8.3 (the TZ variable).
#include "market/timezone.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/civil_time.h"
#include "core/file_io.h"

namespace rlt::market {
namespace {

constexpr int64_t kDay = 86400;

// ---- POSIX TZ string parsing -------------------------------------------------------

class RuleParser {
 public:
  explicit RuleParser(const std::string& s) : s_(s) {}
  bool AtEnd() const { return pos_ >= s_.size(); }
  char Peek() const { return AtEnd() ? '\0' : s_[pos_]; }
  bool Accept(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  size_t pos() const { return pos_; }

  // A zone abbreviation: letters (3+) or <...> quoted.
  bool Name() {
    if (Accept('<')) {
      while (!AtEnd() && Peek() != '>') ++pos_;
      return Accept('>');
    }
    const size_t begin = pos_;
    while (std::isalpha(static_cast<unsigned char>(Peek()))) ++pos_;
    return pos_ - begin >= 3;
  }
  // [+-]hh[:mm[:ss]] as signed seconds.
  bool Duration(int32_t* out) {
    int sign = 1;
    if (Accept('-')) {
      sign = -1;
    } else {
      Accept('+');
    }
    int parts[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i) {
      if (i > 0 && !Accept(':')) break;
      if (!Number(&parts[i])) return false;
    }
    *out = sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
    return true;
  }
  bool Number(int* out) {
    if (!std::isdigit(static_cast<unsigned char>(Peek()))) return false;
    int v = 0;
    while (std::isdigit(static_cast<unsigned char>(Peek()))) v = v * 10 + (s_[pos_++] - '0');
    *out = v;
    return true;
  }
  bool Date(PosixTzRule::Date* d) {
    if (Accept('M')) {
      d->kind = 'M';
      if (!Number(&d->month) || !Accept('.') || !Number(&d->week) || !Accept('.') ||
          !Number(&d->weekday)) {
        return false;
      }
      if (d->month < 1 || d->month > 12 || d->week < 1 || d->week > 5 || d->weekday > 6) {
        return false;
      }
    } else if (Accept('J')) {
      d->kind = 'J';
      if (!Number(&d->day) || d->day < 1 || d->day > 365) return false;
    } else {
      d->kind = 'N';
      if (!Number(&d->day) || d->day > 365) return false;
    }
    d->time = 7200;
    if (Accept('/')) return Duration(&d->time);
    return true;
  }

 private:
  const std::string& s_;
  size_t pos_ = 0;
};

// Local seconds (since epoch, as if UTC) at which `d` happens in `year`.
int64_t LocalTransition(const PosixTzRule::Date& d, int year) {
  const int64_t jan1 = DaysFromCivil(year, 1, 1);
  int64_t days = 0;
  if (d.kind == 'J') {
    const bool leap = DaysInMonth(year, 2) == 29;
    days = jan1 + d.day - 1 + (leap && d.day >= 60 ? 1 : 0);
  } else if (d.kind == 'N') {
    days = jan1 + d.day;
  } else {
    const int64_t first = DaysFromCivil(year, d.month, 1);
    days = first + (d.weekday - Weekday(first) + 7) % 7 + 7 * (d.week - 1);
    const int64_t last = first + DaysInMonth(year, d.month) - 1;
    while (days > last) days -= 7;
  }
  return days * kDay + d.time;
}

// ---- TZif parsing ------------------------------------------------------------------

class ByteReader {
 public:
  explicit ByteReader(const std::string& b) : b_(b) {}
  bool Has(size_t n) const { return pos_ + n <= b_.size(); }
  void Skip(size_t n) { pos_ += n; }
  size_t pos() const { return pos_; }
  int64_t Be(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(b_[pos_ + i]);
    pos_ += bytes;
    if (bytes == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
    return static_cast<int64_t>(v);
  }
  uint8_t U8() { return static_cast<uint8_t>(b_[pos_++]); }

 private:
  const std::string& b_;
  size_t pos_ = 0;
};

struct TzifCounts {
  int64_t isut, isstd, leap, time, type, chars;
  int64_t BlockSize(int time_bytes) const {
    return time * time_bytes + time + type * 6 + chars + leap * (time_bytes + 4) + isstd + isut;
  }
};

bool ReadHeader(ByteReader& r, char* version, TzifCounts* c) {
  if (!r.Has(44)) return false;
  char magic[4];
  for (char& m : magic) m = static_cast<char>(r.U8());
  if (std::string(magic, 4) != "TZif") return false;
  *version = static_cast<char>(r.U8());
  r.Skip(15);
  c->isut = r.Be(4);
  c->isstd = r.Be(4);
  c->leap = r.Be(4);
  c->time = r.Be(4);
  c->type = r.Be(4);
  c->chars = r.Be(4);
  return c->type > 0 && c->time >= 0 && c->chars >= 0 && c->leap >= 0;
}

Status BadTzif(const std::string& name, const std::string& what) {
  return Status::DataError("time zone '" + name + "': malformed TZif file (" + what +
                           "); reinstall the tzdata package");
}

bool IsUtcName(const std::string& n) {
  return n == "UTC" || n == "Etc/UTC" || n == "GMT" || n == "Etc/GMT" || n == "Z" || n == "Zulu" ||
         n == "Etc/Zulu" || n == "UCT" || n == "Etc/UCT";
}

}  // namespace

// ---- PosixTzRule -------------------------------------------------------------------

Result<PosixTzRule> PosixTzRule::Parse(const std::string& text) {
  PosixTzRule rule;
  RuleParser p(text);
  auto fail = [&](const char* what) -> Status {
    return Status::InvalidArgument("POSIX TZ rule '" + text + "': expected " + what +
                                   " at position " + std::to_string(p.pos()));
  };
  int32_t west = 0;
  if (!p.Name()) return fail("a zone abbreviation");
  if (!p.Duration(&west)) return fail("a UTC offset");
  rule.std_offset = -west;
  if (p.AtEnd()) return rule;
  if (!p.Name()) return fail("a DST abbreviation");
  rule.has_dst = true;
  rule.dst_offset = rule.std_offset + 3600;
  if (!p.AtEnd() && p.Peek() != ',') {
    if (!p.Duration(&west)) return fail("a DST offset");
    rule.dst_offset = -west;
  }
  if (p.AtEnd()) {  // No dates given: POSIX leaves it to the system; use the US rule.
    rule.start = Date{'M', 3, 2, 0, 0, 7200};
    rule.end = Date{'M', 11, 1, 0, 0, 7200};
    return rule;
  }
  if (!p.Accept(',') || !p.Date(&rule.start)) return fail("a DST start date");
  if (!p.Accept(',') || !p.Date(&rule.end)) return fail("a DST end date");
  if (!p.AtEnd()) return fail("the end of the rule");
  return rule;
}

int32_t PosixTzRule::OffsetAt(int64_t utc_seconds) const {
  if (!has_dst) return std_offset;
  const int year = CivilFromDays(DaysFromSeconds(utc_seconds + std_offset)).year;
  const int64_t start_utc = LocalTransition(start, year) - std_offset;
  const int64_t end_utc = LocalTransition(end, year) - dst_offset;
  bool dst;
  if (start_utc < end_utc) {  // northern hemisphere: DST inside the year
    dst = utc_seconds >= start_utc && utc_seconds < end_utc;
  } else {  // southern hemisphere: DST across the new year
    dst = !(utc_seconds >= end_utc && utc_seconds < start_utc);
  }
  return dst ? dst_offset : std_offset;
}

// ---- TimeZone ----------------------------------------------------------------------

TimeZone TimeZone::Utc() { return TimeZone(); }

Result<TimeZone> TimeZone::Load(const std::string& iana_name) {
  if (IsUtcName(iana_name)) {
    TimeZone tz;
    tz.name_ = iana_name;
    return tz;
  }
  const char* hint =
      "; use an IANA time zone name such as America/New_York, Europe/London, "
      "Asia/Kolkata or UTC (see /usr/share/zoneinfo)";
  if (iana_name.empty() || iana_name[0] == '/' || iana_name.find("..") != std::string::npos) {
    return Status::NotFound("invalid time zone name '" + iana_name + "'" + hint);
  }
  const char* env_dir = std::getenv("TZDIR");
  const std::string dir = env_dir && *env_dir ? env_dir : "/usr/share/zoneinfo";
  const std::string path = dir + "/" + iana_name;
  // TZif files are a few kB; 1 MiB bounds what a wrong TZDIR can make us read.
  Result<std::string> bytes = ReadFile(path, /*max_bytes=*/1 << 20);
  if (!bytes.ok()) {
    return Status::NotFound("unknown time zone '" + iana_name + "' (" + bytes.status().message() +
                            ")" + hint);
  }
  return FromTzif(iana_name, *bytes);
}

Result<TimeZone> TimeZone::FromTzif(const std::string& name, const std::string& bytes) {
  ByteReader r(bytes);
  char version = 0;
  TzifCounts c{};
  if (!ReadHeader(r, &version, &c)) return BadTzif(name, "bad header");
  int time_bytes = 4;
  if (version >= '2') {  // Skip the 32-bit block; the 64-bit one follows.
    if (!r.Has(c.BlockSize(4))) return BadTzif(name, "truncated v1 block");
    r.Skip(c.BlockSize(4));
    if (!ReadHeader(r, &version, &c)) return BadTzif(name, "bad v2 header");
    time_bytes = 8;
  }
  if (!r.Has(c.BlockSize(time_bytes))) return BadTzif(name, "truncated data block");
  std::vector<int64_t> times(c.time);
  std::vector<uint8_t> type_of(c.time);
  for (auto& t : times) t = r.Be(time_bytes);
  for (auto& t : type_of) t = r.U8();
  std::vector<int32_t> type_offset(c.type);
  for (auto& o : type_offset) {
    o = static_cast<int32_t>(r.Be(4));
    r.Skip(2);  // isdst, abbreviation index
  }
  r.Skip(c.chars + c.leap * (time_bytes + 4) + c.isstd + c.isut);
  TimeZone tz;
  tz.name_ = name;
  tz.initial_offset_ = type_offset[0];
  for (int64_t i = 0; i < c.time; ++i) {
    if (type_of[i] >= c.type) return BadTzif(name, "transition type out of range");
    if (i > 0 && times[i] <= times[i - 1]) return BadTzif(name, "transitions out of order");
    tz.transitions_.push_back(times[i]);
    tz.offsets_.push_back(type_offset[type_of[i]]);
  }
  if (time_bytes == 8 && r.Has(2) && bytes[r.pos()] == '\n') {
    const size_t begin = r.pos() + 1;
    const size_t end = bytes.find('\n', begin);
    const std::string footer = bytes.substr(begin, end == std::string::npos ? 0 : end - begin);
    if (!footer.empty()) {
      auto rule = PosixTzRule::Parse(footer);
      if (!rule.ok()) return BadTzif(name, rule.status().message());
      tz.rule_ = *rule;
      tz.has_rule_ = true;
    }
  }
  return tz;
}

int32_t TimeZone::OffsetAt(int64_t utc_seconds) const {
  if (transitions_.empty()) return has_rule_ ? rule_.OffsetAt(utc_seconds) : initial_offset_;
  if (utc_seconds < transitions_.front()) return initial_offset_;
  if (has_rule_ && utc_seconds >= transitions_.back()) return rule_.OffsetAt(utc_seconds);
  const auto it = std::upper_bound(transitions_.begin(), transitions_.end(), utc_seconds);
  return offsets_[static_cast<size_t>(it - transitions_.begin()) - 1];
}

Result<int64_t> TimeZone::LocalToUtc(int64_t local_seconds) const {
  if (is_fixed()) return local_seconds - OffsetAt(0);
  // Real offsets lie within +-26 h, and transitions are far more than a day apart, so the
  // offsets in effect 30 h either side of `local` are the only candidates.
  const int32_t candidates[2] = {OffsetAt(local_seconds - 30 * 3600),
                                 OffsetAt(local_seconds + 30 * 3600)};
  bool found = false;
  int64_t best = 0;
  for (int32_t offset : candidates) {
    const int64_t utc = local_seconds - offset;
    if (OffsetAt(utc) != offset) continue;
    if (!found || utc < best) best = utc;
    found = true;
  }
  if (!found) {
    return Status::InvalidArgument("local time " + FormatTime(local_seconds) +
                                   " does not exist in " + name_ +
                                   " (clocks jump forward over it: a DST gap)");
  }
  return best;
}

}  // namespace rlt::market
