// The timm families (core/model/arch/timm_*.cpp): ResNet, VisionTransformer, DeiT, ConvNeXt,
// EfficientNet, MobileNetV3 — what `timm.create_model(name, pretrained=False)` builds.
//
// Authorities: the parameter counts timm / torchvision publish for these architectures (the same
// networks; torchvision's docs list e.g. resnet50 25,557,032, efficientnet_b0 5,288,548,
// mobilenet_v3_large 5,483,032, vit_b_16 86,567,656, convnext_tiny 28,589,128), the DeiT paper /
// timm's deit counts, shapes of the real timm checkpoints, and arithmetic from the timm source
// (timm/models/*.py) written out in comments. The config fixtures are the Hub's config.json of
// timm models (e.g. timm/resnet50.a1_in1k).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/memory/estimate.h"
#include "support/reference.h"

using namespace memfit;

namespace {

EstimateRequest timm_request(const std::string& name, const std::string& config = "") {
  EstimateRequest req;
  req.config_text = config;
  req.name = name;
  req.library = "timm";
  return req;
}

TensorTree tree_of(const std::string& name, const std::string& config = "") {
  auto t = build_tree(timm_request(name, config));
  REQUIRE_MESSAGE(t.ok(), t.error().message());
  return *t;
}

std::uint64_t params_of(const std::string& name, const std::string& config = "") {
  return tree_of(name, config).parameter_count();
}

Shape shape_of(const TensorTree& t, const std::string& name) {
  const int i = t.find_tensor(name);
  REQUIRE_MESSAGE(i >= 0, "no tensor " << name);
  return t.tensors[i].shape;
}

bool has_tensor(const TensorTree& t, const std::string& name) { return t.find_tensor(name) >= 0; }

std::string class_of(const TensorTree& t, const std::string& module) {
  const int i = t.find_module(module);
  REQUIRE_MESSAGE(i >= 0, "no module " << module);
  return t.modules[i].class_name;
}

int count_buffers_named(const TensorTree& t, const std::string& leaf) {
  int n = 0;
  for (int i : t.named_buffers()) {
    const std::string& name = t.tensors[i].name;
    if (name.size() >= leaf.size() && name.compare(name.size() - leaf.size(), leaf.size(), leaf) == 0)
      ++n;
  }
  return n;
}

std::uint64_t buffer_numel(const TensorTree& t) {
  std::uint64_t n = 0;
  for (int i : t.named_buffers()) n += t.tensors[i].numel;
  return n;
}

std::string name_at(const TensorTree& t, std::size_t pos) {
  const auto p = t.named_parameters();
  REQUIRE(pos < p.size());
  return t.tensors[p[pos]].name;
}

ErrorCode error_of(const EstimateRequest& req) {
  auto t = build_tree(req);
  REQUIRE_FALSE(t.ok());
  return t.error().code();
}

}  // namespace

TEST_CASE("timm ResNet: published parameter counts") {
  CHECK(params_of("timm/resnet18.a1_in1k") == 11689512);
  CHECK(params_of("timm/resnet34.a1_in1k") == 21797672);
  CHECK(params_of("timm/resnet50.a1_in1k") == 25557032);
  CHECK(params_of("timm/resnet101.a1h_in1k") == 44549160);
  CHECK(params_of("timm/resnet152.a1h_in1k") == 60192808);
  CHECK(params_of("timm/resnext50_32x4d.a1h_in1k") == 25028904);
  CHECK(params_of("timm/resnext101_32x8d.fb_wsl_ig1b_ft_in1k") == 88791336);
  CHECK(params_of("timm/resnext101_64x4d.c1_in1k") == 83455272);
  CHECK(params_of("timm/wide_resnet50_2.racm_in1k") == 68883240);
  CHECK(params_of("timm/wide_resnet101_2.tv_in1k") == 126886696);
  // resnet50d: the deep stem replaces conv1 7x7 (3*64*49 = 9,408) by three 3x3 convs
  // 3*32*9 + 32*32*9 + 32*64*9 = 28,512 plus two BatchNorm2d(32) (128): +19,232 over resnet50.
  CHECK(params_of("timm/resnet50d.gluon_in1k") == 25557032 + 28512 - 9408 + 128);
}

