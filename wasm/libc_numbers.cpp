// wasm/libc_numbers.cpp — the page's module links this snprintf instead of musl's, to keep
// musl's floating-point printf engine (and the 128-bit software `long double` arithmetic it is
// written in) out of the bundle: ~7 KB of code for calls that never format a float. Linked into
// the ES module only (wasm/CMakeLists.txt); the node test programs keep musl's, so the core
// suite under node checks core against the real libc.
//
// Who calls snprintf in the module: nlohmann::json's "\u%04x" escapes and "<U+%.4X>" token texts
// (integers only), and fmt's hexfloat presentation ({:a}), which core never uses. musl's own
// integer-only vsniprintf does the work; a float conversion would print nothing.
//
// (strtod stays musl's: fast_float, the other candidate, carries a 10 KB table and made the
// bundle 4 KB larger.)
#include <cstdarg>
#include <cstddef>

extern "C" {

int vsniprintf(char* out, std::size_t size, const char* format, va_list args);  // musl

int snprintf(char* out, std::size_t size, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int n = vsniprintf(out, size, format, args);
  va_end(args);
  return n;
}

}  // extern "C"
