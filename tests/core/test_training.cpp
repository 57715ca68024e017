// Training memory (core/include/memfit/memory/training.h, lora.h).
//
// Authorities:
//   PEFT's own print_trainable_parameters() output for public models (its README, docs and
//   countless notebooks): Llama-2-7b r=8 q_proj,v_proj "trainable params: 4,194,304 || all params:
//   6,742,609,920"; GPT-2 r=8 c_attn "294,912 || all params: 124,734,720"; Mistral-7B r=16 all
//   linear "41,943,040 || all params: 7,283,675,136"; and the assignment's Llama-2-7b r=16 figures.
//   ZeRO paper (Rajbhandari et al. 2020), Figure 1: Ψ = 7.5B, N_d = 64, K = 12 → baseline 120 GB,
//   P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB.
//   Korthikanti et al. 2022, Eq. 1: activations per layer = s·b·h·(34 + 5·a·s/h) bytes.
//   bitsandbytes Optimizer2State (8-bit: uint8 states, fp32 absmax per 256, fp32 under 4096 values)
//   and transformers' Adafactor (factored second moment, no first moment by default).
#include <doctest/doctest.h>

#include <string>

#include "memfit/memory/estimate.h"
#include "memfit/memory/training.h"
#include "memfit/model/model_dims.h"
#include "memfit/model/tree_builder.h"
#include "support/reference.h"

using namespace memfit;

namespace {

struct TrainedModel {
  TensorTree tree;
  ModelDims dims;
};

TrainedModel model_of(const std::string& stem) {
  EstimateRequest req;
  req.config_text = test::fixture("configs/" + stem + ".json");
  req.name = stem;
  auto m = build_model(req);
  REQUIRE_MESSAGE(m.ok(), m.error().message());
  REQUIRE(m->dims.get());
  return {m->tree, *m->dims.get()};
}

std::uint64_t lora_params(const TrainedModel& m, std::int64_t r, const std::vector<std::string>& targets) {
  return lora_plan(m.tree, m.dims.vocab, r, targets).trainable_parameters;
}

}  // namespace

TEST_CASE("PEFT's trainable parameters: Llama-2-7b") {
  const TrainedModel m = model_of("meta-llama--Llama-2-7b-hf");
  // r=16 on q_proj, v_proj: 32 layers × 2 × 16 × (4096 + 4096) = 8,388,608.
  CHECK(lora_params(m, 16, {"q_proj", "v_proj"}) == 8388608);
  // r=8: PEFT prints "trainable params: 4,194,304 || all params: 6,742,609,920".
  CHECK(lora_params(m, 8, {"q_proj", "v_proj"}) == 4194304);
  CHECK(m.tree.parameter_count() + 4194304 == 6742609920ULL);
  // all-linear (lm_head excluded): per layer 4 × 16 × 8192 + 3 × 16 × (4096 + 11008) = 1,249,280;
  // × 32 = 39,976,960.
  const LoraPlan all = lora_plan(m.tree, m.dims.vocab, 16, {"all-linear"});
  CHECK(all.trainable_parameters == 39976960);
  CHECK(all.adapters.size() == 32 * 7);
  for (const auto& a : all.adapters) CHECK(a.module.find("lm_head") == std::string::npos);
  // The seven projections by name give the same as all-linear.
  CHECK(lora_params(m, 16, {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}) == 39976960);
}

