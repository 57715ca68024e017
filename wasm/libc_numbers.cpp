// wasm/libc_numbers.cpp — the page's module links this snprintf and strtod instead of musl's, to
// keep musl's floating-point printf and scanf engines (and the 128-bit software `long double`
// arithmetic both are written in) out of the bundle. Linked into the ES module only
// (wasm/CMakeLists.txt); the node test programs keep musl's, so the core suite under node checks
// core against the real libc — and memfit::parse_double against musl's strtod.
//
// Who calls snprintf in the module: nlohmann::json's "\u%04x" escapes and "<U+%.4X>" token texts
// (integers only), and fmt's hexfloat presentation ({:a}), which core never uses. small_printf.h
// does the integer and string conversions in ~1/4 of musl's code; a float conversion prints
// nothing. (Before it, musl's integer-only vsniprintf: still ~4 KB with its argument table.)
//
// strtod: nlohmann::json's lexer calls it for every JSON number with a fraction or exponent.
// memfit::parse_double (core) is correctly rounded like musl's but needs no long double: the
// bundle loses ~14 KB of code. (fast_float, tried before, carries a 10 KB table: +4 KB.)
#include <climits>
#include <cstdarg>
#include <cstddef>

#include "memfit/format/parse_double.h"
#include "small_printf.h"

extern "C" {

int snprintf(char* out, std::size_t size, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int n = memfit::wasm::small_vsnprintf(out, size, format, args);
  va_end(args);
  return n;
}

// embind formats with sprintf (emscripten turns an integer-only call into siprintf); musl defines
// both in one object, so both are defined here: siprintf is another name for sprintf.
int sprintf(char* out, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int n = memfit::wasm::small_vsnprintf(out, INT_MAX, format, args);
  va_end(args);
  return n;
}
int siprintf(char* out, const char* format, ...) __attribute__((alias("sprintf")));

double strtod(const char* text, char** end) { return memfit::parse_double(text, end); }

// libc++'s std::stof / std::stold (string.cpp, linked for std::to_string) refer to these; musl
// defines all three in one object, which would clash with strtod above. Nothing in memfit calls
// them; through a double they may round twice, so they are not exact for their own types.
float strtof(const char* text, char** end) { return static_cast<float>(memfit::parse_double(text, end)); }
long double strtold(const char* text, char** end) { return memfit::parse_double(text, end); }

// The locale forms, in the same musl object: libc++'s num_get (its locale facets, which
// std::regex's traits bring in: core/repo/peft_config.cpp) calls them with the C locale.
double strtod_l(const char* text, char** end, struct __locale_struct*) { return memfit::parse_double(text, end); }
float strtof_l(const char* text, char** end, struct __locale_struct*) { return static_cast<float>(memfit::parse_double(text, end)); }
long double strtold_l(const char* text, char** end, struct __locale_struct*) { return memfit::parse_double(text, end); }

}  // extern "C"
