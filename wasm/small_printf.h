// wasm/small_printf.h — the integer and string subset of vsnprintf, for the page's module.
//
// Why: musl's printf engine is ~4 KB of WebAssembly (printf_core, its argument table, wide
// characters), called in the module only for nlohmann::json's "\u%04x" escapes and "<U+%.4X>"
// token texts. This one does what C says for %d %i %u %o %x %X %c %s %p %% with the flags
// - 0 + space #, a width and a precision (numbers or *), and the length modifiers hh h l ll j z t
// L; a floating-point conversion (e f g a, any case) consumes its argument and writes nothing
// (memfit formats floats with fmt). An unknown conversion returns -1, as musl does.
// tests/core/test_small_printf.cpp holds it to the platform's snprintf.
#pragma once

#include <cstdarg>
#include <cstddef>

namespace memfit::wasm {

int small_vsnprintf(char* out, std::size_t size, const char* format, va_list args);

}  // namespace memfit::wasm