TEST_CASE("timm ResNet-50: names, shapes, BatchNorm buffers") {
  const TensorTree t = tree_of("timm/resnet50.a1_in1k");
  CHECK(t.class_name() == "ResNet");
  CHECK(t.no_split_classes.empty());  // timm models have no _no_split_modules
  CHECK(name_at(t, 0) == "conv1.weight");
  CHECK(shape_of(t, "conv1.weight") == Shape{64, 3, 7, 7});
  CHECK(shape_of(t, "layer1.0.conv1.weight") == Shape{64, 64, 1, 1});
  CHECK(shape_of(t, "layer1.0.downsample.0.weight") == Shape{256, 64, 1, 1});
  CHECK(shape_of(t, "layer4.2.conv3.weight") == Shape{2048, 512, 1, 1});
  CHECK(shape_of(t, "fc.weight") == Shape{1000, 2048});
  CHECK_FALSE(has_tensor(t, "layer1.0.conv1.bias"));
  CHECK(class_of(t, "layer2.0") == "Bottleneck");
  CHECK(class_of(t, "layer2.0.bn1") == "BatchNorm2d");
  // BatchNorm2d layers: bn1 + 3 per Bottleneck (3+4+6+3 = 16 blocks) + 4 downsample = 53.
  CHECK(count_buffers_named(t, ".num_batches_tracked") == 53);
  const int nbt = t.find_tensor("bn1.num_batches_tracked");
  REQUIRE(nbt >= 0);
  CHECK(t.tensors[nbt].dtype == DType::kI64);
  CHECK(t.tensors[nbt].shape.empty());
  CHECK(t.tensors[nbt].persistent);
  // BN channels: 64 + layer1 3*(64+64+256)+256 + layer2 4*(128+128+512)+512
  //   + layer3 6*(256+256+1024)+1024 + layer4 3*(512+512+2048)+2048 = 26,560;
  // running_mean + running_var = 53,120 floats, plus 53 int64 scalars.
  CHECK(buffer_numel(t) == 2 * 26560 + 53);
  // ResNet-18 (BasicBlock): conv1, bn1, 2 per block * 8 + 3 downsample BNs = 1 + 16 + 3 = 20.
  CHECK(count_buffers_named(tree_of("timm/resnet18.a1_in1k"), ".num_batches_tracked") == 20);
}

TEST_CASE("timm ResNet: deep stem and avg-pool downsample of the D variant") {
  const TensorTree t = tree_of("timm/resnet50d.gluon_in1k");
  CHECK(shape_of(t, "conv1.0.weight") == Shape{32, 3, 3, 3});
  CHECK(shape_of(t, "conv1.3.weight") == Shape{32, 32, 3, 3});
  CHECK(shape_of(t, "conv1.6.weight") == Shape{64, 32, 3, 3});
  CHECK(shape_of(t, "bn1.weight") == Shape{64});
  // downsample_avg: Sequential(AvgPool2d/Identity, conv, bn)
  CHECK(shape_of(t, "layer2.0.downsample.1.weight") == Shape{512, 256, 1, 1});
  CHECK(has_tensor(t, "layer2.0.downsample.2.running_var"));
  // ResNeXt grouped 3x3: width = 4 * 32 = 128 in layer1, groups = 32 → [128, 4, 3, 3]
  CHECK(shape_of(tree_of("timm/resnext50_32x4d.a1h_in1k"), "layer1.0.conv2.weight") ==
        Shape{128, 4, 3, 3});
}

TEST_CASE("timm: config.json fixture (architecture, num_classes) wins over the name") {
  const std::string cfg = test::fixture("configs/timm--resnet50.a1_in1k.json");
  CHECK(params_of("timm/resnet50.a1_in1k", cfg) == 25557032);
  const std::string vit = test::fixture("configs/timm--vit_base_patch16_224.augreg2_in21k_ft_in1k.json");
  CHECK(params_of("timm/vit_base_patch16_224.augreg2_in21k_ft_in1k", vit) == 86567656);
  // The config's `architecture` is used even under another name.
  CHECK(params_of("some/local-checkpoint", cfg) == 25557032);
  // num_classes from the config: fc is [10, 2048] → 25,557,032 - 990 * 2049.
  CHECK(params_of("timm/resnet50.a1_in1k", R"({"architecture": "resnet50", "num_classes": 10})") ==
        25557032 - 990 * 2049);
  // pretrained_cfg.num_classes when the top level has none; num_classes 0 drops the head.
  const std::string headless =
      R"({"architecture": "resnet50", "pretrained_cfg": {"num_classes": 0}})";
  const TensorTree t = tree_of("x", headless);
  CHECK_FALSE(has_tensor(t, "fc.weight"));
  CHECK(t.parameter_count() == 25557032 - 2049000);
}

