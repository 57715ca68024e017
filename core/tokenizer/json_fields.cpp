#include "json_fields.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace memfit::tokenizer {

void BuildContext::fail(ErrorCode code, const std::string& what) const {
  throw Error(code, fmt::format("{}: {}{}", source, path.empty() ? "" : path + ": ", what));
}

std::string json_type_name(const json& v) { return v.type_name(); }

json parse_json(std::string_view text, const std::string& source) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(ErrorCode::kInvalidJson, fmt::format("{}: not JSON: {}", source, e.what()));
  }
}

const json& field(const json& j, const char* key, const BuildContext& ctx) {
  if (!j.is_object()) ctx.fail(ErrorCode::kWrongType, fmt::format("expected an object, got {}", json_type_name(j)));
  const auto it = j.find(key);
  if (it == j.end()) ctx.fail(ErrorCode::kMissingKey, fmt::format("missing key '{}'", key));
  return *it;
}

bool has_field(const json& j, const char* key) {
  if (!j.is_object()) return false;
  const auto it = j.find(key);
  return it != j.end() && !it->is_null();
}

std::string string_field(const json& j, const char* key, const BuildContext& ctx) {
  const json& v = field(j, key, ctx);
  if (!v.is_string())
    ctx.fail(ErrorCode::kWrongType, fmt::format("'{}' must be a string, got {}", key, json_type_name(v)));
  return v.get<std::string>();
}

std::string string_or(const json& j, const char* key, const std::string& fallback, const BuildContext& ctx) {
  return has_field(j, key) ? string_field(j, key, ctx) : fallback;
}

bool bool_or(const json& j, const char* key, bool fallback, const BuildContext& ctx) {
  if (!has_field(j, key)) return fallback;
  const json& v = j.at(key);
  if (!v.is_boolean())
    ctx.fail(ErrorCode::kWrongType, fmt::format("'{}' must be true or false, got {}", key, v.dump()));
  return v.get<bool>();
}

std::uint64_t uint_or(const json& j, const char* key, std::uint64_t fallback, const BuildContext& ctx) {
  if (!has_field(j, key)) return fallback;
  const json& v = j.at(key);
  if (!v.is_number_unsigned())
    ctx.fail(ErrorCode::kWrongType, fmt::format("'{}' must be a non-negative integer, got {}", key, v.dump()));
  return v.get<std::uint64_t>();
}

std::uint32_t token_id(const json& v, const BuildContext& ctx, const std::string& what) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() > 0xFFFFFFFFull)
    ctx.fail(ErrorCode::kInvalidValue, fmt::format("{}: a token id must be an integer in [0, 2^32), got {}", what, v.dump()));
  return static_cast<std::uint32_t>(v.get<std::uint64_t>());
}

double number(const json& v, const BuildContext& ctx, const std::string& what) {
  if (!v.is_number()) ctx.fail(ErrorCode::kWrongType, fmt::format("{} must be a number, got {}", what, v.dump()));
  return v.get<double>();
}

std::string type_of(const json& j, const BuildContext& ctx) {
  BuildContext at = ctx.at("type");
  if (!j.is_object()) ctx.fail(ErrorCode::kWrongType, fmt::format("expected an object with a \"type\", got {}", json_type_name(j)));
  const auto it = j.find("type");
  if (it == j.end()) ctx.fail(ErrorCode::kMissingKey, "missing key 'type'");
  if (!it->is_string()) at.fail(ErrorCode::kWrongType, fmt::format("must be a string, got {}", it->dump()));
  return it->get<std::string>();
}

void unknown_type(const BuildContext& ctx, const std::string& type, const char* kind,
                  const std::vector<std::string>& known) {
  throw Error(ErrorCode::kInvalidValue,
              fmt::format("{}: {}.type '{}' is not a {} memfit knows (known: {})", ctx.source, ctx.path, type,
                          kind, fmt::join(known, ", ")));
}

}  // namespace memfit::tokenizer
