// The RoPE families without a golden checkpoint (issue 17): identities that must hold between two
// tiny checkpoints written here — Qwen3 with identity q/k norms and Llama, Qwen2 with zero biases
// and Llama, Mistral with a wide window and Llama, an MoE whose experts all equal the dense MLP,
// Gemma's (1 + w) norm and embedding scale, Phi-3's fused projections — and what makes each
// family differ, where a switch is really used.
#include <doctest/doctest.h>

#include <array>
#include <cmath>

#include "failure.h"
#include "tiny_decoder.h"

namespace memfit::test {
namespace {

using nlohmann::json;

const TinyDims kDims;

// Norms that do nothing: eps = 2^60 swamps mean(x²) in float32 and rsqrt(2^60) · 2^30 = 1
// exactly. (An RMSNorm of weight 1 is not the identity: it rescales each vector to RMS 1.)
constexpr double kHugeEps = 1152921504606846976.0;  // 2^60
constexpr double kUnitGain = 1073741824.0;          // 2^30

// Every norm weight × 2^30 (with kHugeEps: each norm becomes x ↦ x·(1 + 0.1·N(0,1))).
Weights scale_norms(Weights w) {
  for (auto& [name, t] : w)
    if (name.find("norm") != std::string::npos) t = t * kUnitGain;
  return w;
}

void check_same(const at::Tensor& a, const at::Tensor& b, double rel = 1e-5) { check_close(a, b, rel); }
void check_differs(const at::Tensor& a, const at::Tensor& b) { CHECK(max_diff(a, b) > 1e-2); }

}  // namespace

TEST_CASE("families: Qwen3 whose q/k norms are the identity equals Llama; its norms act on each head") {
  TempDir tmp;
  const auto ids = tiny_ids(2, 10, kDims.vocab);
  json llama_cfg = llama_config(kDims);
  llama_cfg["rms_norm_eps"] = kHugeEps;
  json qwen3_cfg = llama_config(kDims, "qwen3");
  qwen3_cfg["rms_norm_eps"] = kHugeEps;
  const Weights base = scale_norms(llama_weights(kDims));
  Weights qwen3 = base;
  add_qk_norms(qwen3, kDims, at::full({kDims.head_dim}, kUnitGain), at::full({kDims.head_dim}, kUnitGain));
  const auto llama_logits = logits_of(load_tiny(tmp, "llama", base, llama_cfg), ids);
  check_same(logits_of(load_tiny(tmp, "qwen3", qwen3, qwen3_cfg), ids), llama_logits);

  // With real norms (eps 1e-6), scaling one head's query and key rows leaves Qwen3 unchanged
  // (RMSNorm per head is scale-free) and changes Llama.
  Weights normed = llama_weights(kDims);
  at::manual_seed(3);
  add_qk_norms(normed, kDims, 1 + at::randn({kDims.head_dim}) * 0.1, 1 + at::randn({kDims.head_dim}) * 0.1);
  Weights scaled = normed;
  for (std::int64_t i = 0; i < kDims.layers; ++i) {
    scaled[layer(i) + "self_attn.q_proj.weight"].narrow(0, 0, kDims.head_dim).mul_(3);
    scaled[layer(i) + "self_attn.k_proj.weight"].narrow(0, kDims.head_dim, kDims.head_dim).mul_(0.25);
  }
  const auto q1 = logits_of(load_tiny(tmp, "qwen3-normed", normed, llama_config(kDims, "qwen3")), ids);
  const auto q2 = logits_of(load_tiny(tmp, "qwen3-scaled", scaled, llama_config(kDims, "qwen3")), ids);
  check_same(q2, q1, 1e-4);
  const auto l1 = logits_of(load_tiny(tmp, "llama-normed", llama_weights(kDims), llama_config(kDims)), ids);
  Weights llama_scaled = llama_weights(kDims);
  for (std::int64_t i = 0; i < kDims.layers; ++i)
    llama_scaled[layer(i) + "self_attn.q_proj.weight"].narrow(0, 0, kDims.head_dim).mul_(3);
  check_differs(logits_of(load_tiny(tmp, "llama-scaled", llama_scaled, llama_config(kDims)), ids), l1);
}

TEST_CASE("families: Qwen2 with zero q/k/v biases equals Llama; with biases it differs") {
  TempDir tmp;
  const auto ids = tiny_ids(2, 9, kDims.vocab);
  const Weights base = llama_weights(kDims);
  const auto llama = logits_of(load_tiny(tmp, "llama", base, llama_config(kDims)), ids);
  Weights zero = base, random = base;
  at::manual_seed(5);
  for (std::int64_t i = 0; i < kDims.layers; ++i)
    for (const char* p : {"q_proj", "k_proj", "v_proj"}) {
      const std::string n = layer(i) + "self_attn." + p;
      const auto rows = base.at(n + ".weight").size(0);
      zero[n + ".bias"] = at::zeros({rows});
      random[n + ".bias"] = at::randn({rows});
    }
  check_same(logits_of(load_tiny(tmp, "qwen2-zero", zero, llama_config(kDims, "qwen2")), ids), llama);
  check_differs(logits_of(load_tiny(tmp, "qwen2-bias", random, llama_config(kDims, "qwen2")), ids), llama);
}

TEST_CASE("families: Mistral with a window ≥ the sequence equals Llama; a window w sees the last w tokens") {
  TempDir tmp;
  const std::int64_t T = 12;
  const auto ids = tiny_ids(1, T, kDims.vocab);
  const Weights base = llama_weights(kDims);
  const auto llama = logits_of(load_tiny(tmp, "llama", base, llama_config(kDims)), ids);
  json wide = llama_config(kDims, "mistral");
  wide["sliding_window"] = T;
  check_same(logits_of(load_tiny(tmp, "mistral-wide", base, wide), ids), llama, 1e-6);
  json narrow = llama_config(kDims, "mistral");
  narrow["sliding_window"] = 3;
  check_differs(logits_of(load_tiny(tmp, "mistral-narrow", base, narrow), ids), llama);

  // One layer, window 3: position t sees tokens t−2 … t only, so its logits are Llama's at the
  // last of those three tokens run alone (RoPE depends on relative positions only).
  TinyDims one = kDims;
  one.layers = 1;
  const Weights w1 = llama_weights(one);
  json narrow1 = llama_config(one, "mistral");
  narrow1["sliding_window"] = 3;
  const Loaded mistral = load_tiny(tmp, "mistral-1", w1, narrow1);
  const Loaded llama1 = load_tiny(tmp, "llama-1", w1, llama_config(one));
  const auto windowed = logits_of(mistral, ids);
  for (std::int64_t t = 2; t < T; ++t) {
    CAPTURE(t);
    const auto alone = logits_of(llama1, ids.narrow(1, t - 2, 3));
    check_same(windowed.select(1, t), alone.select(1, 2), 1e-4);
  }
}

TEST_CASE("families: an MoE whose experts all equal the dense MLP, routing weights summing to 1, equals the dense model") {
  TempDir tmp;
  const auto ids = tiny_ids(2, 8, kDims.vocab);
  const Weights base = llama_weights(kDims);
  const auto llama = logits_of(load_tiny(tmp, "llama", base, llama_config(kDims)), ids);
  for (int top_k : {1, 2}) {
    CAPTURE(top_k);
    json cfg = llama_config(kDims, "mixtral");
    cfg["num_local_experts"] = 4;
    cfg["num_experts_per_tok"] = top_k;
    const Weights mixtral = to_moe(base, kDims, 4, "block_sparse_moe", {"w1", "w3", "w2"});
    check_same(logits_of(load_tiny(tmp, "mixtral-" + std::to_string(top_k), mixtral, cfg), ids), llama);
  }

  // Qwen3-MoE: layer 1 dense (mlp_only_layers), the others sparse; with norm_topk_prob the
  // weights sum to 1 and the model equals dense Qwen3, without it they sum to less and it differs.
  Weights qwen3 = base;
  at::manual_seed(9);
  add_qk_norms(qwen3, kDims, 1 + at::randn({kDims.head_dim}) * 0.1, 1 + at::randn({kDims.head_dim}) * 0.1);
  const auto dense = logits_of(load_tiny(tmp, "qwen3", qwen3, llama_config(kDims, "qwen3")), ids);
  const Weights moe = to_moe(qwen3, kDims, 4, "mlp", {"gate_proj", "up_proj", "down_proj"}, {true, false, true});
  for (bool norm : {true, false}) {
    CAPTURE(norm);
    json cfg = llama_config(kDims, "qwen3_moe");
    cfg["num_experts"] = 4;
    cfg["num_experts_per_tok"] = 2;
    cfg["moe_intermediate_size"] = kDims.inter;
    cfg["decoder_sparse_step"] = 1;
    cfg["mlp_only_layers"] = {1};
    cfg["norm_topk_prob"] = norm;
    const auto logits = logits_of(load_tiny(tmp, std::string("qwen3moe-") + (norm ? "norm" : "raw"), moe, cfg), ids);
    if (norm) check_same(logits, dense);
    else check_differs(logits, dense);
  }
}

TEST_CASE("families: Gemma's (1 + w) norms at w = 0 equal Llama's norms of 1 with embeddings × sqrt(hidden) and GeGLU") {
  TempDir tmp;
  const auto ids = tiny_ids(2, 9, kDims.vocab);
  Weights llama = llama_weights(kDims);
  for (auto& [name, t] : llama)
    if (name.find("norm") != std::string::npos) t = at::ones_like(t);
  Weights gemma = llama;
  for (auto& [name, t] : gemma)
    if (name.find("norm") != std::string::npos) t = at::zeros_like(t);
  llama["model.embed_tokens.weight"] = llama["model.embed_tokens.weight"] * std::sqrt(static_cast<double>(kDims.hidden));
  json llama_cfg = llama_config(kDims);
  llama_cfg["hidden_act"] = "gelu_pytorch_tanh";
  json gemma_cfg = llama_config(kDims, "gemma");
  gemma_cfg.erase("hidden_act");
  gemma_cfg["hidden_activation"] = "gelu_pytorch_tanh";
  const auto expected = logits_of(load_tiny(tmp, "llama", llama, llama_cfg), ids);
  check_same(logits_of(load_tiny(tmp, "gemma", gemma, gemma_cfg), ids), expected);
  // The embedding scale is really applied: without it Llama differs.
  llama["model.embed_tokens.weight"] = gemma["model.embed_tokens.weight"];
  check_differs(logits_of(load_tiny(tmp, "llama-unscaled", llama, llama_cfg), ids), expected);
}

TEST_CASE("families: Gemma 2's soft-caps and alternating sliding layers") {
  TempDir tmp;
  const auto ids = tiny_ids(2, 10, kDims.vocab);
  const Weights w = gemma2_weights(kDims, false);
  json none = gemma2_config(kDims, "gemma2");
  none["attn_logit_softcapping"] = nullptr;
  none["final_logit_softcapping"] = nullptr;
  const auto uncapped = logits_of(load_tiny(tmp, "none", w, none), ids);
  json huge = gemma2_config(kDims, "gemma2");
  huge["attn_logit_softcapping"] = 1e7;
  huge["final_logit_softcapping"] = 1e7;
  check_same(logits_of(load_tiny(tmp, "huge", w, huge), ids), uncapped, 1e-4);
  // Gemma2Config's defaults (50, 30) apply when the keys are absent: the logits stay within 30.
  const auto defaults = logits_of(load_tiny(tmp, "defaults", w, gemma2_config(kDims, "gemma2")), ids);
  CHECK(defaults.abs().max().item<double>() <= 30.0);
  json small = none;
  small["final_logit_softcapping"] = 2.0;
  CHECK(logits_of(load_tiny(tmp, "small-final", w, small), ids).abs().max().item<double>() <= 2.0);
  json attn = none;
  attn["attn_logit_softcapping"] = 0.5;
  check_differs(logits_of(load_tiny(tmp, "small-attn", w, attn), ids), uncapped);

  // Sliding layers: a window ≥ the sequence changes nothing, a window of 2 on the even layers
  // does — unless layer_types makes every layer global.
  json narrow = none;
  narrow["sliding_window"] = 2;
  const auto windowed = logits_of(load_tiny(tmp, "narrow", w, narrow), ids);
  check_differs(windowed, uncapped);
  json global = narrow;
  global["layer_types"] = {"full_attention", "full_attention", "full_attention"};
  check_same(logits_of(load_tiny(tmp, "global", w, global), ids), uncapped, 1e-6);
  json odd_only = narrow;  // the same windows as the default alternation, spelled out
  odd_only["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention"};
  check_same(logits_of(load_tiny(tmp, "listed", w, odd_only), ids), windowed, 1e-6);
}

TEST_CASE("families: Gemma 3 with identity q/k norms and one RoPE base equals Gemma 2 without caps; its local base and window act") {
  TempDir tmp;
  const auto ids = tiny_ids(2, 10, kDims.vocab);
  // Identity norms as in the Qwen3 case, in Gemma's (1 + w) form: 1 + 2^30 rounds to 2^30.
  Weights w = gemma2_weights(kDims, true);
  for (auto& [name, t] : w)
    if (name.find("norm") != std::string::npos) t = (t + 1) * (kUnitGain / 4) - 1;  // gains of ~1/4: no growth
  for (std::int64_t i = 0; i < kDims.layers; ++i)
    for (const char* n : {"q_norm", "k_norm"})
      w[layer(i) + "self_attn." + n + ".weight"] = at::full({kDims.head_dim}, kUnitGain);
  Weights w2 = w;
  for (std::int64_t i = 0; i < kDims.layers; ++i)
    for (const char* n : {"q_norm", "k_norm"}) w2.erase(layer(i) + "self_attn." + n + ".weight");
  json g2 = gemma2_config(kDims, "gemma2");
  g2["rms_norm_eps"] = kHugeEps;
  g2["attn_logit_softcapping"] = nullptr;
  g2["final_logit_softcapping"] = nullptr;
  const auto gemma2 = logits_of(load_tiny(tmp, "gemma2", w2, g2), ids);
  json g3 = gemma2_config(kDims, "gemma3_text");
  g3["rms_norm_eps"] = kHugeEps;
  g3["sliding_window_pattern"] = 2;
  g3["rope_local_base_freq"] = 10000.0;
  check_same(logits_of(load_tiny(tmp, "gemma3", w, g3), ids), gemma2);
  json local = g3;
  local["rope_local_base_freq"] = 100.0;
  check_differs(logits_of(load_tiny(tmp, "gemma3-local", w, local), ids), gemma2);
  json window = g3;
  window["sliding_window"] = 2;
  check_differs(logits_of(load_tiny(tmp, "gemma3-window", w, window), ids), gemma2);
}

TEST_CASE("families: Phi-3's fused qkv_proj and gate_up_proj equal Llama's separate projections; LongRoPE picks its factors") {
  TempDir tmp;
  const auto ids = tiny_ids(2, 12, kDims.vocab);
  const Weights base = llama_weights(kDims);
  const auto llama = logits_of(load_tiny(tmp, "llama", base, llama_config(kDims)), ids);
  const Weights phi3 = to_phi3(base, kDims);
  check_same(logits_of(load_tiny(tmp, "phi3", phi3, llama_config(kDims, "phi3")), ids), llama);

  // LongRoPE with attention_factor 1: factors of 1 are plain RoPE; the long factors apply once
  // the sequence (12) is longer than original_max_position_embeddings (8), the short ones before.
  const auto longrope = [&](std::vector<double> short_f, std::vector<double> long_f, std::int64_t original) {
    json c = llama_config(kDims, "phi3");
    c["max_position_embeddings"] = 64;
    c["original_max_position_embeddings"] = original;
    c["rope_scaling"] = {{"type", "longrope"}, {"short_factor", short_f}, {"long_factor", long_f},
                         {"attention_factor", 1.0}};
    return logits_of(load_tiny(tmp, "phi3-longrope", phi3, c), ids);
  };
  const std::vector<double> ones(kDims.head_dim / 2, 1.0), twos(kDims.head_dim / 2, 2.0);
  check_same(longrope(twos, ones, 8), llama);
  check_differs(longrope(ones, twos, 8), llama);
  check_same(longrope(ones, twos, 16), llama);

  // Partial rotary: only the first half of each head rotates — not Llama's full rotation.
  json partial = llama_config(kDims, "phi3");
  partial["partial_rotary_factor"] = 0.5;
  check_differs(logits_of(load_tiny(tmp, "phi3-partial", phi3, partial), ids), llama);
}

TEST_CASE("families: a routed top-k outside 1 … experts is named, not an ATen error") {
  TempDir tmp;
  const Weights w = to_moe(llama_weights(kDims), kDims, 4, "block_sparse_moe", {"w1", "w3", "w2"});
  for (int top_k : {0, 5}) {
    CAPTURE(top_k);
    json cfg = llama_config(kDims, "mixtral");
    cfg["num_local_experts"] = 4;
    cfg["num_experts_per_tok"] = top_k;
    std::string message;
    try {
      load_tiny(tmp, "mixtral", w, cfg);
    } catch (const Failure& f) {
      message = f.message;
    }
    CHECK(message.find("num_experts_per_tok ≤ its experts; got " + std::to_string(top_k) + " of 4") !=
          std::string::npos);
  }
}

}  // namespace memfit::test
