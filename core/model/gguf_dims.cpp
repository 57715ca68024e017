// A GGUF file's model dimensions, read as llama.cpp's llama_model::load_hparams reads them
// (ggml-org/llama.cpp src/llama-model.cpp, src/llama-hparams.cpp; key names from
// src/llama-arch.cpp), into memfit's ModelDims.
#include <algorithm>

#include <fmt/format.h>

#include "memfit/model/gguf_model.h"

namespace memfit {
namespace {

// llama.cpp's loaders set the sliding-window layout per architecture (hparams.set_swa_pattern(n):
// layer il slides when il % n < n − 1); `{arch}.attention.sliding_window_pattern` overrides the
// period where a loader reads it. Llama 4's is chunked attention of 8192 tokens.
struct SwaDefault {
  std::string_view arch;
  std::int64_t period;
  bool chunked = false;
  std::int64_t window = 0;  // when the file has no sliding_window key
};
constexpr SwaDefault kSwaDefaults[] = {
    {"gemma2", 2},  {"gemma3", 6},  {"gemma-embedding", 6}, {"cohere2", 4},
    {"gpt-oss", 2}, {"exaone4", 4}, {"llama4", 4, true, 8192},
};
// Architectures whose every layer is recurrent (llama.cpp's llm_arch_is_recurrent).
constexpr std::string_view kRecurrentArchs[] = {"mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"};

class Meta {
 public:
  Meta(const gguf::File& f, std::string arch) : f_(f), arch_(std::move(arch)) {}
  std::string key(std::string_view suffix) const { return fmt::format("{}.{}", arch_, suffix); }

  // An integer key (scalar); nullopt when absent.
  std::optional<std::int64_t> integer(std::string_view suffix) const {
    const std::string k = key(suffix);
    const gguf::Value* v = f_.find(k);
    if (!v) return std::nullopt;
    if (v->is_array())
      throw Error(ErrorCode::kWrongType, fmt::format("GGUF key '{}' must be an integer, got an array", k));
    const auto i = v->as_int();
    if (!i || *i < 0)
      throw Error(ErrorCode::kWrongType,
                  fmt::format("GGUF key '{}' must be a non-negative integer, got {}", k, gguf::value_type_name(v->type)));
    return i;
  }
  std::int64_t required(std::string_view suffix) const {
    if (auto v = integer(suffix)) return *v;
    throw Error(ErrorCode::kMissingKey, fmt::format("GGUF key '{}' is missing", key(suffix)));
  }
  std::optional<double> number(std::string_view suffix) const {
    const gguf::Value* v = f_.find(key(suffix));
    return v ? v->as_number() : std::nullopt;
  }
  // A scalar repeated over the layers, or one value per layer (llama.cpp's get_key_or_arr).
  std::vector<std::int64_t> per_layer(std::string_view suffix, std::int64_t layers, std::int64_t fallback) const {
    const std::string k = key(suffix);
    const gguf::Value* v = f_.find(k);
    std::vector<std::int64_t> out(static_cast<std::size_t>(layers), fallback);
    if (!v) return out;
    if (!v->is_array()) {
      std::fill(out.begin(), out.end(), integer(suffix).value_or(fallback));
      return out;
    }
    if (v->count != static_cast<std::uint64_t>(layers))
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("GGUF key '{}' has {} values; block_count is {}", k, v->count, layers));
    for (std::int64_t i = 0; i < layers; ++i) {
      const auto x = v->int_at(static_cast<std::uint64_t>(i));
      if (!x || *x < 0)
        throw Error(ErrorCode::kWrongType, fmt::format("GGUF key '{}'[{}] must be a non-negative integer", k, i));
      out[static_cast<std::size_t>(i)] = *x;
    }
    return out;
  }
  const gguf::Value* find(std::string_view suffix) const { return f_.find(key(suffix)); }

 private:
  const gguf::File& f_;
  std::string arch_;
};

void set_recurrent_state(LayerDims& l, const Meta& m, std::string_view arch, std::int64_t hidden) {
  l.attention = AttentionKind::kRecurrent;
  if (arch.substr(0, 4) == "rwkv" || arch == "arwkv7") {
    // llama_hparams::n_embd_r / n_embd_s for RWKV: token_shift_count × n_embd and n_embd × head_size.
    l.state.conv_state = m.integer("token_shift_count").value_or(2) * hidden;
    l.state.ssm_state = hidden * m.integer("wkv.head_size").value_or(0);
    return;
  }
  // Mamba / Mamba-2 (n_embd_r: (d_conv − 1) × (d_inner + 2·n_group·d_state); n_embd_s:
  // d_state × d_inner). RecurrentDims keeps transformers' conv_kernel columns; kv_cache keeps
  // llama.cpp's d_conv − 1 of them.
  const std::int64_t d_conv = m.integer("ssm.conv_kernel").value_or(0);
  const std::int64_t d_inner = m.integer("ssm.inner_size").value_or(0);
  const std::int64_t d_state = m.integer("ssm.state_size").value_or(0);
  const std::int64_t groups = m.integer("ssm.group_count").value_or(0);
  l.state.conv_kernel = d_conv;
  l.state.conv_state = d_conv * (d_inner + 2 * groups * d_state);
  l.state.ssm_state = d_state * d_inner;
}

// Which layers slide, and their window; notes say what was assumed.
void apply_swa(ModelDims& d, const Meta& m, std::string_view arch, std::vector<std::string>& notes) {
  const SwaDefault* def = nullptr;
  for (const auto& s : kSwaDefaults)
    if (s.arch == arch) def = &s;
  std::int64_t window = m.integer("attention.sliding_window").value_or(0);
  if (window == 0 && def) window = def->window;
  if (window == 0) return;
  const gguf::Value* pattern = m.find("attention.sliding_window_pattern");
  std::vector<bool> slides(d.per_layer.size(), false);
  if (pattern && pattern->is_array()) {
    if (pattern->count != d.per_layer.size())
      throw Error(ErrorCode::kInvalidValue, fmt::format("GGUF key '{}' has {} values; block_count is {}",
                                                        m.key("attention.sliding_window_pattern"), pattern->count, d.per_layer.size()));
    for (std::size_t i = 0; i < slides.size(); ++i) slides[i] = pattern->int_at(i).value_or(0) != 0;
    d.window_rule = m.key("attention.sliding_window_pattern");
  } else {
    std::int64_t period = def ? def->period : 0;
    if (pattern) period = m.integer("attention.sliding_window_pattern").value_or(period);
    if (!pattern && !def) {
      notes.push_back(fmt::format("{} = {}: llama.cpp applies a sliding window only where the architecture's "
                                  "loader sets a pattern; every layer is counted as full attention",
                                  m.key("attention.sliding_window"), window));
      return;
    }
    for (std::size_t i = 0; i < slides.size(); ++i)
      slides[i] = period == 0 || static_cast<std::int64_t>(i) % period < period - 1;
    d.window_rule = pattern ? m.key("attention.sliding_window_pattern") : fmt::format("llama.cpp's {} pattern (period {})", arch, period);
  }
  for (std::size_t i = 0; i < slides.size(); ++i) {
    LayerDims& l = d.per_layer[i];
    if (!slides[i] || !l.caches_tokens() || l.attention == AttentionKind::kMla) continue;
    l.attention = def && def->chunked ? AttentionKind::kChunked : AttentionKind::kSliding;
    l.window = window;
  }
}

}  // namespace

