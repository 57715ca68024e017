// Nemotron-H and Nemotron 3 (model_type "nemotron_h"): the Hub repos' remote code,
// modeling_nemotron_h.py (auto_map NemotronHForCausalLM, as in nvidia/NVIDIA-Nemotron-3-Nano-30B-
// A3B-BF16), checked against transformers main's models/nemotron_h/modular_nemotron_h.py and
// configuration_nemotron_h.py. The names are the checkpoints' (the remote code's): transformers'
// own class renames backbone → model and fuses the experts into 3-D tensors when it loads them.
//
//   NemotronHForCausalLM
//     backbone: NemotronHModel
//       embeddings                 Embedding [vocab, hidden]
//       layers.N: NemotronHBlock   norm (NemotronHRMSNorm [hidden]), mixer by the layer's type:
//         M  linear_attention      NemotronHMamba2Mixer: ssm_common.h's Mamba-2 mixer, intermediate
//                                  mamba_num_heads × mamba_head_dim, MambaRMSNormGated, bias use_bias
//         *  full_attention        NemotronHAttention: q/k/v/o (head_dim, bias attention_bias), no
//                                  rotary (Nemotron-H has no positions)
//         -  mlp                   NemotronHMLP: up_proj, down_proj (bias mlp_bias), act_fn
//                                  (mlp_hidden_act) — not gated
//         E  moe                   NemotronHMOE: experts.E = NemotronHMLP(moe_intermediate_size),
//                                  gate = NemotronHTopkRouter {weight [experts, hidden],
//                                  e_score_correction_bias [experts] (a float32 buffer)},
//                                  shared_experts = NemotronHMLP(moe_shared_expert_intermediate_size);
//                                  with moe_latent_size the experts work in the latent width and
//                                  fc1_latent_proj [latent, hidden], fc2_latent_proj [hidden, latent]
//                                  follow
//       norm_f                     NemotronHRMSNorm [hidden]
//     lm_head
// The router's e_score_correction_bias stays float32 in half-precision loads: the remote code
// creates it with dtype=torch.float32, and transformers' NemotronHPreTrainedModel lists it in
// `_keep_in_fp32_modules_strict`.
// The layer types: layers_block_type (or layer_types; the legacy names mamba / attention too),
// else hybrid_override_pattern (M * - E), else NemotronHConfig's default; the number of layers is
// the list's length (num_hidden_layers is deprecated there). The multi-token-prediction layers are
// not part of the model (_keys_to_ignore_on_load_unexpected "mtp.*").
//
// State per sequence: a Mamba layer keeps conv [intermediate + 2 × n_groups × ssm_state_size,
// conv_kernel] and ssm [mamba_num_heads, mamba_head_dim, ssm_state_size] — the shapes its mixer
// writes into transformers' LinearAttention cache layer, and into the remote code's
// HybridMambaAttentionDynamicCache on the first forward (whose constructor pre-allocates Jamba's
// [expand × hidden, …] shapes and then replaces them). (The ssm state is float32 when
// mamba_ssm_cache_dtype says so; that is the cache's dtype, not its size.)
#include <fmt/format.h>

#include "families.h"
#include "llama_like.h"
#include "memfit/model/keep_fp32.h"
#include "ssm_common.h"

