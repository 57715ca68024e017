// MiniCPM-V (openbmb's remote code: modeling_minicpmv.py, resampler.py and, from 2.6,
// modeling_navit_siglip.py; the per-version layout read from vLLM's models/minicpmv.py and
// layers/resampler.py, which load the same checkpoints, and the remote MiniCPMV.__init__ and
// Resampler.__init__ copies on GitHub): class MiniCPMV (model_type minicpmv).
//
//   llm          the language model, chosen by `version` (absent: 2.0 when hidden_size is 2304 and
//                query_num 64, else 2.5 — vLLM's rule): 2.5 and 4.0 LlamaForCausalLM, 2.6
//                Qwen2ForCausalLM, built from the same flat config by those families
//   vpm          Idefics2's vision transformer (SigLIP-400M, navit): embeddings {patch_embedding
//                Conv2d(3, width, patch) with bias, position_embedding [(image_size/patch)², width]},
//                encoder.layers.N {self_attn (k/v/q/out_proj with bias), layer_norm1, mlp (fc1,
//                fc2), layer_norm2}, post_layernorm; the last layer dropped when
//                drop_vision_last_layer. Absent keys take the remote MiniCPMVConfig's defaults
//                (query_num 64, drop_vision_last_layer true, a SigLIP-400M vision_config: width
//                1152, 27 layers, 16 heads, MLP 4304, patch 14 at 980 px)
//   resampler    Resampler(num_queries=query_num, embed_dim=D=llm hidden, num_heads=D/128,
//                kv_dim=width): query [query_num, D], kv_proj Linear(width, D) without bias
//                (Identity when width is D), attn nn.MultiheadAttention(D) {in_proj_weight
//                [3D, D], in_proj_bias, out_proj}, ln_q, ln_kv, ln_post LayerNorm(D), proj [D, D],
//                pos_embed a non-persistent float32 buffer [70, 70, D] (2-D sin-cos cache)
//
// Versions 2.0 (a timm tower, the MiniCPM language model and a resampler whose pos_embed is a
// parameter) and 4.5 (a resampler with temporal positions) are refused, naming `version`.
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "composite.h"
#include "families.h"

namespace memfit::arch {
namespace {

struct Version {
  int major = 0, minor = 0;
};

// `version` as vLLM reads it (str(version).split(".")): 2.6 → (2, 6); absent → (2, 0) or (2, 5).
Version read_version(const Config& c) {
  const auto it = c.json().find("version");
  if (it == c.json().end() || it->is_null()) {
    const bool v2_0 = c.dim_or({"hidden_size"}, 4096) == 2304 && c.dim_or({"query_num"}, 64) == 64;
    return v2_0 ? Version{2, 0} : Version{2, 5};
  }
  std::string text = it->is_string() ? it->get<std::string>() : it->is_number() ? it->dump() : "";
  Version v;
  if (std::sscanf(text.c_str(), "%d.%d", &v.major, &v.minor) < 1)
    throw Error(ErrorCode::kWrongType,
                fmt::format("{}: key 'version' must be a version number such as 2.6, got {}", c.where(),
                            it->dump()));
  return v;
}

// The language model's model_type for a version; throws for the versions not described.
const char* llm_type(const Config& c, const Version& v) {
  if (v.major == 2 && v.minor == 6) return "qwen2";
  if ((v.major == 2 && v.minor == 5) || (v.major == 4 && v.minor == 0)) return "llama";
  throw Error(ErrorCode::kUnknownModelType,
              fmt::format("{}: MiniCPM-V version {}.{} is not described (memfit knows 2.5, 2.6 and "
                          "4.0; 2.0 uses a timm tower and the MiniCPM language model, 4.5 another "
                          "resampler)", c.where(), v.major, v.minor));
}

void vision_encoder(TreeBuilder& b, const Config& v, bool drop_last) {
  // MiniCPMVConfig's default vision_config: SigLIP-400M at 980 px.
  const std::int64_t width = v.dim_or({"hidden_size"}, 1152);
  const std::int64_t inter = v.dim_or({"intermediate_size"}, 4304);
  const std::int64_t heads = v.dim_or({"num_attention_heads"}, 16);
  const std::int64_t patch = v.dim_or({"patch_size"}, 14);
  const std::int64_t side = v.dim_or({"image_size"}, 980) / patch;
  std::int64_t layers = v.repeats_or({"num_hidden_layers"}, 27);
  if (drop_last && layers > 0) --layers;
  require_divisible(v, width, "hidden_size", heads, "num_attention_heads");
  const std::string act = v.string_or({"hidden_act"}, "gelu_pytorch_tanh");
  auto vpm = b.module("vpm", "SiglipVisionTransformer");
  {
    auto e = b.module("embeddings", "SiglipVisionEmbeddings");
    nn::conv2d(b, "patch_embedding", v.dim_or({"num_channels"}, 3), width, patch, patch);
    nn::embedding(b, "position_embedding", side * side, width);
  }
  clip_style_encoder(b, "Siglip", width, inter, layers, act);
  nn::layer_norm(b, "post_layernorm", width);
}

void resampler(TreeBuilder& b, std::int64_t queries, std::int64_t dim, std::int64_t kv_dim) {
  auto r = b.module("resampler", "Resampler");
  b.param("query", {queries, dim});
  if (kv_dim != dim) nn::linear(b, "kv_proj", kv_dim, dim, false);
  else b.stateless("kv_proj", "Identity");
  {
    auto a = b.module("attn", "MultiheadAttention");
    b.param("in_proj_weight", {3 * dim, dim});
    b.param("in_proj_bias", {3 * dim});
    nn::linear(b, "out_proj", dim, dim, true, "NonDynamicallyQuantizableLinear");
  }
  nn::layer_norm(b, "ln_q", dim);
  nn::layer_norm(b, "ln_kv", dim);
  nn::layer_norm(b, "ln_post", dim);
  b.param("proj", {dim, dim});
  // _set_2d_pos_cache(max_size=(70, 70)): get_2d_sincos_pos_embed → [70, 70, D].
  b.buffer("pos_embed", {70, 70, dim}, DType::kF32, false);
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  const Version v = read_version(c);
  const char* type = llm_type(c, v);
  Json text_json = c.json();
  text_json["model_type"] = type;
  const Config text(text_json, c.where());
  const TensorTree llm = language_model(text, type, "AutoModelForCausalLM", r.model_name, r.dims);
  const Config vision = part_config(c, "vision_config");
  const std::int64_t dim = text.dim_or({"hidden_size"}, 4096);

  TreeBuilder b{std::string(r.class_name)};
  std::vector<std::string> no_split;
  graft(b, "llm", llm, no_split);
  // MiniCPMV's _no_split_modules are its language model's (the class derives from the LLM's
  // PreTrainedModel); the tower's layers are not listed.
  vision_encoder(b, vision, c.flag_or({"drop_vision_last_layer"}, true));
  resampler(b, c.dim_or({"query_num"}, 64), dim, vision.dim_or({"hidden_size"}, 1152));
  b.set_no_split(std::move(no_split));
  return b.finish();
}

}  // namespace

const Family& minicpmv_family() {
  static const Family f{"transformers",
                        {"minicpmv"},
                        {{"MiniCPMV", "AutoModelForCausalLM"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
