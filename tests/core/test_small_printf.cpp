// wasm/small_printf (the page module's snprintf) against the platform's snprintf — glibc
// natively, musl in the WASM test program: the same text and the same return value.
#include <doctest/doctest.h>

#include <climits>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>

#include "small_printf.h"

namespace {

struct Printed {
  std::string text;
  int result;
};

Printed ours(std::size_t size, const char* format, ...) {
  std::string buf(size + 1, '#');
  va_list ap;
  va_start(ap, format);
  const int n = memfit::wasm::small_vsnprintf(buf.data(), size, format, ap);
  va_end(ap);
  return {buf, n};
}

Printed libc(std::size_t size, const char* format, ...) {
  std::string buf(size + 1, '#');
  va_list ap;
  va_start(ap, format);
  const int n = std::vsnprintf(buf.data(), size, format, ap);
  va_end(ap);
  return {buf, n};
}

#define CHECK_LIKE_LIBC(size, ...)                 \
  do {                                             \
    const Printed a = ours(size, __VA_ARGS__);     \
    const Printed b = libc(size, __VA_ARGS__);     \
    CAPTURE(b.text);                               \
    CHECK(a.text == b.text);                       \
    CHECK(a.result == b.result);                   \
  } while (0)

}  // namespace

TEST_CASE("small_printf: what nlohmann::json asks of it") {
  for (unsigned c : {0u, 1u, 0x1fu, 0x7fu, 0xffu}) {
    CHECK_LIKE_LIBC(7, "\\u%04x", c);
    CHECK_LIKE_LIBC(9, "<U+%.4X>", c);
    CHECK_LIKE_LIBC(3, "%.2hhX", c);
  }
  CHECK_LIKE_LIBC(13, "\\u%04x\\u%04x", 0xd83du, 0xde00u);
}

TEST_CASE("small_printf: integers with every flag, width, precision and length") {
  const char* int_formats[] = {"%d", "%i", "%5d", "%-5d|", "%05d", "%+d", "% d", "%+05d", "%.3d", "%8.3d",
                               "%-8.3d|", "%08.3d", "%.0d", "%5.0d", "%*d", "%-*d|", "%.*d"};
  for (int v : {0, 1, -1, 42, -42, 12345, INT_MIN, INT_MAX})
    for (const char* f : int_formats) {
      CAPTURE(f);
      CAPTURE(v);
      if (std::string(f).find('*') != std::string::npos) {
        CHECK_LIKE_LIBC(64, f, 7, v);
        CHECK_LIKE_LIBC(64, f, -7, v);
      } else {
        CHECK_LIKE_LIBC(64, f, v);
      }
    }
  const char* unsigned_formats[] = {"%u", "%x", "%X", "%o", "%#x", "%#X", "%#o", "%#.0o", "%.0x", "%#08x",
                                    "%-#8x|", "%08X", "%.6o", "%#5o"};
  for (unsigned v : {0u, 1u, 7u, 8u, 255u, 256u, 0xdeadbeefu, UINT_MAX})
    for (const char* f : unsigned_formats) {
      CAPTURE(f);
      CAPTURE(v);
      CHECK_LIKE_LIBC(64, f, v);
    }
  for (long long v : {0LL, -1LL, LLONG_MIN, LLONG_MAX}) {
    CHECK_LIKE_LIBC(64, "%lld|%20lld|%-+22lld", v, v, v);
    CHECK_LIKE_LIBC(64, "%llx %llo %llu", static_cast<unsigned long long>(v), static_cast<unsigned long long>(v),
                    static_cast<unsigned long long>(v));
    CHECK_LIKE_LIBC(64, "%ld %jd", static_cast<long>(v), static_cast<std::intmax_t>(v));
  }
  CHECK_LIKE_LIBC(64, "%zu %zx %td", static_cast<std::size_t>(123456), static_cast<std::size_t>(255),
                  static_cast<std::ptrdiff_t>(-9));
  CHECK_LIKE_LIBC(64, "%hd %hu %hhd %hhu", 70000, 70000, 300, 300);  // converted to short / char
}

TEST_CASE("small_printf: strings, characters, percent, truncation and the count") {
  CHECK_LIKE_LIBC(64, "[%s] [%10s] [%-10s] [%.2s] [%5.1s] [%c] [%3c] [%-3c] [%%]", "text", "ab", "ab", "text",
                  "xyz", 'q', 'r', 's');
  CHECK_LIKE_LIBC(64, "%.*s|%*s", 3, "abcdef", -6, "ab");
  for (std::size_t size : {0u, 1u, 2u, 5u, 12u})
    CHECK_LIKE_LIBC(size, "%s=%05d;", "key", 42);
}

TEST_CASE("small_printf: a float conversion writes nothing but keeps later arguments in place") {
  const Printed p = ours(64, "%d %f %.3g %Lf %s", 1, 2.5, 3.25, static_cast<long double>(4), "end");
  CHECK(p.text.substr(0, static_cast<std::size_t>(p.result)) == "1    end");
  CHECK(ours(64, "%k", 1).result == -1);  // unknown conversion
}
