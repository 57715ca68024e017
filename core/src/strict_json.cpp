#include "memfit/strict_json.h"

#include <set>
#include <vector>

#include <fmt/format.h>

namespace memfit {

std::optional<std::size_t> invalid_utf8_at(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) { ++i; continue; }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return i;
    if (i + len > n) return i;
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    const bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
                          (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::nullopt;
}

std::size_t json_depth(std::string_view s, std::size_t limit) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escape = false;
  for (char c : s) {
    if (in_string) {
      if (escape) escape = false;
      else if (c == '\\') escape = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::optional<StrictJsonError> parse_strict_json(std::string_view text, std::size_t max_depth,
                                                 Json* out) {
  if (json_depth(text, max_depth) > max_depth)
    return StrictJsonError{StrictJsonError::kTooDeep,
                           fmt::format("nested deeper than {} levels", max_depth)};
  // One set of keys per open object; the parser callback sees every key as it is read.
  std::vector<std::set<std::string>> keys;
  std::optional<StrictJsonError> dup;
  auto cb = [&](int /*depth*/, Json::parse_event_t ev, Json& parsed) {
    switch (ev) {
      case Json::parse_event_t::object_start: keys.emplace_back(); break;
      case Json::parse_event_t::object_end: if (!keys.empty()) keys.pop_back(); break;
      case Json::parse_event_t::key:
        if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second && !dup)
          dup = StrictJsonError{StrictJsonError::kDuplicateKey,
                                fmt::format("duplicate key '{}'", parsed.get<std::string>())};
        break;
      default: break;
    }
    return true;
  };
  try {
    *out = Json::parse(text.begin(), text.end(), cb);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    const auto colon = what.find(": ");
    return StrictJsonError{StrictJsonError::kSyntax,
                           fmt::format("at byte {}: {}", e.byte,
                                       colon == std::string::npos ? what : what.substr(colon + 2))};
  }
  if (dup) return dup;
  return std::nullopt;
}

}  // namespace memfit
