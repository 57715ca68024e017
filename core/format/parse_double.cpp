#include "memfit/format/parse_double.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace memfit {
namespace {

// A decimal with up to kMaxDigits significant digits: value = 0.d[0]d[1]…d[nd-1] × 10^dp.
// Digits past kMaxDigits only matter for halfway cases; `truncated` remembers a nonzero one.
struct Decimal {
  static constexpr int kMaxDigits = 800;
  std::uint8_t d[kMaxDigits];  // digit values 0–9
  int nd = 0;
  int dp = 0;
  bool truncated = false;

  void trim() {
    while (nd > 0 && d[nd - 1] == 0) --nd;
    if (nd == 0) dp = 0;
  }

  // × 2^k, k ≤ 60: digit << k plus the carry stays below 2^64.
  void shift_left(int k) {
    std::uint8_t out[kMaxDigits + 20];
    int w = kMaxDigits + 20;
    std::uint64_t n = 0;
    for (int r = nd - 1; r >= 0; --r) {
      n += std::uint64_t{d[r]} << k;
      out[--w] = static_cast<std::uint8_t>(n % 10);
      n /= 10;
    }
    for (; n > 0; n /= 10) out[--w] = static_cast<std::uint8_t>(n % 10);
    const int len = kMaxDigits + 20 - w;
    for (int i = 0; i < len; ++i) {
      if (i < kMaxDigits) d[i] = out[w + i];
      else if (out[w + i] != 0) truncated = true;
    }
    dp += len - nd;
    nd = len < kMaxDigits ? len : kMaxDigits;
    trim();
  }

  // ÷ 2^k, k ≤ 60.
  void shift_right(int k) {
    int r = 0, w = 0;
    std::uint64_t n = 0;
    for (; (n >> k) == 0; ++r) {
      if (r >= nd) {
        if (n == 0) {
          nd = 0;
          return;
        }
        while ((n >> k) == 0) {
          n *= 10;
          ++r;
        }
        break;
      }
      n = n * 10 + d[r];
    }
    dp -= r - 1;
    const std::uint64_t mask = (std::uint64_t{1} << k) - 1;
    for (; r < nd; ++r) {
      const std::uint64_t digit = n >> k;
      n &= mask;
      d[w++] = static_cast<std::uint8_t>(digit);
      n = n * 10 + d[r];
    }
    while (n > 0) {
      const std::uint64_t digit = n >> k;
      n &= mask;
      if (w < kMaxDigits) d[w++] = static_cast<std::uint8_t>(digit);
      else if (digit > 0) truncated = true;
      n *= 10;
    }
    nd = w;
    trim();
  }

  void shift(int k) {
    constexpr int kMaxShift = 60;
    for (; k > kMaxShift; k -= kMaxShift) shift_left(kMaxShift);
    if (k > 0) shift_left(k);
    for (; k < -kMaxShift; k += kMaxShift) shift_right(kMaxShift);
    if (k < 0) shift_right(-k);
  }

  // Whether rounding to `digits` digits goes up: ties (exactly 5 then nothing) to even.
  bool rounds_up(int digits) const {
    if (digits < 0 || digits >= nd) return false;
    if (d[digits] == 5 && digits + 1 == nd) return truncated || (digits > 0 && d[digits - 1] % 2 == 1);
    return d[digits] >= 5;
  }

  // The integer part, rounded (the caller keeps it below 2^54).
  std::uint64_t rounded_integer() const {
    std::uint64_t n = 0;
    int i = 0;
    for (; i < dp && i < nd; ++i) n = n * 10 + d[i];
    for (; i < dp; ++i) n *= 10;
    return rounds_up(dp) ? n + 1 : n;
  }
};

// Binary exponent and 53-bit mantissa of the nearest double (IEEE binary64). Returns false on
// overflow.
bool to_bits(Decimal& dec, std::uint64_t& bits) {
  constexpr int kMantBits = 52, kBias = -1023, kMaxExp = 2047;
  // How far to shift for a decimal point position: 2^n below 10^dp (Go's powtab).
  static constexpr std::uint8_t kPowTab[] = {1, 3, 6, 9, 13, 16, 19, 23, 26};
  constexpr int kPowTabSize = sizeof kPowTab;
  bits = 0;
  if (dec.nd == 0 || dec.dp < -330) return true;  // zero (an underflow is the caller's)
  if (dec.dp > 310) return false;
  int exp = 0;
  while (dec.dp > 0) {
    const int n = dec.dp >= kPowTabSize ? 27 : kPowTab[dec.dp];
    dec.shift(-n);
    exp += n;
  }
  while (dec.dp < 0 || (dec.dp == 0 && dec.d[0] < 5)) {
    const int n = -dec.dp >= kPowTabSize ? 27 : kPowTab[-dec.dp];
    dec.shift(n);
    exp -= n;
  }
  --exp;  // the value is now in [1, 2) × 2^exp
  if (exp < kBias + 1) {  // subnormal: shift the mantissa down to the smallest exponent
    const int n = kBias + 1 - exp;
    dec.shift(-n);
    exp += n;
  }
  if (exp - kBias >= kMaxExp) return false;
  dec.shift(1 + kMantBits);
  std::uint64_t mant = dec.rounded_integer();
  if (mant == std::uint64_t{2} << kMantBits) {  // rounding carried into a new bit
    mant >>= 1;
    if (++exp - kBias >= kMaxExp) return false;
  }
  if ((mant & (std::uint64_t{1} << kMantBits)) == 0) exp = kBias;  // subnormal or zero
  bits = (mant & ((std::uint64_t{1} << kMantBits) - 1)) |
         (static_cast<std::uint64_t>((exp - kBias) & kMaxExp) << kMantBits);
  return true;
}

bool lower_equals(const char* s, const char* word) {
  for (; *word; ++s, ++word)
    if ((*s | 0x20) != *word) return false;
  return true;
}

}  // namespace

