#include "memfit/memory/inference.h"

#include <algorithm>
#include <cmath>

namespace memfit {

Activations inference_activations(const ModelDims& d, const ActivationOptions& o) {
  const double e = o.element_bytes;
  const double B = static_cast<double>(o.batch);
  const std::int64_t seq = d.encoder_decoder ? std::max(o.context, o.encoder_length) : o.context;
  double tokens = 0, positions = 0, logit_bytes = 4, scores = 0;
  const double q_width = static_cast<double>(d.heads * d.head_dim);
  const double kv_width = static_cast<double>(d.kv_heads * d.head_dim);
  const bool eager = o.attention == AttentionImpl::kEager;
  switch (o.engine) {
    case Engine::kTransformers:
      // The whole prompt batch in one forward; generate() keeps the last position's logits
      // (logits_to_keep=1) in the model dtype, then upcasts them to float32.
      tokens = B * static_cast<double>(seq);
      positions = d.generative ? B : tokens;
      logit_bytes = d.generative ? e + 4 : e;
      // eager_attention_forward: scores in the model dtype, softmax in float32.
      if (eager) scores = B * static_cast<double>(d.heads) * static_cast<double>(seq) *
                          static_cast<double>(seq) * (e + 4);
      break;
    case Engine::kVllm:
      // The profile run: max_num_batched_tokens tokens, then a dummy sampler over max_num_seqs
      // float32 logits rows.
      tokens = static_cast<double>(o.vllm_max_num_batched_tokens);
      positions = std::max(B, static_cast<double>(o.vllm_max_num_seqs));
      break;
    case Engine::kLlamaCpp: {
      // The graph is reserved for one ubatch with every token an output (n_outputs = n_tokens).
      tokens = std::min(static_cast<double>(o.llamacpp_ubatch), B * static_cast<double>(o.context));
      positions = tokens;
      if (eager) {  // without flash attention: kq and its soft_max, float32 [n_kv, n_tokens, n_head]
        const double n_kv = std::ceil(static_cast<double>(o.context) / 256.0) * 256.0;
        scores = 2.0 * 4.0 * static_cast<double>(d.heads) * n_kv * tokens;
      }
      break;
    }
  }
  Activations a;
  a.tokens_per_step = static_cast<std::int64_t>(tokens);
  const double hidden = 2.0 * tokens * static_cast<double>(d.hidden) * e;
  const double attention = tokens * (2 * q_width + 2 * kv_width) * e + scores;
  const double mlp = tokens * static_cast<double>(d.intermediate) * e * (d.gated_mlp ? 3.0 : 2.0);
  const double logits = positions * static_cast<double>(d.vocab) * logit_bytes;
  a.parts = {{"hidden states", hidden},
             {eager ? "attention (eager: scores materialized)" : "attention (sdpa/flash)", attention},
             {"MLP intermediate", mlp},
             {"logits", logits}};
  a.bytes = hidden + std::max(attention, mlp) + logits;
  return a;
}

}  // namespace memfit
