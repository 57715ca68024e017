// core/repo/kinds.h — each repo kind's two functions (memfit/repo/repo_kind.h), one file per kind:
// gguf_repo.cpp, diffusers.cpp, sentence_transformers.cpp, peft.cpp. repo_kind.cpp dispatches.
#pragma once

#include "memfit/repo/repo_kind.h"

namespace memfit::repo {

#define MEMFIT_REPO_KIND_FUNCTIONS(prefix)                           \
  std::vector<FileNeed> prefix##_needs(const RepoFiles& files);     \
  RepoReport prefix##_report(const RepoFiles& files, const RepoOptions& options);

MEMFIT_REPO_KIND_FUNCTIONS(gguf)
MEMFIT_REPO_KIND_FUNCTIONS(diffusers)
MEMFIT_REPO_KIND_FUNCTIONS(sentence_transformers)
MEMFIT_REPO_KIND_FUNCTIONS(peft)
#undef MEMFIT_REPO_KIND_FUNCTIONS

// Helpers the kinds share.
bool has_file(const RepoFiles& files, std::string_view key);  // in texts, headers or binaries
// The text under `key`; throws Error(kRepoMissingFile) naming it when it was not read.
const std::string& text_of(const RepoFiles& files, std::string_view key);
bool listed(const RepoFiles& files, std::string_view path);  // in the repo's listing

}  // namespace memfit::repo
