// memfit/name_table.h — a vocabulary of option values, named once: one table per enum gives its
// canonical names (what reports print, what help and messages list) and the aliases it also
// accepts, so the CLI's flags and the JSON API read and validate names from the same rows.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/option_error.h"

namespace memfit {

template <typename E>
struct NameRow {
  std::string_view name;
  E value;
  bool alias = false;  // accepted, never printed or listed
};

// The canonical name of `value` (the first row of that value that is not an alias).
template <typename E, std::size_t N>
constexpr std::string_view name_of(const NameRow<E> (&table)[N], E value) {
  for (const auto& r : table)
    if (r.value == value && !r.alias) return r.name;
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> value_of(const NameRow<E> (&table)[N], std::string_view name) {
  for (const auto& r : table)
    if (r.name == name) return r.value;
  return std::nullopt;
}

// "transformers, vllm, llama.cpp": the canonical names, for help text and messages.
template <typename E, std::size_t N>
std::string name_list(const NameRow<E> (&table)[N]) {
  std::string out;
  for (const auto& r : table)
    if (!r.alias) out.append(out.empty() ? "" : ", ").append(r.name);
  return out;
}

// "transformers (default), vllm, llama.cpp": the list for help text, the default marked.
template <typename E, std::size_t N>
std::string name_list(const NameRow<E> (&table)[N], E default_value) {
  std::string out;
  for (const auto& r : table)
    if (!r.alias)
      out.append(out.empty() ? "" : ", ").append(r.name).append(r.value == default_value ? " (default)" : "");
  return out;
}

// The canonical names, for a CLI's choice check.
template <typename E, std::size_t N>
std::vector<std::string> name_vector(const NameRow<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& r : table)
    if (!r.alias) out.emplace_back(r.name);
  return out;
}

// The value named `name`, or Error(kInvalidArgument) naming the option:
// "engine: unknown value 'tgi' (transformers, vllm, llama.cpp)".
template <typename E, std::size_t N>
E parse_name(const NameRow<E> (&table)[N], std::string_view name, std::string_view option) {
  if (auto v = value_of(table, name)) return *v;
  throw unknown_value_error(option, name, name_list(table));
}

}  // namespace memfit
