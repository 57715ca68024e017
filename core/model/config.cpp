#include "memfit/model/config.h"

#include <cmath>

#include <fmt/format.h>

#include "memfit/error.h"
#include "memfit/format/strict_json.h"

namespace memfit {
namespace {

std::string describe(const Json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return fmt::format("{} {}", v.type_name(), text);
}

std::string alias_list(Keys keys) {
  std::string out;
  bool first = true;
  for (const char* k : keys) {
    if (first) { first = false; continue; }
    out += out.empty() ? "" : ", ";
    out += fmt::format("'{}'", k);
  }
  return out;
}

}  // namespace

Config::Config(Json json, std::string where)
    : owner_(std::make_shared<const Json>(std::move(json))),
      json_(owner_.get()),
      where_(std::move(where)) {
  if (!json_->is_object())
    throw Error(ErrorCode::kInvalidJson,
                fmt::format("{}: expected a JSON object, got {}", where_, json_->type_name()));
}

Config::Config(std::shared_ptr<const Json> owner, const Json* node,
               std::string where)
    : owner_(std::move(owner)), json_(node), where_(std::move(where)) {}

namespace {
std::size_t parses = 0;  // core is single-threaded per process (CLI, WASM worker)
}  // namespace

std::size_t Config::parse_count() { return parses; }

Json Config::parse(std::string_view text, const std::string& where) {
  ++parses;
  // config.json is read as transformers reads it (json.loads): duplicate keys keep the last
  // value. Python's own recursion limit stops at ~1,000 levels; so does this.
  constexpr std::size_t kMaxDepth = 1000;
  Json j;
  if (auto err = parse_strict_json(text, kMaxDepth, &j, JsonDialect::kPython)) {
    if (err->kind == StrictJsonError::kTooDeep)
      throw Error(ErrorCode::kInvalidJson, fmt::format("{}: {}", where, err->detail));
    throw Error(ErrorCode::kInvalidJson, fmt::format("{}: not valid JSON ({})", where, err->detail));
  }
  if (!j.is_object())
    throw Error(ErrorCode::kInvalidJson,
                fmt::format("{}: expected a JSON object, got {}", where, j.type_name()));
  return j;
}

bool Config::has(std::string_view key) const {
  auto it = json_->find(std::string(key));
  return it != json_->end() && !it->is_null();
}

bool Config::has_any(Keys keys) const {
  for (const char* k : keys)
    if (has(k)) return true;
  return false;
}

const Json* Config::find(Keys keys, const char** found_key) const {
  for (const char* k : keys) {
    auto it = json_->find(k);
    if (it != json_->end() && !it->is_null()) {
      if (found_key) *found_key = k;
      return &*it;
    }
  }
  return nullptr;
}

void Config::missing(Keys keys) const {
  const std::string aliases = alias_list(keys);
  throw Error(ErrorCode::kMissingKey,
              fmt::format("{}: missing required key '{}'{}", where_, *keys.begin(),
                          aliases.empty() ? "" : fmt::format(" (also accepted: {})", aliases)));
}

std::int64_t Config::checked_int(const Json& v, const char* key, std::int64_t lo) const {
  std::int64_t value = 0;
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxDim))
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: key '{}' = {} is too large (at most {})", where_, key,
                              v.dump(), kMaxDim));
    value = v.get<std::int64_t>();
  } else if (v.is_number_float() && std::isfinite(v.get<double>()) &&
             std::floor(v.get<double>()) == v.get<double>() &&
             std::fabs(v.get<double>()) <= static_cast<double>(kMaxDim)) {
    value = static_cast<std::int64_t>(v.get<double>());  // 4096.0 is an integer too
  } else if (v.is_number_float()) {
    if (std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>())
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: key '{}' = {} is too large (at most {})", where_, key,
                              v.dump(), kMaxDim));
    throw Error(ErrorCode::kWrongType,
                fmt::format("{}: key '{}' must be an integer, got {}", where_, key, describe(v)));
  } else {
    throw Error(ErrorCode::kWrongType,
                fmt::format("{}: key '{}' must be an integer, got {}", where_, key, describe(v)));
  }
  if (value < lo)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: key '{}' must be >= {}, got {}", where_, key, lo, value));
  if (value > kMaxDim)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: key '{}' = {} is too large (at most {})", where_, key, value,
                            kMaxDim));
  return value;
}

