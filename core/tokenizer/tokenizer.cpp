// The Tokenizer value: tokenizer.json read once into its pipeline, and encode/decode through it
// (`tokenizers`' tokenizer/mod.rs: encode_single_sequence, post_process, decode).
#include "memfit/tokenizer/tokenizer.h"

#include <fmt/format.h>

#include "added_vocabulary.h"
#include "byte_level.h"
#include "json_fields.h"
#include "tokenizer_build.h"

namespace memfit::tokenizer {

struct TokenizerImpl {
  std::shared_ptr<const TextBackend> backend;
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<Model> model;
  std::unique_ptr<PostProcessor> post_processor;
  std::unique_ptr<Decoder> decoder;
  std::unique_ptr<AddedVocabulary> added;

  static Tokenizer make(std::shared_ptr<const TokenizerImpl> impl) { return Tokenizer(std::move(impl)); }
  Encoding encode(std::string_view text, bool add_special_tokens) const;
  std::string decode(const std::vector<TokenId>& ids, bool skip_special_tokens) const;
};

namespace {

std::vector<AddedToken> read_added_tokens(const json& j, const BuildContext& ctx) {
  std::vector<AddedToken> out;
  if (j.is_null()) return out;
  if (!j.is_array()) ctx.fail(ErrorCode::kWrongType, fmt::format("must be a list, got {}", json_type_name(j)));
  for (std::size_t i = 0; i < j.size(); ++i) {
    const BuildContext at = ctx.index(i);
    const json& t = j[i];
    AddedToken a;
    a.id = token_id(field(t, "id", at), at.at("id"), "id");
    a.content = string_field(t, "content", at);
    a.single_word = bool_or(t, "single_word", false, at);
    a.lstrip = bool_or(t, "lstrip", false, at);
    a.rstrip = bool_or(t, "rstrip", false, at);
    a.special = bool_or(t, "special", false, at);
    a.normalized = bool_or(t, "normalized", !a.special, at);
    out.push_back(std::move(a));
  }
  return out;
}

// root[key] built by `make` at path `key`, or null when absent or null.
template <typename T>
std::unique_ptr<T> optional_component(const json& root, const char* key, const BuildContext& root_ctx,
                                      std::unique_ptr<T> (*make)(const json&, const BuildContext&)) {
  if (!has_field(root, key)) return nullptr;
  return make(root[key], BuildContext{root_ctx.source, key, root_ctx.backend});
}

// The ids `tokenizers` gives added tokens when it loads a file (AddedVocabulary::add_tokens, in
// file order): a content the model (or an earlier added token) knows keeps that id; any other
// takes the next id after the model's vocabulary, whatever the file says (it only warns).
void assign_ids(std::vector<AddedToken>& added, const Model& model) {
  std::unordered_map<std::string, TokenId> seen;
  auto next = static_cast<TokenId>(model.vocab_entries());
  std::vector<AddedToken> kept;
  for (AddedToken& t : added) {
    if (t.content.empty()) continue;
    if (const auto it = seen.find(t.content); it != seen.end()) t.id = it->second;
    else if (const auto id = model.token_to_id(t.content)) t.id = *id;
    else t.id = next++;
    seen[t.content] = t.id;
    kept.push_back(std::move(t));
  }
  added = std::move(kept);
}

Tokenizer build(TokenizerImpl impl, std::vector<AddedToken> added) {
  assign_ids(added, *impl.model);
  impl.added = std::make_unique<AddedVocabulary>(std::move(added), impl.normalizer.get(), *impl.backend);
  return TokenizerImpl::make(std::make_shared<const TokenizerImpl>(std::move(impl)));
}

}  // namespace

Tokenizer tokenizer_from_root(const json& root, std::shared_ptr<const TextBackend> backend, const std::string& source) {
  const BuildContext root_ctx{source, "", backend};
  if (!root.is_object()) root_ctx.fail(ErrorCode::kInvalidJson, fmt::format("expected an object, got {}", json_type_name(root)));
  TokenizerImpl impl;
  impl.backend = backend;
  impl.normalizer = optional_component(root, "normalizer", root_ctx, make_normalizer);
  impl.pre_tokenizer = optional_component(root, "pre_tokenizer", root_ctx, make_pre_tokenizer);
  impl.model = make_model(field(root, "model", root_ctx), BuildContext{source, "model", backend});
  impl.post_processor = optional_component(root, "post_processor", root_ctx, make_post_processor);
  impl.decoder = optional_component(root, "decoder", root_ctx, make_decoder);
  std::vector<AddedToken> added;
  if (root.contains("added_tokens")) added = read_added_tokens(root["added_tokens"], BuildContext{source, "added_tokens", backend});
  return build(std::move(impl), std::move(added));
}

Result<Tokenizer> Tokenizer::from_json(std::string_view json_text, std::shared_ptr<const TextBackend> backend,
                                       const std::string& source) {
  return capture([&]() -> Tokenizer { return tokenizer_from_root(parse_json(json_text, source), std::move(backend), source); });
}

Result<Tokenizer> Tokenizer::from_gpt2_files(std::string_view vocab_json, std::string_view merges_txt,
                                             std::shared_ptr<const TextBackend> backend) {
  return capture([&]() -> Tokenizer {
    const json vocab = parse_json(vocab_json, "vocab.json");
    const BuildContext ctx{"vocab.json", "", backend};
    // transformers' GPT2Tokenizer (and its converted fast tokenizer): byte-level with GPT-2's
    // pattern, no prefix space; '<|endoftext|>' is unk/bos/eos and split out as a special token.
    TokenizerImpl impl;
    impl.backend = backend;
    impl.pre_tokenizer = make_pre_tokenizer(json{{"type", "ByteLevel"}, {"add_prefix_space", false}}, ctx);
    impl.model = make_bpe_from_files(vocab, merges_txt, ctx);
    impl.decoder = make_decoder(json{{"type", "ByteLevel"}}, ctx);
    std::vector<AddedToken> added;
    if (const auto id = impl.model->token_to_id("<|endoftext|>")) {
      AddedToken eot;
      eot.id = *id;
      eot.content = "<|endoftext|>";
      eot.special = true;
      eot.normalized = false;
      added.push_back(eot);
    }
    return build(std::move(impl), std::move(added));
  });
}

Encoding TokenizerImpl::encode(std::string_view text, bool add_special_tokens) const {
  std::vector<Split> splits = added->extract_and_normalize(text, normalizer.get());
  if (pre_tokenizer) pre_tokenizer->pre_tokenize(splits);
  Encoding out;
  for (const Split& s : splits) {
    if (s.added) {
      out.ids.push_back(*s.added);
      out.tokens.push_back(s.text);
    } else {
      model->tokenize(s.text, out);
    }
  }
  if (post_processor) post_processor->process(out, add_special_tokens);
  return out;
}

std::string TokenizerImpl::decode(const std::vector<TokenId>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const TokenId id = ids[i];
    if (const AddedToken* t = added->by_id(id)) {
      if (!(skip_special_tokens && t->special)) tokens.push_back(t->content);
      continue;
    }
    const std::string* token = model->id_to_token(id);
    if (!token)
      throw Error(ErrorCode::kInvalidValue, fmt::format("decode: ids[{}] = {} is not a token id (the vocabulary has ids 0..{})",
                                                        i, id, model->vocab_size() == 0 ? 0 : model->vocab_size() - 1));
    // skip_special_tokens also drops a model token whose text is a special added token's
    if (skip_special_tokens) {
      const AddedToken* t = added->by_content(*token);
      if (t && t->special) continue;
    }
    tokens.push_back(*token);
  }
  if (!decoder) {
    std::string joined;
    for (std::size_t i = 0; i < tokens.size(); ++i) joined += (i ? " " : "") + tokens[i];
    return joined;
  }
  decoder->decode_chain(tokens);
  std::string joined;
  for (const std::string& t : tokens) joined += t;
  return joined;
}

