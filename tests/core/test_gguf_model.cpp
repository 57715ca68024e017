// GGUF metadata → ModelDims as llama.cpp's loaders read it (sliding-window patterns, recurrent
// state, MLA, per-layer KV heads), and llamacpp_estimate's placement and KV cells.
#include <doctest/doctest.h>

#include "memfit/memory/llamacpp_offload.h"
#include "memfit/model/gguf_model.h"
#include "support/gguf_builder.h"

using namespace memfit;
using gguf::ValueType;

namespace {

gguf::Value u32(std::uint64_t v) { return gguf::make_uint(ValueType::kUint32, v); }

// A model of `arch` with `layers` blocks and the given extra metadata; one tensor.
GgufModel model_of(const std::string& arch, std::int64_t layers, std::vector<gguf::KeyValue> extra) {
  test::GgufSpec s;
  s.metadata = {{"general.architecture", gguf::make_string(arch)},
                {arch + ".block_count", u32(static_cast<std::uint64_t>(layers))},
                {arch + ".embedding_length", u32(256)},
                {arch + ".context_length", u32(8192)}};
  for (auto& kv : extra) s.metadata.push_back(std::move(kv));
  s.tensors = {test::gguf_tensor("token_embd.weight", {256, 1000}, 1)};
  const std::string bytes = test::build_gguf(s);
  auto f = gguf::parse(bytes, "m.gguf");
  REQUIRE_MESSAGE(f.ok(), f.error().message());
  auto m = gguf_model({*f}, {"m.gguf"});
  REQUIRE_MESSAGE(m.ok(), m.error().message());
  return *m;
}

}  // namespace

TEST_CASE("GGUF dims: Gemma 2's every other layer slides (llama.cpp set_swa_pattern(2)); llama.cpp's iswa cells") {
  const GgufModel m = model_of("gemma2", 4, {{"gemma2.attention.head_count", u32(8)}, {"gemma2.attention.head_count_kv", u32(4)},
                                             {"gemma2.attention.key_length", u32(256)}, {"gemma2.attention.value_length", u32(256)},
                                             {"gemma2.attention.sliding_window", u32(4096)}});
  REQUIRE(m.dims.per_layer.size() == 4);
  CHECK((m.dims.per_layer[0].attention == AttentionKind::kSliding));
  CHECK((m.dims.per_layer[1].attention == AttentionKind::kFull));
  CHECK((m.dims.per_layer[2].attention == AttentionKind::kSliding));
  CHECK(m.dims.per_layer[0].window == 4096);
  LlamaCppOptions o;
  o.ctx_size = 8192;
  const LlamaCppEstimate e = llamacpp_estimate(m, o);
  // llama_kv_cache_iswa: the SWA cache holds pad(n_swa + n_ubatch, 256) = 4608 cells.
  CHECK(e.layers[0].cells == 4608);
  CHECK(e.layers[1].cells == 8192);
  CHECK(e.layers[1].k_bytes == 8192.0 * 4 * 256 * 2);
  CHECK(e.layers[0].v_bytes == 4608.0 * 4 * 256 * 2);
}

TEST_CASE("GGUF dims: a pattern key overrides the architecture's period; a window without a known pattern stays full, with a note") {
  const GgufModel g3 = model_of("gemma3", 12, {{"gemma3.attention.head_count", u32(4)}, {"gemma3.attention.sliding_window", u32(1024)}});
  int full = 0;
  for (const auto& l : g3.dims.per_layer) full += l.attention == AttentionKind::kFull;
  CHECK(full == 2);  // period 6: layers 5 and 11
  CHECK((g3.dims.per_layer[5].attention == AttentionKind::kFull));
  const GgufModel p = model_of("gemma3", 12, {{"gemma3.attention.head_count", u32(4)}, {"gemma3.attention.sliding_window", u32(1024)},
                                              {"gemma3.attention.sliding_window_pattern", u32(3)}});
  full = 0;
  for (const auto& l : p.dims.per_layer) full += l.attention == AttentionKind::kFull;
  CHECK(full == 4);
  const GgufModel llama = model_of("llama", 2, {{"llama.attention.head_count", u32(4)}, {"llama.attention.sliding_window", u32(512)}});
  CHECK((llama.dims.per_layer[0].attention == AttentionKind::kFull));
  REQUIRE(llama.notes.size() == 1);
  CHECK(llama.notes[0].find("llama.attention.sliding_window = 512") != std::string::npos);
}

TEST_CASE("GGUF dims: per-layer KV heads, Mamba's f32 state, MLA's latent in K only") {
  // A per-layer head_count_kv array: 0 marks a layer without attention.
  const GgufModel per = model_of("llama", 3, {{"llama.attention.head_count", u32(4)},
                                              {"llama.attention.head_count_kv", gguf::make_array(ValueType::kInt32, {gguf::make_int(ValueType::kInt32, 2), gguf::make_int(ValueType::kInt32, 0), gguf::make_int(ValueType::kInt32, 4)})}});
  CHECK(per.dims.per_layer[0].kv_heads == 2);
  CHECK((per.dims.per_layer[1].attention == AttentionKind::kNone));
  CHECK(per.dims.per_layer[2].kv_heads == 4);
  // Mamba: llama.cpp keeps (d_conv − 1) × (d_inner + 2·n_group·d_state) conv and d_state × d_inner
  // SSM values per sequence, in f32.
  const GgufModel mamba = model_of("mamba", 2, {{"mamba.ssm.conv_kernel", u32(4)}, {"mamba.ssm.inner_size", u32(512)},
                                                {"mamba.ssm.state_size", u32(16)}});
  CHECK((mamba.dims.per_layer[0].attention == AttentionKind::kRecurrent));
  const LlamaCppEstimate e = llamacpp_estimate(mamba, LlamaCppOptions{});
  CHECK(e.layers[0].state_bytes == (3.0 * 512 + 16.0 * 512) * 4);
  CHECK(e.kv_k_bytes == 0);
  // MLA (DeepSeek-V2): kv_lora_rank + the rotary dims per token, in the K cache.
  const GgufModel mla = model_of("deepseek2", 1, {{"deepseek2.attention.head_count", u32(16)}, {"deepseek2.attention.head_count_kv", u32(16)},
                                                  {"deepseek2.attention.kv_lora_rank", u32(512)}, {"deepseek2.rope.dimension_count", u32(64)}});
  LlamaCppOptions o;
  o.ctx_size = 1024;
  const LlamaCppEstimate me = llamacpp_estimate(mla, o);
  CHECK(me.kv_k_bytes == 1024.0 * 576 * 2);
  CHECK(me.kv_v_bytes == 0);
}

TEST_CASE("GGUF split names: llama.cpp's PREFIX-%05d-of-%05d.gguf") {
  const SplitName s = split_name("Qwen3-235B-Q4_K_M-00002-of-00004.gguf");
  CHECK(s.no == 2);
  CHECK(s.count == 4);
  CHECK(s.prefix == "Qwen3-235B-Q4_K_M");
  CHECK(split_file_name(s.prefix, 1, 4) == "Qwen3-235B-Q4_K_M-00001-of-00004.gguf");
  CHECK(split_name("model-Q4_K_M.gguf").count == 0);
  CHECK(split_name("m-00005-of-00004.gguf").count == 0);
  CHECK(split_name("m-0000a-of-00004.gguf").count == 0);
}
