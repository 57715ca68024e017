// sentence-transformers models (issue 18): modules.json lists the modules SentenceTransformer
// chains (Transformer → Pooling → Dense → Normalize, …); each is read from its folder and sized
// (core/repo/st_modules.cpp), and the sentence embedding's width is found as
// SentenceTransformer.get_sentence_embedding_dimension() finds it.
#include <fmt/format.h>

#include "kinds.h"
#include "memfit/error.h"
#include "repo_tensors.h"
#include "st_modules.h"

namespace memfit::repo {
namespace {

std::string optional_number(const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : "?"; }

Json optional_json(const std::optional<std::uint64_t>& v) { return v ? Json(*v) : Json(); }
Json optional_json(const std::optional<std::int64_t>& v) { return v ? Json(*v) : Json(); }

}  // namespace

std::vector<FileNeed> sentence_transformers_needs(const RepoFiles& files) {
  if (!has_file(files, "modules.json")) return {{"", "modules.json", FileNeed::Form::kText, false}};
  std::vector<FileNeed> out;
  for (const auto& m : st::parse_modules(text_of(files, "modules.json"))) {
    for (auto& n : st::module_needs(m, files)) {
      bool seen = false;
      for (const auto& o : out) seen = seen || o.key() == n.key();
      if (!seen) out.push_back(std::move(n));
    }
  }
  return out;
}

RepoReport sentence_transformers_report(const RepoFiles& files, const RepoOptions& options) {
  const std::vector<st::ModuleEntry> entries = st::parse_modules(text_of(files, "modules.json"));
  RepoReport r;
  r.kind = RepoKind::kSentenceTransformers;
  std::vector<st::ModuleSize> sizes;
  for (const auto& e : entries) sizes.push_back(st::size_module(e, files, options));

  RepoTable table{"modules", {"idx", "name", "type", "path", "parameters", "size", "dtype", "output dim"}, {}};
  std::uint64_t parameters = 0, bytes = 0;
  bool all_known = true;
  std::optional<std::int64_t> max_seq;
  std::string max_seq_source, pooling;
  Json modules = Json::array();
  for (const auto& s : sizes) {
    const std::string type = s.entry.short_type() + (s.detail.empty() ? "" : " (" + s.detail + ")");
    table.rows.push_back({std::to_string(s.entry.idx), s.entry.name, type, s.entry.path.empty() ? "." : s.entry.path,
                          optional_number(s.parameters), s.bytes ? size_text(*s.bytes) : "?",
                          s.dtype.empty() ? "-" : s.dtype,
                          s.output_dimension ? std::to_string(*s.output_dimension) : "-"});
    if (s.parameters && s.bytes) {
      parameters += *s.parameters;
      bytes += *s.bytes;
    } else {
      all_known = false;
    }
    if (s.max_seq_length && !max_seq) {
      max_seq = s.max_seq_length;
      max_seq_source = s.max_seq_length_source;
    }
    if (s.entry.known() && s.entry.short_type() == "Pooling") pooling = s.detail;
    r.notes.insert(r.notes.end(), s.notes.begin(), s.notes.end());
    modules.push_back({{"idx", s.entry.idx}, {"name", s.entry.name}, {"type", s.entry.type},
                       {"path", s.entry.path}, {"known", s.entry.known()},
                       {"parameters", optional_json(s.parameters)}, {"bytes", optional_json(s.bytes)},
                       {"dtype", s.dtype}, {"source", s.source},
                       {"output_dimension", optional_json(s.output_dimension)}});
  }

  // SentenceTransformer.get_sentence_embedding_dimension(): the last module that defines
  // get_sentence_embedding_dimension() answers (Dense, Pooling, LayerNorm, StaticEmbedding);
  // Normalize and Dropout pass the width through. An unknown module after it may change it.
  std::optional<std::int64_t> embedding;
  std::string embedding_from;
  for (auto it = sizes.rbegin(); it != sizes.rend(); ++it) {
    if (!it->entry.known()) {
      r.notes.push_back(fmt::format("the embedding dimension assumes module {} ({}) keeps its input's width",
                                    it->entry.name, it->entry.type));
      continue;
    }
    if (!it->has_embedding_dimension) continue;
    embedding = it->output_dimension;
    embedding_from = it->entry.short_type();
    break;
  }
  // Pooling's word_embedding_dimension should be the Transformer's hidden_size.
  for (std::size_t i = 1; i < sizes.size(); ++i) {
    const auto& prev = sizes[i - 1];
    const auto& cur = sizes[i];
    if (cur.entry.known() && cur.entry.short_type() == "Pooling" && prev.entry.known() &&
        prev.entry.short_type() == "Transformer" && prev.output_dimension && cur.output_dimension &&
        *cur.output_dimension % *prev.output_dimension != 0)
      r.notes.push_back(fmt::format("module {} (Pooling) pools a width that is not the Transformer's "
                                    "hidden_size {}", cur.entry.name, *prev.output_dimension));
  }

  r.title = fmt::format("{}: sentence-transformers model, {} module{}", files.repo.empty() ? "repo" : files.repo,
                        sizes.size(), sizes.size() == 1 ? "" : "s");
  r.tables.push_back(std::move(table));
  r.lines.push_back(fmt::format("total: {} parameters, {}{}", parameters, size_text(bytes),
                                all_known ? "" : " (modules of unknown size left out)"));
  r.lines.push_back(embedding ? fmt::format("embedding dimension: {} (from {})", *embedding, embedding_from)
                              : std::string("embedding dimension: unknown"));
  r.lines.push_back(max_seq ? fmt::format("max_seq_length: {} ({})", *max_seq, max_seq_source)
                            : std::string("max_seq_length: unknown"));
  r.fields = {{"modules", std::move(modules)},
              {"parameters", parameters},
              {"bytes", bytes},
              {"complete", all_known},
              {"embedding_dimension", optional_json(embedding)},
              {"pooling", pooling.empty() ? Json() : Json(pooling)},
              {"max_seq_length", optional_json(max_seq)},
              {"max_seq_length_source", max_seq ? Json(max_seq_source) : Json()}};
  return r;
}

}  // namespace memfit::repo