Result<Encoding> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  return capture([&]() -> Encoding {
    const std::size_t bad = invalid_utf8_at(text);
    if (bad != std::string_view::npos)
      throw Error(ErrorCode::kInvalidArgument, fmt::format("encode: the text is not valid UTF-8 (byte {})", bad));
    return impl_->encode(text, add_special_tokens);
  });
}

Result<std::string> Tokenizer::decode(const std::vector<TokenId>& ids, bool skip_special_tokens) const {
  return capture([&]() -> std::string { return impl_->decode(ids, skip_special_tokens); });
}

std::optional<TokenId> Tokenizer::token_to_id(std::string_view token) const {
  if (const AddedToken* t = impl_->added->by_content(token)) return t->id;
  return impl_->model->token_to_id(token);
}

std::optional<std::string> Tokenizer::id_to_token(TokenId id) const {
  if (const AddedToken* t = impl_->added->by_id(id)) return t->content;
  if (const std::string* s = impl_->model->id_to_token(id)) return *s;
  return std::nullopt;
}

bool Tokenizer::is_special(TokenId id) const {
  const AddedToken* t = impl_->added->by_id(id);
  return t && t->special;
}

std::size_t Tokenizer::vocab_size() const {
  std::size_t n = impl_->model->vocab_size();
  for (const AddedToken& t : impl_->added->tokens()) n = std::max<std::size_t>(n, std::size_t{t.id} + 1);
  return n;
}

const std::vector<AddedToken>& Tokenizer::added_tokens() const { return impl_->added->tokens(); }

Result<SpecialTokenIds> special_token_ids(const Tokenizer& tok, std::string_view tokenizer_config_json) {
  return capture([&]() -> SpecialTokenIds {
    const json config = parse_json(tokenizer_config_json, "tokenizer_config.json");
    const auto id_of = [&](const char* key) -> std::optional<TokenId> {
      if (!config.is_object() || !config.contains(key)) return std::nullopt;
      const json& v = config[key];
      if (v.is_string()) return tok.token_to_id(v.get<std::string>());
      if (v.is_object() && v.contains("content") && v["content"].is_string()) return tok.token_to_id(v["content"].get<std::string>());
      return std::nullopt;
    };
    return {id_of("bos_token"), id_of("eos_token"), id_of("unk_token"), id_of("pad_token")};
  });
}

}  // namespace memfit::tokenizer