ModelDims gguf_dims(const gguf::File& file, std::vector<std::string>& notes) {
  const gguf::Value* a = file.find("general.architecture");
  if (!a || a->type != gguf::ValueType::kString)
    throw Error(ErrorCode::kMissingKey, "GGUF key 'general.architecture' (a string) is missing");
  const std::string arch = a->text;
  const Meta m(file, arch);
  ModelDims d;
  d.layers = m.required("block_count");
  d.hidden = m.required("embedding_length");
  d.max_positions = m.integer("context_length").value_or(0);
  d.vocab = m.integer("vocab_size").value_or(0);  // else gguf_model(): token_embd's rows, the token list
  d.norm_eps = m.number("attention.layer_norm_rms_epsilon").value_or(m.number("attention.layer_norm_epsilon").value_or(0));
  d.generative = true;
  const auto heads = m.per_layer("attention.head_count", d.layers, 0);
  const std::int64_t heads0 = d.layers > 0 ? *std::max_element(heads.begin(), heads.end()) : 0;
  const auto kv_heads = m.per_layer("attention.head_count_kv", d.layers, -1);
  const auto ff = m.per_layer("feed_forward_length", d.layers, 0);
  const std::int64_t default_head = heads0 > 0 ? d.hidden / heads0 : 0;
  const std::int64_t k_len = m.integer("attention.key_length").value_or(default_head);
  const std::int64_t v_len = m.integer("attention.value_length").value_or(default_head);
  const std::int64_t kv_lora = m.integer("attention.kv_lora_rank").value_or(0);
  const std::int64_t n_rot = m.integer("rope.dimension_count").value_or(k_len);
  const bool all_recurrent = std::find(std::begin(kRecurrentArchs), std::end(kRecurrentArchs), arch) != std::end(kRecurrentArchs);
  const bool has_ssm = m.find("ssm.state_size") != nullptr;
  MoeDims moe;
  moe.experts = m.integer("expert_count").value_or(0);
  moe.active = m.integer("expert_used_count").value_or(0);
  moe.shared = m.integer("expert_shared_count").value_or(0);
  const std::int64_t expert_ff = m.integer("expert_feed_forward_length").value_or(0);
  RopeDims rope;
  rope.theta = m.number("rope.freq_base").value_or(0);
  rope.rotary_dims = n_rot;
  for (std::int64_t i = 0; i < d.layers; ++i) {
    const auto k = static_cast<std::size_t>(i);
    LayerDims l;
    l.heads = heads[k];
    l.kv_heads = kv_heads[k] < 0 ? heads[k] : kv_heads[k];
    l.k_head_dim = k_len;
    l.v_head_dim = v_len;
    l.rope = rope;
    l.intermediate = ff[k];
    if (moe.experts > 0) {
      l.moe = moe;
      l.moe.expert_width = expert_ff > 0 ? expert_ff : ff[k];
      l.intermediate = l.moe.token_width();
    }
    if (all_recurrent || (has_ssm && l.kv_heads == 0)) {
      set_recurrent_state(l, m, arch, d.hidden);
    } else if (l.kv_heads == 0) {
      l.attention = AttentionKind::kNone;
    } else if (kv_lora > 0) {
      // MLA (DeepSeek-V2/V3): llama.cpp caches the latent, kv_lora_rank + the rotary part, per token.
      l.attention = AttentionKind::kMla;
      l.mla.kv_lora_rank = kv_lora;
      l.mla.qk_rope_head_dim = n_rot;
    }
    d.per_layer.push_back(l);
  }
  apply_swa(d, m, arch, notes);
  if (!d.per_layer.empty()) {
    const LayerDims& first = d.per_layer.front();
    d.heads = first.heads;
    d.kv_heads = first.kv_heads;
    d.head_dim = k_len;
    for (const auto& l : d.per_layer) d.intermediate = std::max(d.intermediate, l.intermediate);
  }
  d.experts = moe.experts > 0 && moe.active > 0 ? moe.experts : 0;
  d.experts_per_token = d.experts > 0 ? moe.active : 0;
  return d;
}

}  // namespace memfit
