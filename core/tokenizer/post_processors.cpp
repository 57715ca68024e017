// Post-processors: `tokenizers`' processors/ (template.rs, roberta.rs, bert.rs, sequence.rs) and
// pre_tokenizers/byte_level.rs (offsets only: no change to ids or tokens).
#include <fmt/format.h>

#include "json_fields.h"

namespace memfit::tokenizer {
namespace {

struct SpecialToken {
  std::vector<TokenId> ids;
  std::vector<std::string> tokens;
};

// One piece of a template: a special token, or the sequence.
struct TemplatePiece {
  bool is_sequence = false;
  SpecialToken special;
};

void append(Encoding& out, const SpecialToken& t) {
  out.ids.insert(out.ids.end(), t.ids.begin(), t.ids.end());
  out.tokens.insert(out.tokens.end(), t.tokens.begin(), t.tokens.end());
}

class Template final : public PostProcessor {
 public:
  Template(const json& j, const BuildContext& ctx) {
    std::unordered_map<std::string, SpecialToken> specials;
    if (has_field(j, "special_tokens")) {
      const BuildContext sctx = ctx.at("special_tokens");
      const json& s = j["special_tokens"];
      if (!s.is_object()) sctx.fail(ErrorCode::kWrongType, "must be an object");
      for (const auto& [name, v] : s.items()) {
        const BuildContext tctx = sctx.at(name);
        const json& ids = field(v, "ids", tctx);
        const json& tokens = field(v, "tokens", tctx);
        if (!ids.is_array() || !tokens.is_array() || ids.size() != tokens.size())
          tctx.fail(ErrorCode::kInvalidValue, "ids and tokens must be lists of the same length");
        SpecialToken t;
        for (std::size_t i = 0; i < ids.size(); ++i) {
          t.ids.push_back(token_id(ids[i], tctx, "ids"));
          if (!tokens[i].is_string()) tctx.fail(ErrorCode::kWrongType, "tokens must be strings");
          t.tokens.push_back(tokens[i].get<std::string>());
        }
        specials[name] = std::move(t);
      }
    }
    const BuildContext single = ctx.at("single");
    const json& items = field(j, "single", ctx);
    if (!items.is_array()) single.fail(ErrorCode::kWrongType, "must be a list");
    for (std::size_t i = 0; i < items.size(); ++i) {
      const json& p = items[i];
      const BuildContext pctx = single.index(i);
      TemplatePiece piece;
      if (p.is_object() && p.contains("Sequence")) {
        piece.is_sequence = true;
      } else if (p.is_object() && p.contains("SpecialToken")) {
        const std::string id = string_field(p["SpecialToken"], "id", pctx.at("SpecialToken"));
        const auto it = specials.find(id);
        if (it == specials.end())
          pctx.fail(ErrorCode::kInvalidValue, fmt::format("special token '{}' is not in special_tokens", id));
        piece.special = it->second;
      } else {
        pctx.fail(ErrorCode::kInvalidValue, fmt::format("must be {{\"Sequence\": …}} or {{\"SpecialToken\": …}}, got {}", p.dump()));
      }
      single_.push_back(std::move(piece));
    }
  }
  void process(Encoding& e, bool add_special_tokens) const override {
    if (!add_special_tokens) return;
    Encoding out;
    for (const TemplatePiece& p : single_) {
      if (p.is_sequence) append(out, {e.ids, e.tokens});
      else append(out, p.special);
    }
    e = std::move(out);
  }

 private:
  std::vector<TemplatePiece> single_;
};

// RobertaProcessing and BertProcessing: cls + sequence + sep, each given as ["token", id].
class ClsSep final : public PostProcessor {
 public:
  ClsSep(const json& j, const BuildContext& ctx) : cls_(pair(j, "cls", ctx)), sep_(pair(j, "sep", ctx)) {}
  void process(Encoding& e, bool add_special_tokens) const override {
    if (!add_special_tokens) return;
    Encoding out;
    append(out, cls_);
    append(out, {e.ids, e.tokens});
    append(out, sep_);
    e = std::move(out);
  }

 private:
  static SpecialToken pair(const json& j, const char* key, const BuildContext& ctx) {
    const json& v = field(j, key, ctx);
    if (!v.is_array() || v.size() != 2 || !v[0].is_string())
      ctx.at(key).fail(ErrorCode::kInvalidValue, fmt::format("must be [\"token\", id], got {}", v.dump()));
    return {{token_id(v[1], ctx.at(key), key)}, {v[0].get<std::string>()}};
  }
  SpecialToken cls_, sep_;
};

class Nothing final : public PostProcessor {
 public:
  void process(Encoding&, bool) const override {}
};

class Sequence final : public PostProcessor {
 public:
  Sequence(const json& j, const BuildContext& ctx) : parts_(make_list(j, "processors", ctx, make_post_processor)) {}
  void process(Encoding& e, bool add_special_tokens) const override {
    for (const auto& p : parts_) p->process(e, add_special_tokens);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> parts_;
};

const Factory<PostProcessor> kPostProcessors[] = {
    {"TemplateProcessing", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<PostProcessor> { return std::make_unique<Template>(j, ctx); }},
    {"RobertaProcessing", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<PostProcessor> { return std::make_unique<ClsSep>(j, ctx); }},
    {"BertProcessing", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<PostProcessor> { return std::make_unique<ClsSep>(j, ctx); }},
    {"ByteLevel", [](const json&, const BuildContext&) -> std::unique_ptr<PostProcessor> { return std::make_unique<Nothing>(); }},
    {"Sequence", [](const json& j, const BuildContext& ctx) -> std::unique_ptr<PostProcessor> { return std::make_unique<Sequence>(j, ctx); }},
};

}  // namespace

std::unique_ptr<PostProcessor> make_post_processor(const json& j, const BuildContext& ctx) {
  return make_by_type(j, ctx, kPostProcessors, "post-processor");
}

}  // namespace memfit::tokenizer
