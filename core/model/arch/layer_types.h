// Per-layer attention of the decoders that mix layer kinds (Gemma 3 and 4's sliding and global
// layers, Llama 4's chunked and NoPE layers): each layer's kind from the config's `layer_types`
// (or the family's own default pattern), and each kind's RoPE — transformers 5 writes
// `rope_parameters` per layer type ({"sliding_attention": {...}, "full_attention": {...}}),
// older configs `rope_theta` + `rope_scaling` (+ Gemma 3's `rope_local_base_freq`).
#pragma once

#include <string>
#include <vector>

#include "common.h"

namespace memfit::arch {

// The config's `layer_types` when it lists one per layer, else `fallback` (the configuration
// class's default pattern). A list of the wrong length, or an unknown type, is an error naming
// the key: the KV cache cannot be sized from it.
std::vector<std::string> layer_types_or(const Config& c, std::int64_t layers,
                                        std::vector<std::string> fallback);

// The RoPE of layers of `layer_type`: `rope_parameters[layer_type]` (transformers 5), a flat
// `rope_parameters`, or `rope_theta` / `rope_scaling` (read_rope), with `theta_default` when none
// says. `rotary_dims`: the dims the family rotates (partial_rotary_factor applied by the caller).
RopeDims rope_of_type(const Config& c, const std::string& layer_type, double theta_default,
                      std::int64_t rotary_dims);

// Sets d.per_layer[i]'s kind from `types`: "sliding_attention" → kSliding with `window`,
// "chunked_attention" → kChunked with `window`, "full_attention" → kFull; records the rule.
void set_layer_kinds(ModelDims& d, const std::vector<std::string>& types, std::int64_t window,
                     const char* rule);

}  // namespace memfit::arch
