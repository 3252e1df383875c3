// rltrade core: PrintableText (see printable.h).
#include "core/printable.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace rlt {
namespace {

// Length of the valid UTF-8 sequence starting at text[i] (2 to 4), or 0 when the bytes
// there are not one (overlong forms, surrogates and values above U+10FFFF included).
size_t Utf8Sequence(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

std::string Trimmed(std::string_view s) {
  const auto skip = [](char c) { return c == ' ' || c == '\t' || c == '"' || c == '\r'; };
  while (!s.empty() && skip(s.front())) s.remove_prefix(1);
  while (!s.empty() && skip(s.back())) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

bool LooksLikeColumnNames(const std::vector<std::string>& names) {
  if (names.empty() || names.size() > 256) return false;
  const auto alpha = [](unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; };
  if (names.size() == 1) {
    const std::string& n = names[0];
    if (n.empty() || n.size() > 24) return false;
    for (const unsigned char c : n) {
      if (!alpha(c) && c != ' ' && c != '_') return false;
    }
    return true;
  }
  for (const std::string& name : names) {
    if (name.size() > 40) return false;
    for (const unsigned char c : name) {
      const bool digit = c >= '0' && c <= '9';
      if (!alpha(c) && !digit &&
          std::string_view(" _-.()/%#&+[]").find(static_cast<char>(c)) == std::string_view::npos) {
        return false;
      }
    }
  }
  return true;
}

std::string DescribeHeaderLine(std::string_view line) {
  std::vector<std::string> names;
  size_t from = 0;
  while (true) {
    const size_t comma = line.find(',', from);
    names.push_back(Trimmed(line.substr(
        from, comma == std::string_view::npos ? std::string_view::npos : comma - from)));
    if (comma == std::string_view::npos) break;
    from = comma + 1;
  }
  if (LooksLikeColumnNames(names)) {
    std::string out = "columns: ";
    for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
    return out;
  }
  return "the first line, " + std::to_string(line.size()) + " bytes in " +
         std::to_string(names.size()) +
         " comma-separated field(s), does not look like a CSV header and is not shown";
}

std::string RedactCredential(std::string_view text) {
  const char* value = std::getenv(kBrokerTokenVariable);
  const std::string_view token = value != nullptr ? value : "";
  if (token.size() < 4) return std::string(text);
  const std::string_view head = token.substr(0, std::min<size_t>(token.size(), 8));
  std::string out;
  size_t from = 0;
  for (size_t at = text.find(head); at != std::string_view::npos; at = text.find(head, from)) {
    size_t n = head.size();
    while (n < token.size() && at + n < text.size() && text[at + n] == token[n]) ++n;
    out.append(text.substr(from, at - from));
    out += "[redacted]";
    from = at + n;
  }
  out.append(text.substr(from));
  return out;
}

std::string PrintableText(std::string_view input, size_t max_bytes) {
  const std::string redacted = RedactCredential(input);
  const std::string_view text = redacted;
  std::string out;
  size_t i = 0;
  while (i < text.size() && out.size() < max_bytes) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c >= 0x20 && c < 0x7F) || c == '\n' || c == '\t') {
      out += static_cast<char>(c);
      ++i;
    } else if (const size_t n = c >= 0x80 ? Utf8Sequence(text, i) : 0; n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
      ++i;
    }
  }
  if (i < text.size()) {
    out += "... (" + std::to_string(text.size() - i) + " more bytes not shown)";
  }
  return out;
}

}  // namespace rlt
