// rltrade core: the CSV line splitter (see csv_line.h).
#include "core/csv_line.h"

#include <algorithm>

namespace rlt {

bool SplitCsvFields(std::string_view line, std::vector<std::string_view>* fields) {
  fields->clear();
  bool closed = true;
  size_t begin = 0;
  while (true) {
    size_t i = begin;
    if (i < line.size() && line[i] == '"') {
      // To the closing quote: a quote not followed by another one.
      closed = false;
      for (++i; i < line.size(); ++i) {
        if (line[i] != '"') continue;
        if (i + 1 < line.size() && line[i + 1] == '"') {
          ++i;
          continue;
        }
        closed = true;
        ++i;
        break;
      }
      if (!closed) {
        fields->push_back(line.substr(begin));
        return false;
      }
    }
    const size_t comma = line.find(',', i);
    const size_t end = comma == std::string_view::npos ? line.size() : comma;
    fields->push_back(line.substr(begin, end - begin));
    if (comma == std::string_view::npos) return true;
    begin = comma + 1;
  }
}

std::string UnquoteCsvField(std::string_view field) {
  if (field.empty() || field.front() != '"') return std::string(field);
  std::string out;
  out.reserve(field.size());
  size_t i = 1;
  for (; i < field.size(); ++i) {
    if (field[i] != '"') {
      out.push_back(field[i]);
    } else if (i + 1 < field.size() && field[i + 1] == '"') {
      out.push_back('"');
      ++i;
    } else {
      ++i;  // the closing quote
      break;
    }
  }
  out.append(field.substr(std::min(i, field.size())));  // after the closing quote, as written
  return out;
}

bool SplitCsvLine(std::string_view line, std::vector<std::string>* fields) {
  std::vector<std::string_view> raw;
  const bool closed = SplitCsvFields(line, &raw);
  fields->clear();
  fields->reserve(raw.size());
  for (std::string_view f : raw) fields->push_back(UnquoteCsvField(f));
  return closed;
}

std::vector<std::string> SplitCsvLine(std::string_view line) {
  std::vector<std::string> fields;
  SplitCsvLine(line, &fields);
  return fields;
}

}  // namespace rlt
