#include "text.h"

#include <algorithm>

namespace memfit::chat::text {
namespace {

std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;  // a stray byte counts as one (the text is not checked here)
}

bool is_ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char to_upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c; }
char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

bool in_chars(std::string_view cp, const std::vector<std::string_view>& chars) {
  return std::find(chars.begin(), chars.end(), cp) != chars.end();
}

}  // namespace

std::vector<std::string_view> code_points(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = std::min(sequence_length(static_cast<unsigned char>(s[i])), s.size() - i);
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

std::size_t length(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++n) i += sequence_length(static_cast<unsigned char>(s[i]));
  return n;
}

bool is_python_space(std::string_view cp) {
  if (cp.size() == 1) {
    const unsigned char c = static_cast<unsigned char>(cp[0]);
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
  }
  // str.isspace() beyond ASCII: U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F,
  // U+205F, U+3000.
  static const char* const kWide[] = {"\xC2\x85", "\xC2\xA0", "\xE1\x9A\x80", "\xE2\x80\xA8",
                                      "\xE2\x80\xA9", "\xE2\x80\xAF", "\xE2\x81\x9F", "\xE3\x80\x80"};
  for (const char* w : kWide)
    if (cp == w) return true;
  return cp.size() == 3 && cp[0] == '\xE2' && cp[1] == '\x80' &&
         static_cast<unsigned char>(cp[2]) >= 0x80 && static_cast<unsigned char>(cp[2]) <= 0x8A;
}

std::string strip(std::string_view s, Side side, const std::string* chars) {
  const auto cps = code_points(s);
  const auto strip_set = chars ? code_points(*chars) : std::vector<std::string_view>{};
  auto removable = [&](std::string_view cp) { return chars ? in_chars(cp, strip_set) : is_python_space(cp); };
  std::size_t begin = 0, end = cps.size();
  if (side != Side::kRight)
    while (begin < end && removable(cps[begin])) ++begin;
  if (side != Side::kLeft)
    while (end > begin && removable(cps[end - 1])) --end;
  if (begin == end) return {};
  const std::size_t from = static_cast<std::size_t>(cps[begin].data() - s.data());
  const std::size_t to = static_cast<std::size_t>(cps[end - 1].data() - s.data()) + cps[end - 1].size();
  return std::string(s.substr(from, to - from));
}

std::vector<std::string> split(std::string_view s, const std::string* sep, long maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    std::size_t at = 0;
    while (maxsplit < 0 || static_cast<long>(out.size()) < maxsplit) {
      const std::size_t hit = s.find(*sep, at);
      if (hit == std::string_view::npos) break;
      out.emplace_back(s.substr(at, hit - at));
      at = hit + sep->size();
    }
    out.emplace_back(s.substr(at));
    return out;
  }
  const auto cps = code_points(s);
  std::size_t i = 0;
  while (i < cps.size()) {
    while (i < cps.size() && is_python_space(cps[i])) ++i;
    if (i == cps.size()) break;
    if (maxsplit >= 0 && static_cast<long>(out.size()) == maxsplit) {
      // The rest, without its trailing whitespace, is the last piece.
      const std::size_t from = static_cast<std::size_t>(cps[i].data() - s.data());
      out.push_back(strip(s.substr(from), Side::kRight));
      break;
    }
    std::string word;
    while (i < cps.size() && !is_python_space(cps[i])) word.append(cps[i++]);
    out.push_back(std::move(word));
  }
  return out;
}

std::string replace(std::string_view s, std::string_view old_text, std::string_view new_text, long count) {
  std::string out;
  long done = 0;
  if (old_text.empty()) {  // Python inserts new_text before every code point and at the end
    for (std::string_view cp : code_points(s)) {
      if (count < 0 || done < count) { out.append(new_text); ++done; }
      out.append(cp);
    }
    if (count < 0 || done < count) out.append(new_text);
    return out;
  }
  std::size_t at = 0;
  while (count < 0 || done < count) {
    const std::size_t hit = s.find(old_text, at);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(at, hit - at)).append(new_text);
    at = hit + old_text.size();
    ++done;
  }
  return out.append(s.substr(at));
}

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), to_upper);
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), to_lower);
  return out;
}

std::string capitalize(std::string_view s) {
  std::string out = lower(s);
  if (!out.empty()) out[0] = to_upper(out[0]);
  return out;
}

std::string python_title(std::string_view s) {
  std::string out(s);
  bool previous_cased = false;
  for (char& c : out) {
    const bool cased = is_ascii_alpha(c) || static_cast<unsigned char>(c) >= 0x80;
    if (is_ascii_alpha(c)) c = previous_cased ? to_lower(c) : to_upper(c);
    previous_cased = cased;
  }
  return out;
}

std::string jinja_title(std::string_view s) {
  // Jinja: "".join(item[0].upper() + item[1:].lower() for item in re.split(r"([-\s({\[<]+)", s))
  auto separator = [](std::string_view cp) {
    return is_python_space(cp) || cp == "-" || cp == "(" || cp == "{" || cp == "[" || cp == "<";
  };
  std::string out;
  bool at_word_start = true;
  for (std::string_view cp : code_points(s)) {
    if (separator(cp)) {
      out.append(cp);
      at_word_start = true;
    } else {
      out.append(at_word_start ? upper(cp) : lower(cp));
      at_word_start = false;
    }
  }
  return out;
}

std::vector<std::string> splitlines(std::string_view s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\n' && s[i] != '\r') continue;
    out.emplace_back(s.substr(at, i - at));
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
    at = i + 1;
  }
  if (at < s.size()) out.emplace_back(s.substr(at));
  return out;
}

}  // namespace memfit::chat::text
