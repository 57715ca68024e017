#include "gguf_command.h"

#include <cstring>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_error.h"
#include "gguf_files.h"
#include "memfit/memory/gpu_catalog.h"
#include "memfit/memory/llamacpp_offload.h"
#include "memfit/memory/options.h"
#include "memfit/report/convert_bytes.h"
#include "memfit/repo/gguf_repo.h"
#include "repo_command.h"

namespace memfit::cli {
namespace {

using Json = nlohmann::ordered_json;

struct Loaded {
  std::vector<gguf::File> files;
  std::vector<std::string> names;
};

// The files of the model `target` names (a local file and its splits, or a Hub file and its).
Loaded load_files(const std::string& target, hub::HubClient* client) {
  Loaded out;
  std::string repo;
  std::string file = target;
  if (auto hub = checkpoint::split_hub_target(target); hub && !std::filesystem::exists(target)) {
    repo = hub->first;
    file = hub->second;
  }
  const SplitName split = split_name(std::filesystem::path(file).filename().string());
  std::vector<std::string> names{file};
  if (split.count > 0) {
    names.clear();
    const std::string dir = std::filesystem::path(file).parent_path().string();
    for (int i = 1; i <= split.count; ++i) {
      const std::string n = split_file_name(split.prefix, i, split.count);
      names.push_back(dir.empty() ? n : dir + "/" + n);
    }
  }
  for (const auto& n : names) {
    if (repo.empty()) {
      std::error_code ec;
      if (!std::filesystem::exists(n, ec))
        throw CliError{kExitFile, names.size() > 1 ? fmt::format("{}: split {} of the model is missing", target, n)
                                                   : fmt::format("{}: no such file", n)};
      out.files.push_back(checkpoint::read_gguf_file(n));
      out.names.push_back(n);
    } else {
      out.files.push_back(checkpoint::read_hub_gguf(*client, repo, n));
      out.names.push_back(repo + "/" + n);
    }
  }
  return out;
}

std::string type_name(std::uint32_t id) {
  const ggml::TypeTraits* t = ggml::type_traits(id);
  return t ? std::string(t->name) : fmt::format("type {}", id);
}

std::uint32_t cache_type(const std::string& name, const char* flag) {
  const ggml::TypeTraits* t = ggml::type_by_name(name);
  if (!t || !is_cache_type(t->id))
    throw CliError{kExitUsage, fmt::format("{}: '{}' is not a KV cache type; llama.cpp takes {}", flag, name, cache_type_list())};
  return t->id;
}

double memory_size(const std::string& text, const char* flag) {
  const Result<double> v = capture([&] { return parse_memory_size(text, flag); });
  if (!v) throw CliError{kExitUsage, v.error().message()};
  return *v;
}

LlamaCppOptions options_of(const GgufArgs& a) {
  if (a.ctx_size < 0 || a.ubatch < 1 || a.parallel < 1)
    throw CliError{kExitUsage, "--ctx-size must be >= 0, --ubatch-size and --parallel >= 1"};
  if (a.flash_attn != "on" && a.flash_attn != "off" && a.flash_attn != "auto")
    throw CliError{kExitUsage, fmt::format("--flash-attn: '{}'; expected on, off or auto", a.flash_attn)};
  LlamaCppOptions o;
  o.gpu_layers = a.gpu_layers;
  o.ctx_size = a.ctx_size;
  o.cache_type_k = cache_type(a.cache_type_k, "--cache-type-k");
  o.cache_type_v = cache_type(a.cache_type_v, "--cache-type-v");
  o.flash_attn = a.flash_attn != "off";
  o.ubatch = a.ubatch;
  o.parallel = a.parallel;
  o.overhead_bytes = a.overhead.empty() ? kRunDefaults.overhead_bytes : memory_size(a.overhead, "--overhead");
  return o;
}

// A metadata value as JSON: numbers exact (uint64 and int64 as integers), arrays whole.
Json value_json(const gguf::Value& v) {
  using gguf::ValueType;
  if (v.is_array()) {
    Json a = Json::array();
    if (v.elem == ValueType::kString) for (const auto& s : v.strings) a.push_back(s);
    else if (v.elem == ValueType::kArray) for (const auto& item : v.items) a.push_back(value_json(item));
    else
      for (std::uint64_t k = 0; k < v.count; ++k) {
        if (gguf::is_float_type(v.elem)) a.push_back(*v.number_at(k));
        else if (v.elem == ValueType::kBool) a.push_back(*v.int_at(k) != 0);
        else if (const auto i = v.int_at(k)) a.push_back(*i);
        else a.push_back(static_cast<std::uint64_t>(*v.number_at(k)));  // a uint64 above INT64_MAX
      }
    return a;
  }
  switch (v.type) {
    case ValueType::kString: return v.text;
    case ValueType::kBool: return v.u != 0;
    case ValueType::kFloat32: case ValueType::kFloat64: return v.f;
    case ValueType::kInt8: case ValueType::kInt16: case ValueType::kInt32: case ValueType::kInt64: return v.i;
    default: return v.u;
  }
}

// Short text of a value for the table: long arrays as their type and count.
std::string value_text(const gguf::Value& v) {
  if (v.is_array()) {
    if (v.count <= 8 && v.elem != gguf::ValueType::kArray) return value_json(v).dump();
    return fmt::format("[{} × {}]", v.count, gguf::value_type_name(v.elem));
  }
  if (v.type == gguf::ValueType::kString) return v.text.size() <= 80 ? v.text : v.text.substr(0, 77) + "...";
  return value_json(v).dump();
}

std::string ne_text(const std::vector<std::int64_t>& ne) { return fmt::format("[{}]", fmt::join(ne, ", ")); }

std::string bytes_text(double b) { return convert_bytes(b); }

Json files_json(const Loaded& l) {
  Json files = Json::array();
  for (std::size_t i = 0; i < l.files.size(); ++i) {
    const gguf::File& f = l.files[i];
    files.push_back({{"name", l.names[i]}, {"version", f.version}, {"alignment", f.alignment},
                     {"header_size", f.header_size}, {"data_offset", f.data_offset}, {"data_size", f.data_size},
                     {"file_size", f.file_size}, {"tensors", f.tensors.size()}, {"metadata_count", f.metadata.size()}});
  }
  return files;
}

Json dims_json(const GgufModel& m) {
  const ModelDims& d = m.dims;
  Json layers = Json::array();
  for (const auto& l : d.per_layer)
    layers.push_back({{"attention", l.attention == AttentionKind::kFull      ? "full"
                                    : l.attention == AttentionKind::kSliding ? "sliding"
                                    : l.attention == AttentionKind::kChunked ? "chunked"
                                    : l.attention == AttentionKind::kMla     ? "mla"
                                    : l.attention == AttentionKind::kRecurrent ? "recurrent" : "none"},
                      {"window", l.window}, {"heads", l.heads}, {"kv_heads", l.kv_heads},
                      {"k_head_dim", l.k_head_dim}, {"v_head_dim", l.v_head_dim}});
  return {{"architecture", m.architecture}, {"name", m.name}, {"block_count", d.layers},
          {"context_length", m.context_length}, {"embedding_length", d.hidden}, {"vocab", d.vocab},
          {"head_count", d.heads}, {"head_count_kv", d.kv_heads}, {"head_dim", d.head_dim},
          {"feed_forward_length", d.intermediate}, {"expert_count", d.experts},
          {"expert_used_count", d.experts_per_token}, {"tied_embeddings", d.tied_embeddings},
          {"window_rule", d.window_rule}, {"layers", layers}};
}

Json by_type_json(const GgufModel& m) {
  Json out = Json::array();
  for (const auto& t : m.by_type())
    out.push_back({{"type", type_name(t.type)}, {"type_id", t.type}, {"tensors", t.tensors},
                   {"params", t.params}, {"bytes", t.bytes}});
  return out;
}

void print_by_type(const GgufModel& m) {
  fmt::print("{:<10} {:>8} {:>16} {:>12} {:>10}\n", "type", "tensors", "params", "bytes", "bits/w");
  for (const auto& t : m.by_type())
    fmt::print("{:<10} {:>8} {:>16} {:>12} {:>10.3f}\n", type_name(t.type), t.tensors, t.params, bytes_text(static_cast<double>(t.bytes)),
               t.params ? 8.0 * static_cast<double>(t.bytes) / static_cast<double>(t.params) : 0.0);
  fmt::print("{:<10} {:>8} {:>16} {:>12}\n", "total", m.tensors.size(), m.params, bytes_text(static_cast<double>(m.weight_bytes)));
}

void inspect_model(const Loaded& l, bool json) {
  const Result<GgufModel> model = gguf_model(l.files, l.names);
  const gguf::File& first = l.files.front();
  if (json) {
    Json out;
    out["format"] = "gguf";
    out["files"] = files_json(l);
    Json meta = Json::object();
    for (const auto& kv : first.metadata) {
      Json e = {{"type", gguf::value_type_name(kv.value.type)}};
      if (kv.value.is_array()) e["elem"] = gguf::value_type_name(kv.value.elem);
      e["value"] = value_json(kv.value);
      meta[kv.key] = std::move(e);
    }
    out["metadata"] = std::move(meta);
    Json tensors = Json::array();
    for (std::size_t i = 0; i < l.files.size(); ++i)
      for (const auto& t : l.files[i].tensors)
        tensors.push_back({{"name", t.name}, {"type", type_name(t.type)}, {"type_id", t.type}, {"ne", t.ne},
                           {"shape", t.shape()}, {"offset", t.offset}, {"bytes", t.nbytes}, {"numel", t.numel},
                           {"file", l.names[i]}});
    out["tensors"] = std::move(tensors);
    if (model) {
      out["model"] = dims_json(*model);
      out["by_type"] = by_type_json(*model);
      out["totals"] = {{"tensors", model->tensors.size()}, {"params", model->params}, {"bytes", model->weight_bytes},
                       {"file_bytes", model->file_bytes}};
      out["notes"] = model->notes;
    } else {
      out["model_error"] = model.error().message();
    }
    fmt::print("{}\n", out.dump(2));
    return;
  }
  for (std::size_t i = 0; i < l.files.size(); ++i) {
    const gguf::File& f = l.files[i];
    fmt::print("{}: GGUF v{}, {} tensors, {} metadata keys, header {} bytes, data at {} (alignment {}), file {}\n",
               l.names[i], f.version, f.tensors.size(), f.metadata.size(), f.header_size, f.data_offset,
               f.alignment, bytes_text(static_cast<double>(f.file_size)));
  }
  for (const auto& kv : first.metadata)
    fmt::print("  {:<48} {:<8} {}\n", kv.key,
               kv.value.is_array() ? fmt::format("{}[]", gguf::value_type_name(kv.value.elem)) : std::string(gguf::value_type_name(kv.value.type)),
               value_text(kv.value));
  for (std::size_t i = 0; i < l.files.size(); ++i)
    for (const auto& t : l.files[i].tensors)
      fmt::print("  {:<48} {:<8} {:<24} {:>12} @ {}\n", t.name, type_name(t.type), ne_text(t.ne), t.nbytes, t.offset);
  if (!model) {
    fmt::print("model: {}\n", model.error().message());
    return;
  }
  const ModelDims& d = model->dims;
  fmt::print("{} ({}): {} blocks, embedding {}, heads {} (KV {}), head dim {}, context {}, vocab {}{}\n",
             model->architecture, model->name, d.layers, d.hidden, d.heads, d.kv_heads, d.head_dim,
             model->context_length, d.vocab,
             d.experts ? fmt::format(", {} experts ({} per token)", d.experts, d.experts_per_token) : "");
  print_by_type(*model);
  for (const auto& n : model->notes) fmt::print("note: {}\n", n);
}

std::string device_row(const char* what, double gpu, double cpu) {
  return fmt::format("{:<12} {:>12} {:>12}\n", what, bytes_text(gpu), bytes_text(cpu));
}

Json estimate_json(const GgufModel& m, const LlamaCppOptions& o, const LlamaCppEstimate& e,
                   const std::optional<double>& vram, const std::optional<std::int64_t>& best) {
  auto dev = [](const DeviceBytes& d) {
    return Json{{"weights", d.weights}, {"kv_cache", d.kv}, {"compute", d.compute}, {"overhead", d.overhead}, {"total", d.total()}};
  };
  Json layers = Json::array();
  for (const auto& l : e.layers)
    layers.push_back({{"layer", l.layer}, {"device", l.gpu ? "gpu" : "cpu"}, {"weights", l.weight_bytes},
                      {"sliding", l.sliding}, {"cells", l.cells}, {"k", l.k_bytes}, {"v", l.v_bytes}, {"state", l.state_bytes}});
  Json out = {{"format", "gguf"}, {"engine", "llama.cpp"}, {"files", m.files}, {"model", dims_json(m)},
              {"by_type", by_type_json(m)}, {"weights", m.weight_bytes}, {"params", m.params},
              {"options", {{"gpu_layers", e.gpu_layers}, {"ctx_size", o.ctx_size}, {"n_ctx", e.n_ctx},
                           {"cache_type_k", type_name(o.cache_type_k)}, {"cache_type_v", type_name(o.cache_type_v)},
                           {"flash_attn", o.flash_attn}, {"ubatch", o.ubatch}, {"parallel", o.parallel}}},
              {"gpu", dev(e.gpu)}, {"cpu", dev(e.cpu)},
              {"input_bytes", e.input_bytes}, {"output_bytes", e.output_bytes}, {"output_gpu", e.output_gpu},
              {"kv_cache", {{"k", e.kv_k_bytes}, {"v", e.kv_v_bytes}, {"state", e.state_bytes}}},
              {"layers", layers}, {"compute_approximate", true}, {"compute_note", e.compute_note}};
  if (vram) {
    out["vram"] = *vram;
    out["fits"] = e.gpu.total() <= *vram;
    out["max_gpu_layers"] = best ? Json(*best) : Json(nullptr);
  }
  Json notes = m.notes;
  for (const auto& n : e.notes) notes.push_back(n);
  out["notes"] = notes;
  return out;
}

void print_estimate(const GgufModel& m, const LlamaCppOptions& o, const LlamaCppEstimate& e,
                    const std::optional<double>& vram, const std::optional<std::int64_t>& best) {
  const ModelDims& d = m.dims;
  fmt::print("{} ({}, {} file{}): {} parameters, weights {}\n", m.name.empty() ? m.files.front() : m.name,
             m.architecture, m.files.size(), m.files.size() > 1 ? "s" : "", m.params, bytes_text(static_cast<double>(m.weight_bytes)));
  print_by_type(m);
  fmt::print("llama.cpp: --gpu-layers {} of {} (the output layer and the last {} blocks), --ctx-size {} (n_ctx {}), "
             "K cache {}, V cache {}, flash attention {}\n",
             e.gpu_layers, d.layers + 1, std::max<std::int64_t>(e.gpu_layers - 1, 0), o.ctx_size, e.n_ctx,
             type_name(o.cache_type_k), type_name(o.cache_type_v), o.flash_attn ? "on" : "off");
  fmt::print("{:<12} {:>12} {:>12}\n", "", "VRAM", "RAM");
  fmt::print("{}", device_row("weights", e.gpu.weights, e.cpu.weights));
  fmt::print("{}", device_row("KV cache", e.gpu.kv, e.cpu.kv));
  fmt::print("{}", device_row("compute*", e.gpu.compute, e.cpu.compute));
  fmt::print("{}", device_row("overhead", e.gpu.overhead, e.cpu.overhead));
  fmt::print("{}", device_row("total", e.gpu.total(), e.cpu.total()));
  fmt::print("KV cache: K {}, V {}{} — per layer:\n", bytes_text(e.kv_k_bytes), bytes_text(e.kv_v_bytes),
             e.state_bytes > 0 ? fmt::format(", recurrent state {}", bytes_text(e.state_bytes)) : "");
  for (const auto& l : e.layers)
    fmt::print("  blk.{:<4} {:<4} {:<9} cells {:>8}  weights {:>10}  K {:>10}  V {:>10}{}\n", l.layer, l.gpu ? "GPU" : "CPU",
               l.sliding ? "sliding" : d.per_layer[static_cast<std::size_t>(l.layer)].attention == AttentionKind::kRecurrent ? "recurrent" : "full",
               l.cells, bytes_text(static_cast<double>(l.weight_bytes)), bytes_text(l.k_bytes), bytes_text(l.v_bytes),
               l.state_bytes > 0 ? fmt::format("  state {}", bytes_text(l.state_bytes)) : "");
  fmt::print("input layer (token_embd, CPU): {}; output layer ({}): {}\n", bytes_text(static_cast<double>(e.input_bytes)),
             e.output_gpu ? "GPU" : "CPU", bytes_text(static_cast<double>(e.output_bytes)));
  if (vram) {
    fmt::print("--vram {}: {}\n", bytes_text(*vram), e.gpu.total() <= *vram ? "fits" : "does not fit");
    if (best) fmt::print("largest --gpu-layers that fits: {} of {}\n", *best, d.layers + 1);
    else fmt::print("largest --gpu-layers that fits: none\n");
  }
  fmt::print("* {}\n", e.compute_note);
  for (const auto& n : m.notes) fmt::print("note: {}\n", n);
  for (const auto& n : e.notes) fmt::print("note: {}\n", n);
}

}  // namespace

bool is_gguf_target(const std::string& target) {
  if (checkpoint::is_gguf_name(target)) return true;
  const auto hub = checkpoint::split_hub_target(target);
  return hub && checkpoint::is_gguf_name(hub->second);
}

int run_gguf_inspect(const GgufArgs& args) {
  return guarded([&] {
    hub::HubClient client(hub::HubOptions::from_environment());
    inspect_model(load_files(args.target, &client), args.json);
    return int{kExitOk};
  });
}

int run_gguf_estimate(const GgufArgs& args) {
  return guarded([&] {
    const LlamaCppOptions o = options_of(args);
    const std::optional<double> vram = args.vram.empty() ? std::nullopt : std::optional<double>(memory_size(args.vram, "--vram"));
    hub::HubClient client(hub::HubOptions::from_environment());
    const Loaded l = load_files(args.target, &client);
    const GgufModel m = cli_value(gguf_model(l.files, l.names));
    const LlamaCppEstimate e = cli_value(capture([&] { return llamacpp_estimate(m, o); }));
    std::optional<std::int64_t> best;
    if (vram) best = cli_value(capture([&] { return largest_gpu_layers(m, o, *vram); }));
    if (args.json) fmt::print("{}\n", estimate_json(m, o, e, vram, best).dump(2));
    else print_estimate(m, o, e, vram, best);
    return int{kExitOk};
  });
}

bool try_gguf_repo_table(const GgufArgs& args) {
  hub::HubClient client(hub::HubOptions::from_environment());
  const LlamaCppOptions o = options_of(args);
  repo::GgufRepoOptions options{o, std::nullopt};
  if (!args.vram.empty()) options.vram = memory_size(args.vram, "--vram");
  repo::RepoFiles files = list_repo(args.target, &client);
  if (repo::gguf_repo_listing(files).models.empty()) return false;
  gather_repo(repo::RepoKind::kGguf, files, args.target, &client);
  const repo::RepoReport report = cli_value(capture([&] { return repo::gguf_repo_report(files, options); }));
  if (!args.json) {
    print_repo_report(report);
    return true;
  }
  Json out = {{"format", "gguf-repo"}, {"repo", args.target}};
  for (auto it = report.fields.begin(); it != report.fields.end(); ++it) out[it.key()] = it.value();
  fmt::print("{}\n", out.dump(2));
  return true;
}

void rewrite_llamacpp_flags(int argc, char** argv) {
  static const std::pair<const char*, const char*> kAliases[] = {
      {"-ngl", "--gpu-layers"}, {"--n-gpu-layers", "--gpu-layers"}, {"-ctk", "--cache-type-k"},
      {"-ctv", "--cache-type-v"}, {"-fa", "--flash-attn"}, {"-ub", "--ubatch-size"}, {"-np", "--parallel"}};
  static char* kLong[std::size(kAliases)] = {};
  for (int i = 1; i < argc; ++i)
    for (std::size_t k = 0; k < std::size(kAliases); ++k)
      if (std::strcmp(argv[i], kAliases[k].first) == 0) {
        if (!kLong[k]) kLong[k] = const_cast<char*>(kAliases[k].second);
        argv[i] = kLong[k];
      }
}

}  // namespace memfit::cli
