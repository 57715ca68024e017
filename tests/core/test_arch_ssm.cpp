// The state-space and hybrid families (core/model/arch/mamba.cpp, mamba2.cpp, jamba.cpp,
// falcon_h1.cpp, nemotron_h.cpp, granitemoehybrid.cpp): parameter counts against the published
// ones, and per layer the kind and the recurrent state transformers' caches keep.
//
// The configs are the public config.json files of the repos named (their values written here; the
// Nemotron 3 one is read from ../shared/reference/real-hub/). The totals are also derived by hand
// from the modeling sources' shapes (the breakdowns in the comments), and each agrees with the
// count the Hub shows for the repo. State sizes come from the cache classes' formulas:
//   MambaCache / Jamba's HybridMambaAttentionDynamicCache (Mamba v1):
//     conv_states [batch, intermediate, conv_kernel], ssm_states [batch, intermediate, state_size]
//   Mamba-2 (Mamba2Cache, Falcon-H1's and Granite's hybrid caches, the LinearAttention cache layer):
//     conv_states [batch, intermediate + 2 × n_groups × state, conv_kernel],
//     ssm_states  [batch, heads, head_dim, state]
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "memfit/model/model.h"
#include "support/model_of.h"
#include "support/reference.h"

using namespace memfit;

namespace {

using test::model_of;

const ModelDims& dims_of(const Model& m) {
  REQUIRE(m.dims.get() != nullptr);
  return *m.dims.get();
}

std::vector<int> layers_of(const ModelDims& d, AttentionKind kind) {
  std::vector<int> out;
  for (std::size_t i = 0; i < d.per_layer.size(); ++i)
    if (d.per_layer[i].attention == kind) out.push_back(static_cast<int>(i));
  return out;
}

Shape shape_of(const Model& m, const std::string& name) {
  const int i = m.tree.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, "no tensor " << name);
  return m.tree.tensors[static_cast<std::size_t>(i)].shape;
}

// The Hub's rounded count: `published` in units of `unit` (129M → 129, 1e6).
double rounded(double n, double unit) { return std::round(n / unit); }

ErrorCode error_of(const std::string& config) {
  EstimateRequest req;
  req.config_text = config;
  const Result<Model> r = build_model(req);
  REQUIRE_FALSE(r.ok());
  return r.error().code();
}

std::string error_message(const std::string& config) { return test::build_error(config); }

// state-spaces/mamba-130m-hf config.json.
const char* kMamba130m = R"({
  "architectures": ["MambaForCausalLM"], "bos_token_id": 0, "conv_kernel": 4, "d_inner": 1536,
  "d_model": 768, "eos_token_id": 0, "expand": 2, "fused_add_norm": true, "hidden_act": "silu",
  "hidden_size": 768, "initializer_range": 0.1, "intermediate_size": 1536,
  "layer_norm_epsilon": 1e-05, "model_type": "mamba", "n_layer": 24, "num_hidden_layers": 24,
  "pad_token_id": 0, "pad_vocab_size_multiple": 8, "rescale_prenorm_residual": false,
  "residual_in_fp32": true, "rms_norm": true, "state_size": 16, "time_step_floor": 0.0001,
  "time_step_init_scheme": "random", "time_step_max": 0.1, "time_step_min": 0.001,
  "time_step_rank": 48, "time_step_scale": 1.0, "torch_dtype": "float32",
  "transformers_version": "4.39.0.dev0", "use_bias": false, "use_cache": true,
  "use_conv_bias": true, "vocab_size": 50280})";

