// core/tokenizer/components.h — the five kinds of pipeline component (`tokenizers`' Normalizer,
// PreTokenizer, Model, PostProcessor, Decoder) and what they pass between them. Each kind has one
// file and a registry by the JSON's "type" (normalizers.cpp, pre_tokenizers.cpp, models: bpe.cpp
// wordpiece.cpp unigram.cpp, post_processors.cpp, decoders.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "memfit/tokenizer/tokenizer.h"
#include "unicode.h"

namespace memfit::tokenizer {

using json = nlohmann::json;

// Where a component sits in the file, for errors ("pre_tokenizer.pretokenizers[1]"), and the
// backend it may compile regexes with.
struct BuildContext {
  std::string source;  // "tokenizer.json"
  std::string path;    // "pre_tokenizer.pretokenizers[1]"
  std::shared_ptr<const TextBackend> backend;
  BuildContext at(const std::string& child) const { return {source, path + "." + child, backend}; }
  BuildContext index(std::size_t i) const { return {source, path + "[" + std::to_string(i) + "]", backend}; }
  [[noreturn]] void fail(ErrorCode code, const std::string& what) const;
};

// One piece of the text on its way to the model: `tokenizers`' Split of a PreTokenizedString.
struct Split {
  std::string text;
  // The leading bytes of `text` that come from the input's first character (`tokenizers`'
  // alignments: a slice starting inside them has original offset 0, which Metaspace's prepend
  // "first" asks for); 0 when the piece does not start the input.
  std::size_t origin_len = 0;
  std::optional<TokenId> added;    // an added token, already tokenized
};

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& s) const = 0;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Splits each piece of `splits` that is not an added token further (empty pieces dropped).
  virtual void pre_tokenize(std::vector<Split>& splits) const = 0;
};

class Model {
 public:
  virtual ~Model() = default;
  virtual void tokenize(std::string_view word, Encoding& out) const = 0;
  virtual std::optional<TokenId> token_to_id(std::string_view token) const = 0;
  virtual const std::string* id_to_token(TokenId id) const = 0;
  virtual std::size_t vocab_size() const = 0;  // largest id + 1
  // Model::get_vocab_size (the number of entries): where added tokens not in the model start.
  virtual std::size_t vocab_entries() const = 0;
};

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  virtual void process(Encoding& encoding, bool add_special_tokens) const = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  // `tokenizers`' decode_chain: tokens in, tokens out; decode() joins the last list.
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

std::unique_ptr<Normalizer> make_normalizer(const json& j, const BuildContext& ctx);
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const json& j, const BuildContext& ctx);
std::unique_ptr<Model> make_model(const json& j, const BuildContext& ctx);
std::unique_ptr<PostProcessor> make_post_processor(const json& j, const BuildContext& ctx);
std::unique_ptr<Decoder> make_decoder(const json& j, const BuildContext& ctx);

// The byte-level BPE model of GPT-2's vocab.json + merges.txt (bpe.cpp).
std::unique_ptr<Model> make_bpe_from_files(const json& vocab, std::string_view merges_txt, const BuildContext& ctx);

// A registry entry: "type" name → factory.
template <typename T>
struct Factory {
  const char* type;
  std::unique_ptr<T> (*make)(const json& j, const BuildContext& ctx);
};

// j["type"] looked up in `table`; an unknown or missing type names the path and the known types.
template <typename T, std::size_t N>
std::unique_ptr<T> make_by_type(const json& j, const BuildContext& ctx, const Factory<T> (&table)[N],
                                const char* kind);
std::string type_of(const json& j, const BuildContext& ctx);
[[noreturn]] void unknown_type(const BuildContext& ctx, const std::string& type, const char* kind,
                               const std::vector<std::string>& known);

template <typename T, std::size_t N>
std::unique_ptr<T> make_by_type(const json& j, const BuildContext& ctx, const Factory<T> (&table)[N],
                                const char* kind) {
  const std::string type = type_of(j, ctx);
  for (const Factory<T>& f : table)
    if (type == f.type) return f.make(j, ctx);
  std::vector<std::string> known;
  for (const Factory<T>& f : table) known.emplace_back(f.type);
  unknown_type(ctx, type, kind, known);
}

}  // namespace memfit::tokenizer