namespace memfit::arch {
namespace {

enum class Kind : char { kMamba = 'M', kAttention = '*', kMlp = '-', kMoe = 'E' };

Kind kind_of_name(const Config& c, const std::string& t, std::size_t i) {
  if (t == "mamba" || t == "linear_attention") return Kind::kMamba;
  if (t == "attention" || t == "full_attention") return Kind::kAttention;
  if (t == "mlp") return Kind::kMlp;
  if (t == "moe") return Kind::kMoe;
  throw Error(ErrorCode::kInvalidValue,
              fmt::format("{}: layer {} has type '{}'; Nemotron-H layers are 'linear_attention' "
                          "(or 'mamba'), 'full_attention' (or 'attention'), 'mlp' or 'moe'",
                          c.where(), i, t));
}

std::vector<Kind> layer_kinds(const Config& c) {
  std::vector<Kind> kinds;
  if (auto types = c.string_list({"layers_block_type", "layer_types"})) {
    for (std::size_t i = 0; i < types->size(); ++i) kinds.push_back(kind_of_name(c, (*types)[i], i));
  } else if (auto pattern = c.string_opt({"hybrid_override_pattern"})) {
    for (std::size_t i = 0; i < pattern->size(); ++i) {
      const char k = (*pattern)[i];
      if (k != 'M' && k != '*' && k != '-' && k != 'E')
        throw Error(ErrorCode::kInvalidValue,
                    fmt::format("{}: 'hybrid_override_pattern' has '{}' at layer {}; expected M "
                                "(Mamba), * (attention), - (MLP) or E (MoE)", c.where(), k, i));
      kinds.push_back(static_cast<Kind>(k));
    }
  } else {
    kinds = {Kind::kMamba, Kind::kMoe, Kind::kAttention, Kind::kMlp};
  }
  if (kinds.empty() || static_cast<std::int64_t>(kinds.size()) > kMaxRepeats)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: the layer types list {} layers; expected 1 to {}", c.where(),
                            kinds.size(), kMaxRepeats));
  return kinds;
}

struct Mlp {
  std::int64_t hidden, inter;
  bool bias;
  std::string act;
};

void mlp_members(TreeBuilder& b, const Mlp& m) { gateless_mlp_members(b, m.hidden, m.inter, m.bias, m.act); }

void mlp(TreeBuilder& b, std::string_view name, const Mlp& m) {
  auto s = b.module(name, "NemotronHMLP");
  mlp_members(b, m);
}

struct Moe {
  std::int64_t experts, width, shared_width, latent;  // latent 0: none
};

