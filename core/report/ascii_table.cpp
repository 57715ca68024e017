#include "memfit/report/ascii_table.h"

#include <algorithm>
#include <numeric>

namespace memfit {
namespace {

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

// Python's "%{w}s": right-justify to w code points.
std::string rjust(const std::string& s, std::size_t w) {
  const std::size_t len = utf8_length(s);
  return len >= w ? s : std::string(w - len, ' ') + s;
}

}  // namespace

std::size_t utf8_length(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string python_center(const std::string& s, std::size_t width) {
  const std::size_t len = utf8_length(s);
  if (len >= width) return s;
  const std::size_t marg = width - len;
  // CPython: left = marg / 2 + (marg & width & 1)
  const std::size_t left = marg / 2 + (marg & width & 1);
  return std::string(left, ' ') + s + std::string(marg - left, ' ');
}

std::string create_ascii_table(const std::vector<std::string>& headers,
                               const std::vector<std::vector<std::string>>& rows,
                               const std::string& title) {
  const std::string sep = "│", line = "─";
  std::vector<std::size_t> widths;
  for (std::size_t i = 0; i < headers.size(); ++i) {
    std::size_t w = utf8_length(headers[i]);
    for (const auto& r : rows) w = std::max(w, utf8_length(r[i]));
    widths.push_back(w);
  }
  const std::vector<std::size_t> format_widths = widths;  // "%{w}s" is fixed before the quirks
  std::size_t diff = 0;
  auto make_row = [&](const std::string& l, const std::string& mid, const std::string& r) {
    std::string out = l;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      if (i) out += mid;
      out += repeat(line, widths[i]);
    }
    return out + repeat(line, diff) + r;
  };
  auto pattern = [&](const std::vector<std::string>& cells) {
    std::string out = sep;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) out += sep;
      out += rjust(cells[i], format_widths[i]);
    }
    return out + sep;
  };

  std::string separator = make_row("├", "┼", "┤");
  const std::size_t title_len = utf8_length(title);
  if (title_len > std::accumulate(widths.begin(), widths.end(), std::size_t{0})) {
    const std::size_t sep_len = utf8_length(separator);
    diff = title_len > sep_len ? title_len - sep_len : sep_len - title_len;  // abs()
    widths.back() += diff;
  }
  separator = make_row("├", "┼", "┤");
  std::string table = make_row("┌", line, "┐") + "\n";
  table += sep + python_center(title, utf8_length(separator) - 2) + sep + "\n";
  table += make_row("├", "┬", "┤") + "\n";
  widths.back() += diff;
  std::vector<std::string> cells;
  for (std::size_t i = 0; i < headers.size(); ++i) cells.push_back(python_center(headers[i], widths[i]));
  table += pattern(cells) + "\n" + separator + "\n";
  for (const auto& r : rows) {
    cells.clear();
    for (std::size_t i = 0; i < r.size(); ++i) cells.push_back(python_center(r[i], widths[i]));
    table += pattern(cells) + "\n";
  }
  table += "└";
  for (std::size_t i = 0; i < widths.size(); ++i) {
    if (i) table += "┴";
    table += repeat(line, widths[i]);
  }
  table += "┘";
  return table;
}

}  // namespace memfit
