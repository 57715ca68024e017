// The WordPiece model: `tokenizers`' models/wordpiece/mod.rs (greedy longest-match-first).
#include <fmt/format.h>

#include "json_fields.h"
#include "vocab.h"

namespace memfit::tokenizer {
namespace {

class WordPiece final : public Model {
 public:
  WordPiece(const json& j, const BuildContext& ctx)
      : vocab_(Vocab::from_object(field(j, "vocab", ctx), ctx.at("vocab"))),
        unk_(string_or(j, "unk_token", "[UNK]", ctx)),
        prefix_(string_or(j, "continuing_subword_prefix", "##", ctx)),
        max_chars_(uint_or(j, "max_input_chars_per_word", 100, ctx)) {}

  void tokenize(std::string_view word, Encoding& out) const override {
    std::size_t chars = 0;
    for (std::size_t i = 0; i < word.size(); ++i) chars += (static_cast<unsigned char>(word[i]) & 0xC0) != 0x80;
    if (chars > max_chars_) return emit_unk(out);
    Encoding pieces;
    std::string sub;
    for (std::size_t start = 0; start < word.size();) {
      std::size_t end = word.size();
      std::optional<TokenId> found;
      while (start < end) {
        sub.assign(start > 0 ? prefix_ : std::string());
        sub.append(word.substr(start, end - start));
        if ((found = vocab_.find(sub))) break;
        do { --end; } while (end > start && (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80);
      }
      if (!found) return emit_unk(out);
      pieces.ids.push_back(*found);
      pieces.tokens.push_back(sub);
      start = end;
    }
    out.ids.insert(out.ids.end(), pieces.ids.begin(), pieces.ids.end());
    out.tokens.insert(out.tokens.end(), pieces.tokens.begin(), pieces.tokens.end());
  }
  std::optional<TokenId> token_to_id(std::string_view token) const override { return vocab_.find(token); }
  const std::string* id_to_token(TokenId id) const override { return vocab_.token(id); }
  std::size_t vocab_size() const override { return vocab_.size(); }
  std::size_t vocab_entries() const override { return vocab_.ids().size(); }

 private:
  void emit_unk(Encoding& out) const {
    const auto id = vocab_.find(unk_);
    if (!id) throw Error(ErrorCode::kInvalidValue, fmt::format("WordPiece: unk_token '{}' is not in the vocabulary", unk_));
    out.ids.push_back(*id);
    out.tokens.push_back(unk_);
  }

  Vocab vocab_;
  std::string unk_, prefix_;
  std::uint64_t max_chars_;
};

}  // namespace

std::unique_ptr<Model> make_wordpiece(const json& j, const BuildContext& ctx) { return std::make_unique<WordPiece>(j, ctx); }

}  // namespace memfit::tokenizer