// tiiuae/falcon-mamba-7b config.json.
const char* kFalconMamba7b = R"({
  "architectures": ["FalconMambaForCausalLM"], "bos_token_id": 0, "conv_kernel": 4,
  "eos_token_id": 11, "expand": 16, "hidden_act": "silu", "hidden_size": 4096,
  "initializer_range": 0.1, "intermediate_size": 8192, "layer_norm_epsilon": 1e-05,
  "model_type": "falcon_mamba", "num_hidden_layers": 64, "pad_token_id": 11,
  "rescale_prenorm_residual": false, "residual_in_fp32": true, "state_size": 16,
  "tie_word_embeddings": false, "time_step_floor": 0.0001, "time_step_init_scheme": "random",
  "time_step_max": 0.1, "time_step_min": 0.001, "time_step_rank": 256, "time_step_scale": 1.0,
  "torch_dtype": "bfloat16", "transformers_version": "4.43.0.dev0", "use_bias": false,
  "use_cache": true, "use_conv_bias": true, "vocab_size": 65024})";

// ai21labs/Jamba-v0.1 config.json.
const char* kJamba = R"({
  "architectures": ["JambaForCausalLM"], "attention_dropout": 0.0, "attn_layer_offset": 4,
  "attn_layer_period": 8, "bos_token_id": 1, "eos_token_id": 2, "expert_layer_offset": 1,
  "expert_layer_period": 2, "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
  "intermediate_size": 14336, "mamba_conv_bias": true, "mamba_d_conv": 4, "mamba_d_state": 16,
  "mamba_dt_rank": 256, "mamba_expand": 2, "mamba_proj_bias": false,
  "max_position_embeddings": 262144, "model_type": "jamba", "num_attention_heads": 32,
  "num_experts": 16, "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8,
  "num_logits_to_keep": 1, "output_router_logits": false, "pad_token_id": 0,
  "rms_norm_eps": 1e-06, "router_aux_loss_coef": 0.001, "sliding_window": null,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.40.0.dev0",
  "use_cache": true, "use_mamba_kernels": true, "vocab_size": 65536})";

// mistralai/Mamba-Codestral-7B-v0.1 config.json (its time_step_limit holds Python's Infinity).
const char* kCodestral = R"({
  "architectures": ["Mamba2ForCausalLM"], "bos_token_id": 0, "chunk_size": 256, "conv_kernel": 4,
  "eos_token_id": 0, "expand": 2, "head_dim": 64, "hidden_act": "silu", "hidden_size": 4096,
  "initializer_range": 0.1, "layer_norm_epsilon": 1e-05, "model_type": "mamba2", "n_groups": 8,
  "norm_before_gate": false, "num_heads": 128, "num_hidden_layers": 64, "pad_token_id": 0,
  "rescale_prenorm_residual": false, "residual_in_fp32": true, "rms_norm": true,
  "state_size": 128, "tie_word_embeddings": false, "time_step_floor": 0.0001,
  "time_step_limit": [0.0, Infinity], "time_step_max": 0.1, "time_step_min": 0.001,
  "time_step_rank": 256, "torch_dtype": "bfloat16", "use_bias": false, "use_cache": true,
  "use_conv_bias": true, "vocab_size": 32768})";

}  // namespace

