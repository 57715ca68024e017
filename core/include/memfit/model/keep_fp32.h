// memfit/model/keep_fp32.h — the tensors transformers keeps in float32 whatever the load dtype.
//
// A model class lists modules in `_keep_in_fp32_modules` (upcast in float16 loads only) or
// `_keep_in_fp32_modules_strict` (float16 and bfloat16 loads); transformers matches each entry
// against every parameter and buffer name with the regex `(^|\.)ENTRY($|\.)` (modeling_utils
// `_get_dtype_plan`; 4.5x: `keep_in_fp32_regex` in `from_pretrained`). A family marks its class's
// lists on the finished tree with keep_in_fp32(); the sizes read TensorInfo::keep_fp32.
#pragma once

#include <string>
#include <vector>

#include "memfit/model/dtype.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

// True when `entry` matches `name` as transformers' regex `(^|\.)entry($|\.)` does (searched
// anywhere in the name: "gate.weight" matches "model.layers.1.mlp.gate.weight", "gate" does not
// match "gate_proj.weight").
bool keep_fp32_entry_matches(const std::string& name, const std::string& entry);

// Marks every tensor of `tree` matched by one of `entries` with `rule` (a stronger rule already
// set stays); `stored_fp32` also marks them stored in float32. Returns how many were marked, so a
// family can insist its list matched something.
std::size_t keep_in_fp32(TensorTree& tree, const std::vector<std::string>& entries, KeepFp32 rule,
                         bool stored_fp32 = false);

// The rotary embeddings' inverse frequencies (`inv_freq`, `original_inv_freq` and Gemma 4's and
// ModernBERT's per-layer-type `<type>_inv_freq`): every RoPE module computes them in float32
// (4.40: `torch.arange(0, dim, 2, dtype=torch.int64).float()`; current: the ROPE_INIT_FUNCTIONS)
// and registers them as buffers outside the checkpoint, which from_pretrained never casts — so
// they stay float32 in half-precision loads (kHalfLoads; not stored: non-persistent).
void keep_rotary_fp32(TensorTree& tree);

// memfit's exact path: the checkpoint's tree says how each tensor is stored, the config's model
// class how it loads — `checkpoint_tree` takes `config_tree`'s keep_fp32 rules by tensor name.
void adopt_keep_fp32(TensorTree& checkpoint_tree, const TensorTree& config_tree);

// Whether a load at `load` keeps a tensor with `rule` in float32.
bool kept_in_fp32(KeepFp32 rule, DType load);

}  // namespace memfit
