#include <algorithm>
#include "memfit/format/base64.h"

#include <fmt/format.h>

namespace memfit {
namespace {

// 0..63 for the alphabet's characters, −1 for every other byte.
int digit(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

[[noreturn]] void fail(std::string_view what, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, fmt::format("{}: not base64 text: {}", what, why));
}

std::string decode(std::string_view text, std::string_view what) {
  if (text.size() % 4 != 0)
    fail(what, fmt::format("{} characters; base64 text comes in groups of 4 ('=' pads the last)", text.size()));
  std::size_t pad = 0;
  if (!text.empty() && text.back() == '=') pad = text[text.size() - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  const std::size_t data = text.size() - pad;
  std::uint32_t bits = 0;
  int held = 0;
  for (std::size_t i = 0; i < data; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const int d = digit(c);
    if (d < 0)
      fail(what, c == '=' ? fmt::format("'=' at position {}, before the end", i)
                 : c >= 0x20 && c < 0x7f ? fmt::format("'{}' at position {} is not in the alphabet (A-Z a-z 0-9 + /)", static_cast<char>(c), i)
                                       : fmt::format("byte 0x{:02x} at position {} is not in the alphabet", c, i));
    bits = (bits << 6) | static_cast<std::uint32_t>(d);
    held += 6;
    if (held >= 8) {
      held -= 8;
      out.push_back(static_cast<char>((bits >> held) & 0xff));
    }
  }
  // The leftover bits (2 with "==", 4 with "=") must be zero: otherwise two texts would decode
  // to the same bytes.
  if (held > 0 && (bits & ((1u << held) - 1)) != 0)
    fail(what, fmt::format("the last group's unused bits are not zero (position {})", data - 1));
  return out;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t bits = 0;
    for (std::size_t k = 0; k < 3; ++k) bits = bits << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0U);
    for (std::size_t k = 0; k < 4; ++k) out += k <= n ? kAlphabet[(bits >> (18 - 6 * k)) & 0x3F] : '=';
  }
  return out;
}

Result<std::string> base64_decode(std::string_view text, std::string_view what) {
  return capture([&] { return decode(text, what); });
}

}  // namespace memfit
