// memfit/model/nn_layers.h — the torch.nn building blocks, as tensors.
//
// Each helper opens a module of the right class and adds the tensors that torch.nn registers,
// in torch's order and layout (e.g. nn.Linear stores weight as [out, in]; GPT-2's Conv1D as
// [in, out]). Architecture files compose these instead of spelling out tensors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "memfit/model/tree_builder.h"

namespace memfit::nn {

void linear(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out,
            bool bias = true, std::string_view cls = "Linear");
void embedding(TreeBuilder& b, std::string_view name, std::int64_t num, std::int64_t dim,
               std::string_view cls = "Embedding");
// A module whose only tensor is tied to an existing one (e.g. lm_head tied to wte).
void tied_linear(TreeBuilder& b, std::string_view name, const std::string& target_weight,
                 std::string_view cls = "Linear");
void layer_norm(TreeBuilder& b, std::string_view name, std::int64_t dim, bool bias = true,
                std::string_view cls = "LayerNorm");
// weight-only norms (RMSNorm variants): the class name is the family's own.
void rms_norm(TreeBuilder& b, std::string_view name, std::int64_t dim, std::string_view cls);
// transformers' Conv1D (GPT-2 style): weight [nx, nf], bias [nf].
void conv1d_gpt(TreeBuilder& b, std::string_view name, std::int64_t nx, std::int64_t nf);
// torch.nn.Conv1d: weight [out, in/groups, k], bias [out].
void conv1d(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out,
            std::int64_t kernel, bool bias = true, std::int64_t groups = 1);
// torch.nn.Conv2d: weight [out, in/groups, kh, kw], bias [out].
void conv2d(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out,
            std::int64_t kh, std::int64_t kw, bool bias = true, std::int64_t groups = 1,
            std::string_view cls = "Conv2d");
// torch.nn.BatchNorm2d (affine, track_running_stats): weight, bias, running_mean, running_var,
// num_batches_tracked (int64 scalar) — the buffers are persistent.
void batch_norm2d(TreeBuilder& b, std::string_view name, std::int64_t channels,
                  std::string_view cls = "BatchNorm2d");

// Modules without tensors, registered where transformers registers them (device maps name them).
void dropout(TreeBuilder& b, std::string_view name, BufferEra era = BufferEra::kAlways);
// An activation module for a config's `hidden_act` / `activation_function` name (transformers'
// ACT2FN: "gelu" → GELUActivation, "silu" → SiLU, "gelu_new" → NewGELUActivation, ...).
void activation(TreeBuilder& b, std::string_view name, std::string_view act,
                BufferEra era = BufferEra::kAlways);
// The class ACT2FN gives for `act` (the name itself, when transformers has no such activation).
std::string_view activation_class(std::string_view act);

}  // namespace memfit::nn