TEST_CASE("ssm: state-spaces/mamba-130m-hf — 129M parameters, 24 Mamba layers, no KV cache") {
  const Model m = model_of(kMamba130m);
  CHECK(m.class_name() == "MambaForCausalLM");
  // Per layer: norm 768 + conv1d 1536×4 + 1536 + in_proj 768×3072 + x_proj (48 + 2×16)×1536 +
  // dt_proj 48×1536 + 1536 + A_log 1536×16 + D 1536 + out_proj 1536×768 = 3,771,648;
  // × 24 + embeddings 50280×768 (lm_head tied) + norm_f 768 = 129,135,360 (the Hub: 129M).
  CHECK(m.parameters == 129135360ULL);
  CHECK(rounded(static_cast<double>(m.parameters), 1e6) == 129);
  CHECK(shape_of(m, "backbone.layers.0.mixer.conv1d.weight") == Shape{1536, 1, 4});
  CHECK(shape_of(m, "backbone.layers.0.mixer.x_proj.weight") == Shape{80, 1536});
  CHECK(shape_of(m, "backbone.layers.23.mixer.A_log") == Shape{1536, 16});
  CHECK(m.tree.tensors[static_cast<std::size_t>(m.tree.find_tensor("lm_head.weight"))].is_alias());

  const ModelDims& d = dims_of(m);
  REQUIRE(d.per_layer.size() == 24);
  CHECK(layers_of(d, AttentionKind::kRecurrent).size() == 24);
  for (const LayerDims& l : d.per_layer) {
    // MambaCache: conv [1536, conv_kernel 4], ssm [1536, state_size 16].
    CHECK(l.state.conv_state == 1536 * 4);
    CHECK(l.state.ssm_state == 1536 * 16);
    CHECK(l.kv_heads == 0);
    CHECK_FALSE(l.caches_tokens());
  }
  CHECK(d.heads == 0);
  CHECK(d.intermediate == 1536);
  CHECK(d.tied_embeddings);
  CHECK(d.generative);

  // "auto" is MambaConfig's default rank: ceil(768 / 16) = 48, the same model.
  std::string autorank = kMamba130m;
  autorank.replace(autorank.find("\"time_step_rank\": 48"), 20, "\"time_step_rank\": \"auto\"");
  CHECK(model_of(autorank).parameters == 129135360ULL);
  std::string bad = kMamba130m;
  bad.replace(bad.find("\"time_step_rank\": 48"), 20, "\"time_step_rank\": \"big\"");
  CHECK(error_message(bad).find("'time_step_rank' must be a number or \"auto\"") != std::string::npos);
}

TEST_CASE("ssm: tiiuae/falcon-mamba-7b — 7.27B parameters, B/C/dt RMS buffers") {
  const Model m = model_of(kFalconMamba7b);
  CHECK(m.class_name() == "FalconMambaForCausalLM");
  // intermediate_size 8192 wins over expand 16 (FalconMambaConfig reads the kwarg). Per layer:
  // norm 4096 + conv1d 8192×4 + 8192 + in_proj 4096×16384 + x_proj (256 + 32)×8192 +
  // dt_proj 256×8192 + 8192 + A_log 8192×16 + D 8192 + out_proj 8192×4096; × 64 + embeddings and
  // an untied lm_head 65024×4096 each + norm_f = 7,272,665,088 (the Hub: 7.27B).
  CHECK(m.parameters == 7272665088ULL);
  CHECK(rounded(static_cast<double>(m.parameters), 1e7) == 727);
  const int rms = m.tree.find_tensor("backbone.layers.63.mixer.dt_rms");
  REQUIRE(rms >= 0);
  CHECK(m.tree.tensors[static_cast<std::size_t>(rms)].shape == Shape{8192});
  CHECK_FALSE(m.tree.tensors[static_cast<std::size_t>(rms)].persistent);
  CHECK(shape_of(m, "backbone.layers.0.mixer.b_c_rms") == Shape{16});

  const ModelDims& d = dims_of(m);
  CHECK(layers_of(d, AttentionKind::kRecurrent).size() == 64);
  CHECK(d.per_layer.at(0).state.conv_state == 8192 * 4);
  CHECK(d.per_layer.at(0).state.ssm_state == 8192 * 16);
  CHECK_FALSE(d.tied_embeddings);
}

