// wasm/fmt.cpp — fmt's implementation, compiled once for the WASM build (fmt::fmt in
// wasm/toolchain.cmake). Debian ships fmt's headers but no source for Emscripten to compile, and
// FMT_HEADER_ONLY would compile vformat_to, the float formatters and their tables again in
// every translation unit that formats anything (each core TU took ~2× as long). These are the
// explicit instantiations of fmt 9.1's src/format.cc for char (wchar_t is never used).
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;

template FMT_API void buffer<char>::append(const char*, const char*);

template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
