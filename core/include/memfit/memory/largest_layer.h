// memfit/memory/largest_layer.h — accelerate's get_max_layer_size() and memfit's corrected variant.
#pragma once

#include <string>
#include <vector>

#include "memfit/memory/module_sizes.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

struct LargestLayer {
  Bits bits = 0;
  std::vector<std::string> names;  // every layer of that size, in visiting order
};

enum class LayerRule {
  // accelerate 0.30.1: a split module is replaced by its children only, so direct parameters
  // and buffers of a non-root module that has children are never looked at.
  kAccelerate,
  // memfit: a split module is replaced by its direct parameters, children and direct buffers,
  // like the root — nothing is lost.
  kComplete,
};

LargestLayer largest_layer(const TensorTree& tree, const ModuleSizes& sizes, LayerRule rule);

// The root's direct parameters, its children, then its direct buffers (aliases left out).
std::vector<TreeItem> root_items(const TensorTree& tree);
// Direct parameters (+ children, + direct buffers when `with_buffers`) of a module.
std::vector<TreeItem> member_items(const TensorTree& tree, int module, bool with_params,
                                   bool with_buffers);

// get_max_layer_size over an explicit list, with an explicit no-split list.
LargestLayer largest_layer_among(const TensorTree& tree, const ModuleSizes& sizes,
                                 const std::vector<TreeItem>& items,
                                 const std::vector<std::string>& no_split, LayerRule rule);

}  // namespace memfit
