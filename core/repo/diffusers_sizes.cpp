// One component's size: from its safetensors headers (exact), from its config alone (transformers
// components without weights, through memfit's model builder), or from the listing's file sizes
// (.bin weights: not read here).
#include <algorithm>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "diffusers_parts.h"
#include "repo_tensors.h"
#include "kinds.h"
#include "memfit/error.h"
#include "memfit/format/checkpoint_index.h"
#include "memfit/format/safetensors.h"
#include "memfit/format/strict_json.h"
#include "memfit/model/keep_fp32.h"
#include "memfit/model/model.h"

namespace memfit::repo::diffusers {
namespace {

// One tensor as the component holds it in memory.
struct Held {
  std::string name;
  std::uint64_t numel = 0;
  DType stored = DType::kF32;
  bool parameter = true;
  KeepFp32 keep = KeepFp32::kNo;
};

std::string module_of(const std::string& tensor) {
  const auto dot = tensor.rfind('.');
  return dot == std::string::npos ? std::string() : tensor.substr(0, dot);
}

// from_pretrained(torch_dtype=D) casts floating tensors to D (diffusers' load_model_dict_into_meta,
// transformers alike) except those a transformers class keeps in float32; others stay as stored.
DType loaded_dtype(const Held& t, std::optional<DType> dtype) {
  if (!dtype || !is_floating(t.stored)) return t.stored;
  return kept_in_fp32(t.keep, *dtype) ? DType::kF32 : *dtype;
}

std::uint64_t tensor_bytes(const Held& t, DType dt, const std::string& component) {
  const auto bits = static_cast<std::uint64_t>(dtype_bits(dt));
  if (t.numel > std::numeric_limits<std::uint64_t>::max() / bits)
    throw Error(ErrorCode::kOverflow, fmt::format("{}: tensor '{}' of {} elements overflows a byte count",
                                                  component, t.name, t.numel));
  return (t.numel * bits + 7) / 8;
}

void add_checked(std::uint64_t& sum, std::uint64_t add, const std::string& component) {
  if (sum > std::numeric_limits<std::uint64_t>::max() - add)
    throw Error(ErrorCode::kOverflow, fmt::format("{}: the tensors' bytes overflow 64 bits", component));
  sum += add;
}

// Sums the held tensors into `out`: parameters, bytes at the load dtype, dtypes, largest module.
void sum_tensors(const std::vector<Held>& held, std::optional<DType> dtype, const std::string& component,
                 ComponentSize& out) {
  std::uint64_t params = 0;
  std::map<std::string, std::uint64_t> per_module;
  std::vector<std::string> module_order;
  for (const Held& t : held) {
    const DType dt = loaded_dtype(t, dtype);
    const std::uint64_t b = tensor_bytes(t, dt, component);
    add_checked(out.bytes, b, component);
    if (t.parameter) add_checked(params, t.numel, component);
    const std::string name(torch_name(dt));
    if (std::find(out.dtypes.begin(), out.dtypes.end(), name) == out.dtypes.end()) out.dtypes.push_back(name);
    const std::string m = module_of(t.name);
    auto [it, fresh] = per_module.emplace(m, 0);
    if (fresh) module_order.push_back(m);
    add_checked(it->second, b, component);
  }
  out.parameters = params;
  // The first module with the most bytes: accelerate's cpu_offload hooks every module that has
  // tensors of its own and brings only those to the GPU for its forward.
  for (const std::string& m : module_order)
    if (per_module[m] > out.largest_module_bytes) {
      out.largest_module_bytes = per_module[m];
      out.largest_module = m;
    }
}

// The config's text, or "" when it was not listed or recorded absent.
std::string config_text(const RepoFiles& files, const Component& c) {
  auto it = files.texts.find(c.name + "/config.json");
  return it == files.texts.end() ? std::string() : it->second;
}

// A single-tower CLIP config (model_type clip_text_model / clip_vision_model: what the text
// encoders of Stable Diffusion, SDXL and FLUX carry) is the text or vision part of a "clip"
// config; memfit's clip family reads a single-tower class from that part, as CLIPTextConfig.
// from_pretrained does on a "clip" config. Other configs are passed as they are.
std::string family_config(const std::string& config) {
  Json j;
  if (parse_strict_json(config, 1000, &j, JsonDialect::kPython) || !j.is_object()) return config;
  auto type = j.find("model_type");
  if (type == j.end() || !type->is_string()) return config;
  const char* part = *type == "clip_text_model" ? "text_config" : *type == "clip_vision_model" ? "vision_config" : nullptr;
  if (!part) return config;
  Json wrapped = {{"model_type", "clip"}, {part, j}};
  if (auto a = j.find("architectures"); a != j.end()) wrapped["architectures"] = *a;
  for (const char* key : {"torch_dtype", "dtype"})
    if (auto d = j.find(key); d != j.end()) wrapped[key] = *d;
  return wrapped.dump();
}

// memfit's model for a transformers component's config (and its checkpoint, when read), built
// as the class model_index.json names; nullopt with a note when memfit cannot build it.
std::optional<Model> transformers_model(const Component& c, const std::string& config,
                                        std::vector<CheckpointTensor> checkpoint, ComponentSize& out) {
  EstimateRequest req;
  req.config_text = family_config(config);
  req.name = c.name;
  req.library = "transformers";
  req.mode = Mode::kMemfit;
  req.class_override = c.class_name;
  req.checkpoint = std::move(checkpoint);
  if (!req.checkpoint.empty()) req.source = EstimateRequest::Source::kCheckpoint;
  Result<Model> m = build_model(req);
  if (!m && m.error().code() == ErrorCode::kUnknownClass) {
    req.class_override.clear();  // the config's own architectures[0]
    m = build_model(req);
  }
  if (!m) {
    // The reason without the list of every supported model_type that may follow it.
    const std::string& why = m.error().message();
    out.notes.push_back(fmt::format("{}: memfit cannot read its config as {} ({})", c.name, c.class_name,
                                    why.substr(0, why.find("; supported:"))));
    return std::nullopt;
  }
  return std::move(m).value();
}

// A transformers config's own dtype (torch_dtype, or dtype in transformers ≥ 4.56), when it
// names a floating type.
std::optional<DType> config_dtype(const Model& m) {
  for (const char* key : {"dtype", "torch_dtype"})
    if (auto s = m.config.string_opt({key}))
      if (auto dt = dtype_from_name(*s); dt && is_floating(*dt)) return dt;
  return std::nullopt;
}

void from_headers(const RepoFiles& files, const Component& c, const WeightsChoice& w,
                  std::optional<DType> dtype, ComponentSize& out) {
  std::vector<std::pair<std::string, safetensors::Header>> headers;
  if (w.form == WeightsChoice::Form::kSafetensors) {
    headers.emplace_back(w.file, parsed_header(files, w.file));
    out.source = "safetensors header";
  } else {
    headers = index_headers(files, w.file);
    out.source = fmt::format("{} safetensors shards", headers.size());
  }
  if (!w.variant.empty()) out.source += fmt::format(" ({} variant)", w.variant);
  std::vector<Held> held;
  for (const auto& [file, h] : headers)
    for (const auto& t : h.tensors) held.push_back({t.name, t.numel, t.dtype, true, KeepFp32::kNo});
  // transformers keeps some modules in float32 in half-precision loads (T5's wo in float16):
  // the class's rules, by tensor name, from memfit's model of the config and checkpoint.
  const std::string config = config_text(files, c);
  if (c.library == "transformers" && dtype && *dtype != DType::kF32 && !config.empty()) {
    if (auto m = transformers_model(c, config, checkpoint_tensors(headers), out)) {
      std::map<std::string, KeepFp32> keep;
      for (const auto& t : m->tree.tensors)
        if (t.keep_fp32 != KeepFp32::kNo) keep[t.name] = t.keep_fp32;
      for (Held& t : held)
        if (auto k = keep.find(t.name); k != keep.end()) t.keep = k->second;
    }
  }
  sum_tensors(held, dtype, c.name, out);
}

void from_config(const RepoFiles& files, const Component& c, std::optional<DType> dtype, ComponentSize& out) {
  const std::string config = config_text(files, c);
  if (c.library != "transformers" || config.empty()) {
    out.source = "no weights listed";
    return;
  }
  auto m = transformers_model(c, config, {}, out);
  if (!m) {
    out.source = "no weights listed";
    return;
  }
  // The config says how its weights are stored (torch_dtype); without it, float32.
  const DType stored = config_dtype(*m).value_or(DType::kF32);
  std::vector<Held> held;
  for (const auto& t : m->tree.tensors) {
    if (t.is_alias() || t.era == BufferEra::kLegacyOnly) continue;
    const DType dt = is_floating(t.dtype) ? stored : t.dtype;
    held.push_back({t.name, t.numel, dt, t.kind == TensorKind::kParameter, t.keep_fp32});
  }
  out.has_weights = true;
  out.source = fmt::format("config ({})", m->model_type.empty() ? c.class_name : m->model_type);
  out.notes.push_back(fmt::format("{}: no weights in the repo; sized from its config as {}", c.name,
                                  m->class_name()));
  sum_tensors(held, dtype ? dtype : std::optional<DType>(stored), c.name, out);
}

}  // namespace

ComponentSize size_component(const RepoFiles& files, const Component& c, const WeightsChoice& w,
                             std::optional<DType> dtype) {
  ComponentSize out;
  switch (w.form) {
    case WeightsChoice::Form::kSafetensors:
    case WeightsChoice::Form::kShardedSafetensors:
      out.has_weights = true;
      from_headers(files, c, w, dtype, out);
      break;
    case WeightsChoice::Form::kOtherFormat: {
      out.has_weights = true;
      out.source = fmt::format("{} .bin file{} (size from the listing)", w.other_files.size(),
                               w.other_files.size() == 1 ? "" : "s");
      for (const std::string& f : w.other_files) {
        auto s = files.sizes.find(f);
        if (s == files.sizes.end())
          throw Error(ErrorCode::kRepoMissingFile,
                      fmt::format("{}: the listing gives no size, and only safetensors headers are read", f));
        add_checked(out.bytes, s->second, c.name);
      }
      // Nothing below the component is known: it counts whole as its own largest unit.
      out.largest_module = "(not read: .bin)";
      out.largest_module_bytes = out.bytes;
      out.notes.push_back(fmt::format("{}: .bin weights are not read: bytes as stored (file sizes), "
                                      "parameters unknown{}", c.name, dtype ? ", --dtype not applied" : ""));
      break;
    }
    case WeightsChoice::Form::kNone:
      from_config(files, c, dtype, out);
      break;
  }
  return out;
}

}  // namespace memfit::repo::diffusers
