// The repo kinds' shared part: names, detection, dispatch and the JSON shape of a report.
#include "memfit/repo/repo_kind.h"

#include <algorithm>

#include "kinds.h"
#include "memfit/error.h"

namespace memfit::repo {
namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

bool has_top_level(const std::vector<std::string>& listing, std::string_view name) {
  return std::find(listing.begin(), listing.end(), name) != listing.end();
}

}  // namespace

std::string_view kind_name(RepoKind kind) {
  switch (kind) {
    case RepoKind::kModel: return "model";
    case RepoKind::kGguf: return "gguf";
    case RepoKind::kDiffusers: return "diffusers";
    case RepoKind::kSentenceTransformers: return "sentence-transformers";
    case RepoKind::kPeft: return "peft";
  }
  return "model";
}

RepoKind kind_from_name(std::string_view name) {
  for (RepoKind k : {RepoKind::kModel, RepoKind::kGguf, RepoKind::kDiffusers,
                     RepoKind::kSentenceTransformers, RepoKind::kPeft})
    if (kind_name(k) == name) return k;
  throw Error(ErrorCode::kInvalidArgument,
              "unknown repo kind '" + std::string(name) +
                  "' (expected model, gguf, diffusers, sentence-transformers or peft)");
}

std::string file_key(std::string_view other_repo, std::string_view path) {
  if (other_repo.empty()) return std::string(path);
  return std::string(other_repo) + ":" + std::string(path);
}

RepoKind detect_kind(const std::vector<std::string>& listing, std::string_view library) {
  if (has_top_level(listing, "adapter_config.json")) return RepoKind::kPeft;
  if (has_top_level(listing, "model_index.json")) return RepoKind::kDiffusers;
  if (has_top_level(listing, "modules.json")) return RepoKind::kSentenceTransformers;
  const bool gguf = std::any_of(listing.begin(), listing.end(),
                                [](const std::string& p) { return ends_with(p, ".gguf"); });
  if (gguf && (library == "gguf" || library == "llama.cpp" || !has_top_level(listing, "config.json")))
    return RepoKind::kGguf;
  return RepoKind::kModel;
}

bool has_file(const RepoFiles& files, std::string_view key) {
  const std::string k(key);
  return files.texts.count(k) != 0 || files.headers.count(k) != 0 || files.binaries.count(k) != 0;
}

bool listed(const RepoFiles& files, std::string_view path) {
  return has_top_level(files.listing, path);
}

const std::string& text_of(const RepoFiles& files, std::string_view key) {
  auto it = files.texts.find(std::string(key));
  if (it == files.texts.end())
    throw Error(ErrorCode::kRepoMissingFile,
                (files.repo.empty() ? std::string() : files.repo + ": ") + std::string(key) +
                    " was not read (it is needed to answer this repo)");
  return it->second;
}

std::vector<FileNeed> repo_needs(RepoKind kind, const RepoFiles& files) {
  switch (kind) {
    case RepoKind::kModel: return {};
    case RepoKind::kGguf: return gguf_needs(files);
    case RepoKind::kDiffusers: return diffusers_needs(files);
    case RepoKind::kSentenceTransformers: return sentence_transformers_needs(files);
    case RepoKind::kPeft: return peft_needs(files);
  }
  return {};
}

RepoReport repo_report(RepoKind kind, const RepoFiles& files, const RepoOptions& options) {
  switch (kind) {
    case RepoKind::kModel: break;
    case RepoKind::kGguf: return gguf_report(files, options);
    case RepoKind::kDiffusers: return diffusers_report(files, options);
    case RepoKind::kSentenceTransformers: return sentence_transformers_report(files, options);
    case RepoKind::kPeft: return peft_report(files, options);
  }
  throw Error(ErrorCode::kInvalidArgument,
              "a transformers/timm model is answered by estimate, not by a repo report");
}

Json report_json(const RepoReport& report) {
  Json tables = Json::array();
  for (const RepoTable& t : report.tables)
    tables.push_back({{"title", t.title}, {"columns", t.columns}, {"rows", t.rows}});
  return {{"kind", std::string(kind_name(report.kind))},
          {"title", report.title},
          {"tables", std::move(tables)},
          {"lines", report.lines},
          {"notes", report.notes},
          {"fields", report.fields.is_null() ? Json::object() : report.fields}};
}

}  // namespace memfit::repo
