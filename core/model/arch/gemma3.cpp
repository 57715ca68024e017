// Gemma 3 with vision (transformers models/gemma3/modeling_gemma3.py and
// configuration_gemma3.py, first in 4.50; read at main): Gemma3ForConditionalGeneration,
// Gemma3Model (model_type gemma3).
//
// Gemma3Config: vision_config a SiglipVisionConfig (Gemma 3 sets vision_use_head false: no
// pooling head), text_config a Gemma3TextConfig (gemma2.cpp's gemma3_text decoder, sliding/global
// layers and all). Gemma3MultiModalProjector registers mm_input_projection_weight
// [vision hidden, text hidden] (a bare nn.Parameter, used by matmul), mm_soft_emb_norm
// Gemma3RMSNorm(vision hidden) and avg_pool nn.AvgPool2d (no tensors). The generation class
// keeps the 4.50 layout its checkpoints are stored in (composite.h); the language model's
// lm_head is tied to its embed_tokens (Gemma3TextConfig: tie_word_embeddings=True), so the Hub
// index has no lm_head.
#include "composite.h"
#include "families.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  const Config vision = part_config(c, "vision_config");
  const Config text = part_config(c, "text_config");
  const TensorTree tower = vision_model(vision, "siglip_vision_model", r.model_name);
  // SiglipVisionConfig's and Gemma3TextConfig's defaults.
  const std::int64_t vision_hidden = part_hidden(vision, 768);
  const std::int64_t text_hidden = part_hidden(text, 2304);
  return build_vlm(r, {"Gemma3Model", "vision_tower", &tower, &text, "gemma3_text"},
                   [&](TreeBuilder& b) {
                     auto p = b.module("multi_modal_projector", "Gemma3MultiModalProjector");
                     b.param("mm_input_projection_weight", {vision_hidden, text_hidden});
                     nn::rms_norm(b, "mm_soft_emb_norm", vision_hidden, "Gemma3RMSNorm");
                     b.stateless("avg_pool", "AvgPool2d");
                   });
}

}  // namespace

const Family& gemma3_family() {
  static const Family f{"transformers",
                        {"gemma3"},
                        {{"Gemma3Model", "AutoModel"},
                         {"Gemma3ForConditionalGeneration", "AutoModelForImageTextToText"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
