#include "market/option_chain_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <tuple>
#include <vector>

#include "core/civil_time.h"
#include "core/csv_line.h"
#include "core/printable.h"

namespace rlt::market {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// T = calendar days / 365 (market/option_chain_pricing.h) must stay within the pricing
// domain's T <= 100 years.
constexpr int32_t kMaxExpiryDays = static_cast<int32_t>(pricing::kMaxTime * 365);

std::string Normalise(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '_' || c == ' ' || c == '/' || c == '-' || c == '"' || c == '\t') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// The fields of one line (core/csv_line.h), unquoted, with spaces and tabs around each
// trimmed.
std::vector<std::string> ChainFields(std::string_view line) {
  std::vector<std::string> fields = SplitCsvLine(line);
  for (auto& f : fields) {
    const size_t b = f.find_first_not_of(" \t");
    const size_t e = f.find_last_not_of(" \t");
    f = b == std::string::npos ? std::string() : f.substr(b, e - b + 1);
  }
  return fields;
}

bool ParseInt(std::string_view s, int* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// A finite number; false otherwise.
bool ParseNumber(std::string_view s, double* out) {
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(*out);
}

enum Field {
  kQuoteDate,
  kExpiry,
  kStrike,
  kRight,
  kBid,
  kAsk,
  kLast,
  kVolume,
  kOpenInterest,
  kIv,
  kUnderlyingPrice,
  kDelta,
  kGamma,
  kTheta,
  kVega,
  kMark,
  kRate,
  kDividend,
  kSymbol,
  kStyle,
  kNumFields
};
constexpr int kNumRequired = 6;

const std::vector<std::vector<std::string>>& Aliases() {
  static const std::vector<std::vector<std::string>> kAliases = {
      {"quotedate", "date", "spotdate", "tradedate", "asof"},
      {"expiration", "expiry", "optionexpiration", "expirationdate", "exdate"},
      {"strike", "strikeprice"},
      {"type", "callput", "optiontype", "putcall", "cpflag", "right"},
      {"bid"},
      {"ask"},
      {"last", "lastprice"},
      {"volume"},
      {"openinterest"},
      {"impliedvol", "iv", "impliedvolatility"},
      {"underlyinglast", "underlyingprice", "stockpriceclose", "s", "spot"},
      {"delta"},
      {"gamma"},
      {"theta"},
      {"vega"},
      {"mark"},
      {"r", "rate", "riskfreerate", "interestrate"},
      {"q", "div", "dividendyield", "dividend"},
      {"symbol", "ticker", "underlying"},
      {"style", "exercisestyle"},
  };
  return kAliases;
}

const char* kRequiredNames[kNumRequired] = {"quote date", "expiration", "strike",
                                            "call/put",   "bid",        "ask"};

struct Row {
  int64_t line;
  int32_t date, expiry;
  double strike;
  OptionType right;
  ExerciseStyle style;
  double v[kNumFields];  // numbers by Field (NaN when absent)
};

}  // namespace

Result<int32_t> ParseChainDate(std::string_view text) {
  int y = 0, m = 0, d = 0;
  bool ok = false;
  if (text.size() == 10 && text[4] == '-' && text[7] == '-') {
    ok = ParseInt(text.substr(0, 4), &y) && ParseInt(text.substr(5, 2), &m) &&
         ParseInt(text.substr(8, 2), &d);
  } else if (text.size() == 8 && text.find('/') == std::string_view::npos) {
    ok = ParseInt(text.substr(0, 4), &y) && ParseInt(text.substr(4, 2), &m) &&
         ParseInt(text.substr(6, 2), &d);
  } else {
    const size_t a = text.find('/');
    const size_t b = a == std::string_view::npos ? a : text.find('/', a + 1);
    if (b != std::string_view::npos) {
      const std::string_view ys = text.substr(b + 1);
      ok = ParseInt(text.substr(0, a), &m) && ParseInt(text.substr(a + 1, b - a - 1), &d) &&
           ParseInt(ys, &y) && (ys.size() == 2 || ys.size() == 4);
      if (ok && ys.size() == 2) y += y < 69 ? 2000 : 1900;
    }
  }
  if (!ok || y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, m)) {
    return Status::InvalidArgument(fmt::format(
        "'{}' is not a date (expected YYYY-MM-DD, YYYYMMDD, M/D/YYYY or M/D/YY)", text));
  }
  return static_cast<int32_t>(DaysFromCivil(y, m, d));
}

