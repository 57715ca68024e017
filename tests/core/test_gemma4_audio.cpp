// Gemma 4's audio tower (Gemma4AudioModel, transformers models/gemma4/modeling_gemma4.py) and its
// embed_audio projector, checked against the tensors of the real google/gemma-4-E2B-it checkpoint
// (its model.safetensors as dumped tensor by tensor: model.audio_tower.* holds 751 tensors — 62
// per layer, 7 more — and embed_audio.embedding_projection.weight is [1536, 1536]) with the
// released audio_config (the Hub config's values: hidden 1024, 12 layers, 8 heads, channels
// [128, 32], kernel 5, clipped linears, output_proj_dims 1536).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "memfit/memory/stored_form.h"
#include "memfit/model/model.h"
#include "support/model_of.h"

using namespace memfit;

namespace {

// gemma-4-E2B's audio_config as released; a small text model (the text tower is gemma4_text's
// business) with E2B's hidden size 1536, which embed_audio projects to.
const char* kConfig = R"({
  "model_type": "gemma4", "architectures": ["Gemma4ForConditionalGeneration"],
  "torch_dtype": "bfloat16",
  "audio_config": {
    "model_type": "gemma4_audio", "attention_chunk_size": 12, "attention_context_left": 13,
    "attention_context_right": 0, "attention_invalid_logits_value": -1000000000.0,
    "attention_logit_cap": 50.0, "conv_kernel_size": 5, "gradient_clipping": 10000000000.0,
    "hidden_size": 1024, "num_attention_heads": 8, "num_hidden_layers": 12,
    "output_proj_dims": 1536, "residual_weight": 0.5, "rms_norm_eps": 0.000001,
    "subsampling_conv_channels": [128, 32], "use_clipped_linears": true},
  "text_config": {
    "model_type": "gemma4_text", "hidden_size": 1536, "intermediate_size": 256,
    "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 64,
    "global_head_dim": 64, "vocab_size": 100, "sliding_window": 16,
    "layer_types": ["sliding_attention", "full_attention"]},
  "vision_config": null
})";

const TensorInfo& tensor(const TensorTree& t, const std::string& name) {
  const int i = t.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, "no tensor " << name);
  return t.tensors[static_cast<std::size_t>(i)];
}

}  // namespace

TEST_CASE("gemma4 audio: the tower's stored tensors are the E2B checkpoint's") {
  const Model m = test::model_of(kConfig);
  std::size_t count = 0;
  std::uint64_t numel = 0;
  for (const auto& t : stored_form(m).tensors)
    if (t.name.rfind("model.audio_tower.", 0) == 0) {
      ++count;
      numel += m.tree.tensors[static_cast<std::size_t>(t.tensor)].numel;
    }
  CHECK(count == 751);
  // The checkpoint's shapes summed: per layer 2 × (4096×1024 + 1024×4096) + 5 × 1024² + 2048×1024
  // + 1024² + 1024×1×5 + 9 × 1024 + 128 + 40 scalars = 25,180,328; output_proj 1536×1024 + 1536;
  // subsample 1024² + 128×1×3×3 + 128 + 32×128×3×3 + 32.
  CHECK(numel == 12ull * 25180328 + 1536ull * 1024 + 1536 + 1024ull * 1024 + 1152 + 128 + 36864 + 32);
  const TensorTree& t = m.tree;
  CHECK(tensor(t, "model.audio_tower.subsample_conv_projection.layer1.conv.weight").shape == Shape{32, 128, 3, 3});
  CHECK(tensor(t, "model.audio_tower.subsample_conv_projection.input_proj_linear.weight").shape == Shape{1024, 1024});
  CHECK(tensor(t, "model.audio_tower.layers.0.lconv1d.depthwise_conv1d.weight").shape == Shape{1024, 1, 5});
  CHECK(tensor(t, "model.audio_tower.layers.0.lconv1d.linear_start.linear.weight").shape == Shape{2048, 1024});
  CHECK(tensor(t, "model.audio_tower.layers.11.self_attn.per_dim_scale").shape == Shape{128});
  CHECK(tensor(t, "model.audio_tower.layers.0.self_attn.post.output_max").shape == Shape{});
  CHECK(tensor(t, "model.audio_tower.output_proj.bias").shape == Shape{1536});
  CHECK(tensor(t, "model.embed_audio.embedding_projection.weight").shape == Shape{1536, 1536});
  // Not in the checkpoint: the positional timescales and the softcap are non-persistent.
  CHECK_FALSE(tensor(t, "model.audio_tower.rel_pos_enc.inv_timescales").persistent);
  CHECK_FALSE(tensor(t, "model.audio_tower.layers.0.self_attn.softcap").persistent);
  CHECK(std::find(t.no_split_classes.begin(), t.no_split_classes.end(), "Gemma4AudioLayer") !=
        t.no_split_classes.end());
}

TEST_CASE("gemma4 audio: a bad subsampling_conv_channels is named") {
  std::string bad = kConfig;
  const std::string key = R"("subsampling_conv_channels": [128, 32])";
  bad.replace(bad.find(key), key.size(), R"("subsampling_conv_channels": [128])");
  EstimateRequest req;
  req.config_text = bad;
  const Result<Model> m = build_model(req);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().message().find("subsampling_conv_channels") != std::string::npos);
}