TEST_CASE("ssm: ai21labs/Jamba-v0.1 — 51.6B total, 12B active; attention every 8th layer from 4") {
  const Model m = model_of(kJamba);
  CHECK(m.class_name() == "JambaForCausalLM");
  // Mamba layer: mixer (conv 8192×4 + 8192, in_proj 4096×16384, x_proj 288×8192, dt_proj 256×8192
  // + 8192, A_log 8192×16, D 8192, out_proj 8192×4096, dt/b/c norms 256 + 16 + 16); attention
  // layer: q/o 4096×4096, k/v 4096×1024. Odd layers: 16 experts of 3×4096×14336 + router
  // 16×4096; even layers: one such MLP. Two norms per layer; embed_tokens + lm_head 65536×4096;
  // final norm = 51,570,323,328 (the Hub: 51.6B). A token skips 14 of the 16 experts:
  // 51.57B − 16 layers × 16 × 176,160,768 × 14/16 = 12.11B (the card: 12B active).
  CHECK(m.parameters == 51570323328ULL);
  CHECK(rounded(static_cast<double>(m.parameters), 1e8) == 516);
  const ModelDims& d = dims_of(m);
  CHECK(rounded(active_parameters(m.tree, d), 1e9) == 12);
  CHECK(shape_of(m, "model.layers.4.self_attn.k_proj.weight") == Shape{1024, 4096});
  CHECK(shape_of(m, "model.layers.0.mamba.dt_layernorm.weight") == Shape{256});
  CHECK(shape_of(m, "model.layers.1.feed_forward.experts.15.down_proj.weight") == Shape{4096, 14336});
  CHECK(shape_of(m, "model.layers.2.feed_forward.gate_proj.weight") == Shape{14336, 4096});

  REQUIRE(d.per_layer.size() == 32);
  CHECK(layers_of(d, AttentionKind::kFull) == std::vector<int>{4, 12, 20, 28});
  CHECK(layers_of(d, AttentionKind::kRecurrent).size() == 28);
  for (int i : layers_of(d, AttentionKind::kFull)) {
    const LayerDims& l = d.per_layer[static_cast<std::size_t>(i)];
    CHECK(l.heads == 32);
    CHECK(l.kv_heads == 8);
    CHECK(l.k_head_dim == 128);
    CHECK(l.v_head_dim == 128);
    CHECK(l.rope.theta == 0);  // no positional encoding at all
  }
  // HybridMambaAttentionDynamicCache: conv [mamba_expand × hidden = 8192, mamba_d_conv 4],
  // ssm [8192, mamba_d_state 16].
  CHECK(d.per_layer.at(0).state.conv_state == 8192 * 4);
  CHECK(d.per_layer.at(0).state.ssm_state == 8192 * 16);
  CHECK(d.per_layer.at(4).state.ssm_state == 0);
  // MoE on the odd layers: 16 experts, 2 per token, each 14336 wide.
  CHECK(d.per_layer.at(1).moe.experts == 16);
  CHECK(d.per_layer.at(1).moe.active == 2);
  CHECK(d.per_layer.at(1).intermediate == 2 * 14336);
  CHECK(d.per_layer.at(2).moe.experts == 0);
  CHECK(d.per_layer.at(2).intermediate == 14336);
  CHECK(d.experts == 16);
  CHECK(d.heads == 32);
  CHECK(d.kv_heads == 8);

  std::string bad = kJamba;
  bad.replace(bad.find("\"attn_layer_offset\": 4"), 22, "\"attn_layer_offset\": 8");
  CHECK(error_message(bad).find("'attn_layer_offset' (8) must be smaller than 'attn_layer_period' (8)") !=
        std::string::npos);
}

