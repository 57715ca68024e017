// core/repo/diffusers_parts.h — the pieces of the diffusers kind (diffusers.cpp answers it):
// model_index.json read (diffusers_index.cpp), each component's weights chosen from the listing
// and sized (diffusers_weights.cpp, diffusers_sizes.cpp), and the offload modes
// (diffusers_offload.cpp). Internal to core/repo.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/model/dtype.h"
#include "memfit/repo/repo_kind.h"

namespace memfit::repo::diffusers {

// One [library, class] entry of model_index.json.
struct Component {
  std::string name;  // the key: also the component's folder
  std::string library, class_name;
};

struct PipelineIndex {
  std::string class_name;  // _class_name
  std::string version;     // _diffusers_version ("" when absent)
  std::vector<Component> components;  // in the file's order, [null, null] entries left out
  std::vector<std::string> absent;    // components listed as [null, null]
};

// Parses model_index.json. Throws Error(kRepoInvalid) naming the file and the key: not a JSON
// object, no _class_name string, a component entry that is not [library, class] of strings or
// nulls, or a component name that is not a plain folder name.
PipelineIndex parse_model_index(std::string_view text);

// Tokenizers, schedulers, image processors: components that are not torch modules and carry
// no weights (diffusers only offloads torch.nn.Module components).
bool is_weightless_class(const Component& c);

// The weights of one component folder, as diffusers picks them from the repo's files
// (pipeline_loading_utils.variant_compatible_siblings): the non-variant safetensors file (or
// sharded index) first; a variant (fp16, then bf16, then any) only when there is none.
struct WeightsChoice {
  enum class Form { kNone, kSafetensors, kShardedSafetensors, kOtherFormat };
  Form form = Form::kNone;
  std::string file;     // kSafetensors: the file; kShardedSafetensors: the index (folder/name)
  std::string variant;  // "" for the non-variant weights
  std::vector<std::string> other_files;  // kOtherFormat: the .bin/.pt files (sized by the listing)
};
WeightsChoice choose_weights(const RepoFiles& files, const std::string& folder);

// One component's weights as loaded at `dtype` (nullopt: as stored).
struct ComponentSize {
  bool has_weights = false;
  std::string source;                      // "safetensors header", "config (clip_text_model)", …
  std::optional<std::uint64_t> parameters; // unknown for weights sized by file size only
  std::vector<std::string> dtypes;         // as loaded ("F16", "F32"), in first-seen order
  std::uint64_t bytes = 0;
  std::string largest_module;              // the module with the most bytes of its own tensors
  std::uint64_t largest_module_bytes = 0;  // (enable_sequential_cpu_offload's unit)
  std::vector<std::string> notes;
};
ComponentSize size_component(const RepoFiles& files, const Component& c, const WeightsChoice& w,
                             std::optional<DType> dtype);

// How enable_model_cpu_offload treats the pipeline's components: the class's
// model_cpu_offload_seq (one at a time, in this order) and _exclude_from_cpu_offload (moved to the
// GPU whole, in both offload modes). `known` false: the class is not in memfit's table and every
// model component is assumed in the sequence, in model_index.json's order.
struct OffloadPolicy {
  std::vector<std::string> sequence;
  std::vector<std::string> excluded;
  bool known = false;
};
OffloadPolicy offload_policy(const std::string& pipeline_class,
                             const std::vector<std::string>& model_components);

}  // namespace memfit::repo::diffusers