Result<OptionChain> ReadOptionChainCsv(const std::string& path, const ChainReadOptions& options,
                                       DataReport* report) {
  RLT_ASSIGN_OR_RETURN(std::string text, ReadFile(path, options.max_file_bytes));
  return ParseOptionChainCsv(text, path, options, report);
}

namespace {

// The state one parse shares between its phases: the source's name, the report being
// filled, the header with the column of each field (-1: absent), the lines with a problem
// and the file's underlying (from its first good row).
struct ChainParse {
  ChainParse(const std::string& source_name, DataReport& report)
      : source(source_name), rep(report) {}

  const std::string& source;
  DataReport& rep;
  std::vector<std::string> header;
  int col[kNumFields];
  std::vector<bool> bad_line;
  std::string symbol;       // the file's underlying, from its first good row
  int64_t symbol_line = 0;  // that row's line

  // Records a problem of `line` in field f (the whole row when f < 0) and marks the line bad.
  void Problem(int64_t line, int f, std::string rule, std::string detail, std::string fix) {
    rep.problems.push_back({source, line, f >= 0 ? header[col[f]] : std::string(), std::move(rule),
                            std::move(detail), std::move(fix)});
    bad_line[line] = true;
  }
};

// The lines of the text, without their line ends ("\n" or "\r\n").
std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back(l);
    pos = end + 1;
  }
  return lines;
}

// Reads the header (the first line) into p: its fields and the column of every field it
// names; refuses an empty header or one without a required column.
Status MapColumns(const std::vector<std::string_view>& lines, ChainParse& p) {
  if (lines.empty() || lines[0].empty()) {
    return Status::DataError(
        fmt::format("{}:1: empty file or empty header. Fix: the first line must name the columns "
                    "(quote date, expiration, strike, call/put, bid, ask)",
                    p.source));
  }
  p.header = ChainFields(lines[0]);
  std::fill(p.col, p.col + kNumFields, -1);
  const auto& aliases = Aliases();
  for (int f = 0; f < kNumFields; ++f) {
    for (const std::string& alias : aliases[f]) {
      for (size_t c = 0; c < p.header.size() && p.col[f] < 0; ++c) {
        if (Normalise(p.header[c]) == alias) p.col[f] = static_cast<int>(c);
      }
      if (p.col[f] >= 0) break;
    }
  }
  std::vector<std::string> missing;
  for (int f = 0; f < kNumRequired; ++f) {
    if (p.col[f] < 0) missing.push_back(kRequiredNames[f]);
  }
  if (!missing.empty()) {
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "'" : ", '") + m + "'";
    return Status::DataError(fmt::format(
        "{}:1: no {} column in the header ({}). Fix: name the columns as in "
        "market/option_chain_csv.h (e.g. quote_date, expiration, strike, call_put, bid, "
        "ask)",
        p.source, names, DescribeHeaderLine(lines[0])));
  }
  return Status::Ok();
}