TEST_CASE("ssm: mistralai/Mamba-Codestral-7B-v0.1 — 7.29B parameters, Mamba-2 state per sequence") {
  const Model m = model_of(kCodestral);  // also: the config's Infinity parses
  CHECK(m.class_name() == "Mamba2ForCausalLM");
  // Per layer: norm 4096 + conv1d over conv_dim 8192 + 2×8×128 = 10240 (10240×4 + 10240) +
  // in_proj 4096×(8192 + 10240 + 128) + dt_bias/A_log/D 3×128 + gated norm 8192 +
  // out_proj 8192×4096; × 64 + embeddings and an untied lm_head 32768×4096 each + norm_f
  // = 7,285,403,648 (the Hub: 7.29B).
  CHECK(m.parameters == 7285403648ULL);
  CHECK(rounded(static_cast<double>(m.parameters), 1e7) == 729);
  CHECK(shape_of(m, "backbone.layers.0.mixer.in_proj.weight") == Shape{18560, 4096});
  CHECK(shape_of(m, "backbone.layers.0.mixer.norm.weight") == Shape{8192});
  const ModelDims& d = dims_of(m);
  CHECK(layers_of(d, AttentionKind::kRecurrent).size() == 64);
  // conv [8192 + 2 × 8 × 128, 4], ssm [128 heads, 64, 128].
  CHECK(d.per_layer.at(0).state.conv_state == (8192 + 2 * 8 * 128) * 4);
  CHECK(d.per_layer.at(0).state.ssm_state == 128 * 64 * 128);

  // Mamba2Config refuses hidden_size × expand ≠ num_heads × head_dim.
  std::string bad = kCodestral;
  bad.replace(bad.find("\"num_heads\": 128"), 16, "\"num_heads\": 100");
  CHECK(error_of(bad) == ErrorCode::kInvalidValue);
  // Sizes no real model has fail cleanly instead of overflowing the state's products.
  std::string huge = kCodestral;
  huge.replace(huge.find("\"state_size\": 128"), 17, "\"state_size\": 1099511627776");
  CHECK(error_message(huge).find("too large to be a real model's size") != std::string::npos);
}

TEST_CASE("ssm: nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B — 31.6B total, 3.6B active, 23 M / 23 E / 6 *") {
  const auto ref = test::reference_dir();
  if (!ref) {
    test::skip_loudly("Nemotron-3-Nano-30B-A3B (real-hub config.json)");
    return;
  }
  const std::string path = *ref + "/real-hub/nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16/config.json";
  REQUIRE_MESSAGE(test::file_exists(path), "missing " << path);
  const std::string text = test::read_text(path);
  const Model m = model_of(text);
  CHECK(m.class_name() == "NemotronHForCausalLM");
  // hybrid_override_pattern MEMEM*EMEMEM*…: 23 Mamba-2 layers (conv over 4096 + 2×8×128 = 6144:
  // 6144×4 + 6144, in_proj 2688×(4096 + 6144 + 64), 3×64, gated norm 4096, out_proj 4096×2688),
  // 6 attention layers (q/o 2688×4096, k/v 2688×256), 23 MoE layers (128 experts of up/down
  // 2688×1856, router 128×2688, shared up/down 2688×3712), a norm per layer, embeddings and an
  // untied lm_head 131072×2688, norm_f = 31,577,937,344 (the card: 31.6B total). A token uses 6
  // of the 128 experts: 3,580,073,408 (the card: 3.6B active including embeddings; 3.2B without
  // the 352M embedding table).
  CHECK(m.parameters == 31577937344ULL);
  CHECK(rounded(static_cast<double>(m.parameters), 1e8) == 316);
  const ModelDims& d = dims_of(m);
  CHECK(rounded(active_parameters(m.tree, d), 1e8) == 36);
  CHECK(rounded(active_parameters(m.tree, d) - 131072.0 * 2688.0, 1e8) == 32);
  CHECK(shape_of(m, "backbone.layers.1.mixer.experts.127.down_proj.weight") == Shape{2688, 1856});
  CHECK(shape_of(m, "backbone.layers.1.mixer.shared_experts.up_proj.weight") == Shape{3712, 2688});
  CHECK(shape_of(m, "backbone.layers.5.mixer.k_proj.weight") == Shape{256, 2688});
  CHECK(shape_of(m, "backbone.layers.0.mixer.in_proj.weight") == Shape{10304, 2688});
  const int bias = m.tree.find_tensor("backbone.layers.1.mixer.gate.e_score_correction_bias");
  REQUIRE(bias >= 0);
  CHECK(m.tree.tensors[static_cast<std::size_t>(bias)].kind == TensorKind::kBuffer);
  CHECK(m.tree.tensors[static_cast<std::size_t>(bias)].dtype == DType::kF32);

  REQUIRE(d.per_layer.size() == 52);
  CHECK(layers_of(d, AttentionKind::kFull) == std::vector<int>{5, 12, 19, 26, 33, 42});
  CHECK(layers_of(d, AttentionKind::kRecurrent).size() == 23);
  CHECK(layers_of(d, AttentionKind::kNone).size() == 23);
  for (int i : layers_of(d, AttentionKind::kRecurrent)) {
    const LayerDims& l = d.per_layer[static_cast<std::size_t>(i)];
    // conv [64 × 64 + 2 × n_groups 8 × ssm_state_size 128, conv_kernel 4];
    // ssm [mamba_num_heads 64, mamba_head_dim 64, ssm_state_size 128].
    CHECK(l.state.conv_state == 6144 * 4);
    CHECK(l.state.ssm_state == 64 * 64 * 128);
  }
  const LayerDims& attn = d.per_layer.at(5);
  CHECK(attn.heads == 32);
  CHECK(attn.kv_heads == 2);
  CHECK(attn.k_head_dim == 128);
  const LayerDims& moe = d.per_layer.at(1);
  CHECK(moe.attention == AttentionKind::kNone);
  CHECK(moe.moe.experts == 128);
  CHECK(moe.moe.active == 6);
  CHECK(moe.moe.shared == 1);
  CHECK(moe.moe.expert_width == 1856);
  CHECK(moe.moe.shared_width == 3712);
  CHECK(moe.intermediate == 6 * 1856 + 3712);
  CHECK(d.per_layer.at(0).moe.experts == 0);
  CHECK(d.heads == 32);
  CHECK(d.kv_heads == 2);
  CHECK(d.max_positions == 262144);

  // Python's json writes NemotronHConfig's time_step_limit (0.0, inf) as [0.0, Infinity]: the
  // config still reads, to the same model.
  std::string with_inf = text;
  with_inf.insert(with_inf.find('{') + 1, "\n    \"time_step_limit\": [0.0, Infinity],");
  CHECK(model_of(with_inf).parameters == m.parameters);
}

