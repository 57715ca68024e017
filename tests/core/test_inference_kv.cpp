// KV cache per attention type and engine (core/include/memfit/memory/kv_cache.h).
//
// Every expected value is hand-computed in a comment from the engines' own allocation code:
//   transformers  cache_utils.py: DynamicLayer holds every token; StaticSlidingWindowLayer
//                 min(sliding_window, max_cache_len); keys/values [batch, kv_heads, tokens, head_dim]
//   vLLM          v1/kv_cache_interface.py: FullAttentionSpec cdiv(max_model_len, block_size) pages,
//                 SlidingWindowSpec (cdiv(min(sliding_window − 1 + max_num_batched_tokens,
//                 max_model_len), block_size) + 1) pages, page = 2·block·kv_heads·head_size·dtype;
//                 MLAAttentionSpec page = block·head_size(kv_lora_rank + qk_rope_head_dim)·dtype
//   llama.cpp     llama-context.cpp: n_ctx_seq = pad(n_ctx / n_seq, 256); llama-kv-cache-iswa.cpp:
//                 SWA cells = pad(min(n_ctx_seq, n_swa + n_ubatch), 256); MLA caches no V
// The configs are the Hub's config.json files (tests/fixtures/configs/).
#include <doctest/doctest.h>

#include <string>

#include "memfit/error.h"
#include "memfit/memory/kv_cache.h"
#include "memfit/model/config.h"
#include "memfit/model/model.h"
#include "memfit/model/tree_builder.h"
#include "support/model_of.h"
#include "support/reference.h"

using namespace memfit;

namespace {

using test::model_of;

// A Hub config.json: tests/fixtures/configs/ (families memfit builds) or tests/fixtures/kv/
// (configs used only for their attention layout). The layout is the Model's dims, as the family
// (or, for families that read none, the generic reader) filled them.
AttentionLayout layout_of(const std::string& stem) {
  const std::string dir = stem == "google--gemma-2-9b" ? "kv/" : "configs/";
  return attention_layout(model_of(test::fixture(dir + stem + ".json")));
}

AttentionLayout layout_of_json(const std::string& text) { return attention_layout(model_of(text)); }

// The generic reader alone (model_type "x" has no family).
AttentionLayout generic_layout_of_json(const std::string& text) {
  Config c(Config::parse(text, "config.json"), "config.json");
  return attention_layout(read_model_dims(c));
}

KvCache kv(const AttentionLayout& l, Engine e, KvDtype d, std::int64_t context, std::int64_t batch = 1) {
  KvOptions o;
  o.engine = e;
  o.dtype = d;
  o.context = context;
  o.batch = batch;
  return kv_cache(l, o);
}

}  // namespace

TEST_CASE("GQA: Llama-3-8B caches 131,072 bytes per token in bf16") {
  const AttentionLayout l = layout_of("meta-llama--Meta-Llama-3-8B");
  REQUIRE(l.layers.size() == 32);
  CHECK(l.layers[0].kv_heads == 8);
  CHECK(l.layers[0].k_head_dim == 128);
  CHECK(l.sliding_layers() == 0);
  // 32 layers × 8 kv heads × 128 × 2 (K, V) × 2 bytes = 131,072 bytes/token.
  const KvCache t = kv(l, Engine::kTransformers, KvDtype::kBF16, 8192, 4);
  CHECK(t.bytes_per_token == 131072);
  // 4 sequences × 8,192 tokens × 131,072 = 4,294,967,296 (4 GiB); 8,192 is a multiple of 16 and
  // 256, so vLLM and llama.cpp allocate the same.
  CHECK(t.total() == 4294967296.0);
  CHECK(kv(l, Engine::kVllm, KvDtype::kBF16, 8192, 4).total() == 4294967296.0);
  CHECK(kv(l, Engine::kLlamaCpp, KvDtype::kBF16, 8192, 4).total() == 4294967296.0);
}

TEST_CASE("engines round a full-attention cache their own way") {
  const AttentionLayout l = layout_of("meta-llama--Meta-Llama-3-8B");
  // 1,000 tokens: transformers 1,000 × 131,072 = 131,072,000; vLLM cdiv(1000, 16) = 63 blocks
  // = 1,008 tokens → 132,120,576; llama.cpp pad(1000, 256) = 1,024 cells → 134,217,728.
  CHECK(kv(l, Engine::kTransformers, KvDtype::kBF16, 1000).total() == 131072000.0);
  CHECK(kv(l, Engine::kVllm, KvDtype::kBF16, 1000).total() == 132120576.0);
  CHECK(kv(l, Engine::kLlamaCpp, KvDtype::kBF16, 1000).total() == 134217728.0);
}