TEST_CASE("PEFT's trainable parameters: GQA, Conv1D and MoE models") {
  // Mistral-7B r=16 all linear: 32 × (2 × 16 × 8192 + 2 × 16 × 5120 + 3 × 16 × 18432) = 41,943,040;
  // PEFT prints "trainable params: 41,943,040 || all params: 7,283,675,136".
  const TrainedModel mistral = model_of("mistralai--Mistral-7B-v0.1");
  CHECK(lora_params(mistral, 16, {"all-linear"}) == 41943040);
  CHECK(mistral.tree.parameter_count() + 41943040 == 7283675136ULL);
  // Llama-3-8B has the same layer shapes: 41,943,040 as well.
  CHECK(lora_params(model_of("meta-llama--Meta-Llama-3-8B"), 16, {"all-linear"}) == 41943040);
  // GPT-2, r=8 on c_attn (Conv1D [768, 2304]): 12 × 8 × (768 + 2304) = 294,912; PEFT prints
  // "all params: 124,734,720" = 124,439,808 + 294,912.
  const TrainedModel gpt2 = model_of("gpt2");
  CHECK(lora_params(gpt2, 8, {"c_attn"}) == 294912);
  CHECK(gpt2.tree.parameter_count() + 294912 == 124734720ULL);
  // GPT-2 all-linear: c_attn, c_proj (attn), c_fc, c_proj (mlp); the tied lm_head is excluded:
  // 12 × 8 × ((768+2304) + (768+768) + (768+3072) + (3072+768)) = 12 × 8 × 12,288 = 1,179,648.
  CHECK(lora_params(gpt2, 8, {"all-linear"}) == 1179648);
}

TEST_CASE("LoRA targets that match nothing, or a module LoRA cannot wrap, fail as PEFT does") {
  const TrainedModel m = model_of("meta-llama--Llama-2-7b-hf");
  try {
    lora_plan(m.tree, m.dims.vocab, 16, {"query_key_value"});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidArgument);
    CHECK(e.message().find("not found in the base model") != std::string::npos);
  }
  CHECK_THROWS_AS(lora_plan(m.tree, m.dims.vocab, 16, {"self_attn"}), Error);  // a container
  CHECK_THROWS_AS(lora_plan(m.tree, m.dims.vocab, 0, {"q_proj"}), Error);
  CHECK(parse_lora_targets(" q_proj, v_proj ,") == std::vector<std::string>{"q_proj", "v_proj"});
}

TEST_CASE("optimizer states per tensor") {
  // AdamW: two fp32 moments.
  CHECK(optimizer_state_bytes(Optimizer::kAdamW, {4096, 4096}) == 8.0 * 16777216);
  // 8-bit AdamW: 2 × 16,777,216 uint8 + 2 × 4 × 65,536 absmax = 34,078,720.
  CHECK(optimizer_state_bytes(Optimizer::kAdamW8bit, {4096, 4096}) == 34078720.0);
  // Under min_8bit_size (4096 values): fp32 states, 8 × 4,095.
  CHECK(optimizer_state_bytes(Optimizer::kAdamW8bit, {4095}) == 32760.0);
  // Adafactor: row [4096] + column [11008] fp32 = 4 × 15,104 = 60,416; a vector: 4 × n.
  CHECK(optimizer_state_bytes(Optimizer::kAdafactor, {4096, 11008}) == 60416.0);
  CHECK(optimizer_state_bytes(Optimizer::kAdafactor, {4096}) == 16384.0);
  CHECK(optimizer_state_bytes(Optimizer::kSgd, {10, 10}) == 400.0);
}

