// memfit/tokenizer/tokenizer.h — text to token ids and back, as Hugging Face `tokenizers` does it.
//
// One Tokenizer value holds the pipeline a tokenizer.json describes — added/special tokens split
// out first, normalizer, pre-tokenizer, model (BPE, WordPiece, Unigram), post-processor, decoder —
// each a small component chosen by its JSON "type" (core/tokenizer/). Core reads no files: the
// caller passes the text of tokenizer.json (or GPT-2's vocab.json + merges.txt, or the bytes of a
// SentencePiece tokenizer.model) and a TextBackend
// (regexes, Unicode normalization and categories; natively memfit::text::native_text_backend()).
// A Tokenizer is immutable after loading, cheap to copy and safe to use from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/error.h"
#include "memfit/tokenizer/text_backend.h"

namespace memfit::tokenizer {

using TokenId = std::uint32_t;

struct Encoding {
  std::vector<TokenId> ids;
  std::vector<std::string> tokens;  // the token strings, as `tokenizers`' Encoding.tokens
};

// One entry of tokenizer.json's "added_tokens".
struct AddedToken {
  TokenId id = 0;
  std::string content;
  bool single_word = false, lstrip = false, rstrip = false, normalized = true, special = false;
};

struct TokenizerImpl;

class Tokenizer {
 public:
  // `json_text` is a tokenizer.json; `source` names it in error messages. Errors name the
  // component and where it is: "tokenizer.json: pre_tokenizer.pretokenizers[1].type 'Foo' ...".
  static Result<Tokenizer> from_json(std::string_view json_text, std::shared_ptr<const TextBackend> backend,
                                     const std::string& source = "tokenizer.json");
  // GPT-2's files (vocab.json + merges.txt) as transformers' GPT2Tokenizer reads them: byte-level
  // BPE with GPT-2's pattern, no prefix space, '<|endoftext|>' special when the vocabulary has it.
  static Result<Tokenizer> from_gpt2_files(std::string_view vocab_json, std::string_view merges_txt,
                                           std::shared_ptr<const TextBackend> backend);

  // A SentencePiece tokenizer.model (its serialized ModelProto, memfit/tokenizer/sentencepiece_model.h)
  // as the pipeline transformers' convert_slow_tokenizer builds from it: Unigram or BPE with
  // byte fallback, the Precompiled normalizer, metaspace handling, bos/eos as LlamaTokenizer (or,
  // for a T5 tokenizer_class, T5Tokenizer) adds them. `tokenizer_config_json` may be empty; its
  // add_bos_token / add_eos_token / tokenizer_class are read. The choices: docs/tokenizer.md.
  static Result<Tokenizer> from_sentencepiece(std::string_view model_proto, std::string_view tokenizer_config_json,
                                              std::shared_ptr<const TextBackend> backend,
                                              const std::string& source = "tokenizer.model");

  // tokenizer.encode(text, add_special_tokens=…): ids and token strings. Errors: text not UTF-8.
  Result<Encoding> encode(std::string_view text, bool add_special_tokens = true) const;
  // tokenizer.decode(ids, skip_special_tokens=…). Unlike `tokenizers` (which drops unknown ids
  // silently) an id with no token is an error naming it. Any prefix of a sequence decodes, so a
  // streaming caller decodes ids[0..n] and prints what was added since the last call.
  Result<std::string> decode(const std::vector<TokenId>& ids, bool skip_special_tokens = false) const;

  std::optional<TokenId> token_to_id(std::string_view token) const;  // added tokens first, then the model
  std::optional<std::string> id_to_token(TokenId id) const;
  bool is_special(TokenId id) const;                  // an added token marked "special"
  std::size_t vocab_size() const;                      // the largest id + 1
  const std::vector<AddedToken>& added_tokens() const;

 private:
  explicit Tokenizer(std::shared_ptr<const TokenizerImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const TokenizerImpl> impl_;
  friend struct TokenizerImpl;
};

// Text as ids arrive (`tokenizers`' DecodeStream, step_decode_stream): step(id) returns the text
// that id completes, or nullopt while it is not whole yet (an incomplete UTF-8 byte sequence, or a
// decoder that needs the next token). The chunks joined equal decode() of all the ids, up to a
// trailing incomplete character. For `memfit generate`'s streaming output.
class DecodeStream {
 public:
  DecodeStream(Tokenizer tokenizer, bool skip_special_tokens)
      : tokenizer_(std::move(tokenizer)), skip_special_(skip_special_tokens) {}
  Result<std::optional<std::string>> step(TokenId id);

 private:
  Tokenizer tokenizer_;
  bool skip_special_;
  std::vector<TokenId> ids_;
  std::string prefix_;
  std::size_t prefix_index_ = 0;
};

// bos_token / eos_token (a string or an AddedToken object {"content": …}) of a
// tokenizer_config.json, as ids of `tok`: absent keys, nulls or tokens it does not know are nullopt.
struct SpecialTokenIds {
  std::optional<TokenId> bos, eos, unk, pad;
};
Result<SpecialTokenIds> special_token_ids(const Tokenizer& tok, std::string_view tokenizer_config_json);

}  // namespace memfit::tokenizer