TEST_CASE("--kv-dtype: float8 halves bf16; llama.cpp's int8 is q8_0 (34 bytes per 32 values)") {
  const AttentionLayout l = layout_of("meta-llama--Meta-Llama-3-8B");
  // fp8: 32 × 8 × 128 × 2 × 1 = 65,536 bytes/token.
  CHECK(kv(l, Engine::kVllm, KvDtype::kF8, 4096).bytes_per_token == 65536);
  // q8_0: 65,536 × 34/32 = 69,632 bytes/token.
  CHECK(kv(l, Engine::kLlamaCpp, KvDtype::kI8, 4096).bytes_per_token == 69632);
  CHECK(kv(l, Engine::kTransformers, KvDtype::kF32, 4096).bytes_per_token == 262144);
}

TEST_CASE("MQA: Falcon-7B (multi_query) and GPTBigCode cache one K/V head") {
  const AttentionLayout f = layout_of("tiiuae--falcon-7b");
  // Falcon-7B: new_decoder_architecture false, multi_query true → 1 kv head of 4544/71 = 64.
  // 32 layers × 1 × 64 × 2 × 2 bytes = 8,192 bytes/token.
  CHECK(f.layers[0].kv_heads == 1);
  CHECK(kv(f, Engine::kTransformers, KvDtype::kBF16, 2048).bytes_per_token == 8192);
  // Falcon-40B: new_decoder_architecture → num_kv_heads = 8; 60 layers × 8 × 64 × 2 × 2 = 122,880.
  const AttentionLayout f40 = layout_of("tiiuae--falcon-40b");
  CHECK(f40.layers[0].kv_heads == 8);
  CHECK(kv(f40, Engine::kTransformers, KvDtype::kBF16, 2048).bytes_per_token == 122880);
  // StarCoderBase-1B: multi_query, 24 layers, head 2048/16 = 128: 24 × 1 × 128 × 2 × 2 = 12,288.
  const AttentionLayout s = layout_of("bigcode--starcoderbase-1b");
  CHECK(kv(s, Engine::kTransformers, KvDtype::kF16, 2048).bytes_per_token == 12288);
}

TEST_CASE("MLA: DeepSeek-V2-Lite caches the 576-wide latent in vLLM and llama.cpp") {
  const AttentionLayout l = layout_of("deepseek-ai--DeepSeek-V2-Lite");
  REQUIRE(l.mla);
  CHECK(l.mla_latent == 576);  // kv_lora_rank 512 + qk_rope_head_dim 64
  // vLLM / llama.cpp: 27 layers × 576 × 2 bytes = 31,104 bytes/token (no separate V).
  CHECK(kv(l, Engine::kVllm, KvDtype::kBF16, 4096).bytes_per_token == 31104);
  CHECK(kv(l, Engine::kLlamaCpp, KvDtype::kBF16, 4096).bytes_per_token == 31104);
  // 4,096 tokens (a multiple of 16 and 256): 31,104 × 4,096 = 127,401,984.
  CHECK(kv(l, Engine::kVllm, KvDtype::kBF16, 4096).total() == 127401984.0);
  // transformers caches the decompressed heads: 27 × 16 × ((128 + 64) + 128) × 2 = 276,480.
  CHECK(kv(l, Engine::kTransformers, KvDtype::kBF16, 4096).bytes_per_token == 276480);
  // DeepSeek-V3: 61 layers × (512 + 64) × 1 byte (fp8) = 35,136 bytes/token.
  CHECK(kv(layout_of("deepseek-ai--DeepSeek-V3"), Engine::kVllm, KvDtype::kF8, 4096).bytes_per_token == 35136);
}

