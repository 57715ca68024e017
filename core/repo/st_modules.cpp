#include "st_modules.h"

#include <optional>

#include <fmt/format.h>

#include "kinds.h"
#include "memfit/error.h"
#include "memfit/format/checkpoint_index.h"
#include "memfit/format/strict_json.h"
#include "memfit/model/arch.h"
#include "memfit/model/config.h"
#include "memfit/model/model.h"
#include "repo_tensors.h"

namespace memfit::repo::st {
namespace {

constexpr const char* kPrefix = "sentence_transformers.models.";
constexpr const char* kWeights = "model.safetensors";
constexpr const char* kIndex = "model.safetensors.index.json";

bool is_type(const ModuleEntry& m, std::string_view name) { return m.known() && m.short_type() == name; }

// A text that was read and is not the empty text an absent optional file is recorded as.
const std::string* present_text(const RepoFiles& files, const std::string& key) {
  auto it = files.texts.find(key);
  return it == files.texts.end() || it->second.empty() ? nullptr : &it->second;
}

Config module_config(const RepoFiles& files, const ModuleEntry& m, const std::string& file) {
  const std::string key = join_path(m.path, file);
  return Config(Config::parse(text_of(files, key), key), key);
}

void need_text(std::vector<FileNeed>& out, const RepoFiles& files, const std::string& path, bool optional) {
  if (!has_file(files, path)) out.push_back({"", path, FileNeed::Form::kText, optional});
}

void need_header(std::vector<FileNeed>& out, const RepoFiles& files, const std::string& path) {
  if (!has_file(files, path)) out.push_back({"", path, FileNeed::Form::kSafetensorsHeader, false});
}

// Where a module's safetensors weights are listed: its model.safetensors, else its index of
// shards; no path when it lists neither.
struct ListedWeights {
  std::string path;
  bool sharded = false;
};

ListedWeights listed_weights(const ModuleEntry& m, const RepoFiles& files) {
  if (std::string single = join_path(m.path, kWeights); listed(files, single)) return {single, false};
  if (std::string index = join_path(m.path, kIndex); listed(files, index)) return {index, true};
  return {};
}

// The module's weights, sized: model.safetensors' header, or the shards of its index checked
// against the index (index_headers); nothing when it lists neither.
std::optional<std::vector<SizedTensor>> module_weights(const ModuleEntry& m, const RepoFiles& files) {
  const ListedWeights w = listed_weights(m, files);
  if (w.path.empty()) return std::nullopt;
  if (w.sharded) return sized_tensors(index_headers(files, w.path));
  return header_tensors(files, w.path);
}

void set_sizes(ModuleSize& s, const std::vector<SizedTensor>& tensors, std::optional<DType> cast,
               std::string source) {
  const TensorTotals t = totals(tensors, cast);
  s.parameters = t.parameters;
  s.bytes = t.bytes;
  s.dtype = dtype_summary(tensors, cast);
  s.source = std::move(source);
}

// Transformer: the AutoModel of config.json (the family's base class), sized from its weights'
// headers when the module has safetensors weights, else from the config; max_seq_length as
// Transformer.__init__ sets it.
void size_transformer(ModuleSize& s, const RepoFiles& files, const RepoOptions& options) {
  const ModuleEntry& m = s.entry;
  const std::string config_key = join_path(m.path, "config.json");
  const std::string& config_text = text_of(files, config_key);
  const Config config(Config::parse(config_text, config_key), config_key);
  const std::string model_type = config.string_or({"model_type"}, "");
  s.detail = model_type.empty() ? "?" : model_type;
  if (config.has("hidden_size")) s.output_dimension = config.dim({"hidden_size"});
  const std::optional<DType> cast = option_dtype(options);

  if (auto weights = module_weights(m, files)) {
    set_sizes(s, *weights, cast, "header");
  } else {
    EstimateRequest req;
    req.config_text = config_text;
    req.name = files.repo;
    req.library = "transformers";
    // SentenceTransformer loads AutoModel: the family's base class, not architectures[0].
    if (const Family* f = find_family("transformers", model_type)) req.class_override = std::string(f->classes.begin()->name);
    Result<Model> model = build_model(std::move(req));
    if (!model) throw Error(model.error().code(), fmt::format("module {} (Transformer): {}", m.name, model.error().message()));
    set_sizes(s, stored_tensors(*model), cast, "config");
    s.parameters = model->parameters;
    s.notes.push_back(fmt::format("module {} (Transformer): no safetensors weights listed; sized from {} as {}",
                                  m.name, config_key, model->class_name()));
  }

  // sentence_bert_config.json's max_seq_length; else min(max_position_embeddings,
  // tokenizer.model_max_length) (Transformer.__init__).
  const std::string sbert_key = join_path(m.path, "sentence_bert_config.json");
  if (const std::string* sbert = present_text(files, sbert_key)) {
    const Config sb(Config::parse(*sbert, sbert_key), sbert_key);
    if (sb.has("max_seq_length")) {
      s.max_seq_length = sb.dim({"max_seq_length"});
      s.max_seq_length_source = "sentence_bert_config.json";
      return;
    }
  }
  if (!config.has("max_position_embeddings")) return;
  const std::int64_t positions = config.dim({"max_position_embeddings"});
  s.max_seq_length = positions;
  s.max_seq_length_source = "config.json max_position_embeddings";
  const std::string tok_key = join_path(m.path, "tokenizer_config.json");
  if (const std::string* tok = present_text(files, tok_key)) {
    const Config tc(Config::parse(*tok, tok_key), tok_key);
    // transformers' default is VERY_LARGE_INTEGER (1e30); the Hub's files often hold it as a float.
    const double limit = tc.number_or({"model_max_length"}, 1e30);
    if (limit >= 1 && limit < static_cast<double>(positions)) {
      s.max_seq_length = static_cast<std::int64_t>(limit);
      s.max_seq_length_source = "tokenizer_config.json model_max_length";
    }
  }
}

// Pooling.__init__: pooling_mode (a string) overrides the pooling_mode_* flags; mean is the
// default; the output is (number of modes) × word_embedding_dimension.
void size_pooling(ModuleSize& s, const RepoFiles& files) {
  const Config c = module_config(files, s.entry, "config.json");
  const std::int64_t width = c.dim({"word_embedding_dimension"});
  struct Mode { const char* name; const char* key; bool on; };
  Mode modes[] = {{"cls", "pooling_mode_cls_token", false},
                  {"max", "pooling_mode_max_tokens", false},
                  {"mean", "pooling_mode_mean_tokens", true},
                  {"mean_sqrt_len_tokens", "pooling_mode_mean_sqrt_len_tokens", false},
                  {"weightedmean", "pooling_mode_weightedmean_tokens", false},
                  {"lasttoken", "pooling_mode_lasttoken", false}};
  if (auto by_name = c.string_opt({"pooling_mode"})) {
    bool valid = false;
    for (auto& mode : modes) valid = valid || *by_name == mode.name;
    if (!valid)
      throw Error(ErrorCode::kRepoInvalid,
                  fmt::format("{}: pooling_mode '{}' is none of cls, lasttoken, max, mean, "
                              "mean_sqrt_len_tokens, weightedmean", c.where(), *by_name));
    for (auto& mode : modes) mode.on = *by_name == mode.name;
  } else {
    for (auto& mode : modes) mode.on = c.flag_or({mode.key}, mode.on);
  }
  std::int64_t count = 0;
  for (const auto& mode : modes) {
    if (!mode.on) continue;
    s.detail += (count ? "+" : "") + std::string(mode.name);
    ++count;
  }
  if (count == 0) s.detail = "none";
  s.output_dimension = count * width;
  s.has_embedding_dimension = true;
  s.parameters = 0;
  s.bytes = 0;
  s.source = "config";
}

// Dense: nn.Linear(in_features, out_features, bias) — linear.weight [out, in], linear.bias [out].
void size_dense(ModuleSize& s, const RepoFiles& files, const RepoOptions& options) {
  const Config c = module_config(files, s.entry, "config.json");
  const std::int64_t in = c.dim({"in_features"});
  const std::int64_t out = c.dim({"out_features"});
  const bool bias = c.flag_or({"bias"}, true);
  std::string activation = c.string_or({"activation_function"}, "torch.nn.modules.activation.Tanh");
  if (auto dot = activation.rfind('.'); dot != std::string::npos) activation = activation.substr(dot + 1);
  s.detail = fmt::format("{} → {}, {}", in, out, activation);
  s.output_dimension = out;
  s.has_embedding_dimension = true;
  const std::optional<DType> cast = option_dtype(options);
  if (const auto tensors = module_weights(s.entry, files)) {
    set_sizes(s, *tensors, cast, "header");
    for (const auto& t : *tensors)
      if (t.name == "linear.weight" && t.shape != Shape{out, in})
        s.notes.push_back(fmt::format("module {} (Dense): linear.weight is [{}] in its weights; config.json "
                                      "says [{}, {}]", s.entry.name, fmt::join(t.shape, ", "), out, in));
    return;
  }
  // Without safetensors weights (pytorch_model.bin): the shapes the config implies, in float32
  // (nn.Linear's default; Dense modules are saved as trained).
  std::vector<SizedTensor> tensors = {{"linear.weight", DType::kF32, {out, in}, 0, 0}};
  if (bias) tensors.push_back({"linear.bias", DType::kF32, {out}, 0, 0});
  for (auto& t : tensors) {
    t.numel = 1;
    for (auto d : t.shape) t.numel *= static_cast<std::uint64_t>(d);
    t.bytes = t.numel * 4;
  }
  set_sizes(s, tensors, cast, "config");
}

// LayerNorm: nn.LayerNorm(dimension) — weight and bias of `dimension`.
void size_layer_norm(ModuleSize& s, const RepoFiles& files, const RepoOptions& options) {
  const Config c = module_config(files, s.entry, "config.json");
  const std::int64_t dim = c.dim({"dimension"});
  s.output_dimension = dim;
  s.has_embedding_dimension = true;
  const std::optional<DType> cast = option_dtype(options);
  if (const auto weights = module_weights(s.entry, files)) return set_sizes(s, *weights, cast, "header");
  const std::uint64_t n = static_cast<std::uint64_t>(dim);
  set_sizes(s, {{"norm.weight", DType::kF32, {dim}, n, n * 4}, {"norm.bias", DType::kF32, {dim}, n, n * 4}},
            cast, "config");
}

// StaticEmbedding: an EmbeddingBag [vocab, dim] (model2vec's files call it "embeddings").
void size_static_embedding(ModuleSize& s, const RepoFiles& files, const RepoOptions& options) {
  s.has_embedding_dimension = true;
  const auto tensors = module_weights(s.entry, files);
  if (!tensors) {
    s.source = "none";
    s.notes.push_back(fmt::format("module {} (StaticEmbedding): no model.safetensors; its size is unknown", s.entry.name));
    return;
  }
  set_sizes(s, *tensors, option_dtype(options), "header");
  for (const auto& t : *tensors)
    if ((t.name == "embedding.weight" || t.name == "embeddings") && t.shape.size() == 2) s.output_dimension = t.shape[1];
}

bool safe_path(const std::string& p) {
  if (!p.empty() && p[0] == '/') return false;
  std::size_t start = 0;
  while (start <= p.size()) {
    std::size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    if (p.compare(start, end - start, "..") == 0 && end - start == 2) return false;
    start = end + 1;
  }
  return p.find('\\') == std::string::npos;
}

}  // namespace

std::string ModuleEntry::short_type() const {
  const auto dot = type.rfind('.');
  return dot == std::string::npos ? type : type.substr(dot + 1);
}

bool ModuleEntry::known() const {
  if (type.rfind(kPrefix, 0) != 0) return false;
  const std::string t = short_type();
  return t == "Transformer" || t == "Pooling" || t == "Dense" || t == "Normalize" || t == "Dropout" ||
         t == "LayerNorm" || t == "StaticEmbedding";
}

std::vector<ModuleEntry> parse_modules(const std::string& text) {
  Json j;
  if (auto err = parse_strict_json(text, 64, &j, JsonDialect::kPython))
    throw Error(ErrorCode::kInvalidJson, "modules.json: not valid JSON (" + err->detail + ")");
  if (!j.is_array())
    throw Error(ErrorCode::kRepoInvalid, "modules.json: expected a list of modules ({\"idx\", \"name\", "
                                         "\"path\", \"type\"}), got " + std::string(j.type_name()));
  if (j.empty()) throw Error(ErrorCode::kRepoInvalid, "modules.json: the list of modules is empty");
  std::vector<ModuleEntry> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const Json& e = j[i];
    const std::string where = fmt::format("modules.json: entry {}", i);
    if (!e.is_object()) throw Error(ErrorCode::kRepoInvalid, where + " is not an object");
    ModuleEntry m;
    for (const char* key : {"name", "path", "type"}) {
      auto it = e.find(key);
      if (it == e.end() || !it->is_string())
        throw Error(ErrorCode::kRepoInvalid, fmt::format("{}: '{}' must be a string ({})", where, key,
                                                         it == e.end() ? "absent" : it->type_name()));
    }
    m.name = e["name"].get<std::string>();
    m.path = e["path"].get<std::string>();
    m.type = e["type"].get<std::string>();
    if (auto it = e.find("idx"); it != e.end()) {
      if (!it->is_number_integer() || it->get<std::int64_t>() < 0)
        throw Error(ErrorCode::kRepoInvalid, where + ": 'idx' must be a non-negative integer");
      m.idx = it->get<std::int64_t>();
    } else {
      m.idx = static_cast<std::int64_t>(i);
    }
    if (m.type.empty()) throw Error(ErrorCode::kRepoInvalid, where + ": 'type' is empty");
    if (!safe_path(m.path))
      throw Error(ErrorCode::kRepoInvalid, fmt::format("{}: path '{}' leaves the repo", where, m.path));
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<FileNeed> module_needs(const ModuleEntry& m, const RepoFiles& files) {
  std::vector<FileNeed> out;
  const bool transformer = is_type(m, "Transformer");
  if (transformer || is_type(m, "Pooling") || is_type(m, "Dense") || is_type(m, "LayerNorm"))
    need_text(out, files, join_path(m.path, "config.json"), false);
  if (is_type(m, "Normalize") || is_type(m, "Dropout") || is_type(m, "Pooling")) return out;
  // Weights: the safetensors header(s) where listed (an index first, then, in the round after
  // it was read, its shards).
  const ListedWeights weights = listed_weights(m, files);
  if (!weights.sharded) {
    if (!weights.path.empty()) need_header(out, files, weights.path);
  } else if (!has_file(files, weights.path)) {
    need_text(out, files, weights.path, false);
  } else {
    for (const auto& shard : index_shard_paths(files, weights.path)) need_header(out, files, shard);
  }
  if (!transformer) return out;
  const std::string sbert = join_path(m.path, "sentence_bert_config.json");
  need_text(out, files, sbert, true);
  // Without a max_seq_length there, the tokenizer's model_max_length bounds it.
  if (const std::string* text = present_text(files, sbert)) {
    const Config sb(Config::parse(*text, sbert), sbert);
    if (sb.has("max_seq_length")) return out;
  }
  if (has_file(files, sbert)) need_text(out, files, join_path(m.path, "tokenizer_config.json"), true);
  return out;
}

ModuleSize size_module(const ModuleEntry& m, const RepoFiles& files, const RepoOptions& options) {
  ModuleSize s;
  s.entry = m;
  if (!m.known()) {
    // A module memfit has no rules for: its weights' header still says what it holds.
    const auto weights = module_weights(m, files);
    s.source = "none";
    if (weights) set_sizes(s, *weights, option_dtype(options), "header");
    s.notes.push_back(fmt::format("module {} has type {}, which memfit does not know: {}", m.name, m.type,
                                  !weights ? "its size is not counted"
                                                  : "sized from its weights' header; its output dimension is unknown"));
    return s;
  }
  const std::string t = m.short_type();
  if (t == "Transformer") size_transformer(s, files, options);
  else if (t == "Pooling") size_pooling(s, files);
  else if (t == "Dense") size_dense(s, files, options);
  else if (t == "LayerNorm") size_layer_norm(s, files, options);
  else if (t == "StaticEmbedding") size_static_embedding(s, files, options);
  else {  // Normalize, Dropout: no parameters, the embedding passes through
    s.parameters = 0;
    s.bytes = 0;
    s.source = "config";
    if (t == "Normalize") s.detail = "L2";
  }
  return s;
}

}  // namespace memfit::repo::st