// Parses the fields of one row into row: its dates, call/put and numbers (NaN when
// absent). False when a field is missing or malformed (each problem recorded in p).
bool ParseRowFields(ChainParse& p, int64_t line, const std::vector<std::string>& fields, Row& row) {
  bool ok = true;
  for (int f : {kQuoteDate, kExpiry}) {
    const std::string& s = fields[p.col[f]];
    if (s.empty()) {
      p.Problem(line, f, "missing-field", "empty", "fill in the date or remove the row");
      ok = false;
      continue;
    }
    Result<int32_t> d = ParseChainDate(s);
    if (!d.ok()) {
      p.Problem(line, f, "not-a-date", d.status().message(),
                "write dates as YYYY-MM-DD (or YYYYMMDD, M/D/YYYY)");
      ok = false;
    } else {
      (f == kQuoteDate ? row.date : row.expiry) = *d;
    }
  }
  {
    std::string r = fields[p.col[kRight]];
    for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (r.empty()) {
      p.Problem(line, kRight, "missing-field", "empty", "write C or P (call or put)");
      ok = false;
    } else if (r == "c" || r == "call") {
      row.right = OptionType::kCall;
    } else if (r == "p" || r == "put") {
      row.right = OptionType::kPut;
    } else {
      p.Problem(line, kRight, "not-call/put", fmt::format("'{}'", fields[p.col[kRight]]),
                "write C, P, call or put");
      ok = false;
    }
  }
  row.style = ExerciseStyle::kUnknown;
  if (p.col[kStyle] >= 0) {
    std::string st = fields[p.col[kStyle]];
    for (auto& c : st) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (st == "e" || st == "european") {
      row.style = ExerciseStyle::kEuropean;
    } else if (st == "a" || st == "american") {
      row.style = ExerciseStyle::kAmerican;
    } else if (!st.empty()) {
      p.Problem(line, kStyle, "not-a-style",
                fmt::format("'{}'", PrintableText(fields[p.col[kStyle]], 40)),
                "write E or A (european or american), or leave the field empty");
      ok = false;
    }
  }
  for (int f = 0; f < kNumFields; ++f) {
    row.v[f] = kNaN;
    if (f == kQuoteDate || f == kExpiry || f == kRight || f == kSymbol || f == kStyle ||
        p.col[f] < 0) {
      continue;
    }
    const std::string& s = fields[p.col[f]];
    if (s.empty()) {
      if (f < kNumRequired) {
        p.Problem(line, f, "missing-field", "empty", "fill in the value or remove the row");
        ok = false;
      }
      continue;
    }
    if (!ParseNumber(s, &row.v[f])) {
      row.v[f] = kNaN;
      p.Problem(line, f, "not-a-number", fmt::format("'{}'", s.substr(0, 40)),
                "write a finite decimal number (or leave an optional field empty)");
      ok = false;
    }
  }
  return ok;
}

// Checks a parsed row's values: strike, quote, underlying price and expiry within the
// pricing domain and consistent. False when one is not (each problem recorded in p).
bool CheckRowValues(ChainParse& p, int64_t line, Row& row) {
  bool ok = true;
  row.strike = row.v[kStrike];
  const double bid = row.v[kBid], ask = row.v[kAsk];
  if (row.strike <= 0) {
    p.Problem(line, kStrike, "strike<=0", fmt::format("strike={}", row.strike),
              "strikes must be positive; remove the row");
    ok = false;
  }
  if (bid < 0) {
    p.Problem(line, kBid, "bid<0", fmt::format("bid={}", bid),
              "a missing bid is 0; remove the row or fix the quote");
    ok = false;
  }
  if (ask < 0) {
    p.Problem(line, kAsk, "ask<0", fmt::format("ask={}", ask),
              "a missing offer is 0; remove the row or fix the quote");
    ok = false;
  } else if (bid > 0 && ask > 0 && bid > ask) {
    p.Problem(line, kBid, "bid>ask", fmt::format("crossed quote: bid={} > ask={}", bid, ask),
              "check the quote's source; remove the row");
    ok = false;
  }
  // The pricing domain (pricing/pricing.h): a row outside it could not be priced, and
  // the chain is priced per quote date, so it is refused here with its line.
  if (row.strike > 0 && !(row.strike >= pricing::kMinPrice && row.strike <= pricing::kMaxPrice)) {
    p.Problem(line, kStrike, "out-of-range", fmt::format("strike={}", row.strike),
              fmt::format("strikes must lie in [{:g}, {:g}]; remove the row", pricing::kMinPrice,
                          pricing::kMaxPrice));
    ok = false;
  }
  if (const double u = row.v[kUnderlyingPrice]; !std::isnan(u)) {
    if (u <= 0) {
      p.Problem(line, kUnderlyingPrice, "underlying<=0", fmt::format("underlying price={}", u),
                "the underlying's price must be positive; fix it or leave the field empty "
                "(another row of the same quote date may give it)");
      ok = false;
    } else if (!(u >= pricing::kMinPrice && u <= pricing::kMaxPrice)) {
      p.Problem(line, kUnderlyingPrice, "out-of-range", fmt::format("underlying price={}", u),
                fmt::format("the underlying's price must lie in [{:g}, {:g}]; fix the row",
                            pricing::kMinPrice, pricing::kMaxPrice));
      ok = false;
    }
  }
  // Rates and yields are annual decimals (0.0371 = 3.71%): a magnitude above 1 (100% a
  // year) is taken for a percentage, which would price every contract wrongly.
  for (int f : {kRate, kDividend}) {
    const double v = row.v[f];
    if (!std::isnan(v) && std::abs(v) > 1) {
      p.Problem(line, f, "rate-not-decimal", fmt::format("{} is more than 100% a year", v),
                fmt::format("write rates as continuously compounded annual decimals ({:g} for "
                            "{:g}%)",
                            v / 100, v));
      ok = false;
    }
  }
  if (row.expiry < row.date) {
    p.Problem(line, kExpiry, "expiry<quote-date",
              fmt::format("expiry {} is before the quote date {}",
                          FormatDate(DateKey(CivilFromDays(row.expiry))),
                          FormatDate(DateKey(CivilFromDays(row.date)))),
              "remove expired contracts");
    ok = false;
  } else if (row.expiry - row.date > kMaxExpiryDays) {
    p.Problem(
        line, kExpiry, "expiry>100y",
        fmt::format("expiry {} is {:.1f} years after the quote date {}",
                    FormatDate(DateKey(CivilFromDays(row.expiry))), (row.expiry - row.date) / 365.0,
                    FormatDate(DateKey(CivilFromDays(row.date)))),
        fmt::format("options are priced up to {:g} years ({} days) to expiry; check the "
                    "date or remove the row",
                    pricing::kMaxTime, kMaxExpiryDays));
    ok = false;
  }
  return ok;
}