TEST_CASE("hybrid sliding window: Gemma-2-9B alternates windowed and full layers") {
  // Gemma-2's config.json says cache_implementation "hybrid" without sliding_window_pattern:
  // transformers' HybridCache windows layer i unless (i + 1) % 2 == 0 → 21 + 21 of 42 layers.
  const AttentionLayout l = layout_of("google--gemma-2-9b");
  REQUIRE(l.layers.size() == 42);
  CHECK(l.sliding_layers() == 21);
  CHECK(l.layers[0].sliding);
  CHECK_FALSE(l.layers[1].sliding);
  CHECK(l.layers[0].window == 4096);
  // Per layer and token: 2 × 8 kv heads × 256 × 2 bytes = 8,192; 42 layers → 344,064 bytes/token
  // before any window cap.
  const KvCache t = kv(l, Engine::kTransformers, KvDtype::kBF16, 8192);
  CHECK(t.bytes_per_token == 344064);
  // transformers at 8,192: 21 × 8,192 × 8,192 + 21 × 8,192 × 4,096 = 1,409,286,144 + 704,643,072.
  CHECK(t.total() == 2113929216.0);
  // vLLM: windowed layers min(4095 + 2048, 8192) = 6,143 tokens → cdiv(6143, 16) + 1 = 385 blocks
  // = 6,160 tokens: 21 × 8,192 × 6,160 = 1,059,717,120, + 1,409,286,144 full.
  CHECK(kv(l, Engine::kVllm, KvDtype::kBF16, 8192).total() == 2469003264.0);
  // llama.cpp: SWA cells pad(min(8192, 4096 + 512), 256) = 4,608: 21 × 8,192 × 4,608 = 792,723,456.
  CHECK(kv(l, Engine::kLlamaCpp, KvDtype::kBF16, 8192).total() == 2202009600.0);
  // Under the window every engine holds the whole context (transformers: 1,000 tokens).
  CHECK(kv(l, Engine::kTransformers, KvDtype::kBF16, 1000).total() == 344064.0 * 1000);
}

TEST_CASE("layer_types and sliding_window_pattern give the same layout as HybridCache's rule") {
  // transformers ≥ 4.53 writes Gemma-2's pattern out as layer_types.
  std::string types;
  for (int i = 0; i < 4; ++i) types += std::string(i ? "," : "") + (i % 2 == 0 ? "\"sliding_attention\"" : "\"full_attention\"");
  const AttentionLayout a = layout_of_json(
      R"({"model_type": "gemma2", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
          "num_key_value_heads": 2, "head_dim": 16, "sliding_window": 8, "layer_types": [)" + types + "]}");
  CHECK(a.sliding_layers() == 2);
  CHECK(a.window_rule == "layer_types");
  // Gemma-3: sliding_window_pattern 6 → layers 5, 11, … are full: 12 layers → 10 windowed.
  const AttentionLayout g3 = layout_of_json(
      R"({"model_type": "gemma3_text", "hidden_size": 64, "num_hidden_layers": 12, "num_attention_heads": 4,
          "num_key_value_heads": 1, "head_dim": 16, "sliding_window": 512, "sliding_window_pattern": 6})");
  CHECK(g3.sliding_layers() == 10);
  CHECK_FALSE(g3.layers[5].sliding);
  CHECK_FALSE(g3.layers[11].sliding);
  // An unknown layer type is an error naming it, not a silent guess.
  CHECK_THROWS_AS(generic_layout_of_json(R"({"model_type": "x", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "layer_types": ["full_attention", "linear_attention"]})"), Error);
}

TEST_CASE("Mistral-7B-v0.1: sliding_window applies to every layer; Qwen2's is off") {
  const AttentionLayout m = layout_of("mistralai--Mistral-7B-v0.1");
  CHECK(m.sliding_layers() == 32);
  // 131,072 bytes/token; transformers at 8,192 holds 4,096: 4,096 × 131,072 = 536,870,912.
  CHECK(kv(m, Engine::kTransformers, KvDtype::kBF16, 8192).total() == 536870912.0);
  // llama.cpp: pad(min(8192, 4096 + 512), 256) = 4,608 cells: 4,608 × 131,072 = 603,979,776.
  CHECK(kv(m, Engine::kLlamaCpp, KvDtype::kBF16, 8192).total() == 603979776.0);
  // Qwen2-7B: sliding_window 131072 but use_sliding_window false → every layer is full.
  CHECK(layout_of("Qwen--Qwen2-7B").sliding_layers() == 0);
}

