// core/repo/st_modules.h — a sentence-transformers model's modules (modules.json) and what each
// one needs and holds, as sentence_transformers/models/*.py define them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/repo/repo_kind.h"

namespace memfit::repo::st {

// One entry of modules.json: SentenceTransformer._load_sbert_model reads idx, name, path, type.
struct ModuleEntry {
  std::int64_t idx = 0;
  std::string name;  // the module's key in the model ("0", "1", …)
  std::string path;  // its folder in the repo ("" = the root, "1_Pooling", …)
  std::string type;  // "sentence_transformers.models.Pooling"
  std::string short_type() const;  // "Pooling"; the last component of a custom class path
  bool known() const;              // a sentence_transformers.models class memfit sizes
};

// Throws Error(kInvalidJson / kRepoInvalid) naming modules.json and the entry.
std::vector<ModuleEntry> parse_modules(const std::string& text);

// The files one module still needs, given what has been read.
std::vector<FileNeed> module_needs(const ModuleEntry& m, const RepoFiles& files);

// One module, sized.
struct ModuleSize {
  ModuleEntry entry;
  std::string detail;                    // "mean", "bert", "768 → 256, tanh"
  std::optional<std::uint64_t> parameters, bytes;  // nothing: unknown (an unknown type without weights)
  std::string dtype;
  std::string source;                    // "header", "config", "none"
  // Output width: Transformer: token embeddings (hidden_size); the modules with
  // get_sentence_embedding_dimension(): the sentence embedding's.
  std::optional<std::int64_t> output_dimension;
  bool has_embedding_dimension = false;  // the module defines get_sentence_embedding_dimension()
  std::optional<std::int64_t> max_seq_length;  // Transformer only
  std::string max_seq_length_source;
  std::vector<std::string> notes;
};

ModuleSize size_module(const ModuleEntry& m, const RepoFiles& files, const RepoOptions& options);

}  // namespace memfit::repo::st
