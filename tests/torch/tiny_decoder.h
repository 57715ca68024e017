// tests/torch/tiny_decoder.h — tiny Llama-shaped checkpoints written by the test (safetensors +
// config.json in a scratch folder): the families without a golden checkpoint are checked by
// identities between two such models (issue 17), never against numbers of our own.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "torch_test_support.h"

namespace memfit::test {

using Weights = std::map<std::string, at::Tensor>;

struct TinyDims {
  std::int64_t vocab = 96, hidden = 32, inter = 48, layers = 3, heads = 4, kv_heads = 2, head_dim = 8;
  std::int64_t positions = 64;
};

// Llama-layout float32 weights from `seed`: matrices N(0, 0.5²) (so attention is far from
// uniform), norm weights 1 + N(0, 0.1²), a separate lm_head.
Weights llama_weights(const TinyDims& d, std::uint64_t seed = 7);
// A LlamaConfig-shaped config.json for `model_type` with d's sizes.
nlohmann::json llama_config(const TinyDims& d, const std::string& model_type = "llama");

// `dir`/model.safetensors (F32, names sorted as safetensors writes them) and `dir`/config.json.
void write_checkpoint(const std::string& dir, const Weights& w, const nlohmann::json& config);

// Writes the checkpoint into a new folder under `tmp` and loads it (every weight resident).
Loaded load_tiny(const TempDir& tmp, const std::string& name, const Weights& w, const nlohmann::json& config,
                 const std::string& device_map = "");

// Logits of one forward without a cache.
at::Tensor logits_of(const Loaded& m, const at::Tensor& ids);

// Token ids [rows, T] from a fixed pattern inside the vocabulary.
at::Tensor tiny_ids(std::int64_t rows, std::int64_t T, std::int64_t vocab, std::int64_t salt = 0);

// "model.layers.<i>."
std::string layer(std::int64_t i);
// q_norm / k_norm weights (Qwen3, Gemma 3) in every layer.
void add_qk_norms(Weights& w, const TinyDims& d, const at::Tensor& q, const at::Tensor& k);
// The dense MLP of each layer (of the `sparse` ones; all when empty) copied into `experts`
// identical experts under `module` (projection names gate, up, down), with a random router.
Weights to_moe(Weights w, const TinyDims& d, std::int64_t experts, const std::string& module,
               const std::array<const char*, 3>& names, const std::vector<bool>& sparse = {});
// Phi-3's fused qkv_proj and gate_up_proj from the separate projections.
Weights to_phi3(Weights w, const TinyDims& d);
// Gemma 2 / 3 weights: Llama's plus the feed-forward norms (and Gemma 3's q/k norms), norms
// stored as w for an applied 1 + w.
Weights gemma2_weights(const TinyDims& d, bool qk_norms);
// A Gemma 2 / Gemma 3 text config (gelu_pytorch_tanh, query_pre_attn_scalar = head_dim, window 64).
nlohmann::json gemma2_config(const TinyDims& d, const std::string& type);

struct TinyFamily {
  std::string name;  // its model_type
  Weights weights;
  nlohmann::json config;
};
// One tiny checkpoint per RoPE family with its own switches on: llama3 scaling, Mistral's and
// Mixtral's windows, Qwen2's biases, q/k norms, distinct routed experts (Qwen3-MoE with a dense
// layer), Gemma tied with (1 + w) norms, Gemma 2's caps and alternating windows, Gemma 3's local
// RoPE base and pattern, Phi-3's partial rotary and LongRoPE past its original length (4).
std::vector<TinyFamily> tiny_families(const TinyDims& d);
// Loads each of tiny_families(d) (every weight resident) and calls check(family, model).
void for_each_family(const TinyDims& d, const std::function<void(const TinyFamily&, const Loaded&)>& check);

// The largest |a − b|.
double max_diff(const at::Tensor& a, const at::Tensor& b);
// CHECKs that |a − b| ≤ rel × the largest |b| (at least 1): equal up to rounding at b's scale.
void check_close(const at::Tensor& a, const at::Tensor& b, double rel);

}  // namespace memfit::test
