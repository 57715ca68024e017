#include "memfit/model/gguf_model.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include <fmt/format.h>

namespace memfit {
namespace {

int block_of(std::string_view name) {
  if (name.substr(0, 4) != "blk.") return -1;
  int n = 0;
  std::size_t i = 4;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && n < 1'000'000; ++i) n = n * 10 + (name[i] - '0');
  return i > 4 && i < name.size() && name[i] == '.' ? n : -1;
}

std::optional<std::int64_t> split_key(const gguf::File& f, const char* key, const std::string& file) {
  const gguf::Value* v = f.find(key);
  if (!v) return std::nullopt;
  const auto i = v->as_int();
  if (!i || *i < 0) throw Error(ErrorCode::kWrongType, fmt::format("{}: GGUF key '{}' must be a non-negative integer", file, key));
  return i;
}

// The files in split.no order, each split once, with one split.count (llama.cpp's
// llama_model_loader: split.no is 0-based, split.count the number of files).
std::vector<std::size_t> split_order(const std::vector<gguf::File>& files, const std::vector<std::string>& names) {
  std::vector<std::size_t> order(files.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto count = split_key(files[i], "split.count", names[i]);
    const auto no = split_key(files[i], "split.no", names[i]);
    if (files.size() == 1 && !count) return {0};
    if (!count || !no)
      throw Error(ErrorCode::kMissingKey, fmt::format("{}: one of {} split files, without split.no and split.count", names[i], files.size()));
    if (static_cast<std::size_t>(*count) != files.size())
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: split.count is {}; {} split files were given", names[i], *count, files.size()));
    if (static_cast<std::size_t>(*no) >= files.size() || order[static_cast<std::size_t>(*no)] != files.size())
      throw Error(ErrorCode::kInvalidValue, fmt::format("{}: split.no {} is out of range or given twice", names[i], *no));
    order[static_cast<std::size_t>(*no)] = i;
  }
  return order;
}

}  // namespace

SplitName split_name(std::string_view file) {
  // PREFIX-NNNNN-of-MMMMM.gguf (llama_split_prefix / llama_split_path: "%s-%05d-of-%05d.gguf").
  constexpr std::string_view kExt = ".gguf";
  SplitName out;
  if (file.size() < kExt.size() + 15 || file.substr(file.size() - kExt.size()) != kExt) return out;
  const std::string_view stem = file.substr(0, file.size() - kExt.size());
  const std::string_view tail = stem.substr(stem.size() - 15);  // -00001-of-00003
  auto digits = [](std::string_view s) {
    int n = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return -1;
      n = n * 10 + (c - '0');
    }
    return n;
  };
  if (tail[0] != '-' || tail.substr(6, 4) != "-of-") return out;
  const int no = digits(tail.substr(1, 5)), count = digits(tail.substr(10, 5));
  if (no < 1 || count < 1 || no > count) return out;
  out.no = no;
  out.count = count;
  out.prefix = std::string(stem.substr(0, stem.size() - 15));
  return out;
}

std::string split_file_name(std::string_view prefix, int no, int count) {
  return fmt::format("{}-{:05d}-of-{:05d}.gguf", prefix, no, count);
}

std::vector<GgufTypeTotal> GgufModel::by_type() const {
  std::map<std::uint32_t, GgufTypeTotal> m;
  for (const auto& t : tensors) {
    GgufTypeTotal& x = m[t.type];
    x.type = t.type;
    ++x.tensors;
    x.params += t.numel;
    x.bytes += t.bytes;
  }
  std::vector<GgufTypeTotal> out;
  for (const auto& [_, x] : m) out.push_back(x);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  return out;
}

std::uint64_t GgufModel::layer_bytes(int layer) const {
  std::uint64_t n = 0;
  for (const auto& t : tensors) n += t.layer == layer ? t.bytes : 0;
  return n;
}

bool GgufModel::has_tensor(std::string_view tensor) const {
  return std::any_of(tensors.begin(), tensors.end(), [&](const GgufTensor& t) { return t.name == tensor; });
}

Result<GgufModel> gguf_model(const std::vector<gguf::File>& files, const std::vector<std::string>& names) {
  return capture([&] {
    if (files.empty() || files.size() != names.size())
      throw Error(ErrorCode::kInvalidArgument, "gguf_model: no files, or names not one per file");
    const std::vector<std::size_t> order = split_order(files, names);
    GgufModel m;
    const gguf::File& first = files[order[0]];
    m.dims = gguf_dims(first, m.notes);
    m.architecture = first.find("general.architecture")->text;
    if (const gguf::Value* n = first.find("general.name"); n && n->type == gguf::ValueType::kString) m.name = n->text;
    m.context_length = m.dims.max_positions;
    std::unordered_set<std::string> seen;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::size_t i = order[k];
      m.files.push_back(names[i]);
      m.file_bytes += files[i].file_size;
      for (const auto& t : files[i].tensors) {
        if (!seen.insert(t.name).second)
          throw Error(ErrorCode::kInvalidValue, fmt::format("{}: tensor '{}' is in two split files", names[i], t.name));
        GgufTensor g{t.name, t.ne, t.type, t.numel, t.nbytes, block_of(t.name), k};
        if (g.layer >= m.dims.layers) g.layer = -1;  // e.g. a NextN / MTP block past block_count
        m.weight_bytes += t.nbytes;
        m.params += t.numel;
        m.tensors.push_back(std::move(g));
      }
    }
    if (const auto total = split_key(first, "split.tensors.count", names[order[0]]);
        total && static_cast<std::size_t>(*total) != m.tensors.size())
      throw Error(ErrorCode::kInvalidValue, fmt::format("{}: split.tensors.count is {}; the {} split files hold {} tensors",
                                                        names[order[0]], *total, files.size(), m.tensors.size()));
    // The vocabulary when the metadata has no {arch}.vocab_size: the embedding's rows (llama.cpp
    // checks them against the vocabulary), else the token list's length.
    for (const auto& t : m.tensors)
      if (t.name == "token_embd.weight" && t.ne.size() == 2 && m.dims.vocab == 0) m.dims.vocab = t.ne[1];
    if (const gguf::Value* tokens = first.find("tokenizer.ggml.tokens"); m.dims.vocab == 0 && tokens && tokens->is_array())
      m.dims.vocab = static_cast<std::int64_t>(tokens->count);
    m.dims.tied_embeddings = !m.has_tensor("output.weight");
    m.dims.gated_mlp = std::any_of(m.tensors.begin(), m.tensors.end(), [](const GgufTensor& t) {
      return t.name.find(".ffn_gate") != std::string::npos;
    });
    return m;
  });
}

}  // namespace memfit
