#include "memfit/memory/llamacpp_offload.h"

#include <algorithm>

#include <fmt/format.h>

#include "memfit/memory/kv_cache.h"

namespace memfit {
namespace {

// common/arg.cpp's kv_cache_types: the types --cache-type-k / --cache-type-v accept.
constexpr std::uint32_t kCacheTypes[] = {0, 1, 30, 8, 2, 3, 20, 6, 7};

double element_bytes(std::uint32_t type) {
  const ggml::TypeTraits& t = *ggml::type_traits(type);
  return static_cast<double>(t.type_size) / static_cast<double>(t.block_size);
}

// Per layer and sequence-set: the KV cells' bytes at one byte per element (kv_cache() is linear
// in the element size), and the recurrent state in llama.cpp's f32.
struct CacheShape {
  std::vector<double> k_unit, v_unit, state;
  std::vector<std::int64_t> cells;
};

CacheShape cache_shape(const ModelDims& dims, const LlamaCppOptions& o, std::int64_t ctx) {
  AttentionLayout layout = attention_layout(dims);
  KvOptions kv;
  kv.engine = Engine::kLlamaCpp;
  kv.dtype = KvDtype::kF32;
  kv.context = ctx;
  kv.batch = o.parallel;
  kv.llamacpp_ubatch = o.ubatch;
  AttentionLayout k_only = layout, v_only = layout, state_only = layout;
  for (std::size_t i = 0; i < layout.layers.size(); ++i) {
    k_only.layers[i].v_head_dim = 0;
    k_only.layers[i].state = {};
    v_only.layers[i].k_head_dim = 0;
    v_only.layers[i].state = {};
    state_only.layers[i].kv_heads = 0;
  }
  v_only.mla = false;  // MLA: the latent lives in K; V is a view of it
  for (auto& l : v_only.layers)
    if (l.kind == AttentionKind::kMla) l.kv_heads = 0;
  const KvCache k = kv_cache(k_only, kv), v = kv_cache(v_only, kv), s = kv_cache(state_only, kv);
  CacheShape out;
  for (std::size_t i = 0; i < layout.layers.size(); ++i) {
    out.k_unit.push_back(k.layer_bytes[i] / 4.0);
    out.v_unit.push_back(v.layer_bytes[i] / 4.0);
    out.state.push_back(s.layer_bytes[i]);
    const double per_token = k.layer_bytes[i] + v.layer_bytes[i];
    const AttentionLayer& l = layout.layers[i];
    const double token_bytes = l.kind == AttentionKind::kMla
                                   ? static_cast<double>(layout.mla_latent) * 4.0
                                   : static_cast<double>(l.kv_heads * (l.k_head_dim + l.v_head_dim)) * 4.0;
    out.cells.push_back(token_bytes > 0 && per_token > 0
                            ? static_cast<std::int64_t>(per_token / token_bytes / static_cast<double>(o.parallel) + 0.5)
                            : 0);
  }
  return out;
}

std::int64_t pad(std::int64_t n, std::int64_t p) { return (n + p - 1) / p * p; }

}  // namespace

bool is_cache_type(std::uint32_t type) {
  return std::find(std::begin(kCacheTypes), std::end(kCacheTypes), type) != std::end(kCacheTypes);
}

std::string cache_type_list() {
  std::string out;
  for (std::uint32_t t : kCacheTypes) out += fmt::format("{}{}", out.empty() ? "" : ", ", ggml::type_traits(t)->name);
  return out;
}

double compute_buffer_bytes(const GgufModel& m, const LlamaCppOptions& o, std::int64_t n_ctx, bool has_output) {
  const ModelDims& d = m.dims;
  const double ub = static_cast<double>(std::min(o.ubatch, n_ctx));
  double floats = ub * (4.0 * static_cast<double>(d.hidden) + 2.0 * static_cast<double>(d.intermediate));
  if (has_output) floats += ub * static_cast<double>(d.vocab);
  if (!o.flash_attn) floats += static_cast<double>(d.heads) * static_cast<double>(n_ctx) * ub;
  return floats * 4.0;
}

LlamaCppEstimate llamacpp_estimate(const GgufModel& m, const LlamaCppOptions& o) {
  for (std::uint32_t t : {o.cache_type_k, o.cache_type_v})
    if (!is_cache_type(t))
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("cache type {}: llama.cpp's KV cache types are {}",
                              ggml::type_traits(t) ? ggml::type_traits(t)->name : "?", cache_type_list()));
  if (o.ubatch < 1 || o.parallel < 1)
    throw Error(ErrorCode::kInvalidArgument, "llama.cpp: ubatch and parallel must be at least 1");
  const ModelDims& d = m.dims;
  const auto n_layer = d.layers;
  LlamaCppEstimate e;
  e.gpu_layers = o.gpu_layers < 0 ? n_layer + 1 : std::min(o.gpu_layers, n_layer + 1);
  const std::int64_t ctx = o.ctx_size > 0 ? o.ctx_size : (m.context_length > 0 ? m.context_length : 4096);
  e.n_ctx = pad(ctx * o.parallel, 256);
  // Quantized K/V rows must hold whole blocks (llama.cpp refuses the context otherwise).
  for (const auto& [type, width, which] : {std::tuple{o.cache_type_k, d.per_layer.empty() ? 0 : d.per_layer[0].k_head_dim, "K"},
        std::tuple{o.cache_type_v, d.per_layer.empty() ? 0 : d.per_layer[0].v_head_dim, "V"}}) {
    const std::int64_t block = ggml::type_traits(type)->block_size;
    if (width > 0 && width % block != 0)
      throw Error(ErrorCode::kInvalidArgument, fmt::format("cache type {} for {}: the head width {} is not a multiple of its block {}",
                                                           ggml::type_traits(type)->name, which, width, block));
  }
  if (ggml::type_traits(o.cache_type_v)->quantized && !o.flash_attn)
    e.notes.push_back("a quantized V cache needs flash attention in llama.cpp");
  const CacheShape cache = cache_shape(d, o, ctx);
  const double kb = element_bytes(o.cache_type_k), vb = element_bytes(o.cache_type_v);
  const std::int64_t gpu_start = n_layer + 1 - e.gpu_layers;
  std::vector<std::uint64_t> block_bytes(static_cast<std::size_t>(n_layer), 0);
  std::uint64_t embd = 0;
  for (const auto& t : m.tensors) {
    if (t.layer >= 0) block_bytes[static_cast<std::size_t>(t.layer)] += t.bytes;
    else if (t.name == "output.weight" || t.name == "output_norm.weight" || t.name == "output_norm.bias" || t.name == "output.bias")
      e.output_bytes += t.bytes;
    else e.input_bytes += t.bytes;
    if (t.name == "token_embd.weight") embd = t.bytes;
  }
  e.output_gpu = n_layer >= gpu_start;
  // Tied embeddings: the output is token_embd created again in the output layer's buffer
  // (TENSOR_DUPLICATED): a second copy on the GPU; on the CPU both map the same file bytes.
  if (d.tied_embeddings && e.output_gpu) e.output_bytes += embd;
  for (std::int64_t i = 0; i < n_layer; ++i) {
    const auto k = static_cast<std::size_t>(i);
    LlamaCppLayer l;
    l.layer = static_cast<int>(i);
    l.gpu = i >= gpu_start;
    l.weight_bytes = block_bytes[k];
    l.k_bytes = cache.k_unit[k] * kb;
    l.v_bytes = cache.v_unit[k] * vb;
    l.state_bytes = cache.state[k];
    l.cells = cache.cells[k];
    l.sliding = d.per_layer[k].windowed();
    DeviceBytes& dev = l.gpu ? e.gpu : e.cpu;
    dev.weights += static_cast<double>(l.weight_bytes);
    dev.kv += l.k_bytes + l.v_bytes + l.state_bytes;
    e.kv_k_bytes += l.k_bytes;
    e.kv_v_bytes += l.v_bytes;
    e.state_bytes += l.state_bytes;
    e.layers.push_back(l);
  }
  e.cpu.weights += static_cast<double>(e.input_bytes);
  (e.output_gpu ? e.gpu : e.cpu).weights += static_cast<double>(e.output_bytes);
  const bool any_cpu_layer = gpu_start > 0;
  if (e.gpu_layers > 0) {
    e.gpu.compute = compute_buffer_bytes(m, o, e.n_ctx, e.output_gpu);
    e.gpu.overhead = o.overhead_bytes;
  }
  if (any_cpu_layer || e.gpu_layers == 0) e.cpu.compute = compute_buffer_bytes(m, o, e.n_ctx, !e.output_gpu);
  e.compute_note = fmt::format(
      "compute buffer approximated (llama.cpp sizes it by reserving the graph): n_ubatch {} × (4·n_embd + 2·n_ff"
      "{}{}) × 4 bytes per device",
      std::min(o.ubatch, e.n_ctx), " + n_vocab where the output layer is", o.flash_attn ? "" : " + n_head·n_ctx");
  return e;
}

std::optional<std::int64_t> largest_gpu_layers(const GgufModel& m, LlamaCppOptions o, double vram) {
  std::optional<std::int64_t> best;
  // GPU bytes grow with the layers offloaded; the search is linear (a few hundred layers at most).
  for (std::int64_t n = 0; n <= m.dims.layers + 1; ++n) {
    o.gpu_layers = n;
    if (llamacpp_estimate(m, o).gpu.total() <= vram) best = n;
    else break;
  }
  return best;
}

}  // namespace memfit
