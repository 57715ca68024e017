// tests/support/gguf_builder.h — small GGUF files for tests: a llama-shaped model's metadata and
// tensors (each type and shape as given), written by core's writer, the data section zero-filled.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/format/gguf.h"

namespace memfit::test {

struct GgufSpec {
  std::uint32_t version = 3;
  std::uint64_t alignment = gguf::kDefaultAlignment;
  std::vector<gguf::KeyValue> metadata;
  std::vector<gguf::TensorInfo> tensors;  // name, ne, type; offsets assigned by build()
};

inline gguf::TensorInfo gguf_tensor(std::string name, std::vector<std::int64_t> ne, std::uint32_t type) {
  gguf::TensorInfo t;
  t.name = std::move(name);
  t.ne = std::move(ne);
  t.type = type;
  return t;
}

inline std::string build_gguf(GgufSpec spec) {
  const std::uint64_t data = gguf::layout(spec.tensors, spec.alignment);
  std::string out = gguf::write_header(spec.version, spec.metadata, spec.tensors, spec.alignment);
  out.append(data, '\0');
  return out;
}

// A llama-architecture model: `layers` blocks of hidden `n_embd`, `heads` query heads, `kv_heads`
// key/value heads, vocabulary `vocab`, FFN `ff`; matrices in `type`, norms in f32, the output
// head untied. ggml types: 0 f32, 1 f16, 8 q8_0, 12 q4_K.
inline GgufSpec llama_gguf(std::int64_t layers, std::int64_t n_embd, std::int64_t heads,
                           std::int64_t kv_heads, std::int64_t vocab, std::int64_t ff,
                           std::uint32_t type, std::int64_t context = 4096) {
  using gguf::ValueType;
  GgufSpec s;
  const std::int64_t hd = n_embd / heads;
  s.metadata = {
      {"general.architecture", gguf::make_string("llama")},
      {"general.name", gguf::make_string("tiny")},
      {"llama.block_count", gguf::make_uint(ValueType::kUint32, static_cast<std::uint64_t>(layers))},
      {"llama.context_length", gguf::make_uint(ValueType::kUint32, static_cast<std::uint64_t>(context))},
      {"llama.embedding_length", gguf::make_uint(ValueType::kUint32, static_cast<std::uint64_t>(n_embd))},
      {"llama.feed_forward_length", gguf::make_uint(ValueType::kUint32, static_cast<std::uint64_t>(ff))},
      {"llama.attention.head_count", gguf::make_uint(ValueType::kUint32, static_cast<std::uint64_t>(heads))},
      {"llama.attention.head_count_kv", gguf::make_uint(ValueType::kUint32, static_cast<std::uint64_t>(kv_heads))},
      {"llama.rope.freq_base", gguf::make_float(ValueType::kFloat32, 10000.0)},
      {"llama.attention.layer_norm_rms_epsilon", gguf::make_float(ValueType::kFloat32, 1e-5)},
  };
  s.tensors.push_back(gguf_tensor("token_embd.weight", {n_embd, vocab}, type));
  for (std::int64_t i = 0; i < layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    s.tensors.push_back(gguf_tensor(p + "attn_norm.weight", {n_embd}, 0));
    s.tensors.push_back(gguf_tensor(p + "attn_q.weight", {n_embd, n_embd}, type));
    s.tensors.push_back(gguf_tensor(p + "attn_k.weight", {n_embd, kv_heads * hd}, type));
    s.tensors.push_back(gguf_tensor(p + "attn_v.weight", {n_embd, kv_heads * hd}, type));
    s.tensors.push_back(gguf_tensor(p + "attn_output.weight", {n_embd, n_embd}, type));
    s.tensors.push_back(gguf_tensor(p + "ffn_norm.weight", {n_embd}, 0));
    s.tensors.push_back(gguf_tensor(p + "ffn_gate.weight", {n_embd, ff}, type));
    s.tensors.push_back(gguf_tensor(p + "ffn_up.weight", {n_embd, ff}, type));
    s.tensors.push_back(gguf_tensor(p + "ffn_down.weight", {ff, n_embd}, type));
  }
  s.tensors.push_back(gguf_tensor("output_norm.weight", {n_embd}, 0));
  s.tensors.push_back(gguf_tensor("output.weight", {n_embd, vocab}, type));
  return s;
}

}  // namespace memfit::test
