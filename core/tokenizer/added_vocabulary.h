// core/tokenizer/added_vocabulary.h — tokenizer.json's "added_tokens", split out of the text before
// anything else (`tokenizers`' tokenizer/added_vocabulary.rs): tokens with normalized=false are
// found in the raw text, the others in each piece after the normalizer, leftmost-longest, with the
// single_word / lstrip / rstrip rules.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "components.h"

namespace memfit::tokenizer {

class AddedVocabulary {
 public:
  AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer, const TextBackend& backend);
  // The input as splits (added tokens marked), each non-added piece normalized.
  std::vector<Split> extract_and_normalize(std::string_view text, const Normalizer* normalizer) const;
  const std::vector<AddedToken>& tokens() const { return tokens_; }
  const AddedToken* by_id(TokenId id) const;
  const AddedToken* by_content(std::string_view content) const;

 private:
  // A byte trie of token contents: leftmost-longest matching (DoubleArrayAhoCorasick's
  // MatchKind::LeftmostLongest).
  struct Trie {
    struct Node {
      std::unordered_map<unsigned char, std::uint32_t> next;
      int token = -1;  // index into tokens_
    };
    std::vector<Node> nodes{1};
    void insert(const std::string& pattern, int token);
    // The longest token that starts at `at`: its index and length, or -1.
    int longest_at(std::string_view text, std::size_t at, std::size_t* length) const;
  };
  void split(Split piece, const Trie& trie, std::vector<Split>& out) const;

  std::vector<AddedToken> tokens_;
  std::unordered_map<TokenId, std::size_t> by_id_;
  std::unordered_map<std::string, std::size_t> by_content_;
  Trie raw_, normalized_;
  bool have_raw_ = false, have_normalized_ = false;
  CharClasses classes_;
};

}  // namespace memfit::tokenizer