TEST_CASE("timm: without a config, num_classes follows the pretrained tag's dataset") {
  // timm's default cfgs: 'vit_base_patch16_224.augreg_in21k' num_classes=21843,
  // 'convnext_tiny.fb_in22k' 21841, 'convnext_tiny.in12k' 11821, '*_ft_in1k' 1000.
  CHECK(shape_of(tree_of("timm/vit_base_patch16_224.augreg_in21k"), "head.weight") ==
        Shape{21843, 768});
  CHECK(shape_of(tree_of("timm/convnext_tiny.fb_in22k"), "head.fc.weight") == Shape{21841, 768});
  CHECK(shape_of(tree_of("timm/convnext_tiny.in12k"), "head.fc.weight") == Shape{11821, 768});
  CHECK(shape_of(tree_of("timm/convnext_tiny.fb_in22k_ft_in1k"), "head.fc.weight") ==
        Shape{1000, 768});
  CHECK(shape_of(tree_of("timm/resnet50"), "fc.weight") == Shape{1000, 2048});
  // A config's num_classes still wins over the tag.
  CHECK(shape_of(tree_of("timm/convnext_tiny.in12k", R"({"num_classes": 5})"), "head.fc.weight") ==
        Shape{5, 768});
  // SigLIP fine-tuned on in1k has a head; its webli tags do not.
  CHECK(has_tensor(tree_of("timm/vit_so400m_patch14_siglip_378.webli_ft_in1k"), "head.weight"));
}

TEST_CASE("timm: estimate() with the library given and no config") {
  EstimateRequest req = timm_request("timm/resnet50.a1_in1k");
  auto r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(r->library == "timm");
  CHECK(r->model_type == "resnet50");
  CHECK(r->model_class == "ResNet");
  CHECK(r->parameters == 25557032);
}

TEST_CASE("timm: compat-mode total counts the BatchNorm buffers") {
  EstimateRequest req = timm_request("timm/resnet50.a1_in1k");
  req.mode = Mode::kAccelerate;
  auto r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  // float32 params 25,557,032 * 4 + running stats 53,120 * 4 + 53 int64 counters * 8.
  REQUIRE_FALSE(r->module_sizes.empty());
  CHECK(r->module_sizes.front().first == "");
  CHECK(r->module_sizes.front().second == 25557032.0 * 4 + 53120.0 * 4 + 53.0 * 8);
}