// One chain is one underlying: a file that mixes symbols would be priced against
// whichever underlying price came first on each date. Takes the file's symbol from the
// first row that is ok so far; false when the row names another one.
bool CheckRowSymbol(ChainParse& p, int64_t line, const std::vector<std::string>& fields, bool ok) {
  if (p.col[kSymbol] < 0) return ok;
  const std::string& sym = fields[p.col[kSymbol]];
  if (p.symbol.empty() && ok) {
    p.symbol = sym;
    p.symbol_line = line;
  } else if (!p.symbol.empty() && sym != p.symbol) {
    p.Problem(line, kSymbol, "second-underlying",
              fmt::format("symbol '{}' after '{}' on line {}", PrintableText(sym, 40),
                          PrintableText(p.symbol, 40), p.symbol_line),
              "a chain file holds one underlying; split the file by symbol");
    ok = false;
  }
  return ok;
}

// The good rows of the lines after the header, in file order; counts the rows read and
// records every bad row's problems in p.
std::vector<Row> ReadRows(const std::vector<std::string_view>& lines, ChainParse& p) {
  std::vector<Row> rows;
  for (size_t li = 1; li < lines.size(); ++li) {
    const int64_t line = static_cast<int64_t>(li) + 1;
    if (lines[li].empty()) continue;  // blank lines (e.g. the final newline)
    ++p.rep.rows_read;
    const std::vector<std::string> fields = ChainFields(lines[li]);
    if (fields.size() != p.header.size()) {
      p.Problem(line, -1, "wrong-field-count",
                fmt::format("{} fields, the header has {}", fields.size(), p.header.size()),
                "make every row have one field per header column");
      continue;
    }
    Row row{};
    row.line = line;
    if (!ParseRowFields(p, line, fields, row)) continue;
    const bool ok = CheckRowValues(p, line, row);
    if (!CheckRowSymbol(p, line, fields, ok)) continue;
    rows.push_back(row);
  }
  return rows;
}

