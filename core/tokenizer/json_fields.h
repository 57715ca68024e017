// core/tokenizer/json_fields.h — typed reads of a component's JSON fields, with errors that name
// the file, the field's path and expected vs got.
#pragma once

#include <cstdint>
#include <string>

#include "components.h"

namespace memfit::tokenizer {

const json& field(const json& j, const char* key, const BuildContext& ctx);  // required
bool has_field(const json& j, const char* key);                                // present and not null
std::string string_field(const json& j, const char* key, const BuildContext& ctx);
std::string string_or(const json& j, const char* key, const std::string& fallback, const BuildContext& ctx);
bool bool_or(const json& j, const char* key, bool fallback, const BuildContext& ctx);
std::uint64_t uint_or(const json& j, const char* key, std::uint64_t fallback, const BuildContext& ctx);
std::uint32_t token_id(const json& v, const BuildContext& ctx, const std::string& what);
double number(const json& v, const BuildContext& ctx, const std::string& what);
std::string json_type_name(const json& v);
// tokenizer.json's text parsed, or an Error naming `source`.
json parse_json(std::string_view text, const std::string& source);

// The components of a Sequence: j[key] is a list, item i built at path key[i].
template <typename T>
std::vector<std::unique_ptr<T>> make_list(const json& j, const char* key, const BuildContext& ctx,
                                          std::unique_ptr<T> (*make)(const json&, const BuildContext&)) {
  const BuildContext list = ctx.at(key);
  const json& items = field(j, key, ctx);
  if (!items.is_array()) list.fail(ErrorCode::kWrongType, "must be a list");
  std::vector<std::unique_ptr<T>> out;
  for (std::size_t i = 0; i < items.size(); ++i) out.push_back(make(items[i], list.index(i)));
  return out;
}

}  // namespace memfit::tokenizer
