// memfit::parse_double against the platform's strtod — glibc natively, musl in the WASM test
// program — both correctly rounded: the same bits and the same end position for every input.
#include <doctest/doctest.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "memfit/format/parse_double.h"

namespace {

std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Same value bits (any NaN equals any NaN: C leaves the sign of "-nan" to the library — glibc
// keeps it, musl does not) and the same end.
void check_like_strtod(const std::string& s) {
  CAPTURE(s);
  char* ours_end = nullptr;
  char* libc_end = nullptr;
  const double ours = memfit::parse_double(s.c_str(), &ours_end);
  const double libc = std::strtod(s.c_str(), &libc_end);
  CHECK(ours_end - s.c_str() == libc_end - s.c_str());
  if (std::isnan(libc)) {
    CHECK(std::isnan(ours));
  } else {
    CHECK(bits_of(ours) == bits_of(libc));
  }
}

std::string exact_decimal(long double v) {
  // long double holds the midpoint of two adjacent doubles exactly (x87: 64-bit mantissa; musl
  // in WASM: 113 bits), and printf writes its exact decimal expansion given enough digits.
  char buf[1200];
  std::snprintf(buf, sizeof buf, "%.1000Le", v);
  std::string s = buf;
  const auto e = s.find('e');
  std::string mant = s.substr(0, e);
  while (mant.back() == '0') mant.pop_back();
  return mant + s.substr(e);
}

}  // namespace

TEST_CASE("parse_double: syntax, ends and special values like strtod") {
  for (const char* s :
       {"0", "-0", "+0", "1", "-1", "0.5", ".5", "5.", ".", "-", "+", "", "e5", ".e5", "1e", "1e+", "1e-",
        "1E5", "1e+5x", "  \t\n12abc", "007", "0.000", "00.001e3", "1.5e0010", "inf", "-INF", "Infinity",
        "infinit", "infinityx", "nan", "-NaN", "nan(123abc)", "nan(", "nan(1 2)", "1,5", "1.2.3", "--1",
        "123456789012345678901234567890", "0.1", "0.2", "0.3", "1e22", "1e23", "9007199254740993",
        "2.2250738585072011e-308", "2.2250738585072014e-308", "4.9e-324", "5e-324", "2e-324",
        "2.4703282292062327e-324", "2.4703282292062328e-324", "1.7976931348623157e308",
        "1.7976931348623158e308", "1.7976931348623159e308", "1e309", "-1e400", "1e-400", "1e99999999999",
        "1e-99999999999", "0e99999999", "2.6666666666666665", "1e-05", "0.02", "500000.0", "6.103515625e-05"})
    check_like_strtod(s);
}

TEST_CASE("parse_double: overflow and underflow set ERANGE") {
  errno = 0;
  CHECK(memfit::parse_double("1e400", nullptr) == HUGE_VAL);
  CHECK(errno == ERANGE);
  errno = 0;
  CHECK(memfit::parse_double("-1e-400", nullptr) == 0.0);
  CHECK(errno == ERANGE);
  errno = 0;
  CHECK(memfit::parse_double("0e-400", nullptr) == 0.0);
  CHECK(errno == 0);
}

TEST_CASE("parse_double: random decimals of up to 40 digits across the whole exponent range") {
  std::mt19937_64 rng(20261130);
  for (int i = 0; i < 20000; ++i) {
    const int digits = 1 + static_cast<int>(rng() % (i % 4 == 0 ? 40 : 19));
    std::string s;
    if (rng() % 2) s += '-';
    for (int k = 0; k < digits; ++k) s += static_cast<char>('0' + rng() % 10);
    if (rng() % 2) s.insert(s.size() - static_cast<std::size_t>(rng() % digits), ".");
    if (rng() % 4) s += "e" + std::to_string(static_cast<int>(rng() % 700) - 350);
    check_like_strtod(s);
  }
}

TEST_CASE("parse_double: exact halfway points between doubles, and a hair above and below") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 300; ++i) {
    // Random finite doubles: normal, subnormal (exponent field 0) and near the top.
    std::uint64_t b = rng() & 0x7fefffffffffffffULL;
    if (i % 10 == 0) b &= 0x000fffffffffffffULL;
    double x;
    std::memcpy(&x, &b, sizeof x);
    const double next = std::nextafter(x, HUGE_VAL);
    const std::string mid = exact_decimal((static_cast<long double>(x) + next) / 2);
    check_like_strtod(mid);
    const auto e = mid.find('e');
    check_like_strtod(mid.substr(0, e) + "0000000001" + mid.substr(e));  // just above: rounds up
    std::string below = mid.substr(0, e);                               // just below: rounds down
    std::size_t k = below.size() - 1;
    while (below[k] == '0' || below[k] == '.') --k;
    below[k] = static_cast<char>(below[k] - 1);
    check_like_strtod(below + "9999999999" + mid.substr(e));
  }
}

TEST_CASE("parse_double: more than 800 significant digits (the truncated tail decides ties)") {
  std::string s = "1.";
  s += std::string(900, '0');
  check_like_strtod(s);
  check_like_strtod(s + "1");
  // 2^-1075 (half the smallest subnormal) written out, then with a nonzero digit far past 800.
  const std::string half_min = exact_decimal(std::ldexp(static_cast<long double>(1), -1075));
  check_like_strtod(half_min);
  const auto e = half_min.find('e');
  check_like_strtod(half_min.substr(0, e) + std::string(900, '0') + "1" + half_min.substr(e));
}