// The indices of the rows to keep, sorted by (date, expiry, right: calls first, strike,
// line); a second row of the same contract and date is recorded as a duplicate.
std::vector<size_t> SortedUniqueRows(const std::vector<Row>& rows, ChainParse& p) {
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](size_t i) {
    const Row& r = rows[i];
    return std::make_tuple(r.date, r.expiry, -static_cast<int>(r.right), r.strike, r.line);
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  std::vector<size_t> kept;
  for (size_t k = 0; k < order.size(); ++k) {
    const Row& r = rows[order[k]];
    if (!kept.empty()) {
      const Row& q = rows[kept.back()];
      if (q.date == r.date && q.expiry == r.expiry && q.right == r.right && q.strike == r.strike) {
        p.Problem(r.line, -1, "duplicate-contract",
                  fmt::format("{} expiring {} strike {} quoted {} is already on line {}",
                              pricing::OptionTypeName(r.right),
                              FormatDate(DateKey(CivilFromDays(r.expiry))), r.strike,
                              FormatDate(DateKey(CivilFromDays(r.date))), q.line),
                  "keep one row per contract and quote date");
        continue;
      }
    }
    kept.push_back(order[k]);
  }
  return kept;
}

// Orders the report's problems by line and counts the dropped rows; with on_bad_rows =
// fail, any problem is the error (listing the first 20) and no row counts as dropped.
Status SettleProblems(ChainParse& p, const ChainReadOptions& options) {
  DataReport& rep = p.rep;
  std::stable_sort(rep.problems.begin(), rep.problems.end(),
                   [](const DataProblem& a, const DataProblem& b) { return a.line < b.line; });
  for (size_t i = 0; i < p.bad_line.size(); ++i) rep.rows_dropped += p.bad_line[i] ? 1 : 0;

  if (!rep.problems.empty() && options.on_bad_rows == BadRowPolicy::kFail) {
    std::string msg =
        fmt::format("{}: {} problem(s) in {} rows:", p.source, rep.problems.size(), rep.rows_read);
    const size_t shown = std::min<size_t>(rep.problems.size(), 20);
    for (size_t i = 0; i < shown; ++i) msg += "\n  " + rep.problems[i].ToString();
    if (shown < rep.problems.size()) {
      msg += fmt::format("\n  ... and {} more", rep.problems.size() - shown);
    }
    msg += "\nFix: correct the rows, or drop them with on_bad_rows = drop (--on-bad-rows drop)";
    rep.rows_dropped = 0;
    return Status::DataError(std::move(msg));
  }
  if (options.on_bad_rows == BadRowPolicy::kFail) rep.rows_dropped = 0;
  return Status::Ok();
}

// The chain of the kept rows (in their sorted order): one day per quote date, whose
// underlying price is the first one a row of that date gives.
OptionChain BuildChain(const std::vector<Row>& rows, const std::vector<size_t>& kept,
                       const ChainParse& p) {
  OptionChain chain;
  chain.underlying = p.symbol.empty() ? p.source : p.symbol;
  const size_t n = kept.size();
  for (auto* v : {&chain.strike, &chain.bid, &chain.ask, &chain.last, &chain.volume,
                  &chain.open_interest, &chain.implied_vol, &chain.delta, &chain.gamma,
                  &chain.theta, &chain.vega, &chain.mark, &chain.rate, &chain.dividend}) {
    v->reserve(n);
  }
  chain.style.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    const Row& r = rows[kept[k]];
    if (chain.dates.empty() || chain.dates.back() != r.date) {
      chain.dates.push_back(r.date);
      chain.underlying_price.push_back(kNaN);
      chain.day_begin.push_back(static_cast<int64_t>(k));
    }
    if (std::isnan(chain.underlying_price.back())) {
      chain.underlying_price.back() = r.v[kUnderlyingPrice];
    }
    const size_t i = chain.AddContract(r.expiry, r.strike, r.right, r.v[kBid], r.v[kAsk]);
    chain.last[i] = r.v[kLast];
    chain.volume[i] = r.v[kVolume];
    chain.open_interest[i] = r.v[kOpenInterest];
    chain.implied_vol[i] = r.v[kIv];
    chain.delta[i] = r.v[kDelta];
    chain.gamma[i] = r.v[kGamma];
    chain.theta[i] = r.v[kTheta];
    chain.vega[i] = r.v[kVega];
    chain.mark[i] = r.v[kMark];
    chain.rate[i] = r.v[kRate];
    chain.dividend[i] = r.v[kDividend];
    chain.style[i] = r.style;
    chain.line[i] = r.line;
  }
  chain.day_begin.push_back(static_cast<int64_t>(n));
  return chain;
}

}  // namespace

