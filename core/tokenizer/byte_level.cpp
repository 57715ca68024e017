#include "byte_level.h"

#include <array>

#include "unicode.h"

namespace memfit::tokenizer {
namespace {

// GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves, the others to 256 + n.
struct Tables {
  std::array<std::string, 256> utf8;
  std::array<int, 324> byte_of{};  // code points < 324 only
  Tables() {
    byte_of.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const char32_t c = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
      append_utf8(utf8[b], c);
      byte_of[c] = b;
    }
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

std::string bytes_to_chars(std::string_view s) {
  const Tables& t = tables();
  std::string out;
  out.reserve(s.size() * 2);
  for (const char ch : s) out += t.utf8[static_cast<unsigned char>(ch)];
  return out;
}

int char_to_byte(char32_t c) { return c < 324 ? tables().byte_of[c] : -1; }

}  // namespace memfit::tokenizer