TEST_CASE("timm: bad configs and unknown architectures") {
  CHECK(error_of(timm_request("timm/resnet50.a1_in1k", R"({"num_classes": -1})")) ==
        ErrorCode::kInvalidValue);
  CHECK(error_of(timm_request("timm/resnet50.a1_in1k", R"({"num_classes": "ten"})")) ==
        ErrorCode::kWrongType);
  CHECK(error_of(timm_request("timm/not_a_model.x")) == ErrorCode::kUnknownModelType);
  CHECK(error_of(timm_request(
            "timm/vit_base_patch16_224.augreg2_in21k_ft_in1k",
            R"({"architecture": "vit_base_patch16_224",
                "pretrained_cfg": {"input_size": [3, 0, 0]}})")) == ErrorCode::kInvalidValue);
}

TEST_CASE("timm VisionTransformer: published parameter counts") {
  CHECK(params_of("timm/vit_base_patch16_224.augreg2_in21k_ft_in1k") == 86567656);
  CHECK(params_of("timm/vit_small_patch16_224.augreg_in21k_ft_in1k") == 22050664);
  CHECK(params_of("timm/vit_tiny_patch16_224.augreg_in21k_ft_in1k") == 5717416);
  CHECK(params_of("timm/vit_base_patch32_224.augreg_in21k_ft_in1k") == 88224232);
  CHECK(params_of("timm/vit_large_patch16_224.augreg_in21k_ft_in1k") == 304326632);
  CHECK(params_of("timm/vit_large_patch32_384.orig_in21k_ft_in1k") ==
        306535400 + (144 - 49) * 1024);  // vit_l_32 at 224 is 306,535,400; 12x12 vs 7x7 patches
  // At 384 only pos_embed grows: (24*24 - 14*14) * 768 = 291,840.
  CHECK(params_of("timm/vit_base_patch16_384.augreg_in21k_ft_in1k") == 86567656 + 291840);
}

TEST_CASE("timm VisionTransformer: structure of vit_base_patch16_224") {
  const TensorTree t = tree_of("timm/vit_base_patch16_224.augreg2_in21k_ft_in1k");
  CHECK(t.class_name() == "VisionTransformer");
  CHECK(t.no_split_classes.empty());
  // The root's own parameters come first in named_parameters().
  CHECK(name_at(t, 0) == "cls_token");
  CHECK(name_at(t, 1) == "pos_embed");
  CHECK(name_at(t, 2) == "patch_embed.proj.weight");
  CHECK(shape_of(t, "cls_token") == Shape{1, 1, 768});
  CHECK(shape_of(t, "pos_embed") == Shape{1, 197, 768});
  CHECK(shape_of(t, "patch_embed.proj.weight") == Shape{768, 3, 16, 16});
  CHECK(shape_of(t, "blocks.0.attn.qkv.weight") == Shape{2304, 768});
  CHECK(shape_of(t, "blocks.11.mlp.fc1.weight") == Shape{3072, 768});
  CHECK(shape_of(t, "norm.weight") == Shape{768});
  CHECK(shape_of(t, "head.weight") == Shape{1000, 768});
  CHECK_FALSE(has_tensor(t, "fc_norm.weight"));
  CHECK(class_of(t, "blocks.3") == "Block");
  CHECK(class_of(t, "blocks.3.attn") == "Attention");
  CHECK(class_of(t, "blocks.3.mlp") == "Mlp");
  CHECK(t.named_buffers().empty());
}

TEST_CASE("timm VisionTransformer: CLIP, DINOv2, SigLIP and register variants") {
  // CLIP tower: norm_pre, patch_embed without bias; config num_classes 512 (projection).
  const TensorTree clip = tree_of(
      "timm/vit_base_patch16_clip_224.openai",
      R"({"architecture": "vit_base_patch16_clip_224", "num_classes": 512})");
  CHECK(has_tensor(clip, "norm_pre.weight"));
  CHECK_FALSE(has_tensor(clip, "patch_embed.proj.bias"));
  CHECK(shape_of(clip, "head.weight") == Shape{512, 768});
  // DINOv2: default pretrained_cfg input 518 → 37x37 patches; LayerScale gammas; no head.
  const TensorTree dino = tree_of("timm/vit_small_patch14_dinov2.lvd142m");
  CHECK(shape_of(dino, "pos_embed") == Shape{1, 1 + 37 * 37, 384});
  CHECK(shape_of(dino, "blocks.0.ls1.gamma") == Shape{384});
  CHECK_FALSE(has_tensor(dino, "head.weight"));
  // Hand count: patch_embed 384*3*14*14 + 384 = 226,176; cls 384; pos 1370*384 = 526,080;
  // per block 2*768 (norms) + 443,520 (qkv) + 147,840 (proj) + 591,360 (fc1) + 590,208 (fc2)
  // + 768 (ls) = 1,775,232, *12 = 21,302,784; final norm 768 → 22,056,192.
  CHECK(dino.parameter_count() == 22056192);
  // Registers (not in pos_embed: no_embed_class).
  const TensorTree reg = tree_of("timm/vit_base_patch14_reg4_dinov2.lvd142m");
  CHECK(shape_of(reg, "reg_token") == Shape{1, 4, 768});
  CHECK(shape_of(reg, "pos_embed") == Shape{1, 37 * 37, 768});
  // SigLIP: no class token, attention-pool head (latent, q, kv, proj, norm, mlp).
  const TensorTree sig = tree_of("timm/vit_base_patch16_siglip_224.webli");
  CHECK_FALSE(has_tensor(sig, "cls_token"));
  CHECK(shape_of(sig, "pos_embed") == Shape{1, 196, 768});
  CHECK(shape_of(sig, "attn_pool.latent") == Shape{1, 1, 768});
  CHECK(shape_of(sig, "attn_pool.kv.weight") == Shape{1536, 768});
  CHECK(shape_of(sig, "attn_pool.mlp.fc1.weight") == Shape{3072, 768});
  CHECK_FALSE(has_tensor(sig, "head.weight"));
  // so400m: int(1152 * 3.7362) = 4304 MLP width.
  CHECK(shape_of(tree_of("timm/vit_so400m_patch14_siglip_384.webli"), "blocks.0.mlp.fc1.weight") ==
        Shape{4304, 1152});
  // input_size from the config's pretrained_cfg sets the patch grid (fixed_input_size).
  const TensorTree big = tree_of(
      "x", R"({"architecture": "vit_base_patch16_224", "num_classes": 1000,
               "pretrained_cfg": {"input_size": [3, 384, 384], "fixed_input_size": true}})");
  CHECK(shape_of(big, "pos_embed") == Shape{1, 577, 768});
}

