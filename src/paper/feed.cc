// rltrade paper: feed specs and the CSV line feed (see feed.h).
#include "paper/feed.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <utility>

#include "core/civil_time.h"
#include "market/limits.h"
#include "paper/tcp_broker.h"

namespace rlt::paper {
namespace {

constexpr const char* kForms = "replay:FILE[@SPEED], stdin or tcp:HOST:PORT";

std::string FormatSpeed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> SplitHeader(const std::string& header) {
  std::vector<std::string> out(1);
  for (char c : header) {
    if (c == ',') {
      out.emplace_back();
    } else if (c != '\r' && c != '"') {
      out.back() += c;
    }
  }
  for (std::string& f : out) {
    const size_t b = f.find_first_not_of(" \t");
    const size_t e = f.find_last_not_of(" \t");
    f = b == std::string::npos ? std::string() : f.substr(b, e - b + 1);
  }
  return out;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "<source>:2:" (the reader's line of a one-row text) → "<source>:<line>:", and the tick
// columns' names back.
std::string Relabel(std::string message, const std::string& source, int64_t line, bool ticks) {
  const std::string from = source + ":2:", to = source + ":" + std::to_string(line) + ":";
  for (size_t at = message.find(from); at != std::string::npos;
       at = message.find(from, at + to.size())) {
    message.replace(at, from.size(), to);
  }
  if (ticks) {
    for (const auto& [a, b] :
         {std::pair<std::string, std::string>{"'close'", "'price'"}, {"'volume'", "'size'"}}) {
      for (size_t at = message.find(a); at != std::string::npos;
           at = message.find(a, at + b.size())) {
        message.replace(at, a.size(), b);
      }
    }
  }
  return message;
}

}  // namespace

Result<FeedSpec> ParseFeedSpec(const std::string& spec) {
  FeedSpec f;
  if (spec.rfind("replay:", 0) == 0) {
    f.kind = FeedSpec::Kind::kReplay;
    f.file = spec.substr(7);
    if (f.file.empty()) {
      return Status::InvalidArgument("--feed " + spec + ": replay needs a file, replay:FILE");
    }
    // Only a trailing @<number> is a speed, and a file that exists under the whole name wins
    // (a name may hold an '@': replay:bars@2023.csv, or even replay:bars@5 when that file
    // exists).
    std::error_code ec;
    const size_t at = f.file.rfind('@');
    if (at == std::string::npos || std::filesystem::exists(f.file, ec)) return f;
    const std::string speed = f.file.substr(at + 1);
    char* end = nullptr;
    const double v = std::strtod(speed.c_str(), &end);
    const bool number = !speed.empty() && end == speed.c_str() + speed.size();
    if (!number) return f;  // part of the name
    if (!(v >= kMinReplaySpeed && v <= kMaxReplaySpeed)) {
      return Status::InvalidArgument(
          "--feed " + spec + ": the speed after '@' must be a number > 0, between " +
          FormatSpeed(kMinReplaySpeed) + " and " + FormatSpeed(kMaxReplaySpeed) +
          " (x real time, e.g. replay:bars.csv@60); leave it out to replay as fast as possible");
    }
    f.speed = v;
    f.file.resize(at);
    if (f.file.empty()) {
      return Status::InvalidArgument("--feed " + spec + ": replay needs a file, replay:FILE");
    }
    return f;
  }
  if (spec == "stdin") {
    f.kind = FeedSpec::Kind::kStdin;
    return f;
  }
  if (spec.rfind("tcp:", 0) == 0) {
    Result<BrokerAddress> a = ParseBrokerAddress(spec);
    if (!a.ok()) return Status::InvalidArgument("--feed " + a.status().message());
    f.kind = FeedSpec::Kind::kTcp;
    f.host = a->host;
    f.port = a->port;
    return f;
  }
  return Status::InvalidArgument("--feed " + spec + ": expected " + kForms);
}

LineFeed::LineFeed(int fd, std::string source, market::CsvReadOptions csv, int64_t bar_seconds)
    : fd_(fd), source_(std::move(source)), csv_(std::move(csv)), bar_seconds_(bar_seconds) {}

const LineFeedStats& LineFeed::stats() const {
  if (aggregator_) {
    stats_.late_ticks = aggregator_->late_ticks();
    stats_.bad_ticks = aggregator_->bad_ticks();
  }
  return stats_;
}

std::optional<LineFeed::Event> LineFeed::Deliver(const FeedBar& bar) {
  // A bar of ticks keeps the limits of a bar file's row too (market/limits.h): its
  // prices are ticks' prices, but its volume is a sum that can pass the limit.
  const market::BarValueProblem p =
      market::CheckBarValues(bar.open, bar.high, bar.low, bar.close, bar.volume);
  if (p.field != nullptr) {
    ++stats_.bad_lines;
    Event e;
    e.kind = Event::Kind::kBadLine;
    e.problem = source_ + ": the bar of " + FormatIso8601(bar.time, 0, /*utc_z=*/true) +
                (ticks_ ? " aggregated from ticks" : "") + ": " + p.field + " " + p.what +
                "; the bar is skipped";
    return e;
  }
  if (any_bar_ && bar.time <= last_time_) {
    ++stats_.out_of_order;
    return std::nullopt;
  }
  any_previous_ = any_bar_;
  previous_time_ = last_time_;
  any_bar_ = true;
  last_time_ = bar.time;
  ++stats_.bars;
  Event e;
  e.kind = Event::Kind::kBar;
  e.bar = bar;
  return e;
}

void LineFeed::Refuse(const FeedBar& bar) {
  if (!any_bar_ || bar.time != last_time_) return;
  any_bar_ = any_previous_;
  last_time_ = previous_time_;
  any_previous_ = false;
  --stats_.bars;
}

Result<std::optional<FeedBar>> LineFeed::ParseLine(const std::string& line, std::string* problem) {
  market::DataReport report;
  Result<market::MarketData> md =
      market::ParseBarsCsv(header_ + "\n" + line + "\n", source_, csv_, &report);
  if (!md.ok()) {
    *problem = Relabel(md.status().message(), source_, line_no_, ticks_);
    return std::optional<FeedBar>();
  }
  if (md->symbols.empty() || md->symbols.front().empty()) {  // another symbol, or hours
    return std::optional<FeedBar>();
  }
  const market::Bars& b = md->symbols.front();
  if (!expected_symbol_.empty() && report.symbol_column && b.symbol != expected_symbol_) {
    *problem = source_ + ":" + std::to_string(line_no_) + ": symbol '" + b.symbol +
               "' is not the run's symbol '" + expected_symbol_ +
               "': the policy trades the symbol it learned (feed that symbol's bars, or pass "
               "--allow-mismatch to trade these as '" +
               expected_symbol_ + "')";
    return std::optional<FeedBar>();
  }
  FeedBar bar;
  bar.time = b.time[0];
  bar.open = b.open[0];
  bar.high = b.high[0];
  bar.low = b.low[0];
  bar.close = b.close[0];
  bar.volume = b.volume[0];
  if (ticks_ && !aggregator_) {
    aggregator_ = std::make_unique<TickAggregator>(bar_seconds_, b.utc_offset[0]);
  }
  return std::optional<FeedBar>(bar);
}

Result<LineFeed::Event> LineFeed::TakeLine(const std::string& raw) {
  std::string line = raw;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  ++line_no_;
  if (line.find_first_not_of(" \t") == std::string::npos) return Event{};  // blank
  if (!have_header_) {
    const std::vector<std::string> cols = SplitHeader(line);
    std::vector<std::string> lower;
    for (const std::string& c : cols) lower.push_back(Lower(c));
    auto has = [&lower](std::initializer_list<const char*> names) {
      for (const char* n : names) {
        if (std::find(lower.begin(), lower.end(), n) != lower.end()) return true;
      }
      return false;
    };
    const bool time = has({"datetime", "timestamp", "date", "time"});
    if (time && has({"close", "prccd"})) {
      header_ = line;
    } else if (time && has({"price"}) && has({"size", "quantity", "qty", "volume"})) {
      ticks_ = true;
      for (size_t i = 0; i < cols.size(); ++i) {
        std::string name = cols[i];
        if (lower[i] == "price") name = "close";
        if (lower[i] == "size" || lower[i] == "quantity" || lower[i] == "qty") name = "volume";
        header_ += (i == 0 ? "" : ",") + name;
      }
    } else {
      std::string listed;
      for (const std::string& c : cols) listed += (listed.empty() ? "" : ", ") + c;
      return Status::InvalidArgument(
          source_ + ":1: the first line must be a CSV header of bars (a time column, close, " +
          "optionally open, high, low, volume, symbol) or of ticks (a time column, price, " +
          "size); got columns: " + listed);
    }
    have_header_ = true;
    return Event{};
  }
  ++stats_.lines;
  std::string problem;
  RLT_ASSIGN_OR_RETURN(std::optional<FeedBar> parsed, ParseLine(line, &problem));
  if (!problem.empty()) {
    ++stats_.bad_lines;
    Event e;
    e.kind = Event::Kind::kBadLine;
    e.problem = problem;
    return e;
  }
  if (!parsed) return Event{};
  if (!ticks_) {
    std::optional<Event> e = Deliver(*parsed);
    return e ? *e : Event{};
  }
  ++stats_.ticks;
  last_tick_ms_ = parsed->time * 1000;
  const std::optional<AggregatedBar> done =
      aggregator_->Add(Tick{parsed->time * 1000, parsed->close, parsed->volume});
  if (!done) return Event{};
  const FeedBar bar{done->start, done->open, done->high, done->low, done->close, done->volume};
  std::optional<Event> e = Deliver(bar);
  return e ? *e : Event{};
}

Result<LineFeed::Event> LineFeed::Next(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    // Complete lines already read.
    for (size_t eol = buffer_.find('\n'); eol != std::string::npos; eol = buffer_.find('\n')) {
      const std::string line = buffer_.substr(0, eol);
      buffer_.erase(0, eol + 1);
      RLT_ASSIGN_OR_RETURN(Event e, TakeLine(line));
      if (e.kind != Event::Kind::kIdle) return e;
    }
    if (eof_) {
      if (!buffer_.empty()) {  // a last line without "\n"
        const std::string line = std::move(buffer_);
        buffer_.clear();
        RLT_ASSIGN_OR_RETURN(Event e, TakeLine(line));
        if (e.kind != Event::Kind::kIdle) return e;
      }
      if (aggregator_) {  // the input is over: the open bar is complete
        const std::optional<AggregatedBar> done =
            aggregator_->Flush(std::numeric_limits<int64_t>::max() / 2, 0);
        if (done) {
          std::optional<Event> e = Deliver(FeedBarOf(*done));
          if (e) return *e;
        }
      }
      Event end;
      end.kind = Event::Kind::kEnd;
      return end;
    }
    // Live ticks: the open bar closes on the wall clock.
    if (aggregator_) {
      const int64_t now = NowMs();
      if (std::llabs(now - last_tick_ms_) < 60'000 + bar_seconds_ * 1000) {
        const std::optional<AggregatedBar> done = aggregator_->Flush(now, 1000);
        if (done) {
          std::optional<Event> e = Deliver(FeedBarOf(*done));
          if (e) return *e;
        }
      }
    }
    const int64_t left = std::chrono::duration_cast<std::chrono::milliseconds>(
                             deadline - std::chrono::steady_clock::now())
                             .count();
    if (left <= 0) return Event{};
    pollfd p{fd_, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (n < 0 && errno != EINTR) return Status::IoError(source_ + ": poll failed");
    if (n <= 0) continue;
    char chunk[65536];
    const ssize_t got = ::read(fd_, chunk, sizeof(chunk));
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::IoError(source_ + ": read failed");
    }
    if (got == 0) {
      eof_ = true;
    } else {
      buffer_.append(chunk, static_cast<size_t>(got));
      if (buffer_.size() > (size_t{1} << 20) && buffer_.find('\n') == std::string::npos) {
        return Status::InvalidArgument(source_ + ":" + std::to_string(line_no_ + 1) +
                                       ": a line longer than 1 MiB: is this a CSV of bars?");
      }
    }
  }
}

}  // namespace rlt::paper