TEST_CASE("ssm: Nemotron-H layer types — the list (new or legacy names) or the pattern, and bad ones") {
  const std::string base = R"({"model_type": "nemotron_h", "architectures": ["NemotronHForCausalLM"],
      "hidden_size": 64, "vocab_size": 100, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 16, "intermediate_size": 96,
      "mamba_num_heads": 4, "mamba_head_dim": 32, "n_groups": 2, "ssm_state_size": 8,
      "n_routed_experts": 4, "moe_intermediate_size": 32, "moe_shared_expert_intermediate_size": 48,
      "num_experts_per_tok": 2, )";
  const Model pattern = model_of(base + R"("hybrid_override_pattern": "M-*E"})");
  const Model names =
      model_of(base + R"("layers_block_type": ["linear_attention", "mlp", "full_attention", "moe"]})");
  const Model legacy = model_of(base + R"("layers_block_type": ["mamba", "mlp", "attention", "moe"]})");
  for (const Model* m : {&pattern, &names, &legacy}) {
    const ModelDims& d = dims_of(*m);
    REQUIRE(d.per_layer.size() == 4);
    CHECK(d.per_layer[0].attention == AttentionKind::kRecurrent);
    // conv [4 × 32 + 2 × 2 × 8, 4]; ssm [4, 32, 8].
    CHECK(d.per_layer[0].state.conv_state == (128 + 32) * 4);
    CHECK(d.per_layer[0].state.ssm_state == 4 * 32 * 8);
    CHECK(d.per_layer[1].attention == AttentionKind::kNone);
    CHECK(d.per_layer[1].intermediate == 96);
    CHECK(d.per_layer[2].attention == AttentionKind::kFull);
    CHECK(d.per_layer[2].kv_heads == 2);
    CHECK(d.per_layer[3].attention == AttentionKind::kNone);
    CHECK(d.per_layer[3].moe.experts == 4);
    CHECK(m->parameters == pattern.parameters);
  }
  // The MLP layer is not gated: up_proj and down_proj only.
  CHECK(shape_of(pattern, "backbone.layers.1.mixer.up_proj.weight") == Shape{96, 64});
  CHECK(pattern.tree.find_tensor("backbone.layers.1.mixer.gate_proj.weight") < 0);
  // moe_latent_size: the experts work in the latent width, between two projections.
  const Model latent = model_of(base + R"("hybrid_override_pattern": "E", "moe_latent_size": 16})");
  CHECK(shape_of(latent, "backbone.layers.0.mixer.experts.0.up_proj.weight") == Shape{32, 16});
  CHECK(shape_of(latent, "backbone.layers.0.mixer.fc1_latent_proj.weight") == Shape{16, 64});
  // A dense pattern leaves the model dense, whatever the expert keys say.
  CHECK(dims_of(model_of(base + R"("hybrid_override_pattern": "M*-"})")).experts == 0);

  CHECK(error_message(base + R"("hybrid_override_pattern": "M*X"})")
            .find("'hybrid_override_pattern' has 'X' at layer 2") != std::string::npos);
  CHECK(error_message(base + R"("layers_block_type": ["mamba", "hybrid"]})")
            .find("layer 1 has type 'hybrid'") != std::string::npos);
}

