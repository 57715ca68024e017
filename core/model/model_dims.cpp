#include "memfit/model/model_dims.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "memfit/error.h"

namespace memfit {
namespace {

bool has_any_substring(std::string_view s, std::initializer_list<std::string_view> parts) {
  for (auto p : parts)
    if (s.find(p) != std::string_view::npos) return true;
  return false;
}

// Classes that generate tokens (and so keep a KV cache): transformers' generation heads.
bool is_generation_class(std::string_view cls) {
  return has_any_substring(cls, {"CausalLM", "LMHead", "ConditionalGeneration", "Seq2SeqLM",
                                 "Text2Text", "SpeechSeq2Seq"});
}

std::string leaf_name(const std::string& dotted) {
  const auto dot = dotted.rfind('.');
  return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}

bool any_dropout(const Config& c) {
  for (const char* k : {"attention_dropout", "attn_pdrop", "resid_pdrop", "embd_pdrop",
                        "hidden_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob",
                        "dropout", "dropout_rate", "activation_dropout"}) {
    auto it = c.json().find(k);
    if (it != c.json().end() && it->is_number() && it->get<double>() > 0) return true;
  }
  return false;
}

}  // namespace

Config text_config(const Config& config) {
  if (!config.has_any({"num_hidden_layers", "n_layer", "num_layers", "decoder_layers"}))
    if (auto t = config.sub("text_config")) return *t;
  return config;
}

ModelDims read_model_dims(const Config& top, const TensorTree& tree) {
  const Config c = text_config(top);
  ModelDims d;
  d.encoder_decoder = c.flag_or({"is_encoder_decoder"}, false) ||
                      c.has_any({"decoder_layers", "num_decoder_layers"});
  d.hidden = c.dim({"hidden_size", "n_embd", "d_model", "dim"});
  if (d.encoder_decoder) {
    d.encoder_layers = c.dim_or({"encoder_layers", "num_layers", "num_hidden_layers"}, 0);
    d.layers = c.dim({"decoder_layers", "num_decoder_layers", "num_layers", "num_hidden_layers"});
    d.heads = c.dim({"decoder_attention_heads", "num_heads", "num_attention_heads"});
  } else {
    d.layers = c.dim({"num_hidden_layers", "n_layer", "num_layers", "n_layers"});
    d.heads = c.dim({"num_attention_heads", "n_head", "num_heads", "n_heads"});
  }
  d.head_dim = c.dim_or({"head_dim", "d_kv"}, 0);
  if (d.head_dim == 0) {
    if (d.hidden % d.heads != 0)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: hidden size {} is not a multiple of the {} attention heads, and "
                              "there is no 'head_dim'", c.where(), d.hidden, d.heads));
    d.head_dim = d.hidden / d.heads;
  }
  // Key/value heads: Falcon's rule first (new_decoder_architecture → num_kv_heads), then the
  // GQA key, then multi-query (Falcon-7B, GPTBigCode), then the legacy RW key.
  if (c.flag_or({"new_decoder_architecture"}, false)) {
    d.kv_heads = c.dim_or({"num_kv_heads"}, d.heads);
  } else if (auto it = c.json().find("num_key_value_heads");
             it != c.json().end() && it->is_array()) {
    const auto list = *c.int_list({"num_key_value_heads"});
    d.kv_heads = list.empty() ? d.heads : std::max<std::int64_t>(list.front(), 1);
  } else if (c.has("num_key_value_heads")) {
    d.kv_heads = c.dim({"num_key_value_heads"});
  } else if (c.flag_or({"multi_query"}, false)) {
    d.kv_heads = 1;
  } else {
    d.kv_heads = c.dim_or({"n_head_kv", "num_kv_heads"}, d.heads);
  }

  // MLP width: the dense one, and the MoE one a token goes through (top-k experts + shared).
  std::int64_t dense = d.encoder_decoder ? c.dim_or({"decoder_ffn_dim", "d_ff", "intermediate_size"}, 0)
                                         : c.dim_or({"intermediate_size", "n_inner", "ffn_dim", "d_ff",
                                                     "ffn_hidden_size"}, 0);
  if (dense == 0) dense = 4 * d.hidden;  // GPT-2 / GPT-J / BLOOM: n_inner null → 4 × hidden
  d.experts = c.count_or({"num_local_experts", "n_routed_experts", "num_experts"}, 0);
  d.experts_per_token = c.count_or({"num_experts_per_tok", "moe_top_k", "top_k"}, 0);
  d.intermediate = dense;
  if (d.experts > 0 && d.experts_per_token > 0) {
    const std::int64_t width = c.dim_or({"moe_intermediate_size"}, dense);
    const std::int64_t shared = c.has("shared_expert_intermediate_size")
                                    ? c.dim({"shared_expert_intermediate_size"})
                                    : c.count_or({"n_shared_experts"}, 0) * width;
    d.intermediate = std::max(c.has("moe_intermediate_size") ? dense : 0,
                              width * d.experts_per_token + shared);
  } else {
    d.experts = d.experts_per_token = 0;
  }
  d.vocab = c.count_or({"vocab_size", "n_vocab"}, 0);
  d.max_positions = c.count_or({"max_position_embeddings", "n_positions", "max_sequence_length",
                                "max_seq_len", "seq_length", "max_target_positions"}, 0);
  d.dropout = any_dropout(c);

  for (const auto& m : tree.modules) {
    const std::string leaf = leaf_name(m.name);
    if (leaf == "gate_proj" || leaf == "w3" || leaf == "wi_0" || leaf == "gate_up_proj") {
      d.gated_mlp = true;
      break;
    }
  }
  std::string arch0;
  if (auto a = top.string_list({"architectures"}); a && !a->empty()) arch0 = a->front();
  d.generative = d.encoder_decoder || is_generation_class(tree.class_name()) ||
                 (tree.class_name().size() >= 5 &&
                  tree.class_name().compare(tree.class_name().size() - 5, 5, "Model") == 0 &&
                  is_generation_class(arch0));
  return d;
}

double active_parameters(const TensorTree& tree, const ModelDims& dims) {
  double total = 0, experts = 0;
  for (int i : tree.named_parameters()) {
    const TensorInfo& t = tree.tensors[static_cast<std::size_t>(i)];
    total += static_cast<double>(t.numel);
    if (t.name.find(".experts.") != std::string::npos) experts += static_cast<double>(t.numel);
  }
  if (dims.experts <= 0 || dims.experts_per_token <= 0) return total;
  const double used = std::min(1.0, static_cast<double>(dims.experts_per_token) /
                                        static_cast<double>(dims.experts));
  return total - experts * (1.0 - used);
}

}  // namespace memfit
