// The DSA indexer's key cache (DeepSeek-V3.2, GLM-5) under llama.cpp and transformers, beside the
// MLA cache, from their sources: llama.cpp's llama_kv_cache_dsa keeps a second llama_kv_cache
// (kv_lid) with one key head of indexer_head_size per token at the K cache's type and, the model
// being MLA, no V; transformers' GlmMoeDsaIndexer (DeepSeek-V3.2 reuses it) concatenates its keys
// [batch, tokens, index_head_dim] in `_cached_keys`, in the activations' dtype. Only layers that
// run their own indexer cache keys (GLM-5's "shared" layers reuse the previous layer's top-k).
#include <doctest/doctest.h>

#include "memfit/memory/kv_cache.h"
#include "memfit/model/model_dims.h"

using namespace memfit;

namespace {

// An MLA layer of DeepSeek-V3.2's shape: 128 heads, K 192 (128 nope + 64 rope), V 128, latent
// 512 + 64; index_head_dim 128 on a layer with its own indexer.
LayerDims mla_layer(std::int64_t index_head_dim) {
  LayerDims l;
  l.attention = AttentionKind::kMla;
  l.heads = l.kv_heads = 128;
  l.k_head_dim = 192;
  l.v_head_dim = 128;
  l.mla = {1536, 512, 64, 128, 128, index_head_dim};
  return l;
}

double per_token(Engine engine, KvDtype dtype) {
  ModelDims d;
  d.per_layer = {mla_layer(128), mla_layer(0)};
  d.layers = 2;
  KvOptions o;
  o.engine = engine;
  o.dtype = dtype;
  o.context = 1024;
  return kv_cache(attention_layout(d), o).bytes_per_token;
}

}  // namespace

TEST_CASE("DSA indexer: llama.cpp caches one key head of index_head_dim at the K cache's type") {
  // Two latents of 576 values, plus 128 indexer values on layer 0.
  CHECK(per_token(Engine::kLlamaCpp, KvDtype::kF16) == 2 * 576 * 2 + 128 * 2);
  // q8_0: 34 bytes per 32 values, for the indexer's keys as for the latent.
  CHECK(per_token(Engine::kLlamaCpp, KvDtype::kI8) == (2 * 576 + 128) * 34.0 / 32.0);
}

TEST_CASE("DSA indexer: transformers keeps the indexer's keys beside the expanded K and V") {
  // Each layer: 128 heads × (192 + 128) in bf16; layer 0 adds its 128 indexer values.
  CHECK(per_token(Engine::kTransformers, KvDtype::kBF16) == 2 * 128 * (192 + 128) * 2 + 128 * 2);
  // vLLM's FP8 indexer cache is unchanged: 128 + 4 bytes beside two bf16 latents.
  CHECK(per_token(Engine::kVllm, KvDtype::kBF16) == 2 * 576 * 2 + 132);
}