Result<OptionChain> ParseOptionChainCsv(std::string_view text, const std::string& source,
                                        const ChainReadOptions& options, DataReport* report) {
  DataReport local;
  DataReport& rep = report ? *report : local;
  rep = DataReport();
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  const std::vector<std::string_view> lines = SplitLines(text);
  ChainParse p(source, rep);
  RLT_RETURN_IF_ERROR(MapColumns(lines, p));
  p.bad_line.assign(lines.size() + 1, false);
  const std::vector<Row> rows = ReadRows(lines, p);
  const std::vector<size_t> kept = SortedUniqueRows(rows, p);
  RLT_RETURN_IF_ERROR(SettleProblems(p, options));
  return BuildChain(rows, kept, p);
}

Status WriteOptionChainCsv(const std::string& path, const OptionChain& chain) {
  if (chain.underlying.find_first_of(",\"\r\n") != std::string::npos) {
    return Status::InvalidArgument(fmt::format(
        "symbol '{}' has a comma, quote or line break; it cannot be written to a CSV field",
        chain.underlying));
  }
  std::string out =
      "symbol,quote_date,expiration,strike,type,bid,ask,last,volume,open_interest,implied_vol,"
      "underlying_price,delta,gamma,theta,vega,mark,rate,dividend_yield,style\n";
  auto num = [&](double v) {
    if (std::isfinite(v)) out += fmt::format("{:.17g}", v);
  };
  for (size_t d = 0; d < chain.num_days(); ++d) {
    const std::string date = FormatDate(DateKey(CivilFromDays(chain.dates[d])));
    for (int64_t i = chain.day_begin[d]; i < chain.day_begin[d + 1]; ++i) {
      out += chain.underlying;
      out += ',';
      out += date;
      out += ',';
      out += FormatDate(DateKey(CivilFromDays(chain.expiry[i])));
      out += ',';
      num(chain.strike[i]);
      out += chain.right[i] == OptionType::kCall ? ",C," : ",P,";
      for (double v : {chain.bid[i], chain.ask[i], chain.last[i], chain.volume[i],
                       chain.open_interest[i], chain.implied_vol[i], chain.underlying_price[d],
                       chain.delta[i], chain.gamma[i], chain.theta[i], chain.vega[i]}) {
        num(v);
        out += ',';
      }
      num(chain.mark[i]);
      out += ',';
      num(chain.rate[i]);
      out += ',';
      num(chain.dividend[i]);
      out += chain.style[i] == ExerciseStyle::kEuropean   ? ",E\n"
             : chain.style[i] == ExerciseStyle::kAmerican ? ",A\n"
                                                          : ",\n";
    }
  }
  return WriteFileAtomic(path, out);
}

const char* ExerciseStyleName(ExerciseStyle style) {
  switch (style) {
    case ExerciseStyle::kEuropean:
      return "european";
    case ExerciseStyle::kAmerican:
      return "american";
    case ExerciseStyle::kUnknown:
      break;
  }
  return "";
}

size_t OptionChain::DayOf(size_t i) const {
  const auto it = std::upper_bound(day_begin.begin(), day_begin.end(), static_cast<int64_t>(i));
  return static_cast<size_t>(it - day_begin.begin()) - 1;
}

size_t OptionChain::AddContract(int32_t expiry_day, double strike_value, OptionType type,
                                double bid_value, double ask_value) {
  expiry.push_back(expiry_day);
  strike.push_back(strike_value);
  right.push_back(type);
  bid.push_back(bid_value);
  ask.push_back(ask_value);
  for (auto* v : {&last, &volume, &open_interest, &implied_vol, &delta, &gamma, &theta, &vega,
                  &mark, &rate, &dividend}) {
    v->push_back(kNaN);
  }
  style.push_back(ExerciseStyle::kUnknown);
  line.push_back(0);
  return strike.size() - 1;
}

}  // namespace rlt::market
