#include "unicode.h"

namespace memfit::tokenizer {

char32_t decode_utf8(std::string_view s, std::size_t i, std::size_t* length) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c0 = b(0);
  if (c0 < 0x80) { *length = 1; return c0; }
  if (c0 < 0xE0) { *length = 2; return ((c0 & 0x1Fu) << 6) | (b(1) & 0x3Fu); }
  if (c0 < 0xF0) { *length = 3; return ((c0 & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu); }
  *length = 4;
  return ((c0 & 0x07u) << 18) | ((b(1) & 0x3Fu) << 12) | ((b(2) & 0x3Fu) << 6) | (b(3) & 0x3Fu);
}

namespace {
// Length of the valid sequence at s[i], or the length of its maximal invalid subpart negated
// (Unicode's "maximal subpart" practice, which Rust's from_utf8_lossy follows).
long sequence_at(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t k) -> int { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : -1; };
  const int c0 = at(0);
  if (c0 < 0x80) return 1;
  int need = 0, lo = 0x80, hi = 0xBF;
  if (c0 >= 0xC2 && c0 <= 0xDF) need = 1;
  else if (c0 == 0xE0) { need = 2; lo = 0xA0; }
  else if (c0 >= 0xE1 && c0 <= 0xEC) need = 2;
  else if (c0 == 0xED) { need = 2; hi = 0x9F; }
  else if (c0 >= 0xEE && c0 <= 0xEF) need = 2;
  else if (c0 == 0xF0) { need = 3; lo = 0x90; }
  else if (c0 >= 0xF1 && c0 <= 0xF3) need = 3;
  else if (c0 == 0xF4) { need = 3; hi = 0x8F; }
  else return -1;
  for (int k = 1; k <= need; ++k) {
    const int c = at(k);
    const int l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (c < l || c > h) return -k;
  }
  return need + 1;
}
}  // namespace

std::size_t invalid_utf8_at(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const long n = sequence_at(s, i);
    if (n < 0) return i;
    i += static_cast<std::size_t>(n);
  }
  return std::string_view::npos;
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    const long n = sequence_at(bytes, i);
    if (n > 0) {
      out.append(bytes.substr(i, static_cast<std::size_t>(n)));
      i += static_cast<std::size_t>(n);
    } else {
      out += "\xEF\xBF\xBD";
      i += static_cast<std::size_t>(-n);
    }
  }
  return out;
}

bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

bool CharClasses::is_letter(char32_t c) const {
  const CharCategory k = category(c);
  return k >= CharCategory::kLu && k <= CharCategory::kLo;
}
bool CharClasses::is_mark(char32_t c) const {
  const CharCategory k = category(c);
  return k >= CharCategory::kMn && k <= CharCategory::kMe;
}
bool CharClasses::is_numeric(char32_t c) const {
  const CharCategory k = category(c);
  return k >= CharCategory::kNd && k <= CharCategory::kNo;
}
bool CharClasses::is_punctuation(char32_t c) const {
  const CharCategory k = category(c);
  return k >= CharCategory::kPc && k <= CharCategory::kPo;
}
namespace {
// Other_Alphabetic symbols outside the letter and mark categories (circled/squared letters): the
// Alphabetic property, which \w and is_alphanumeric use, includes them.
bool other_alphabetic_symbol(char32_t c) {
  return (c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) ||
         (c >= 0x1F150 && c <= 0x1F169) || (c >= 0x1F170 && c <= 0x1F189);
}
}  // namespace

bool CharClasses::is_word(char32_t c) const {
  // regex crate: \w = Alphabetic + M + Nd + Pc + Join_Control.
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  const CharCategory k = category(c);
  return is_letter(c) || is_mark(c) || k == CharCategory::kNd || k == CharCategory::kNl ||
         k == CharCategory::kPc || c == 0x200C || c == 0x200D || other_alphabetic_symbol(c);
}

bool CharClasses::is_alphanumeric(char32_t c) const {
  return is_letter(c) || is_numeric(c) || other_alphabetic_symbol(c);
}

}  // namespace memfit::tokenizer
