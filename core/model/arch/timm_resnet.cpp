// timm ResNet / ResNeXt / Wide-ResNet (timm/models/resnet.py, timm 0.9–1.0): class ResNet with
// BasicBlock / Bottleneck blocks, BatchNorm2d everywhere, the torchvision-style 7x7 stem or the
// "deep" 3x3 stems of the c/d/s/t variants, and conv or avg-pool downsample paths.
// Modules without tensors (ReLU act1/act2/act3, the nn.Identity drop_block/aa placeholders, the
// stem MaxPool2d, AvgPool2d/Identity in downsample_avg, global_pool) follow timm 1.0.3 resnet.py
// (huggingface/pytorch-image-models @ v1.0.3, cb0e4391); se and drop_path are None there (no
// attn_layer, drop_path_rate 0), so they are not children.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "families.h"
#include "timm_common.h"

namespace memfit::arch {
namespace {

enum class Stem { kDefault, kDeep, kDeepTiered };

struct ResNetArgs {
  std::string_view name;
  bool bottleneck;
  std::array<std::int64_t, 4> layers;
  std::int64_t stem_width = 64;
  Stem stem = Stem::kDefault;
  bool avg_down = false;
  std::int64_t cardinality = 1;
  std::int64_t base_width = 64;
};

// The @register_model entry points of resnet.py (model_args of each).
const std::vector<ResNetArgs>& variants() {
  using S = Stem;
  static const std::vector<ResNetArgs> v = {
      {"resnet10t", false, {1, 1, 1, 1}, 32, S::kDeepTiered, true},
      {"resnet14t", true, {1, 1, 1, 1}, 32, S::kDeepTiered, true},
      {"resnet18", false, {2, 2, 2, 2}},
      {"resnet18d", false, {2, 2, 2, 2}, 32, S::kDeep, true},
      {"resnet34", false, {3, 4, 6, 3}},
      {"resnet34d", false, {3, 4, 6, 3}, 32, S::kDeep, true},
      {"resnet26", true, {2, 2, 2, 2}},
      {"resnet26t", true, {2, 2, 2, 2}, 32, S::kDeepTiered, true},
      {"resnet26d", true, {2, 2, 2, 2}, 32, S::kDeep, true},
      {"resnet50", true, {3, 4, 6, 3}},
      {"resnet50c", true, {3, 4, 6, 3}, 32, S::kDeep},
      {"resnet50d", true, {3, 4, 6, 3}, 32, S::kDeep, true},
      {"resnet50s", true, {3, 4, 6, 3}, 64, S::kDeep},
      {"resnet50t", true, {3, 4, 6, 3}, 32, S::kDeepTiered, true},
      {"resnet101", true, {3, 4, 23, 3}},
      {"resnet101c", true, {3, 4, 23, 3}, 32, S::kDeep},
      {"resnet101d", true, {3, 4, 23, 3}, 32, S::kDeep, true},
      {"resnet101s", true, {3, 4, 23, 3}, 64, S::kDeep},
      {"resnet152", true, {3, 8, 36, 3}},
      {"resnet152c", true, {3, 8, 36, 3}, 32, S::kDeep},
      {"resnet152d", true, {3, 8, 36, 3}, 32, S::kDeep, true},
      {"resnet152s", true, {3, 8, 36, 3}, 64, S::kDeep},
      {"resnet200", true, {3, 24, 36, 3}},
      {"resnet200d", true, {3, 24, 36, 3}, 32, S::kDeep, true},
      {"wide_resnet50_2", true, {3, 4, 6, 3}, 64, S::kDefault, false, 1, 128},
      {"wide_resnet101_2", true, {3, 4, 23, 3}, 64, S::kDefault, false, 1, 128},
      {"resnext50_32x4d", true, {3, 4, 6, 3}, 64, S::kDefault, false, 32, 4},
      {"resnext50d_32x4d", true, {3, 4, 6, 3}, 32, S::kDeep, true, 32, 4},
      {"resnext101_32x4d", true, {3, 4, 23, 3}, 64, S::kDefault, false, 32, 4},
      {"resnext101_32x8d", true, {3, 4, 23, 3}, 64, S::kDefault, false, 32, 8},
      {"resnext101_32x16d", true, {3, 4, 23, 3}, 64, S::kDefault, false, 32, 16},
      {"resnext101_32x32d", true, {3, 4, 23, 3}, 64, S::kDefault, false, 32, 32},
      {"resnext101_64x4d", true, {3, 4, 23, 3}, 64, S::kDefault, false, 64, 4},
  };
  return v;
}

const ResNetArgs* find_variant(const std::string& arch) {
  for (const auto& v : variants())
    if (v.name == arch) return &v;
  return nullptr;
}

// self.conv1 (plain 7x7 or the deep Sequential), self.bn1, self.act1, self.maxpool; returns the
// stem's output channels.
std::int64_t stem(TreeBuilder& b, const ResNetArgs& a) {
  if (a.stem == Stem::kDefault) {
    nn::conv2d(b, "conv1", 3, 64, 7, 7, false);
    nn::batch_norm2d(b, "bn1", 64);
    b.stateless("act1", "ReLU");
    b.stateless("maxpool", "MaxPool2d");
    return 64;
  }
  const std::int64_t inplanes = a.stem_width * 2;
  const std::int64_t c0 = a.stem == Stem::kDeepTiered ? 3 * (a.stem_width / 4) : a.stem_width;
  const std::int64_t c1 = a.stem_width;
  {
    auto s = b.module("conv1", "Sequential");  // conv, bn, act, conv, bn, act, conv
    nn::conv2d(b, "0", 3, c0, 3, 3, false);
    nn::batch_norm2d(b, "1", c0);
    b.stateless("2", "ReLU");
    nn::conv2d(b, "3", c0, c1, 3, 3, false);
    nn::batch_norm2d(b, "4", c1);
    b.stateless("5", "ReLU");
    nn::conv2d(b, "6", c1, inplanes, 3, 3, false);
  }
  nn::batch_norm2d(b, "bn1", inplanes);
  b.stateless("act1", "ReLU");
  b.stateless("maxpool", "MaxPool2d");
  return inplanes;
}

// downsample_conv: Sequential(conv 1x1, bn); downsample_avg: Sequential(pool, conv 1x1, bn),
// pool = nn.AvgPool2d when the stage strides, else nn.Identity.
void downsample(TreeBuilder& b, const ResNetArgs& a, std::int64_t in, std::int64_t out,
                bool strided) {
  auto s = b.module("downsample", "Sequential");
  const std::string conv = a.avg_down ? "1" : "0";
  const std::string bn = a.avg_down ? "2" : "1";
  if (a.avg_down) b.stateless("0", strided ? "AvgPool2d" : "Identity");
  nn::conv2d(b, conv, in, out, 1, 1, false);
  nn::batch_norm2d(b, bn, out);
}

// Block children in __init__ order; drop_block and aa are nn.Identity (no drop_block_rate, no
// aa_layer), se and drop_path None; downsample is assigned after the last activation.
void block(TreeBuilder& b, const ResNetArgs& a, std::int64_t inplanes, std::int64_t planes,
           bool has_downsample, bool strided) {
  if (!a.bottleneck) {  // BasicBlock, expansion 1
    nn::conv2d(b, "conv1", inplanes, planes, 3, 3, false);
    nn::batch_norm2d(b, "bn1", planes);
    timm::identity(b, "drop_block");
    b.stateless("act1", "ReLU");
    timm::identity(b, "aa");
    nn::conv2d(b, "conv2", planes, planes, 3, 3, false);
    nn::batch_norm2d(b, "bn2", planes);
    b.stateless("act2", "ReLU");
    if (has_downsample) downsample(b, a, inplanes, planes, strided);
    return;
  }
  // Bottleneck, expansion 4: width = floor(planes * base_width / 64) * cardinality
  const std::int64_t width = planes * a.base_width / 64 * a.cardinality;
  const std::int64_t out = planes * 4;
  nn::conv2d(b, "conv1", inplanes, width, 1, 1, false);
  nn::batch_norm2d(b, "bn1", width);
  b.stateless("act1", "ReLU");
  nn::conv2d(b, "conv2", width, width, 3, 3, false, a.cardinality);
  nn::batch_norm2d(b, "bn2", width);
  timm::identity(b, "drop_block");
  b.stateless("act2", "ReLU");
  timm::identity(b, "aa");
  nn::conv2d(b, "conv3", width, out, 1, 1, false);
  nn::batch_norm2d(b, "bn3", out);
  b.stateless("act3", "ReLU");
  if (has_downsample) downsample(b, a, inplanes, out, strided);
}

TensorTree build(const BuildRequest& r) {
  const std::string arch = timm::architecture(r);
  const ResNetArgs* a = find_variant(arch);
  if (!a) timm::unsupported(r, "timm_resnet", arch);
  const std::int64_t classes = timm::num_classes(r);

  TreeBuilder b{"ResNet"};
  std::int64_t inplanes = stem(b, *a);
  const std::int64_t expansion = a->bottleneck ? 4 : 1;
  const std::array<std::int64_t, 4> channels = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    auto s = b.module("layer" + std::to_string(stage + 1), "Sequential");
    const std::int64_t planes = channels[stage];
    for (std::int64_t i = 0; i < a->layers[stage]; ++i) {
      // make_blocks: downsample when stride != 1 (stages 2-4) or channels change.
      const bool ds = i == 0 && (stage > 0 || inplanes != planes * expansion);
      auto blk = b.item(i, a->bottleneck ? "Bottleneck" : "BasicBlock");
      block(b, *a, inplanes, planes, ds, stage > 0);
      inplanes = planes * expansion;
    }
  }
  timm::select_adaptive_pool(b, "global_pool", true);  // create_classifier: flatten before fc
  timm::classifier(b, "fc", 512 * expansion, classes);
  return b.finish();
}

std::vector<std::string_view> keys() {
  std::vector<std::string_view> k;
  for (const auto& v : variants()) k.push_back(v.name);
  return k;
}

}  // namespace

const Family& timm_resnet_family() {
  static const Family f{"timm", {}, {{"ResNet", "AutoModel"}}, &build, &keys};
  return f;
}

}  // namespace memfit::arch
