// Qwen2-VL and Qwen2.5-VL (transformers models/qwen2_vl/{configuration,modeling}_qwen2_vl.py and
// models/qwen2_5_vl/{configuration,modular}_qwen2_5_vl.py, 5.x; first in 4.45 and 4.49):
// Qwen2VLModel, Qwen2VLForConditionalGeneration; Qwen2_5_VLModel,
// Qwen2_5_VLForConditionalGeneration.
//
// A vision tower (qwen_vision.h) and Qwen2's decoder: q/k/v with biases, o_proj without, RMSNorm,
// gated MLP, one model-level rotary (M-RoPE splits its rotary dims between time, height and width;
// the sizes are Llama's). The text keys sit at the top level (configs saved by 4.x) or in
// `text_config` (5.x); the tower's in `vision_config`.
//
// Names: current transformers builds <P>Model = {visual, language_model} and
// <P>ForConditionalGeneration = {model: <P>Model, lm_head}, but the Hub's checkpoints were saved
// by 4.45–4.51 as {visual, model: the text decoder, lm_head}, which transformers maps on load
// (_checkpoint_conversion_mapping: ^visual → model.visual, ^model → model.language_model). The
// ForConditionalGeneration tree keeps the stored names, the ones an index lists; the base class
// is built as current transformers has it.
#include <string>

#include "families.h"
#include "llama_like.h"
#include "qwen_vision.h"

namespace memfit::arch {
namespace {

using vision::Generation;

struct Layout {
  Generation generation;
  std::string prefix;        // "Qwen2VL", "Qwen2_5_VL"
  std::string vision_block;  // the tower's no-split class
};

TensorTree build(const BuildRequest& r, const Layout& l) {
  const Config& top = r.config;
  const Config text = text_config(top);
  // Qwen2VLTextConfig defaults (Qwen2_5_VLTextConfig is the same).
  DecoderDims d = read_decoder_dims(text, {152064, 8192, 29568, 80, 64, 8, 32768, false});
  d.q_bias = d.k_bias = d.v_bias = true;
  d.tie = top.flag_or({"tie_word_embeddings"}, d.tie);
  const vision::VisionDims v = vision::read_vision(vision::vision_config(top), l.generation);
  LlamaLikeSpec s;
  s.prefix = l.prefix;
  s.norm_class = "Qwen2RMSNorm";
  s.rope = LegacyRope::kNone;
  s.rope_class = "";
  const auto mlp = [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", "Qwen2MLP", d.hidden, d.inter, false, d.act);
  };

  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({l.prefix + "DecoderLayer", l.vision_block});
  if (r.class_name == l.prefix + "Model") {
    vision::vision_tower(b, "visual", v, l.generation);
    auto lm = b.module("language_model", l.prefix + "TextModel");
    decoder_base(b, s, d, mlp);
  } else {
    vision::vision_tower(b, "visual", v, l.generation);
    {
      auto m = b.module("model", l.prefix + "TextModel");
      decoder_base(b, s, d, mlp);
    }
    if (d.tie) nn::tied_linear(b, "lm_head", "model.embed_tokens.weight");
    else nn::linear(b, "lm_head", d.hidden, d.vocab, false);
  }
  if (r.dims) *r.dims = decoder_model_dims(text, d, read_rope(text, 1000000.0, d.current_rope_dim));
  return b.finish();
}

TensorTree build_qwen2_vl(const BuildRequest& r) {
  return build(r, {Generation::kQwen2Vl, "Qwen2VL", "Qwen2VLVisionBlock"});
}
TensorTree build_qwen2_5_vl(const BuildRequest& r) {
  return build(r, {Generation::kQwen2_5Vl, "Qwen2_5_VL", "Qwen2_5_VLVisionBlock"});
}

}  // namespace

const Family& qwen2_vl_family() {
  static const Family f{"transformers",
                        {"qwen2_vl"},
                        {{"Qwen2VLModel", "AutoModel"},
                         {"Qwen2VLForConditionalGeneration", "AutoModelForImageTextToText"}},
                        &build_qwen2_vl};
  return f;
}

const Family& qwen2_5_vl_family() {
  static const Family f{"transformers",
                        {"qwen2_5_vl"},
                        {{"Qwen2_5_VLModel", "AutoModel"},
                         {"Qwen2_5_VLForConditionalGeneration", "AutoModelForImageTextToText"}},
                        &build_qwen2_5_vl};
  return f;
}

}  // namespace memfit::arch
