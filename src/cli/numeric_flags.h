// rltrade cli: strict number flags. CLI11 reads numbers with strtold / strtoll(base 0),
// which take "0x10" as 16, "010" as 8, and "inf", "nan" and hexadecimal floats as values;
// a typo then prices something the user never asked for. These validators admit plain
// decimal numbers only ("100", "-0.25", "1e-3", "+5"), so every other form is a usage
// error (exit 2) naming the flag, before any work starts.
#ifndef RLT_CLI_NUMERIC_FLAGS_H_
#define RLT_CLI_NUMERIC_FLAGS_H_

#include <CLI/CLI.hpp>
#include <cctype>
#include <string>

namespace rlt::cli {

namespace numeric_flags_internal {

// Digits from `i`; returns how many.
inline size_t Digits(const std::string& s, size_t& i) {
  const size_t start = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  return i - start;
}

// [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?
inline bool IsPlainDecimal(const std::string& s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t mantissa = Digits(s, i);
  if (i < s.size() && s[i] == '.') {
    ++i;
    mantissa += Digits(s, i);
  }
  if (mantissa == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (Digits(s, i) == 0) return false;
  }
  return i == s.size();
}

// [+-]? digits, without a leading zero before another digit (CLI11 reads "010" as octal).
inline bool IsPlainInteger(const std::string& s, bool allow_sign) {
  size_t i = 0;
  if (allow_sign && i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const size_t first = i;
  if (Digits(s, i) == 0 || i != s.size()) return false;
  return !(s[first] == '0' && s.size() - first > 1);
}

}  // namespace numeric_flags_internal

// A decimal number: "100", "0.25", "-1e-3". Refuses hexadecimal, inf, nan, spaces, "1,5".
inline CLI::Validator DecimalNumber() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (numeric_flags_internal::IsPlainDecimal(s)) return "";
        return "'" + s +
               "' is not a plain decimal number; write e.g. 100, 0.25 or 1e-3 (hexadecimal, "
               "octal, inf and nan are not accepted)";
      },
      "NUMBER", "decimal number");
}

// A decimal integer: "1000", "-3" (with `allow_sign`). Refuses "0x10", "010", "1e3", "1.0".
inline CLI::Validator DecimalInteger(bool allow_sign = true) {
  return CLI::Validator(
      [allow_sign](std::string& s) -> std::string {
        if (numeric_flags_internal::IsPlainInteger(s, allow_sign)) return "";
        return "'" + s + "' is not a plain decimal integer; write e.g. 1000 (" +
               (allow_sign ? "" : "no sign, ") +
               "no leading zeros, hexadecimal, exponent or fraction)";
      },
      "INTEGER", "decimal integer");
}

}  // namespace rlt::cli

#endif  // RLT_CLI_NUMERIC_FLAGS_H_