std::int64_t Config::dim(Keys keys) const {
  const char* k = nullptr;
  const Json* v = find(keys, &k);
  if (!v) missing(keys);
  return checked_int(*v, k, 1);
}

std::int64_t Config::dim_or(Keys keys, std::int64_t fallback) const {
  const char* k = nullptr;
  const Json* v = find(keys, &k);
  return v ? checked_int(*v, k, 1) : fallback;
}

std::int64_t Config::count(Keys keys) const {
  const char* k = nullptr;
  const Json* v = find(keys, &k);
  if (!v) missing(keys);
  return checked_int(*v, k, 0);
}

std::int64_t Config::count_or(Keys keys, std::int64_t fallback) const {
  const char* k = nullptr;
  const Json* v = find(keys, &k);
  return v ? checked_int(*v, k, 0) : fallback;
}

std::int64_t Config::repeats_or(Keys keys, std::int64_t fallback) const {
  const char* k = nullptr;
  const Json* v = find(keys, &k);
  if (!v) return fallback;
  const std::int64_t n = checked_int(*v, k, 0);
  if (n > kMaxRepeats)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: key '{}' = {} is not a plausible number of repeated blocks (at "
                            "most {})",
                            where_, k, n, kMaxRepeats));
  return n;
}

double Config::number_or(Keys keys, double fallback) const {
  const char* k = nullptr;
  const Json* v = find(keys, &k);
  if (!v) return fallback;
  if (!v->is_number())
    throw Error(ErrorCode::kWrongType,
                fmt::format("{}: key '{}' must be a number, got {}", where_, k, describe(*v)));
  return v->get<double>();
}

bool Config::flag_or(Keys keys, bool fallback) const {
  const char* k = nullptr;
  const Json* v = find(keys, &k);
  if (!v) return fallback;
  if (!v->is_boolean())
    throw Error(ErrorCode::kWrongType,
                fmt::format("{}: key '{}' must be true or false, got {}", where_, k, describe(*v)));
  return v->get<bool>();
}

std::optional<std::string> Config::string_opt(Keys keys) const {
  const char* k = nullptr;
  const Json* v = find(keys, &k);
  if (!v) return std::nullopt;
  if (!v->is_string())
    throw Error(ErrorCode::kWrongType,
                fmt::format("{}: key '{}' must be a string, got {}", where_, k, describe(*v)));
  return v->get<std::string>();
}

std::string Config::string_or(Keys keys, std::string fallback) const {
  auto s = string_opt(keys);
  return s ? *s : std::move(fallback);
}

std::optional<std::vector<std::int64_t>> Config::int_list(Keys keys) const {
  const char* k = nullptr;
  const Json* v = find(keys, &k);
  if (!v) return std::nullopt;
  if (!v->is_array())
    throw Error(ErrorCode::kWrongType,
                fmt::format("{}: key '{}' must be a list of integers, got {}", where_, k,
                            describe(*v)));
  std::vector<std::int64_t> out;
  for (const auto& e : *v) out.push_back(checked_int(e, k, 0));
  return out;
}

std::optional<std::vector<std::string>> Config::string_list(Keys keys) const {
  const char* k = nullptr;
  const Json* v = find(keys, &k);
  if (!v) return std::nullopt;
  std::vector<std::string> out;
  if (!v->is_array())
    throw Error(ErrorCode::kWrongType,
                fmt::format("{}: key '{}' must be a list of strings, got {}", where_, k,
                            describe(*v)));
  for (const auto& e : *v) {
    if (!e.is_string())
      throw Error(ErrorCode::kWrongType,
                  fmt::format("{}: key '{}' must be a list of strings, got an element {}", where_,
                              k, describe(e)));
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::optional<Config> Config::sub(std::string_view key) const {
  auto it = json_->find(std::string(key));
  if (it == json_->end() || it->is_null()) return std::nullopt;
  if (!it->is_object())
    throw Error(ErrorCode::kWrongType,
                fmt::format("{}: key '{}' must be an object, got {}", where_, key,
                            describe(*it)));
  return Config(owner_, &*it, fmt::format("{}: {}", where_, key));
}

}  // namespace memfit
