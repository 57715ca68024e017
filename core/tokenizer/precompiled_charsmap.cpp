// SentencePiece's precompiled_charsmap: spm_precompiled 0.1.4 (src/lib.rs: parse, DoubleArray,
// transform), with the blob checked when it is read instead of at each lookup.
#include "memfit/tokenizer/precompiled_charsmap.h"

#include <algorithm>

#include <fmt/format.h>

#include "unicode.h"

namespace memfit::tokenizer {
namespace {

// A Darts-clone unit (spm_precompiled's ArrayUnitTrait; the crate widens units to usize first).
bool has_leaf(std::uint64_t u) { return ((u >> 8) & 1) == 1; }
std::uint64_t value(std::uint64_t u) { return u & ((1ULL << 31) - 1); }
std::uint64_t label(std::uint64_t u) { return u & ((1ULL << 31) | 0xFF); }
std::uint64_t offset(std::uint64_t u) { return (u >> 10) << ((u & (1ULL << 9)) >> 6); }

std::uint32_t le_u32(std::string_view b, std::size_t at) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(b[at])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 3])) << 24;
}

[[noreturn]] void fail(ErrorCode code, const std::string& what) {
  throw Error(code, what);  // the caller says where the blob came from
}

// Every node a lookup can reach, from the root, for every key byte (1..255; a NUL ends a key):
// each unit the lookup reads lies inside the trie, and each leaf's value starts a string inside
// the normalized strings, on a character boundary. Visits each node once, so cycles end.
void check_reachable(const std::vector<std::uint32_t>& units, const std::string& normalized) {
  const std::uint64_t n = units.size();
  std::vector<bool> seen(units.size(), false);
  std::vector<std::uint64_t> stack;
  const std::uint64_t root = offset(units[0]);
  const auto visit = [&](std::uint64_t node, const std::string& from) {
    if (node >= n) fail(ErrorCode::kCharsmapOutOfBounds, fmt::format("{} leads to unit {}, past the trie's {} units", from, node, n));
    if (!seen[node]) {
      seen[node] = true;
      stack.push_back(node);
    }
  };
  visit(root, "the root's offset");
  while (!stack.empty()) {
    const std::uint64_t node = stack.back();
    stack.pop_back();
    for (std::uint64_t c = 1; c < 256; ++c) {
      const std::uint64_t child = node ^ c;
      if (child >= n)
        fail(ErrorCode::kCharsmapOutOfBounds, fmt::format("unit {} has its byte-{} child at unit {}, past the trie's {} units", node, c, child, n));
      const std::uint64_t unit = units[child];
      if (label(unit) != c) continue;
      const std::uint64_t next = child ^ offset(unit);
      visit(next, fmt::format("unit {}", child));
      if (!has_leaf(unit)) continue;
      const std::uint64_t at = value(units[next]);
      if (at > normalized.size())
        fail(ErrorCode::kCharsmapOutOfBounds,
             fmt::format("unit {} points at byte {} of the normalized strings, which have {}", next, at, normalized.size()));
      if (at < normalized.size() && (static_cast<unsigned char>(normalized[at]) & 0xC0) == 0x80)
        fail(ErrorCode::kCharsmapInvalidUtf8, fmt::format("unit {} points at byte {}, inside a character of the normalized strings", next, at));
    }
  }
}

}  // namespace

Result<PrecompiledCharsmap> PrecompiledCharsmap::parse(std::string_view blob) {
  return capture([&]() -> PrecompiledCharsmap {
    if (blob.size() < 4) fail(ErrorCode::kCharsmapTruncated, fmt::format("{} bytes, under the 4 of the trie size", blob.size()));
    const std::uint32_t trie_bytes = le_u32(blob, 0);
    if (trie_bytes == 0 || trie_bytes % 4 != 0)
      fail(ErrorCode::kCharsmapTrieSize, fmt::format("the trie size {} is not a positive multiple of 4 bytes", trie_bytes));
    if (trie_bytes > blob.size() - 4)
      fail(ErrorCode::kCharsmapTruncated, fmt::format("the trie size {} runs past the blob's {} bytes after the size", trie_bytes, blob.size() - 4));
    PrecompiledCharsmap out;
    out.units_.resize(trie_bytes / 4);
    for (std::size_t i = 0; i < out.units_.size(); ++i) out.units_[i] = le_u32(blob, 4 + 4 * i);
    out.normalized_.assign(blob.substr(4 + trie_bytes));
    if (const std::size_t bad = invalid_utf8_at(out.normalized_); bad != std::string::npos)
      fail(ErrorCode::kCharsmapInvalidUtf8, fmt::format("the normalized strings are not UTF-8 (byte {} of them)", bad));
    check_reachable(out.units_, out.normalized_);
    return out;
  });
}

template <typename OnLeaf>
void PrecompiledCharsmap::common_prefix_search(std::string_view key, OnLeaf&& on_leaf) const {
  // DoubleArray::common_prefix_search; parse() checked every read it can make.
  std::uint64_t node = offset(units_[0]);
  for (std::size_t i = 0; i < key.size(); ++i) {
    const auto c = static_cast<unsigned char>(key[i]);
    if (c == 0) return;
    node ^= c;
    const std::uint64_t unit = units_[node];
    if (label(unit) != c) return;
    node ^= offset(unit);
    if (has_leaf(unit) && !on_leaf(i + 1, replacement_at(value(units_[node])))) return;
  }
}

std::string_view PrecompiledCharsmap::replacement_at(std::size_t at) const {
  const std::string_view strings(normalized_);
  const std::size_t end = strings.find('\0', at);
  return strings.substr(at, (end == std::string_view::npos ? strings.size() : end) - at);
}

std::optional<std::string_view> PrecompiledCharsmap::transform(std::string_view chunk) const {
  std::optional<std::string_view> first;
  common_prefix_search(chunk, [&](std::size_t, std::string_view replacement) {
    first = replacement;
    return false;
  });
  return first;
}

std::size_t PrecompiledCharsmap::longest_match(std::string_view text, std::string_view& replacement) const {
  std::size_t longest = 0;
  common_prefix_search(text, [&](std::size_t length, std::string_view r) {
    longest = length;
    replacement = r;
    return true;
  });
  return longest;
}
}  // namespace memfit::tokenizer
