// core/tokenizer/vocab.h — a model's token ↔ id table, shared by BPE, WordPiece and Unigram.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "components.h"

namespace memfit::tokenizer {

class Vocab {
 public:
  // A JSON object token → id (BPE, WordPiece) at ctx.path.
  static Vocab from_object(const json& j, const BuildContext& ctx);
  void add(std::string token, TokenId id);  // a later duplicate id replaces the earlier token
  std::optional<TokenId> find(std::string_view token) const {
    const auto it = ids_.find(std::string(token));
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }
  const std::unordered_map<std::string, TokenId>& ids() const { return ids_; }
  const std::string* token(TokenId id) const {
    return id < tokens_.size() && present_[id] ? &tokens_[id] : nullptr;
  }
  std::size_t size() const { return tokens_.size(); }  // largest id + 1

 private:
  std::unordered_map<std::string, TokenId> ids_;
  std::vector<std::string> tokens_;
  std::vector<bool> present_;
};

}  // namespace memfit::tokenizer
