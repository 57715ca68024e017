// memfit/format/parse_double.h — decimal text to the nearest double, like strtod but independent of
// the C locale and with no `long double` arithmetic.
//
// Why core has its own: musl's strtod (the WebAssembly module's libc) scales in 128-bit
// `long double`, which WebAssembly only has in software — ~14 KB of code the page would carry
// for JSON numbers. The WASM module links this as its strtod (wasm/libc_numbers.cpp), so
// nlohmann::json's lexer uses it too; tests/core/test_parse_double.cpp holds it to the platform
// strtod (glibc natively, musl under node: both correctly rounded) bit for bit.
//
// Accepts what strtod accepts for decimal input: leading white space, a sign, digits with an
// optional point, an optional exponent, and "inf", "infinity", "nan", "nan(chars)" in any case.
// Not hexadecimal floats ("0x1p3" reads as 0, ending after the "0"). Rounds to nearest, ties
// to even, for any number of digits (Clinger's fast path when the value is exact in a double,
// else a multi-precision decimal shifted by powers of two — the algorithm of Go's strconv).
// Sets *end (when not null) past the last character used, or to `text` when nothing was read.
// Overflow gives ±HUGE_VAL and an underflow of a nonzero input to 0 gives ±0; both set errno
// to ERANGE, as strtod does.
#pragma once

namespace memfit {

double parse_double(const char* text, char** end);

}  // namespace memfit
