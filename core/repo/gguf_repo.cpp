// A repo of GGUF files: the quantization table (memfit/repo/gguf_repo.h says which header is read
// and why one is enough).
#include "memfit/repo/gguf_repo.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "kinds.h"
#include "memfit/error.h"
#include "memfit/format/gguf.h"
#include "memfit/memory/options.h"
#include "memfit/model/gguf_model.h"
#include "memfit/report/convert_bytes.h"

namespace memfit::repo {
namespace {

// A file whose size the listing does not give: the header's checks against the file's end
// (tensor data inside the file) then hold for any data section.
constexpr std::uint64_t kUnknownFileSize = 1ull << 62;

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

std::string_view file_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_projector(std::string_view path) { return upper(file_name(path)).rfind("MMPROJ", 0) == 0; }

// A llama.cpp type word: F32/F16/BF16 (FP16/FP32 as some uploaders write them), MXFP4…, or
// Q/IQ/TQ + a digit + [A-Z0-9_]* (Q4_K_M, IQ2_XXS, TQ1_0, Q4_K_XL).
bool is_quant_word(const std::string& w) {
  if (w == "F32" || w == "F16" || w == "BF16" || w == "FP16" || w == "FP32") return true;
  if (w.rfind("MXFP4", 0) == 0) return true;
  std::size_t i = w.rfind("IQ", 0) == 0 || w.rfind("TQ", 0) == 0 ? 2 : w.rfind('Q', 0) == 0 ? 1 : 0;
  if (i == 0 || i >= w.size() || w[i] < '0' || w[i] > '9') return false;
  return std::all_of(w.begin() + static_cast<std::ptrdiff_t>(i), w.end(),
                     [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; });
}

// The file's bytes as core's parser takes them: what the caller read, against the listed size.
Result<gguf::File> parse_binary(const RepoFiles& files, const std::string& key) {
  const std::string& bytes = files.binaries.at(key);
  const auto size = files.sizes.find(key);
  return gguf::parse(bytes, key, size != files.sizes.end() ? size->second : std::max<std::uint64_t>(kUnknownFileSize, bytes.size()));
}

// The model whose headers are read: see the header comment.
const GgufRepoModel& representative(const GgufRepoListing& l) {
  const GgufRepoModel* first_single = nullptr;
  const GgufRepoModel* fewest_parts = nullptr;
  for (const auto& m : l.models) {
    if (m.parts == 1) {
      if (m.quant == "Q4_K_M") return m;
      if (!first_single) first_single = &m;
    } else if (static_cast<int>(m.paths.size()) == m.parts && (!fewest_parts || m.parts < fewest_parts->parts)) {
      fewest_parts = &m;
    }
  }
  if (first_single) return *first_single;
  if (fewest_parts) return *fewest_parts;
  throw Error(ErrorCode::kRepoInvalid, "no single-file GGUF model and no split model with every part listed");
}

const GgufRepoModel& representative_of(const RepoFiles& files, GgufRepoListing& listing) {
  listing = gguf_repo_listing(files);
  if (listing.models.empty())
    throw Error(ErrorCode::kRepoInvalid, (files.repo.empty() ? std::string() : files.repo + ": ") +
                                             "no .gguf model file in the listing");
  return representative(listing);
}

// The model of another quantization: the representative's tensors, each scaled by `factor`
// (the other file's weights ÷ the representative's).
GgufModel scaled(const GgufModel& m, double factor) {
  GgufModel out = m;
  out.weight_bytes = 0;
  for (auto& t : out.tensors) {
    t.bytes = static_cast<std::uint64_t>(std::llround(static_cast<double>(t.bytes) * factor));
    out.weight_bytes += t.bytes;
  }
  return out;
}

std::string type_name(std::uint32_t id) {
  const ggml::TypeTraits* t = ggml::type_traits(id);
  return t ? std::string(t->name) : fmt::format("type {}", id);
}

std::string bytes_text(double b) { return convert_bytes(b); }

Json dims_json(const GgufModel& m) {
  const ModelDims& d = m.dims;
  return {{"architecture", m.architecture}, {"name", m.name}, {"block_count", d.layers},
          {"context_length", m.context_length}, {"embedding_length", d.hidden}, {"vocab", d.vocab},
          {"head_count", d.heads}, {"head_count_kv", d.kv_heads}, {"head_dim", d.head_dim},
          {"feed_forward_length", d.intermediate}, {"expert_count", d.experts},
          {"expert_used_count", d.experts_per_token}, {"tied_embeddings", d.tied_embeddings}};
}

RepoTable by_type_table(const GgufModel& m, const std::string& file) {
  RepoTable t{file + ": tensors by type", {"type", "tensors", "params", "bytes", "bits/weight"}, {}};
  for (const auto& x : m.by_type())
    t.rows.push_back({type_name(x.type), std::to_string(x.tensors), std::to_string(x.params),
                      bytes_text(static_cast<double>(x.bytes)),
                      fmt::format("{:.3f}", x.params ? 8.0 * static_cast<double>(x.bytes) / static_cast<double>(x.params) : 0.0)});
  return t;
}

}  // namespace

std::string gguf_quant_of_name(std::string_view path) {
  std::string_view name = file_name(path);
  if (ends_with(name, ".gguf")) name.remove_suffix(5);
  if (const SplitName s = split_name(std::string(name) + ".gguf"); s.count > 0) name = name.substr(0, s.prefix.size());
  std::string found;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i < name.size() && name[i] != '-' && name[i] != '.') continue;
    const std::string w = upper(name.substr(start, i - start));
    if (is_quant_word(w)) found = w;  // the last one: "Q8_0-Q4_K_M" (rare) keeps the later
    start = i + 1;
  }
  return found;
}