TEST_CASE("timm DeiT: published parameter counts and the distilled model") {
  CHECK(params_of("timm/deit_base_patch16_224.fb_in1k") == 86567656);
  CHECK(params_of("timm/deit_small_patch16_224.fb_in1k") == 22050664);
  CHECK(params_of("timm/deit_tiny_patch16_224.fb_in1k") == 5717416);
  CHECK(params_of("timm/deit_base_distilled_patch16_224.fb_in1k") == 87338192);
  const TensorTree t = tree_of("timm/deit_base_distilled_patch16_224.fb_in1k");
  CHECK(t.class_name() == "VisionTransformerDistilled");
  CHECK(name_at(t, 0) == "cls_token");
  CHECK(name_at(t, 1) == "pos_embed");
  CHECK(name_at(t, 2) == "dist_token");
  CHECK(shape_of(t, "pos_embed") == Shape{1, 198, 768});  // 196 patches + cls + dist
  CHECK(shape_of(t, "head_dist.weight") == Shape{1000, 768});
  CHECK(tree_of("timm/deit_small_patch16_224.fb_in1k").class_name() == "VisionTransformer");
  // DeiT III: LayerScale and no class-token slot in pos_embed.
  const TensorTree d3 = tree_of("timm/deit3_small_patch16_224.fb_in1k");
  CHECK(shape_of(d3, "pos_embed") == Shape{1, 196, 384});
  CHECK(shape_of(d3, "blocks.0.ls2.gamma") == Shape{384});
}

TEST_CASE("timm ConvNeXt: published parameter counts and structure") {
  CHECK(params_of("timm/convnext_tiny.fb_in1k") == 28589128);
  CHECK(params_of("timm/convnext_small.fb_in1k") == 50223688);
  CHECK(params_of("timm/convnext_base.fb_in1k") == 88591464);
  CHECK(params_of("timm/convnext_large.fb_in1k") == 197767336);
  const TensorTree t = tree_of("timm/convnext_tiny.fb_in1k");
  CHECK(t.class_name() == "ConvNeXt");
  CHECK(shape_of(t, "stem.0.weight") == Shape{96, 3, 4, 4});
  CHECK(class_of(t, "stem.1") == "LayerNorm2d");
  CHECK_FALSE(has_tensor(t, "stages.0.downsample.0.weight"));
  CHECK(shape_of(t, "stages.1.downsample.0.weight") == Shape{96});
  CHECK(shape_of(t, "stages.1.downsample.1.weight") == Shape{192, 96, 2, 2});
  CHECK(shape_of(t, "stages.2.blocks.8.conv_dw.weight") == Shape{384, 1, 7, 7});
  CHECK(shape_of(t, "stages.3.blocks.2.mlp.fc1.weight") == Shape{3072, 768});
  CHECK(class_of(t, "stages.0.blocks.0.norm") == "LayerNorm");
  CHECK(shape_of(t, "head.norm.weight") == Shape{768});
  CHECK(shape_of(t, "head.fc.weight") == Shape{1000, 768});
  // The block's own gamma precedes its submodules' tensors in named_parameters().
  CHECK(name_at(t, 4) == "stages.0.blocks.0.gamma");
  CHECK(name_at(t, 5) == "stages.0.blocks.0.conv_dw.weight");
  // ConvNeXt-V2: GRN in the MLP, no gamma. convnext_atto: 1x1-conv MLP.
  const TensorTree v2 = tree_of("timm/convnextv2_tiny.fcmae_ft_in1k");
  CHECK(shape_of(v2, "stages.0.blocks.0.mlp.grn.weight") == Shape{384});
  CHECK_FALSE(has_tensor(v2, "stages.0.blocks.0.gamma"));
  // GRN adds 2 * 4 * dim per block over ConvNeXt-T, minus the gammas (dim per block):
  // sum(depth_i * dim_i) = 3*96 + 3*192 + 9*384 + 3*768 = 6,624 → +8*6,624 - 6,624.
  CHECK(v2.parameter_count() == 28589128 + 7 * 6624);
  CHECK(shape_of(tree_of("timm/convnext_atto.d2_in1k"), "stages.0.blocks.0.mlp.fc1.weight") ==
        Shape{160, 40, 1, 1});
}

