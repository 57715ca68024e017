// memfit/repo/repo_kind.h — Hub repos that are not one transformers/timm model: GGUF files,
// diffusers pipelines, sentence-transformers and PEFT adapters (issue 18).
//
// Core reads no files, so a repo is answered in steps, the same way for every caller (the CLI
// on a local folder or the Hub, the page in the browser):
//   1. the caller lists the repo's files (paths, and sizes when known) → detect_kind();
//   2. repo_needs(kind, files) says which further files it must read: JSON texts whole,
//      safetensors files as their header only (8 + N bytes, by Range on the Hub); the caller
//      reads them into RepoFiles (texts, headers, binaries by form) and asks again, until nothing is needed (at most
//      kMaxRepoSteps rounds: a kind asks for a component's weights only after its config);
//   3. repo_report(kind, files, options) builds the answer: generic tables (what the CLI prints
//      and the page renders, without knowing the kind) plus the kind's own fields.
// A need may name another repo (a PEFT adapter's base model); its files are keyed
// "ORG/NAME:path" in RepoFiles (file_key()).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/model/config.h"  // Json

namespace memfit::repo {

enum class RepoKind {
  kModel,                 // one transformers / timm model: the usual estimate
  kGguf,                  // *.gguf files (llama.cpp)
  kDiffusers,             // model_index.json + component folders
  kSentenceTransformers,  // modules.json
  kPeft,                  // adapter_config.json
};

std::string_view kind_name(RepoKind kind);  // "model", "gguf", "diffusers", "sentence-transformers", "peft"
// Throws Error(kInvalidArgument) for an unknown name.
RepoKind kind_from_name(std::string_view name);

// The repo's files: its listing, and what the caller has read so far.
struct RepoFiles {
  std::string repo;                          // "ORG/NAME" or a folder's name (reports only)
  std::string library;                       // the Hub's library_name ("" when unknown)
  std::vector<std::string> listing;          // every path in the repo
  std::map<std::string, std::uint64_t> sizes;  // path → bytes, where known
  std::map<std::string, std::string> texts;    // file_key → whole text (JSON files)
  // file_key → a safetensors file's header: its JSON text (the N bytes after the 8-byte length);
  // the file's size, where known, is in `sizes` under the same key.
  std::map<std::string, std::string> headers;
  // file_key → a binary file's leading bytes, as many as its header takes (GGUF: metadata and
  // tensor infos; the caller grows its read while the parser reports gguf_truncated).
  std::map<std::string, std::string> binaries;
};

// "path" for this repo, "ORG/NAME:path" for another.
std::string file_key(std::string_view other_repo, std::string_view path);

// Precedence when several apply: adapter_config.json (peft) > model_index.json (diffusers) >
// modules.json (sentence-transformers) > config.json (model) > *.gguf (gguf); library_name
// decides between a GGUF repo that also has a config.json and a model ("gguf" / "llama.cpp").
RepoKind detect_kind(const std::vector<std::string>& listing, std::string_view library);

struct FileNeed {
  enum class Form { kText, kSafetensorsHeader, kGgufHeader };
  std::string repo;  // "" = this repo
  std::string path;
  Form form = Form::kText;
  bool optional = false;  // absent is fine (the kind falls back, e.g. to the config alone)
  // kGgufHeader: the leading bytes to read (the file's size at most). A header longer than them
  // is asked for again with twice as many; a reader that reads to the header's end (the CLI's)
  // may ignore it.
  std::uint64_t bytes = 0;
  std::string key() const { return file_key(repo, path); }
};

constexpr int kMaxRepoSteps = 4;

// The files still to read; empty when repo_report() can answer. Needs already present in
// `files` (or known absent: the caller records an absent optional file as an empty text) are
// never repeated, but for a GGUF header whose bytes end inside it (asked again, `bytes` doubled).
std::vector<FileNeed> repo_needs(RepoKind kind, const RepoFiles& files);

// A generic table: the CLI prints it (create_ascii_table), the page renders it.
struct RepoTable {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

struct RepoReport {
  RepoKind kind = RepoKind::kModel;
  std::string title;                 // one line: what the repo is
  std::vector<RepoTable> tables;
  std::vector<std::string> lines;    // summary lines printed after the tables (totals, offload modes)
  std::vector<std::string> notes;    // what was assumed
  Json fields;                       // the kind's own structured answer (docs/api.md)
};

// Options every kind may use (the page's inputs, the CLI's flags); a kind ignores what it
// does not need.
struct RepoOptions {
  std::string dtype;              // "" = each component's own
  std::uint64_t gpu_bytes = 0;    // 0 = no GPU chosen: no fit column
  std::int64_t context = 0;       // tokens (GGUF, fit answers); 0 = the kind's default
};

// Throws Error (named code, the file and what was expected) on bad input or missing needs.
RepoReport repo_report(RepoKind kind, const RepoFiles& files, const RepoOptions& options);

// The report as JSON: {"kind","title","tables":[{"title","columns","rows"}],"lines","notes",
// "fields"} — the api's and `--json`'s shape.
Json report_json(const RepoReport& report);

}  // namespace memfit::repo
