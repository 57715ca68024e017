#include "memfit/text/text_api.h"

#include <functional>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

#include "../api/api_common.h"  // error_reply
#include "memfit/error.h"
#include "memfit/text/portable_text_backend.h"
#include "memfit/tokenizer/tokenizer.h"

namespace memfit::text {
namespace {

using Json = nlohmann::json;
using api::error_reply;

// The last tokenizer read, by the hash and size of its file: reading a tokenizer.json of
// several MB costs far more than tokenizing a prompt.
struct Cache {
  std::mutex mutex;
  std::size_t hash = 0, size = 0;
  std::optional<tokenizer::Tokenizer> tokenizer;
};

Cache& cache_instance() {
  static Cache cache;
  return cache;
}

Result<tokenizer::Tokenizer> last_tokenizer() {
  Cache& cache = cache_instance();
  std::lock_guard<std::mutex> lock(cache.mutex);
  if (!cache.tokenizer) return Error(ErrorCode::kInvalidArgument, "tokenize_again: no tokenizer.json was read yet (call tokenize first)");
  return *cache.tokenizer;
}

Result<tokenizer::Tokenizer> cached_tokenizer(const std::string& tokenizer_json) {
  Cache& cache = cache_instance();
  const std::size_t hash = std::hash<std::string>{}(tokenizer_json);
  std::lock_guard<std::mutex> lock(cache.mutex);
  if (cache.tokenizer && cache.hash == hash && cache.size == tokenizer_json.size()) return *cache.tokenizer;
  Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_json(tokenizer_json, portable_text_backend());
  if (!tok.ok()) return tok;
  cache.tokenizer = tok.value();
  cache.hash = hash;
  cache.size = tokenizer_json.size();
  return tok;
}

std::string encode_reply(const Result<tokenizer::Tokenizer>& tok, const std::string& text) {
  const Result<std::string> reply = capture([&]() -> std::string {
    if (!tok.ok()) throw tok.error();
    const Result<tokenizer::Encoding> enc = tok->encode(text, true);
    if (!enc.ok()) throw enc.error();
    Json out;
    out["ids"] = enc->ids;
    out["count"] = enc->ids.size();
    return out.dump();
  });
  return reply.ok() ? reply.value() : error_reply(reply.error());
}

}  // namespace

std::string tokenize(const std::string& tokenizer_json, const std::string& text) {
  return encode_reply(cached_tokenizer(tokenizer_json), text);
}

std::string tokenize_again(const std::string& text) {
  return encode_reply(last_tokenizer(), text);
}

}  // namespace memfit::text