TEST_CASE("timm EfficientNet: published parameter counts and structure") {
  CHECK(params_of("timm/efficientnet_b0.ra_in1k") == 5288548);
  CHECK(params_of("timm/tf_efficientnet_b0.ns_jft_in1k") == 5288548);
  CHECK(params_of("timm/efficientnet_b1.ft_in1k") == 7794184);
  CHECK(params_of("timm/efficientnet_b2.ra_in1k") == 9109994);
  CHECK(params_of("timm/efficientnet_b3.ra2_in1k") == 12233232);
  CHECK(params_of("timm/efficientnet_b4.ra2_in1k") == 19341616);
  CHECK(params_of("timm/tf_efficientnet_b5.ns_jft_in1k") == 30389784);
  CHECK(params_of("timm/tf_efficientnet_b6.ns_jft_in1k") == 43040704);
  CHECK(params_of("timm/tf_efficientnet_b7.ns_jft_in1k") == 66347960);
  CHECK(params_of("timm/mobilenetv2_100.ra_in1k") == 3504872);
  const TensorTree t = tree_of("timm/efficientnet_b0.ra_in1k");
  CHECK(t.class_name() == "EfficientNet");
  CHECK(shape_of(t, "conv_stem.weight") == Shape{32, 3, 3, 3});
  CHECK(class_of(t, "bn1") == "BatchNormAct2d");
  CHECK(class_of(t, "blocks.0.0") == "DepthwiseSeparableConv");
  CHECK(shape_of(t, "blocks.0.0.conv_dw.weight") == Shape{32, 1, 3, 3});
  CHECK(shape_of(t, "blocks.0.0.se.conv_reduce.weight") == Shape{8, 32, 1, 1});
  CHECK(class_of(t, "blocks.1.0") == "InvertedResidual");
  CHECK(shape_of(t, "blocks.1.0.conv_pw.weight") == Shape{96, 16, 1, 1});
  CHECK(shape_of(t, "blocks.1.0.se.conv_reduce.weight") == Shape{4, 96, 1, 1});
  CHECK(shape_of(t, "blocks.1.0.se.conv_expand.bias") == Shape{96});
  CHECK(shape_of(t, "blocks.6.0.conv_pwl.weight") == Shape{320, 1152, 1, 1});
  CHECK(shape_of(t, "conv_head.weight") == Shape{1280, 320, 1, 1});
  CHECK_FALSE(has_tensor(t, "conv_head.bias"));
  CHECK(shape_of(t, "classifier.weight") == Shape{1000, 1280});
  // 1 + 16 blocks (1 ds with 2 BNs, 15 ir with 3) + bn2 = 1 + 2 + 45 + 1 = 49 BN layers.
  CHECK(count_buffers_named(t, ".num_batches_tracked") == 49);
  // tf_ ports: strided convs use TF-'same' Conv2dSame; stride-1 convs stay Conv2d.
  const TensorTree tf = tree_of("timm/tf_efficientnet_b0.ns_jft_in1k");
  CHECK(class_of(tf, "conv_stem") == "Conv2dSame");
  CHECK(class_of(tf, "blocks.1.0.conv_dw") == "Conv2dSame");
  CHECK(class_of(tf, "blocks.1.1.conv_dw") == "Conv2d");
}

TEST_CASE("timm MobileNetV3: published parameter counts and structure") {
  CHECK(params_of("timm/mobilenetv3_large_100.ra_in1k") == 5483032);
  CHECK(params_of("timm/mobilenetv3_small_100.lamb_in1k") == 2542856);
  CHECK(params_of("timm/tf_mobilenetv3_large_100.in1k") == 5483032);
  const TensorTree t = tree_of("timm/mobilenetv3_large_100.ra_in1k");
  CHECK(t.class_name() == "MobileNetV3");
  CHECK(shape_of(t, "conv_stem.weight") == Shape{16, 3, 3, 3});
  // SE from the expanded width, rounded to 8: stage 2 mid 72 → make_divisible(18) = 24.
  CHECK(shape_of(t, "blocks.2.0.se.conv_reduce.weight") == Shape{24, 72, 1, 1});
  CHECK(class_of(t, "blocks.6.0") == "ConvBnAct");
  CHECK(shape_of(t, "blocks.6.0.conv.weight") == Shape{960, 160, 1, 1});
  CHECK(shape_of(t, "conv_head.weight") == Shape{1280, 960, 1, 1});
  CHECK(shape_of(t, "conv_head.bias") == Shape{1280});
  CHECK(shape_of(t, "classifier.weight") == Shape{1000, 1280});
  CHECK_FALSE(has_tensor(t, "bn2.weight"));
}
