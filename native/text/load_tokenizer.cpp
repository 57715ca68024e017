#include "load_tokenizer.h"

#include <filesystem>

#include <fmt/format.h>

#include "failure.h"
#include "file_reader.h"
#include "native_text_backend.h"

namespace memfit::text {
namespace {

namespace fs = std::filesystem;

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// A SentencePiece model, with the tokenizer_config.json beside it when there is one (its
// add_bos_token / add_eos_token / tokenizer_class choose the special tokens, as in transformers).
tokenizer::Tokenizer load_sentencepiece(const fs::path& model) {
  const fs::path config = model.parent_path() / "tokenizer_config.json";
  const std::string config_text = is_file(config) ? io::read_file(config.string()) : std::string();
  return value_or_raise(
      tokenizer::Tokenizer::from_sentencepiece(io::read_file(model.string()), config_text, native_text_backend(), model.string()));
}

}  // namespace

tokenizer::Tokenizer load_tokenizer(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (is_file(p)) {
    if (p.extension() == ".model") return load_sentencepiece(p);
    return value_or_raise(tokenizer::Tokenizer::from_json(io::read_file(path), native_text_backend(), path));
  }
  if (!fs::is_directory(p, ec)) throw Failure{FailureKind::kFile, fmt::format("{}: no such file or folder", path)};
  if (is_file(p / "tokenizer.json")) {
    const std::string file = (p / "tokenizer.json").string();
    return value_or_raise(tokenizer::Tokenizer::from_json(io::read_file(file), native_text_backend(), file));
  }
  if (is_file(p / "vocab.json") && is_file(p / "merges.txt")) {
    return value_or_raise(tokenizer::Tokenizer::from_gpt2_files(io::read_file((p / "vocab.json").string()),
                                                                io::read_file((p / "merges.txt").string()),
                                                                native_text_backend()));
  }
  if (is_file(p / "tokenizer.model")) return load_sentencepiece(p / "tokenizer.model");
  throw Failure{FailureKind::kFile,
                fmt::format("{}: no tokenizer.json, no vocab.json + merges.txt, and no tokenizer.model", path)};
}

}  // namespace memfit::text
