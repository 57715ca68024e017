// memfit/tokenizer/precompiled_charsmap.h — SentencePiece's compiled normalization rules, the
// `precompiled_charsmap` of a tokenizer.json "Precompiled" normalizer and of a tokenizer.model's
// normalizer_spec: a little-endian uint32 trie size in bytes, the Darts-clone double-array trie
// (uint32 units) over the UTF-8 bytes of the source strings, then the replacement strings, each
// ended by a NUL. The semantics follow the Rust crate `spm_precompiled` 0.1.4 (src/lib.rs), which
// the `tokenizers` library uses; unlike that crate, a hostile blob is rejected when it is read
// (every unit a lookup can reach is checked once), so no lookup can go out of bounds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/error.h"

namespace memfit::tokenizer {

class PrecompiledCharsmap {
 public:
  // The raw blob (base64-decoded). Errors: kCharsmapTruncated, kCharsmapTrieSize,
  // kCharsmapOutOfBounds, kCharsmapInvalidUtf8, each naming the offset or unit at fault.
  static Result<PrecompiledCharsmap> parse(std::string_view blob);

  // spm_precompiled's Precompiled::transform: the replacement of the SHORTEST prefix of `chunk`
  // the trie holds (the crate takes common_prefix_search's first result), standing for the whole
  // chunk; nullopt when no prefix matches. A NUL byte in `chunk` ends the search.
  std::optional<std::string_view> transform(std::string_view chunk) const;

  // sentencepiece's own rule (normalizer.cc, Normalizer::NormalizePrefix): the LONGEST prefix of
  // `text` the trie holds; its length in bytes (0 when none) and its replacement.
  std::size_t longest_match(std::string_view text, std::string_view& replacement) const;

  std::size_t trie_units() const { return units_.size(); }

 private:
  // Walks `key` down the trie (stopping at a NUL byte, as spm_precompiled does), calling
  // on_leaf(prefix length, replacement) for each prefix that has one until it returns false.
  template <typename OnLeaf>
  void common_prefix_search(std::string_view key, OnLeaf&& on_leaf) const;
  std::string_view replacement_at(std::size_t offset) const;

  std::vector<std::uint32_t> units_;
  std::string normalized_;
};


}  // namespace memfit::tokenizer