void moe(TreeBuilder& b, const Moe& e, const Mlp& dense) {
  auto s = b.module("mixer", "NemotronHMOE");
  const std::int64_t in = e.latent > 0 ? e.latent : dense.hidden;
  {
    auto list = b.module("experts", "ModuleList");
    if (e.experts > 0) {
      auto copies = b.repeated("0", "NemotronHMLP", e.experts);
      mlp_members(b, {in, e.width, dense.bias, dense.act});
    }
  }
  {
    auto gate = b.module("gate", "NemotronHTopkRouter");
    b.param("weight", {e.experts, dense.hidden});
    b.buffer("e_score_correction_bias", {e.experts}, DType::kF32, true);
  }
  mlp(b, "shared_experts", {dense.hidden, e.shared_width, dense.bias, dense.act});
  if (e.latent > 0) {
    nn::linear(b, "fc1_latent_proj", dense.hidden, e.latent, dense.bias);
    nn::linear(b, "fc2_latent_proj", e.latent, dense.hidden, dense.bias);
  }
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  const std::vector<Kind> kinds = layer_kinds(c);
  // NemotronHConfig defaults; transformers reads the mamba_* spellings over the plain ones.
  const std::int64_t hidden = c.dim_or({"hidden_size"}, 4096);
  const std::int64_t vocab = c.dim_or({"vocab_size"}, 131072);
  const std::int64_t heads = c.dim_or({"num_attention_heads"}, 32);
  const auto kv_it = c.json().find("num_key_value_heads");
  const std::int64_t kv_heads = kv_it != c.json().end() && kv_it->is_null()
                                    ? heads : c.dim_or({"num_key_value_heads"}, 8);
  const auto hd_it = c.json().find("head_dim");
  const std::int64_t head_dim = hd_it != c.json().end() && hd_it->is_null()
                                    ? arch::head_dim(c, hidden, heads) : c.dim_or({"head_dim"}, 128);
  const bool attn_bias = c.flag_or({"attention_bias"}, false);
  const bool tie = c.flag_or({"tie_word_embeddings"}, false);
  const Mlp dense{hidden, c.dim_or({"intermediate_size"}, 21504), c.flag_or({"mlp_bias"}, false),
                  c.string_or({"mlp_hidden_act"}, "relu2")};
  const auto latent_it = c.json().find("moe_latent_size");
  const Moe experts{c.repeats_or({"n_routed_experts"}, 8), c.dim_or({"moe_intermediate_size"}, 7688),
                    c.dim_or({"moe_shared_expert_intermediate_size"}, 7688),
                    latent_it == c.json().end() || latent_it->is_null() ? 0 : c.dim({"moe_latent_size"})};
  ssm::Mamba2Mixer m;
  m.hidden = hidden;
  m.heads = c.dim_or({"mamba_num_heads"}, 128);
  m.head_dim = c.dim_or({"mamba_head_dim"}, 64);
  m.inner = ssm::checked_mul(c, m.heads, m.head_dim, "mamba_num_heads × mamba_head_dim");
  m.groups = c.dim_or({"mamba_n_groups", "n_groups"}, 8);
  m.state = c.dim_or({"ssm_state_size"}, 128);
  m.conv_kernel = c.dim_or({"mamba_d_conv", "conv_kernel"}, 4);
  m.conv_bias = c.flag_or({"mamba_conv_bias", "use_conv_bias"}, true);
  m.in_bias = m.out_bias = c.flag_or({"use_bias"}, false);
  m.act = c.string_or({"mamba_hidden_act"}, "silu");
  m.norm_class = "MambaRMSNormGated";
  ssm::check_mixer(c, m, "mamba_num_heads × mamba_head_dim");

  const ssm::StackLayout l{"NemotronHModel", "backbone", "embeddings", "norm_f", "NemotronHRMSNorm",
                           {"NemotronHBlock"}, hidden, vocab,
                           static_cast<std::int64_t>(kinds.size()), tie};
  TensorTree tree = ssm::build_stack(r, l, [&](TreeBuilder& b, std::int64_t i) {
    auto block = b.item(i, "NemotronHBlock");
    nn::rms_norm(b, "norm", hidden, "NemotronHRMSNorm");
    switch (kinds[static_cast<std::size_t>(i)]) {
      case Kind::kMamba: {
        auto mixer = b.module("mixer", "NemotronHMamba2Mixer");
        ssm::mamba2_tensors(b, m);
        break;
      }
      case Kind::kAttention: {
        auto mixer = b.module("mixer", "NemotronHAttention");
        nn::linear(b, "q_proj", hidden, heads * head_dim, attn_bias);
        nn::linear(b, "k_proj", hidden, kv_heads * head_dim, attn_bias);
        nn::linear(b, "v_proj", hidden, kv_heads * head_dim, attn_bias);
        nn::linear(b, "o_proj", heads * head_dim, hidden, attn_bias);
        break;
      }
      case Kind::kMlp: mlp(b, "mixer", dense); break;
      case Kind::kMoe: moe(b, experts, dense); break;
    }
  });
  if (r.dims) {
    std::vector<LayerDims> layers;
    std::vector<bool> sparse;
    for (Kind k : kinds) {
      layers.push_back(k == Kind::kMamba       ? ssm::recurrent_layer(m.per_sequence())
                       : k == Kind::kAttention ? ssm::attention_layer(heads, kv_heads, head_dim, {})
                                               : ssm::mlp_layer());
      if (k == Kind::kMlp) layers.back().intermediate = dense.inter;
      sparse.push_back(k == Kind::kMoe);
    }
    ssm::StackSizes s{hidden, vocab, c.count_or({"max_position_embeddings"}, 4096), tie,
                      read_norm_eps(c, {"layer_norm_epsilon"}, 1e-5), 0};
    *r.dims = ssm::stack_dims(s, std::move(layers));
    ssm::set_moe_layers(**r.dims,
                        {experts.experts, c.count_or({"num_experts_per_tok"}, 2),
                         c.count_or({"n_shared_experts"}, 1), experts.width, experts.shared_width},
                        sparse);
  }
  keep_in_fp32(tree, {"e_score_correction_bias"}, KeepFp32::kHalfLoads);
  return tree;
}

}  // namespace

const Family& nemotron_h_family() {
  static const Family f{"transformers",
                        {"nemotron_h"},
                        {{"NemotronHModel", "AutoModel"}, {"NemotronHForCausalLM", "AutoModelForCausalLM"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