double parse_double(const char* text, char** end) {
  const char* p = text;
  while (*p == ' ' || (*p >= '\t' && *p <= '\r')) ++p;
  const bool negative = *p == '-';
  if (*p == '-' || *p == '+') ++p;
  auto finish = [&](const char* stop, double v) {
    if (end) *end = const_cast<char*>(stop);
    return negative ? -v : v;
  };

  if (lower_equals(p, "inf")) return finish(p + (lower_equals(p + 3, "inity") ? 8 : 3), HUGE_VAL);
  if (lower_equals(p, "nan")) {
    const char* q = p + 3;
    if (*q == '(') {
      const char* r = q + 1;
      while ((*r >= '0' && *r <= '9') || ((*r | 0x20) >= 'a' && (*r | 0x20) <= 'z') || *r == '_') ++r;
      if (*r == ')') q = r + 1;
    }
    return finish(q, NAN);
  }

  Decimal dec;
  std::uint64_t mantissa = 0;  // the first 19 significant digits, for the fast path
  int mantissa_digits = 0;
  bool saw_digit = false, saw_point = false;
  for (;; ++p) {
    if (*p == '.' && !saw_point) {
      saw_point = true;
      dec.dp = dec.nd;
      continue;
    }
    if (*p < '0' || *p > '9') break;
    saw_digit = true;
    const int digit = *p - '0';
    if (digit == 0 && dec.nd == 0) {  // a leading zero only moves the point
      --dec.dp;
      continue;
    }
    if (mantissa_digits < 19) {
      mantissa = mantissa * 10 + static_cast<std::uint64_t>(digit);
      ++mantissa_digits;
    }
    if (dec.nd < Decimal::kMaxDigits) dec.d[dec.nd++] = static_cast<std::uint8_t>(digit);
    else if (digit != 0) dec.truncated = true;
  }
  if (!saw_digit) {  // nothing read: *end = text
    if (end) *end = const_cast<char*>(text);
    return 0.0;
  }
  if (!saw_point) dec.dp = dec.nd;
  if ((*p | 0x20) == 'e') {  // an exponent only when digits follow
    const char* q = p + 1;
    const bool exp_negative = *q == '-';
    if (*q == '-' || *q == '+') ++q;
    if (*q >= '0' && *q <= '9') {
      int e = 0;
      for (; *q >= '0' && *q <= '9'; ++q)
        if (e < 100000) e = e * 10 + (*q - '0');
      dec.dp += exp_negative ? -e : e;
      p = q;
    }
  }

  // Clinger's fast path: at most 15 digits (exact in a double) times an exact power of ten
  // (10^22 is the largest): one correctly rounded operation.
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const bool all_digits = !dec.truncated && mantissa_digits == dec.nd;
  if (dec.nd == 0) return finish(p, 0.0);
  if (all_digits && dec.nd <= 15) {
    const int e10 = dec.dp - dec.nd;  // value = mantissa × 10^e10
    const double m = static_cast<double>(mantissa);
    if (e10 >= 0 && e10 <= 22) return finish(p, m * kPow10[e10]);
    if (e10 < 0 && e10 >= -22) return finish(p, m / kPow10[-e10]);
  }
  dec.trim();
  std::uint64_t bits = 0;
  if (!to_bits(dec, bits)) {
    errno = ERANGE;
    return finish(p, HUGE_VAL);
  }
  if (bits == 0) errno = ERANGE;  // a nonzero input (dec.nd > 0) rounded to zero
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return finish(p, v);
}

}  // namespace memfit