GgufRepoListing gguf_repo_listing(const RepoFiles& files) {
  GgufRepoListing out;
  std::map<std::string, std::size_t> by_group;  // a split's prefix and count → its model
  for (const auto& path : files.listing) {
    if (!ends_with(path, ".gguf")) continue;
    if (is_projector(path)) {
      out.projectors.push_back(path);
      continue;
    }
    const SplitName s = split_name(path);
    const std::string group = s.count > 0 ? fmt::format("{}#{}", s.prefix, s.count) : path;
    auto [it, fresh] = by_group.emplace(group, out.models.size());
    if (fresh) {
      GgufRepoModel m;
      m.parts = s.count > 0 ? s.count : 1;
      m.quant = gguf_quant_of_name(path);
      out.models.push_back(std::move(m));
    }
    out.models[it->second].paths.push_back(path);
  }
  for (auto& m : out.models) {
    std::sort(m.paths.begin(), m.paths.end());  // the zero-padded part numbers sort as numbers
    m.size = 0;
    for (const auto& p : m.paths) {
      const auto s = files.sizes.find(p);
      if (s == files.sizes.end()) m.size = std::nullopt;
      else if (m.size) *m.size += s->second;
    }
    if (static_cast<int>(m.paths.size()) != m.parts) m.size = std::nullopt;
  }
  return out;
}

GgufRepoOptions gguf_repo_options(const RepoOptions& options) {
  GgufRepoOptions o;
  if (options.context > 0) o.llama.ctx_size = options.context;
  o.llama.overhead_bytes = kRunDefaults.overhead_bytes;
  if (options.gpu_bytes > 0) o.vram = static_cast<double>(options.gpu_bytes);
  return o;
}

std::vector<FileNeed> gguf_needs(const RepoFiles& files) {
  GgufRepoListing listing;
  const GgufRepoModel& rep = representative_of(files, listing);
  std::vector<FileNeed> needs;
  for (const auto& path : rep.paths) {
    FileNeed n{"", path, FileNeed::Form::kGgufHeader, false, kGgufFirstRead};
    const auto size = files.sizes.find(path);
    const std::uint64_t cap = std::min(size != files.sizes.end() ? size->second : gguf::kMaxHeaderSize, gguf::kMaxHeaderSize);
    const auto have = files.binaries.find(path);
    if (have != files.binaries.end()) {
      // Read already: asked again, with twice the bytes, only while the header runs past them.
      const Result<gguf::File> f = parse_binary(files, path);
      if (f || f.error().code() != ErrorCode::kGgufTruncated || have->second.size() >= cap) continue;
      n.bytes = std::max<std::uint64_t>(have->second.size() * 2, kGgufFirstRead);
    }
    n.bytes = std::min(n.bytes, cap);
    needs.push_back(std::move(n));
  }
  return needs;
}

