// The Unigram model: `tokenizers`' models/unigram/model.rs (encode_optimized: Viterbi over the
// pieces that start at each character, unknown characters scored min_score - 10, fused).
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "json_fields.h"
#include "vocab.h"

namespace memfit::tokenizer {
namespace {

constexpr double kUnkPenalty = 10.0;

class Unigram final : public Model {
 public:
  Unigram(const json& j, const BuildContext& ctx) : byte_fallback_(bool_or(j, "byte_fallback", false, ctx)) {
    const BuildContext vctx = ctx.at("vocab");
    const json& v = field(j, "vocab", ctx);
    if (!v.is_array()) vctx.fail(ErrorCode::kWrongType, "must be a list of [piece, score]");
    scores_.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      const json& e = v[i];
      if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number())
        vctx.index(i).fail(ErrorCode::kInvalidValue, fmt::format("must be [piece, score], got {}", e.dump()));
      const std::string piece = e[0].get<std::string>();
      scores_.push_back(e[1].get<double>());
      vocab_.add(piece, static_cast<TokenId>(i));  // a repeated piece: the later id, as token_to_ids
      max_piece_ = std::max(max_piece_, piece.size());
    }
    min_score_ = scores_.empty() ? 0.0 : *std::min_element(scores_.begin(), scores_.end());
    if (has_field(j, "unk_id")) {
      unk_id_ = token_id(j["unk_id"], ctx.at("unk_id"), "unk_id");
      if (*unk_id_ >= scores_.size())
        ctx.at("unk_id").fail(ErrorCode::kInvalidValue, fmt::format("{} is past the vocabulary ({} pieces)", *unk_id_, scores_.size()));
    }
  }

  void tokenize(std::string_view s, Encoding& out) const override {
    for (const std::string& piece : encode(s)) {
      if (const auto id = vocab_.find(piece)) {
        out.ids.push_back(*id);
        out.tokens.push_back(piece);
        continue;
      }
      if (byte_fallback_ && emit_bytes(piece, out)) continue;
      if (!unk_id_) throw Error(ErrorCode::kInvalidValue, "Unigram: an unknown piece and no unk_id");
      out.ids.push_back(*unk_id_);
      out.tokens.push_back(piece);  // tokenizers keeps the text as the token of an unknown piece
    }
  }
  std::optional<TokenId> token_to_id(std::string_view token) const override { return vocab_.find(token); }
  const std::string* id_to_token(TokenId id) const override { return vocab_.token(id); }
  std::size_t vocab_size() const override { return vocab_.size(); }
  std::size_t vocab_entries() const override { return scores_.size(); }

 private:
  struct Node {
    TokenId id = 0;
    double score = 0;
    std::optional<std::size_t> starts_at;
  };

  bool emit_bytes(const std::string& piece, Encoding& out) const {
    Encoding bytes;
    for (const char b : piece) {
      const std::string name = fmt::format("<0x{:02X}>", static_cast<unsigned char>(b));
      const auto id = vocab_.find(name);
      if (!id) return false;
      bytes.ids.push_back(*id);
      bytes.tokens.push_back(name);
    }
    out.ids.insert(out.ids.end(), bytes.ids.begin(), bytes.ids.end());
    out.tokens.insert(out.tokens.end(), bytes.tokens.begin(), bytes.tokens.end());
    return true;
  }

  std::vector<std::string> encode(std::string_view s) const {
    if (s.empty()) return {};
    const double unk_score = min_score_ - kUnkPenalty;
    std::vector<Node> best(s.size() + 1);
    std::string key;
    for (std::size_t start = 0; start < s.size();) {
      const double here = best[start].score;
      std::size_t mblen = 0;
      decode_utf8(s, start, &mblen);
      bool has_single = false;
      const std::size_t longest = std::min(max_piece_, s.size() - start);
      for (std::size_t len = 1; len <= longest; ++len) {
        key.assign(s.substr(start, len));
        const auto id = vocab_.find(key);
        if (!id) continue;
        Node& target = best[start + len];
        const double candidate = scores_[*id] + here;
        if (!target.starts_at || candidate > target.score) target = {*id, candidate, start};
        if (len == mblen) has_single = true;
      }
      if (!has_single) {
        if (!unk_id_) throw Error(ErrorCode::kInvalidValue, "Unigram: a character no piece covers and no unk_id");
        Node& target = best[start + mblen];
        const double candidate = unk_score + here;
        if (!target.starts_at || candidate > target.score) target = {*unk_id_, candidate, start};
      }
      start += mblen;
    }
    std::vector<std::string> results, fused;
    for (std::size_t end = s.size(); end > 0;) {
      const Node& node = best[end];
      const std::size_t start = *node.starts_at;
      std::string piece(s.substr(start, end - start));
      if (unk_id_ && node.id == *unk_id_) {  // fuse_unk: consecutive unknowns become one piece
        fused.push_back(std::move(piece));
      } else {
        flush(fused, results);
        results.push_back(std::move(piece));
      }
      end = start;
    }
    flush(fused, results);
    std::reverse(results.begin(), results.end());
    return results;
  }

  static void flush(std::vector<std::string>& fused, std::vector<std::string>& results) {
    if (fused.empty()) return;
    std::string joined;
    for (auto it = fused.rbegin(); it != fused.rend(); ++it) joined += *it;
    results.push_back(std::move(joined));
    fused.clear();
  }

  Vocab vocab_;
  std::vector<double> scores_;
  double min_score_ = 0;
  std::size_t max_piece_ = 0;
  std::optional<TokenId> unk_id_;
  bool byte_fallback_;
};

}  // namespace

std::unique_ptr<Model> make_unigram(const json& j, const BuildContext& ctx) { return std::make_unique<Unigram>(j, ctx); }

}  // namespace memfit::tokenizer
