// memfit/model/name_arg.h — a module, tensor or class name passed to the tree builder.
//
// The architecture files pass ~2,000 string literals to the builder. As std::string_view
// parameters each literal cost a call to string_view's strlen constructor at the call site
// (the -Oz WebAssembly build never inlines it) plus a trip through the stack; a NameArg is built
// inline from the literal's array type, so a call site passes two constants.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

namespace memfit {

class NameArg {
 public:
  // A string literal: its length is its array size, no strlen (literals hold no '\0' of their
  // own; a char buffer is passed as a std::string_view).
  template <std::size_t N>
  [[gnu::always_inline]] constexpr NameArg(const char (&literal)[N]) : s_(literal, N - 1) {}
  // Any other char pointer (`flag ? "A" : "B"` is one), measured. A template so that a literal
  // still prefers the array constructor above (the more specialized of the two).
  template <typename P, typename = std::enable_if_t<std::is_same_v<P, const char*>>>
  constexpr NameArg(P s) : s_(s) {}
  [[gnu::always_inline]] constexpr NameArg(std::string_view s) : s_(s) {}
  [[gnu::always_inline]] NameArg(const std::string& s) : s_(s) {}

  [[gnu::always_inline]] constexpr operator std::string_view() const { return s_; }
  constexpr std::string_view view() const { return s_; }

 private:
  std::string_view s_;
};

}  // namespace memfit