RepoReport gguf_repo_report(const RepoFiles& files, const GgufRepoOptions& options) {
  GgufRepoListing listing;
  const GgufRepoModel& rep = representative_of(files, listing);
  std::vector<gguf::File> headers;
  for (const auto& path : rep.paths) {
    if (files.binaries.count(path) == 0)
      throw Error(ErrorCode::kRepoMissingFile,
                  (files.repo.empty() ? std::string() : files.repo + ": ") + path + "'s header was not read (it is needed to answer this repo)");
    Result<gguf::File> f = parse_binary(files, path);
    if (!f) throw f.error();
    headers.push_back(std::move(f).value());
  }
  const Result<GgufModel> parsed = gguf_model(headers, rep.paths);
  if (!parsed) throw parsed.error();
  const GgufModel& m = *parsed;
  std::uint64_t rep_header = 0;  // header + alignment padding: the bytes of a file that are not weights
  for (const auto& h : headers) rep_header += h.data_offset;

  LlamaCppOptions all = options.llama;
  all.gpu_layers = -1;
  const LlamaCppEstimate base = llamacpp_estimate(m, all);
  const std::string where = files.repo.empty() ? std::string("this repo") : files.repo;

  RepoReport r;
  r.kind = RepoKind::kGguf;
  r.title = fmt::format("{}: {} GGUF model{} of {}{} ({} blocks, context_length {})", where, listing.models.size(),
                        listing.models.size() == 1 ? "" : "s", m.architecture, m.name.empty() ? "" : " '" + m.name + "'",
                        m.dims.layers, m.context_length);
  RepoTable table{fmt::format("quantizations at --ctx-size {}", options.llama.ctx_size),
                  {"file", "quant", "files", "size", "VRAM (all layers)"}, {}};
  if (options.vram) {
    table.columns.push_back(fmt::format("fits {}", bytes_text(*options.vram)));
    table.columns.push_back("--gpu-layers");
  }
  Json rows = Json::array();
  std::vector<const GgufRepoModel*> order;
  for (const auto& q : listing.models) order.push_back(&q);
  // Smallest first, as a user reads down to the largest that fits; unknown sizes last.
  std::stable_sort(order.begin(), order.end(), [](const GgufRepoModel* a, const GgufRepoModel* b) {
    return a->size && (!b->size || *a->size < *b->size);
  });
  bool any_scaled = false;
  for (const GgufRepoModel* q : order) {
    const bool exact = q == &rep;
    std::optional<GgufModel> model;
    if (exact) model = m;
    else if (q->size && m.weight_bytes > 0) {
      const double weights = std::max(0.0, static_cast<double>(*q->size) - static_cast<double>(rep_header));
      model = scaled(m, weights / static_cast<double>(m.weight_bytes));
      any_scaled = true;
    }
    std::optional<double> need;
    std::optional<std::int64_t> best;
    if (model) need = llamacpp_estimate(*model, all).gpu.total();
    if (model && options.vram) best = largest_gpu_layers(*model, options.llama, *options.vram);
    const std::string quant = !q->quant.empty() ? q->quant
                              : exact && !m.by_type().empty() ? "mostly " + type_name(m.by_type().front().type) : "";
    Json row = {{"file", q->paths.front()}, {"quant", quant}, {"files", q->parts},
                {"size", q->size ? Json(*q->size) : Json(nullptr)},
                {"vram_needed", need ? Json(*need) : Json(nullptr)}, {"exact", exact}};
    std::vector<std::string> cells = {q->paths.front() + (exact ? " (header read)" : ""), quant.empty() ? "?" : quant,
                                      std::to_string(q->parts), q->size ? bytes_text(static_cast<double>(*q->size)) : "?",
                                      need ? bytes_text(*need) : "?"};
    if (options.vram) {
      row["fits"] = need ? Json(*need <= *options.vram) : Json(nullptr);
      row["max_gpu_layers"] = best ? Json(*best) : Json(nullptr);
      cells.push_back(need ? (*need <= *options.vram ? "yes" : "no") : "?");
      cells.push_back(!model ? "?" : best ? fmt::format("{} of {}", *best, m.dims.layers + 1) : "none");
    }
    rows.push_back(std::move(row));
    table.rows.push_back(std::move(cells));
  }
  r.tables.push_back(std::move(table));
  r.tables.push_back(by_type_table(m, rep.paths.front()));

  r.lines.push_back(fmt::format("all layers on the GPU at --ctx-size {} (n_ctx {}): KV cache {}, compute* {}, overhead {}",
                                options.llama.ctx_size, base.n_ctx, bytes_text(base.gpu.kv), bytes_text(base.gpu.compute),
                                bytes_text(base.gpu.overhead)));
  r.lines.push_back("size: the files' bytes (headers included); VRAM: the weights llama.cpp puts on the GPU with every "
                    "layer offloaded (token_embd stays on the CPU) + KV cache + compute* + overhead");
  r.lines.push_back("* " + base.compute_note);
  if (any_scaled)
    r.notes.push_back(fmt::format("one header read ({}): every other row scales its tensors' bytes by that row's size "
                                  "(less {} of header) over the header's weights; a quantization that keeps some tensors "
                                  "at other types spreads its bytes a little differently over the layers",
                                  fmt::join(rep.paths, ", "), bytes_text(static_cast<double>(rep_header))));
  for (const auto& q : listing.models)
    if (static_cast<int>(q.paths.size()) != q.parts)
      r.notes.push_back(fmt::format("{}: {} of its {} parts are listed; its size is unknown", q.paths.front(),
                                    q.paths.size(), q.parts));
  if (!listing.projectors.empty())
    r.notes.push_back(fmt::format("vision projector{} (llama.cpp's --mmproj, not a quantization of the model): {}",
                                  listing.projectors.size() > 1 ? "s" : "", fmt::join(listing.projectors, ", ")));
  for (const auto& n : m.notes) r.notes.push_back(n);
  for (const auto& n : base.notes) r.notes.push_back(n);

  r.fields = {{"architecture", m.architecture}, {"name", m.name}, {"representative", rep.paths},
              {"ctx_size", options.llama.ctx_size}, {"n_ctx", base.n_ctx}, {"kv_cache", base.gpu.kv},
              {"compute", base.gpu.compute}, {"overhead", base.gpu.overhead}};
  if (options.vram) r.fields["vram"] = *options.vram;
  r.fields["models"] = std::move(rows);
  r.fields["projectors"] = listing.projectors;
  r.fields["model"] = dims_json(m);
  return r;
}

RepoReport gguf_report(const RepoFiles& files, const RepoOptions& options) {
  return gguf_repo_report(files, gguf_repo_options(options));
}

}  // namespace memfit::repo