TEST_CASE("ZeRO stages reproduce the paper's Figure 1 (7.5B parameters, 64 GPUs)") {
  TreeBuilder b("Toy");
  b.param("w", {7'500'000'000});
  const TensorTree tree = b.finish();
  ModelDims dims;  // no layers, no vocabulary: weights, gradients and optimizer only
  TrainingOptions o;
  o.method = TrainMethod::kFull;
  o.compute = DType::kBF16;
  o.overhead_bytes = 0;
  o.gpus = 64;
  auto per_gpu = [&](int stage) {
    o.zero_stage = stage;
    const TrainingEstimate t = estimate_training(tree, dims, o);
    return t.total_bytes() - t.activation_bytes;
  };
  CHECK(per_gpu(0) == 120e9);        // (2 + 2 + 12) × 7.5B
  CHECK(per_gpu(1) == 31.40625e9);   // 2Ψ + 2Ψ + 12Ψ/64 ("31.4GB")
  CHECK(per_gpu(2) == 16.640625e9);  // 2Ψ + 14Ψ/64 ("16.6GB")
  CHECK(per_gpu(3) == 1.875e9);      // 16Ψ/64 ("1.9GB")
  o.zero_stage = 0;
  o.fsdp = true;                     // FULL_SHARD shards like stage 3
  CHECK(estimate_training(tree, dims, o).total_bytes() == 1.875e9);
}

TEST_CASE("activations: Korthikanti et al.'s 34·s·b·h + 5·a·s²·b per layer (GPT-2, eager)") {
  const TrainedModel gpt2 = model_of("gpt2");  // dropout 0.1, MLP 4h (Conv1D), 12 heads, h = 768
  REQUIRE(gpt2.dims.dropout);
  REQUIRE_FALSE(gpt2.dims.gated_mlp);
  // s = 1024, b = 1, 16-bit: 34 × 1024 × 768 + 5 × 12 × 1024² = 26,738,688 + 62,914,560.
  CHECK(activation_bytes_per_layer(gpt2.dims, 1024, 1, 2, AttentionImpl::kEager) == 89653248.0);
  // With flash/sdpa the s² terms go; the kernel keeps a float32 logsumexp (a·s·b·4 = 49,152).
  CHECK(activation_bytes_per_layer(gpt2.dims, 1024, 1, 2, AttentionImpl::kSdpa) == 26738688.0 + 49152.0);
  // Gradient checkpointing keeps one 16-bit layer input per layer plus one layer recomputed:
  // 12 × 1024 × 768 × 2 + 89,653,248, plus the logits (1024 × 50,257 × (2 + 4 + 4)).
  const TrainingActivations ck = training_activations(gpt2.dims, 1024, 1, 2, AttentionImpl::kEager, true);
  CHECK(ck.bytes == 12.0 * 1024 * 768 * 2 + 89653248.0 + 1024.0 * 50257 * 10);
  const TrainingActivations full = training_activations(gpt2.dims, 1024, 1, 2, AttentionImpl::kEager, false);
  CHECK(full.bytes == 12.0 * 89653248.0 + 1024.0 * 50257 * 10);
}

TEST_CASE("LoRA and QLoRA on Llama-2-7b: frozen base, fp32 adapters") {
  const TrainedModel m = model_of("meta-llama--Llama-2-7b-hf");
  TrainingOptions o;
  o.method = TrainMethod::kLora;
  o.rank = 16;
  o.targets = {"q_proj", "v_proj"};
  o.compute = DType::kF16;
  o.overhead_bytes = 0;
  const TrainingEstimate lora = estimate_training(m.tree, m.dims, o);
  CHECK(lora.trainable_parameters == 8388608);
  // fp16 base 6,738,415,616 × 2 (+ the 64-value rotary inv_freq buffer, float32) + adapters
  // 8,388,608 × 4;
  // gradients 4 × 8,388,608;
  // AdamW 8 × 8,388,608 (every adapter tensor has over 4096 values).
  CHECK(lora.weights_bytes == 6738415616.0 * 2 + 64 * 4 + 8388608.0 * 4);
  CHECK(lora.gradient_bytes == 8388608.0 * 4);
  CHECK(lora.master_weights_bytes == 0);
  CHECK(lora.optimizer_bytes == 8388608.0 * 8);
  o.method = TrainMethod::kQlora;
  const TrainingEstimate qlora = estimate_training(m.tree, m.dims, o);
  // NF4 with double quant: each [out, in] weight costs n/2 + n/64 + 4·⌈n/64/256⌉ + 1,024 + 4 + 64
  // bytes instead of 2n, so the base shrinks to under a third.
  CHECK(qlora.weights_bytes < lora.weights_bytes / 3);
  CHECK(qlora.optimizer_bytes == lora.optimizer_bytes);
}