TEST_CASE("ssm: Falcon-H1 — every layer caches K/V and keeps a Mamba-2 state (parallel hybrid)") {
  // FalconH1Config keys at small sizes; the expected values follow FalconH1Mixer and
  // FalconHybridMambaAttentionDynamicCache.
  const std::string base = R"({"model_type": "falcon_h1", "architectures": ["FalconH1ForCausalLM"],
      "hidden_size": 64, "vocab_size": 100, "num_hidden_layers": 3, "num_attention_heads": 4,
      "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 96, "mamba_d_ssm": 96,
      "mamba_n_heads": 6, "mamba_d_state": 8, "mamba_n_groups": 2, "mamba_d_conv": 4, )";
  const Model m = model_of(base + R"("mamba_rms_norm": true})");
  CHECK(m.class_name() == "FalconH1ForCausalLM");
  const ModelDims& d = dims_of(m);
  REQUIRE(d.per_layer.size() == 3);
  for (const LayerDims& l : d.per_layer) {
    CHECK(l.attention == AttentionKind::kFull);
    CHECK(l.kv_heads == 2);
    CHECK(l.k_head_dim == 16);
    // conv [96 + 2 × 2 × 8, 4]; ssm [6 heads, mamba_d_head "auto" = 96 / 6 = 16, 8].
    CHECK(l.state.conv_state == (96 + 32) * 4);
    CHECK(l.state.ssm_state == 6 * 16 * 8);
    CHECK(l.intermediate == 96);
  }
  // in_proj [96 + 128 + 6, 64]; mup_vector [1, 1, 2 × 96 + 2 × 16 + 6]; the gated norm only
  // with mamba_rms_norm.
  CHECK(shape_of(m, "model.layers.0.mamba.in_proj.weight") == Shape{230, 64});
  CHECK(shape_of(m, "model.layers.0.mamba.mup_vector") == Shape{1, 1, 230});
  CHECK(shape_of(m, "model.layers.0.mamba.norm.weight") == Shape{96});
  const Model plain = model_of(base + "\"mamba_rms_norm\": false}");
  CHECK(plain.tree.find_tensor("model.layers.0.mamba.norm.weight") < 0);
  // mamba_d_ssm null: int(mamba_expand × hidden) = 128, split in 4 heads of 32.
  const Model expanded =
      model_of(base.substr(0, base.find("\"mamba_d_ssm\"")) +
               R"("mamba_d_ssm": null, "mamba_n_heads": 4, "mamba_d_state": 8, "mamba_n_groups": 1})");
  CHECK(dims_of(expanded).per_layer.at(0).state.conv_state == (128 + 16) * 4);
  CHECK(dims_of(expanded).per_layer.at(0).state.ssm_state == 4 * 32 * 8);
  // mamba_n_heads must divide the Mamba width.
  CHECK(error_of(base + R"("mamba_n_heads": 5})") == ErrorCode::kInvalidValue);
}

