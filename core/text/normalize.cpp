#include "normalize.h"

#include <algorithm>
#include <vector>

#include "unicode.h"  // core/tokenizer: UTF-8 walking
#include "unicode_data.h"

namespace memfit::text {
namespace {

// Hangul syllables decompose and compose by arithmetic (Unicode §3.12), not by table.
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

void decompose_into(char32_t c, bool compat, std::vector<char32_t>& out) {
  if (c >= kSBase && c < kSBase + kSCount) {
    const char32_t s = c - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  const auto [parts, n] = decomposition(c, compat);
  if (n == 0) {
    out.push_back(c);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) decompose_into(parts[i], compat, out);
}

// Canonical ordering: each run of non-starters stably sorted by combining class.
void reorder(std::vector<char32_t>& cps) {
  for (std::size_t i = 0; i < cps.size();) {
    if (combining_class(cps[i]) == 0) { ++i; continue; }
    std::size_t j = i;
    while (j < cps.size() && combining_class(cps[j]) != 0) ++j;
    std::stable_sort(cps.begin() + static_cast<std::ptrdiff_t>(i), cps.begin() + static_cast<std::ptrdiff_t>(j),
                     [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    i = j;
  }
}

char32_t compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  return compose_pair(a, b);
}

// The canonical composition algorithm (UAX #15's sample): each character combines with the last
// starter unless a character between them blocks it (a starter, or one of the same or a higher
// combining class). last_class 0 means the previous character is that starter itself.
void recompose(std::vector<char32_t>& cps) {
  if (cps.empty()) return;
  std::size_t starter = 0, out = 1;
  int last_class = combining_class(cps[0]) == 0 ? 0 : 256;  // 256: no starter yet, nothing combines
  for (std::size_t i = 1; i < cps.size(); ++i) {
    const char32_t c = cps[i];
    const int ccc = combining_class(c);
    const char32_t composite = last_class < ccc || last_class == 0 ? compose(cps[starter], c) : 0;
    if (composite != 0 && last_class != 256) {
      cps[starter] = composite;
      continue;
    }
    if (ccc == 0) starter = out;
    last_class = ccc;
    cps[out++] = c;
  }
  cps.resize(out);
}

}  // namespace

std::string normalize_utf8(std::string_view utf8, tokenizer::NormalForm form) {
  using tokenizer::NormalForm;
  const bool compat = form == NormalForm::kNFKC || form == NormalForm::kNFKD;
  std::vector<char32_t> cps;
  cps.reserve(utf8.size());
  for (std::size_t i = 0; i < utf8.size();) {
    std::size_t n = 0;
    decompose_into(tokenizer::decode_utf8(utf8, i, &n), compat, cps);
    i += n;
  }
  reorder(cps);
  if (form == NormalForm::kNFC || form == NormalForm::kNFKC) recompose(cps);
  std::string out;
  out.reserve(utf8.size());
  for (const char32_t c : cps) memfit::append_utf8(out, c);
  return out;
}

}  // namespace memfit::text