TEST_CASE("encoder-decoder: cross-attention K/V over the encoder length") {
  // Whisper-tiny (float32): 4 decoder layers × 2 × 6 heads × 64 × 4 bytes = 12,288 bytes/token;
  // cross-attention over max_source_positions = 1,500 encoder frames: 12,288 × 1,500 = 18,432,000
  // per sequence.
  const AttentionLayout w = layout_of("openai--whisper-tiny");
  CHECK(w.cross_layers == 4);
  const KvCache t = kv(w, Engine::kTransformers, KvDtype::kF32, 448, 2);
  CHECK(t.bytes_per_token == 12288);
  CHECK(t.encoder_length == 1500);
  CHECK(t.self_bytes == 12288.0 * 448 * 2);
  CHECK(t.cross_bytes == 18432000.0 * 2);
  // Whisper-large-v3 (float16): 32 × 2 × 1,280 × 2 = 163,840 bytes/token; cross 163,840 × 1,500.
  const KvCache large = kv(layout_of("openai--whisper-large-v3"), Engine::kTransformers, KvDtype::kF16, 448);
  CHECK(large.bytes_per_token == 163840);
  CHECK(large.cross_bytes == 245760000.0);
  // vLLM's CrossAttentionSpec rounds the encoder length to blocks: cdiv(1500, 16) = 94 → 1,504.
  CHECK(kv(w, Engine::kVllm, KvDtype::kF32, 448).cross_bytes == 12288.0 * 1504);
  // Flan-T5-base (float32): 12 decoder layers × 2 × 12 heads × d_kv 64 × 4 = 73,728 bytes/token;
  // no max_source_positions, so the encoder is as long as the context.
  const KvCache t5 = kv(layout_of("google--flan-t5-base"), Engine::kTransformers, KvDtype::kF32, 512);
  CHECK(t5.bytes_per_token == 73728);
  CHECK(t5.cross_bytes == 73728.0 * 512);
  // BART-base: 6 decoder layers × 2 × 768 × 4 = 36,864 bytes/token.
  CHECK(kv(layout_of("facebook--bart-base"), Engine::kTransformers, KvDtype::kF32, 1024).bytes_per_token == 36864);
}

TEST_CASE("KV errors name the key") {
  try {
    generic_layout_of_json(R"({"model_type": "x", "hidden_size": 64, "num_attention_heads": 4})");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kMissingKey);
    CHECK(e.message().find("num_hidden_layers") != std::string::npos);
  }
  const AttentionLayout l = layout_of("meta-llama--Meta-Llama-3-8B");
  CHECK_THROWS_AS(kv(l, Engine::kVllm, KvDtype::kBF16, 0), Error);
  CHECK(value_of(kEngineNames, "llama.cpp") == Engine::kLlamaCpp);
  CHECK_FALSE(value_of(kEngineNames, "tgi").has_value());
  CHECK(value_of(kKvDtypeNames, "fp8") == KvDtype::kF8);
}

namespace {

// Layers as a family fills them (model_dims.h), without a family: the cache's arithmetic alone.
LayerDims layer(AttentionKind kind, std::int64_t kv_heads, std::int64_t head_dim, std::int64_t window = 0) {
  LayerDims l;
  l.attention = kind;
  l.kv_heads = kv_heads;
  l.heads = kv_heads;
  l.k_head_dim = l.v_head_dim = head_dim;
  l.window = window;
  return l;
}

LayerDims recurrent(std::int64_t conv, std::int64_t ssm) {
  LayerDims l = layer(AttentionKind::kRecurrent, 0, 0);
  l.state = {conv, ssm, /*conv_kernel=*/4};
  return l;
}

// A hybrid: three recurrent layers (1,100 state elements each: a conv window of 4 columns × 25
// channels and 1,000 of SSM state), one full layer with 2 KV heads
// of 64, one global layer with 1 KV head of 256 (wider, as Gemma 4's), one chunked layer (256).
ModelDims hybrid() {
  ModelDims d;
  d.per_layer = {recurrent(100, 1000), layer(AttentionKind::kFull, 2, 64), recurrent(100, 1000),
                 layer(AttentionKind::kFull, 1, 256), recurrent(100, 1000),
                 layer(AttentionKind::kChunked, 2, 64, 256)};
  d.layers = static_cast<std::int64_t>(d.per_layer.size());
  return d;
}

}  // namespace