TEST_CASE("ssm: GraniteMoeHybrid — layer_types, MoE + shared MLP in every layer, module order") {
  // GraniteMoeHybridConfig keys at small sizes (the Granite 4.0-H layout: Mamba-2 layers with a
  // few attention layers, no positional encoding).
  const std::string base = R"({"model_type": "granitemoehybrid",
      "architectures": ["GraniteMoeHybridForCausalLM"],
      "hidden_size": 64, "vocab_size": 100, "num_hidden_layers": 4, "num_attention_heads": 4,
      "num_key_value_heads": 2, "intermediate_size": 32, "shared_intermediate_size": 48,
      "num_local_experts": 4, "num_experts_per_tok": 2, "mamba_n_heads": 8, "mamba_d_state": 16,
      "mamba_n_groups": 1, "mamba_d_conv": 4, "mamba_expand": 2, "tie_word_embeddings": true,
      "layer_types": ["mamba", "attention", "mamba", "mamba"], )";
  const Model m = model_of(base + R"("position_embedding_type": "nope"})");
  const ModelDims& d = dims_of(m);
  REQUIRE(d.per_layer.size() == 4);
  CHECK(layers_of(d, AttentionKind::kFull) == std::vector<int>{1});
  for (int i : layers_of(d, AttentionKind::kRecurrent)) {
    // conv [mamba_expand × hidden 128 + 2 × 1 × 16, 4]; ssm [8 heads, 128 / 8 = 16, 16].
    CHECK(d.per_layer[static_cast<std::size_t>(i)].state.conv_state == (128 + 32) * 4);
    CHECK(d.per_layer[static_cast<std::size_t>(i)].state.ssm_state == 8 * 16 * 16);
  }
  CHECK(d.per_layer.at(1).heads == 4);
  CHECK(d.per_layer.at(1).kv_heads == 2);
  CHECK(d.per_layer.at(1).k_head_dim == 16);
  CHECK(d.per_layer.at(1).rope.theta == 0);
  // Every layer: 2 of 4 experts 32 wide + the shared MLP 48 wide.
  CHECK(d.per_layer.at(0).moe.experts == 4);
  CHECK(d.per_layer.at(0).intermediate == 2 * 32 + 48);
  CHECK(shape_of(m, "model.layers.0.block_sparse_moe.input_linear.weight") == Shape{4, 64, 64});
  CHECK(shape_of(m, "model.layers.0.block_sparse_moe.output_linear.weight") == Shape{4, 64, 32});
  CHECK(shape_of(m, "model.layers.1.shared_mlp.input_linear.weight") == Shape{96, 64});
  CHECK(m.tree.find_module("model.rotary_emb") < 0);
  // self_attn / mamba are registered last (they start as plain None attributes).
  const ModuleNode& layer = m.tree.modules[static_cast<std::size_t>(m.tree.find_module("model.layers.0"))];
  std::vector<std::string> children;
  for (int c : layer.children) children.push_back(m.tree.modules[static_cast<std::size_t>(c)].name);
  CHECK(children == std::vector<std::string>{"model.layers.0.input_layernorm",
                                             "model.layers.0.post_attention_layernorm",
                                             "model.layers.0.block_sparse_moe",
                                             "model.layers.0.shared_mlp", "model.layers.0.mamba"});
  CHECK(model_of(base + R"("position_embedding_type": "rope"})").tree.find_module("model.rotary_emb") >= 0);
  const std::string short_types =
      base.substr(0, base.find("\"layer_types\"")) + R"("layer_types": ["mamba", "attention"]})";
  CHECK(error_message(short_types).find("'layer_types' has 2 entries for 4 layers") != std::string::npos);
}
