#include "small_printf.h"

#include <cstdint>
#include <cstring>

namespace memfit::wasm {
namespace {

// Writes into out[0, size - 1) and counts everything, like snprintf.
struct Sink {
  char* out;
  std::size_t size;
  std::size_t n = 0;
  void put(char c) {
    if (n + 1 < size) out[n] = c;
    ++n;
  }
  void fill(char c, int count) {
    for (int i = 0; i < count; ++i) put(c);
  }
  void put(const char* s, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) put(s[i]);
  }
};

struct Spec {
  bool left = false, zero = false, plus = false, space = false, alt = false;
  int width = 0;
  int precision = -1;  // none
};

// Sign/prefix, zeros for the precision (or the width with '0'), then the digits; padded.
void write_integer(Sink& o, const Spec& s, std::uintmax_t v, bool negative, int base, bool upper, bool pointer) {
  char digits[32];
  int nd = 0;
  const char* set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  for (std::uintmax_t x = v; x != 0; x /= static_cast<unsigned>(base)) digits[nd++] = set[x % static_cast<unsigned>(base)];
  int precision = s.precision;
  if (pointer && precision < static_cast<int>(2 * sizeof(void*))) precision = 2 * sizeof(void*);  // musl
  if (precision < 0) precision = 1;
  int zeros = precision > nd ? precision - nd : 0;
  if (base == 8 && s.alt && zeros == 0 && (nd == 0 || digits[nd - 1] != '0')) zeros = 1;  // "#o": a leading 0
  char prefix[2];
  int np = 0;
  if (negative) prefix[np++] = '-';
  else if (s.plus) prefix[np++] = '+';
  else if (s.space) prefix[np++] = ' ';
  if (base == 16 && (s.alt || pointer) && v != 0) {
    prefix[np++] = '0';
    prefix[np++] = upper ? 'X' : 'x';
  }
  const int body = np + zeros + nd;
  int pad = s.width > body ? s.width - body : 0;
  if (s.zero && !s.left && s.precision < 0) {  // '0' pads with zeros after the sign/prefix
    zeros += pad;
    pad = 0;
  }
  if (!s.left) o.fill(' ', pad);
  o.put(prefix, static_cast<std::size_t>(np));
  o.fill('0', zeros);
  while (nd > 0) o.put(digits[--nd]);
  if (s.left) o.fill(' ', pad);
}

void write_text(Sink& o, const Spec& s, const char* text, std::size_t len) {
  const int pad = s.width > static_cast<int>(len) ? s.width - static_cast<int>(len) : 0;
  if (!s.left) o.fill(' ', pad);
  o.put(text, len);
  if (s.left) o.fill(' ', pad);
}

int read_number(const char*& f) {
  int v = 0;
  for (; *f >= '0' && *f <= '9'; ++f)
    if (v < 100000000) v = v * 10 + (*f - '0');
  return v;
}

enum class Length { kChar, kShort, kInt, kLong, kLongLong, kMax, kSize, kPtrdiff, kLongDouble };

std::intmax_t signed_arg(va_list& ap, Length l) {
  switch (l) {
    case Length::kChar: return static_cast<signed char>(va_arg(ap, int));
    case Length::kShort: return static_cast<short>(va_arg(ap, int));
    case Length::kLong: return va_arg(ap, long);
    case Length::kLongLong: return va_arg(ap, long long);
    case Length::kMax: return va_arg(ap, std::intmax_t);
    case Length::kSize:
    case Length::kPtrdiff: return va_arg(ap, std::ptrdiff_t);
    default: return va_arg(ap, int);
  }
}

std::uintmax_t unsigned_arg(va_list& ap, Length l) {
  switch (l) {
    case Length::kChar: return static_cast<unsigned char>(va_arg(ap, unsigned));
    case Length::kShort: return static_cast<unsigned short>(va_arg(ap, unsigned));
    case Length::kLong: return va_arg(ap, unsigned long);
    case Length::kLongLong: return va_arg(ap, unsigned long long);
    case Length::kMax: return va_arg(ap, std::uintmax_t);
    case Length::kSize:
    case Length::kPtrdiff: return va_arg(ap, std::size_t);
    default: return va_arg(ap, unsigned);
  }
}

}  // namespace

int small_vsnprintf(char* out, std::size_t size, const char* f, va_list args) {
  va_list ap;
  va_copy(ap, args);
  Sink o{out, size};
  int result = 0;
  for (; *f; ++f) {
    if (*f != '%') {
      o.put(*f);
      continue;
    }
    ++f;
    Spec s;
    for (;; ++f) {
      if (*f == '-') s.left = true;
      else if (*f == '0') s.zero = true;
      else if (*f == '+') s.plus = true;
      else if (*f == ' ') s.space = true;
      else if (*f == '#') s.alt = true;
      else break;
    }
    if (*f == '*') {
      s.width = va_arg(ap, int);
      if (s.width < 0) {
        s.left = true;
        s.width = -s.width;
      }
      ++f;
    } else {
      s.width = read_number(f);
    }
    if (*f == '.') {
      ++f;
      if (*f == '*') {
        s.precision = va_arg(ap, int);
        if (s.precision < 0) s.precision = -1;
        ++f;
      } else {
        s.precision = read_number(f);
      }
    }
    Length len = Length::kInt;
    if (*f == 'h') len = *++f == 'h' ? (++f, Length::kChar) : Length::kShort;
    else if (*f == 'l') len = *++f == 'l' ? (++f, Length::kLongLong) : Length::kLong;
    else if (*f == 'q') ++f, len = Length::kLongLong;
    else if (*f == 'j') ++f, len = Length::kMax;
    else if (*f == 'z') ++f, len = Length::kSize;
    else if (*f == 't') ++f, len = Length::kPtrdiff;
    else if (*f == 'L') ++f, len = Length::kLongDouble;
    switch (*f) {
      case '%': o.put('%'); break;
      case 'd':
      case 'i': {
        const std::intmax_t v = signed_arg(ap, len);
        const std::uintmax_t mag = v < 0 ? ~static_cast<std::uintmax_t>(v) + 1 : static_cast<std::uintmax_t>(v);
        write_integer(o, s, mag, v < 0, 10, false, false);
        break;
      }
      case 'u': write_integer(o, s, unsigned_arg(ap, len), false, 10, false, false); break;
      case 'o': write_integer(o, s, unsigned_arg(ap, len), false, 8, false, false); break;
      case 'x': write_integer(o, s, unsigned_arg(ap, len), false, 16, false, false); break;
      case 'X': write_integer(o, s, unsigned_arg(ap, len), false, 16, true, false); break;
      case 'p':
        write_integer(o, s, reinterpret_cast<std::uintptr_t>(va_arg(ap, void*)), false, 16, false, true);
        break;
      case 'c': {
        const char c = static_cast<char>(va_arg(ap, int));
        write_text(o, s, &c, 1);
        break;
      }
      case 's': {
        const char* text = va_arg(ap, const char*);
        if (!text) text = "(null)";
        std::size_t n = 0;
        while (text[n] && (s.precision < 0 || n < static_cast<std::size_t>(s.precision))) ++n;
        write_text(o, s, text, n);
        break;
      }
      case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A':
        if (len == Length::kLongDouble) (void)va_arg(ap, long double);
        else (void)va_arg(ap, double);
        break;
      default: result = -1; break;  // unknown conversion (or the format ended after '%')
    }
    if (result < 0 || !*f) break;
  }
  va_end(ap);
  if (size > 0) out[o.n < size ? o.n : size - 1] = '\0';
  return result < 0 ? -1 : static_cast<int>(o.n);
}

}  // namespace memfit::wasm