TEST_CASE("hybrid layers: per-layer head widths, a chunk, and recurrent state per sequence") {
  const AttentionLayout l = attention_layout(hybrid());
  CHECK(l.count(AttentionKind::kRecurrent) == 3);
  CHECK(l.count(AttentionKind::kChunked) == 1);
  CHECK(l.full_layers() == 2);
  CHECK(l.sliding_layers() == 1);
  // transformers, bf16 (2 bytes), context 1,000, batch 2:
  //   full 2·(64+64)·2 = 512 B/token × 1,000 × 2 = 1,024,000
  //   global 1·(256+256)·2 = 1,024 B/token × 1,000 × 2 = 2,048,000
  //   chunked 512 B/token × min(256, 1,000) × 2 = 262,144
  //   state 3 layers × 1,100 elements × 2 bytes × 2 sequences = 13,200 (bf16 weights)
  KvOptions o;
  o.engine = Engine::kTransformers;
  o.dtype = KvDtype::kBF16;
  o.context = 1000;
  o.batch = 2;
  KvCache t = kv_cache(l, o);
  CHECK(t.bytes_per_token == 512 + 1024 + 512);
  CHECK(t.self_bytes == 1024000 + 2048000 + 262144);
  CHECK(t.state_bytes == 13200);
  CHECK(t.total() == 1024000 + 2048000 + 262144 + 13200);
  REQUIRE(t.layer_bytes.size() == 6);
  CHECK(t.layer_bytes[0] == 4400);
  CHECK(t.layer_bytes[3] == 2048000);
  // The state ignores the context: 8× the context, the same state.
  o.context = 8000;
  CHECK(kv_cache(l, o).state_bytes == 13200);
  // vLLM: full 16·⌈1,000/16⌉ = 1,008 tokens; chunked 16·⌈min(256 + 2,048, 1,000)/16⌉ = 1,008.
  o.context = 1000;
  o.engine = Engine::kVllm;
  t = kv_cache(l, o);
  CHECK(t.self_bytes == 512.0 * 1008 * 2 + 1024.0 * 1008 * 2 + 512.0 * 1008 * 2);
  // vLLM keeps 3 of the 4 conv columns: 3 layers × (75 + 1,000) × 2 bytes × 2 sequences = 12,900.
  CHECK(t.state_bytes == 12900);
  // llama.cpp too (d_conv − 1), in F32 whatever --kv-dtype says: 3 × 1,075 × 4 × 2 = 25,800.
  o.engine = Engine::kLlamaCpp;
  o.dtype = KvDtype::kI8;
  CHECK(kv_cache(l, o).state_bytes == 25800);
}

TEST_CASE("recurrent state: mamba_ssm_cache_dtype float32 keeps the SSM part in 4 bytes") {
  ModelDims d = hybrid();
  for (LayerDims& l : d.per_layer)
    if (l.attention == AttentionKind::kRecurrent) l.state.ssm_f32 = true;
  KvOptions o;
  o.engine = Engine::kTransformers;
  o.context = 1000;
  o.batch = 2;
  // 3 layers × (100 conv × 2 bytes + 1,000 SSM × 4 bytes) × 2 sequences = 25,200.
  CHECK(kv_cache(attention_layout(d), o).state_bytes == 25200);
  // What sets it: the config's key, read once with the model's dims.
  Config c(Config::parse(R"({"mamba_ssm_cache_dtype": "float32"})", "config.json"), "config.json");
  ModelDims e = hybrid();
  TreeBuilder b{"NemotronHForCausalLM"};
  finish_model_dims(e, c, b.finish());
  CHECK(e.per_layer[0].state.ssm_f32);
  CHECK_FALSE(e.per_layer[1].state.ssm_f32);  // an attention layer has no SSM state
}

TEST_CASE("DSA indexer (DeepSeek-V3.2): vLLM caches its FP8 key beside the MLA latent") {
  // vllm deepseek_v2.py DeepseekV32IndexerCache: one vector per token and layer of
  // index_head_dim + index_head_dim / 128 × 4 bytes (FP8 values, an fp32 scale per 128), uint8.
  ModelDims d;
  LayerDims l = layer(AttentionKind::kMla, 128, 192);
  l.v_head_dim = 128;
  l.mla = {1536, 512, 64, 128, 128, /*index_head_dim=*/128};
  d.per_layer = {l, l};
  d.per_layer[1].mla.index_head_dim = 0;  // GLM-5's "shared" layers reuse the previous top-k
  d.layers = 2;
  KvOptions o;
  o.engine = Engine::kVllm;
  o.dtype = KvDtype::kBF16;
  o.context = 1024;
  // layer 0: 576 × 2 + 132 = 1,284 bytes per token; layer 1: 1,152
  CHECK(kv_cache(attention_layout(d), o).bytes_per_token == 1284 + 1152);
  // llama.cpp and transformers: tests/core/test_dsa_indexer_kv.cpp.
}
