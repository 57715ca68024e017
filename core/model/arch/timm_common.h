// Pieces shared by the timm families (timm_resnet, timm_vit, timm_deit, timm_convnext,
// timm_efficientnet, timm_mobilenetv3).
//
// accelerate builds a timm model with `timm.create_model(model_name, pretrained=False)`: the name
// "timm/resnet50.a1_in1k" selects the architecture ("resnet50") and the pretrained tag
// ("a1_in1k"), whose pretrained_cfg supplies num_classes (and, for fixed-input-size models such
// as ViT, img_size). The Hub's config.json for that model mirrors the pretrained_cfg, so it is
// read here: `architecture` wins over the name, then `num_classes` (top level, else
// pretrained_cfg.num_classes), then pretrained_cfg.input_size.
//
// Modules without tensors (nn.Identity placeholders, activations, pools, nn.Dropout) are part of
// the trees, as accelerate's device maps name them; the shared ones here follow timm 1.0.3's
// layers/classifier.py and adaptive_avgmax_pool.py (huggingface/pytorch-image-models @ v1.0.3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common.h"
#include "memfit/model/arch.h"

namespace memfit::arch::timm {

// "timm/resnet50.a1_in1k" → "resnet50" (timm's parse_model_name + split_model_name_tag).
std::string arch_from_name(std::string_view model_name);
// "timm/resnet50.a1_in1k" → "a1_in1k"; "" when the name has no tag.
std::string tag_from_name(std::string_view model_name);
// The architecture to build: config.json `architecture`, else the one in the model name.
std::string architecture(const BuildRequest& r);

// num_classes: config `num_classes`, else `pretrained_cfg.num_classes` (a negative value there
// is ignored, as timm's _update_default_model_kwargs does), else `fallback`.
std::int64_t num_classes(const Config& c, std::int64_t fallback = 1000);
// The same, with the fallback taken from the tag of the model name when there is no config: a
// pretrained tag's num_classes follows its last dataset token in timm's default cfgs (in1k 1000,
// in12k 11821, in21k 21843, in22k 21841; miil_in21k 11221; orig_in21k has no head), else
// `fallback`.
std::int64_t num_classes(const BuildRequest& r, std::int64_t fallback = 1000);
// The square input size of pretrained_cfg.input_size ([3, H, W]), if the config has one.
std::optional<std::int64_t> input_size(const Config& c);

// Python's round() of a float (round half to even).
std::int64_t py_round(double v);
// timm.layers.make_divisible(v, divisor, min_value=None, round_limit).
std::int64_t make_divisible(double v, std::int64_t divisor = 8, std::int64_t min_value = 0,
                            double round_limit = 0.9);

// A convolution made by timm's create_conv2d / create_conv2d_pad: nn.Conv2d, or Conv2dSame when
// TF 'same' padding cannot be static (stride > 1 or an even kernel). timm convs default to
// bias=False.
void conv2d(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out,
            std::int64_t kernel, std::int64_t stride = 1, std::int64_t groups = 1,
            bool bias = false, bool pad_same = false);

// A classifier nn.Linear(in, num_classes), or an nn.Identity (no tensors) when num_classes <= 0.
void classifier(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t classes);

// nn.Identity: the placeholder timm registers where a layer is disabled (drop_path, aa,
// drop_block, an unused norm, ...). It is a child module, unlike an attribute set to None.
void identity(TreeBuilder& b, std::string_view name);
// An activation module of a timm class ("ReLU", "GELU", "SiLU", "Hardswish", ...), or an
// nn.Identity when `cls` is empty.
void act(TreeBuilder& b, std::string_view name, std::string_view cls);
// SelectAdaptivePool2d(pool_type='avg', flatten=flatten) (layers/adaptive_avgmax_pool.py):
// children pool = nn.AdaptiveAvgPool2d, flatten = nn.Flatten(1) or nn.Identity.
void select_adaptive_pool(TreeBuilder& b, std::string_view name, bool flatten);

[[noreturn]] void unsupported(const BuildRequest& r, std::string_view family,
                              const std::string& arch);

}  // namespace memfit::arch::timm
