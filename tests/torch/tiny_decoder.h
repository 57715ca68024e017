// tests/torch/tiny_decoder.h — tiny Llama-shaped checkpoints written by the test (safetensors +
// config.json in a scratch folder): the families without a golden checkpoint are checked by
// identities between two such models (issue 17), never against numbers of our own.
#pragma once

#include <cstdint>
#include <map>
#include <string>

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

// The largest |a − b|.
double max_diff(const at::Tensor& a, const at::Tensor& b);

}  // namespace memfit::test
