#include "runtime_parts.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "memfit/memory/will_it_run.h"
#include "memfit/plan/fit.h"

namespace memfit::plan {

// `fit` budgets the KV cache and activation workspace with the same model as
// `memfit estimate --context … --batch …` (will_it_run): each decoder layer's cache (its tokens,
// or a recurrent layer's state) goes with the no-split block that holds it, in order — hybrid
// models differ layer by layer.
void runtime_parts(const Model& model, const PlanRequest& req, const TensorTree& tree,
                   std::map<std::string, std::uint64_t>* kv, std::uint64_t* activations,
                   std::vector<std::string>* notes, std::string* compute_dtype) {
  // The KV cache of the class that generates (memfit's class; accelerate's AutoModel has no head).
  std::optional<Model> generating;
  if (model.request.mode != Mode::kMemfit) {
    auto rebuilt = rebuild_for_mode(model, Mode::kMemfit);
    if (!rebuilt) {
      notes->push_back("no KV cache or activations budgeted: " + rebuilt.error().message());
      return;
    }
    generating = std::move(rebuilt).value();
  }
  auto run = capture([&] {
    RunOptions ro;
    ro.context = static_cast<std::int64_t>(req.context);
    ro.batch = static_cast<std::int64_t>(req.batch);
    // The loaded dtype as weights (plan's dtype may be any dtype; will_it_run's, floating or a
    // quantization: an integer dtype other than int8/int4 leaves the note below).
    if (req.dtype) ro.dtype = parse_weight_dtype(torch_name(*req.dtype), "dtype");
    Result<RunReport> r = will_it_run(generating ? *generating : model, ro);
    if (!r) throw r.error();
    return std::move(r).value();
  });
  if (!run) {
    notes->push_back("no KV cache or activations budgeted: " + run.error().message());
    return;
  }
  *activations = static_cast<std::uint64_t>(run->inference.activations.bytes);
  if (compute_dtype) *compute_dtype = run->inference.dtype;
  const std::size_t layers = run->layout.layers.size();
  if (layers == 0 || run->inference.kv.total() <= 0) return;
  const std::vector<std::string> no_split = req.no_split ? *req.no_split : tree.no_split_classes;
  std::vector<std::string> blocks;
  for (const TreeItem& it : placement_units(tree, no_split))
    if (!it.is_tensor &&
        std::find(no_split.begin(), no_split.end(), tree.modules[it.index].class_name) != no_split.end())
      blocks.push_back(tree.modules[it.index].name);
  if (blocks.size() < layers) {
    notes->push_back(fmt::format("KV cache not placed per layer: {} attention layers, {} no-split blocks",
                                 layers, blocks.size()));
    return;
  }
  // Cross-attention (encoder-decoder) is the same in every decoder layer: shared out evenly.
  const KvCache& cache = run->inference.kv;
  const double cross = cache.cross_bytes / static_cast<double>(layers);
  for (std::size_t i = 0; i < layers; ++i)
    (*kv)[blocks[i]] = static_cast<std::uint64_t>(cache.layer_bytes[i] + cross);
}


}  // namespace memfit::plan
