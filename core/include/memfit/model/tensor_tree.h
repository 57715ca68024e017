// memfit/model/tensor_tree.h — the "empty model": every named tensor of a model, with no data.
//
// A TensorTree is what `init_empty_weights()` gives accelerate, without PyTorch: the module
// hierarchy (names and class names, in registration order) and each module's direct parameters
// and buffers (shape, dtype, persistence, ties). Everything else — sizes, largest layer, device
// maps, the native loader — reads this one structure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memfit/model/dtype.h"

namespace memfit {

using Shape = std::vector<std::int64_t>;

enum class TensorKind : std::uint8_t { kParameter, kBuffer };

// Which transformers versions allocate a buffer (or register a module). The 4.40 rotary caches
// and GPT-2's causal mask are gone from current transformers (compat mode counts them, the
// default mode does not); current transformers moved some buffers (e.g. one model-level
// rotary_emb.inv_freq instead of one per layer), which only the default mode counts. Modules
// without tensors (a dropout 4.40 registered and current transformers does not) carry one too.
enum class BufferEra : std::uint8_t { kAlways, kLegacyOnly, kCurrentOnly };

// Which `from_pretrained(dtype=…)` loads keep a floating tensor in float32 whatever the requested
// dtype (transformers' modeling_utils `_get_dtype_plan` / the 4.5x `keep_in_fp32_regex`):
// kFloat16Loads for the class's `_keep_in_fp32_modules` (upcast only in a float16 load),
// kHalfLoads for `_keep_in_fp32_modules_strict` and tensors the module creates with
// dtype=torch.float32 (float16 and bfloat16 loads). memfit/model/keep_fp32.h applies the rules.
enum class KeepFp32 : std::uint8_t { kNo, kFloat16Loads, kHalfLoads };

struct TensorInfo {
  std::string name;        // full dotted name, e.g. "model.layers.0.self_attn.q_proj.weight"
  Shape shape;
  DType dtype = DType::kF32;
  TensorKind kind = TensorKind::kParameter;
  bool persistent = true;  // false: buffer registered with persistent=False (not in state_dict)
  BufferEra era = BufferEra::kAlways;
  int tied_to = -1;        // index of the tensor this one aliases (counted once), or -1
  int module = 0;          // index of the owning module
  std::uint64_t numel = 0; // product of shape, checked for overflow when the tensor was added
  KeepFp32 keep_fp32 = KeepFp32::kNo;  // loads that keep it float32 (sizes with load rules)
  // The checkpoint stores it in float32 whatever its other floats (DeepSeek's Gate.bias): the
  // stored form sizes it so. Otherwise a kept tensor is stored at the checkpoint's dtype and
  // upcast on load, so the loaded and the stored sizes differ (docs/memory-model.md).
  bool stored_fp32 = false;

  bool is_alias() const { return tied_to >= 0; }
};

struct ModuleNode {
  std::string name;        // dotted path; "" for the root
  std::string class_name;  // e.g. "LlamaDecoderLayer"
  int parent = -1;
  std::vector<int> children;  // module indices, registration order
  std::vector<int> params;    // tensor indices of direct parameters, registration order
  std::vector<int> buffers;   // tensor indices of direct buffers, registration order
  // Which transformers versions register this module. Only modules without tensors need one:
  // a module whose tensors are all of the other era disappears with them.
  BufferEra era = BufferEra::kAlways;
  // How many identical siblings this node stands for in a compact tree: the routed experts of a
  // MoE layer (DeepSeek-V3 has 58 × 256 of them, Kimi-K2 61 × 384) are described once, not per
  // copy, so summing sizes costs a few thousand tensors instead of tens of thousands. The copies
  // are named by the last component of `name` counting up ("experts.0" … "experts.255"); the
  // subtree below is the first copy's. expand() names every copy where names are needed.
  std::int64_t repeat = 1;
};

// Name → index lookup over a list of names. It keeps (hash, index) keys, never pointers, so a
// copied or moved tree keeps a valid index; a lookup always confirms the name itself. A key is
// one integer — the 32-bit hash above the index — so building the index sorts plain integers
// (a 70B model's tree is indexed on every estimate; pairs sorted ~2× slower in WASM).
class NameIndex {
 public:
  template <typename NameAt>
  void build(std::size_t count, NameAt name_at) {
    keys_.clear();
    keys_.reserve(count);
    for (std::size_t i = 0; i < count; ++i) keys_.push_back(key(hash(name_at(i)), i));
    sort();
  }
  // The index of `name`, or -1; `name_at(i)` gives the i-th name of the indexed list.
  template <typename NameAt>
  int find(std::string_view name, NameAt name_at) const {
    const std::uint32_t h = hash(name);
    for (auto it = lower(h); it != keys_.end() && hash_of(*it) == h; ++it)
      if (name_at(index_of(*it)) == name) return static_cast<int>(index_of(*it));
    return -1;
  }
  std::size_t size() const { return keys_.size(); }
  // The index of a subset of the list: `new_index[i]` is the new position of entry i, or -1 when
  // it was dropped, increasing with i. Hashes are kept and the order stays sorted, so nothing is
  // rehashed or sorted again (for_era narrows every estimate's tree this way).
  NameIndex remapped(const std::vector<int>& new_index) const;
  // The index of a name that occurs twice in the indexed list, or -1.
  template <typename NameAt>
  int first_duplicate(NameAt name_at) const {
    for (std::size_t i = 0; i + 1 < keys_.size(); ++i)
      for (std::size_t j = i + 1; j < keys_.size() && hash_of(keys_[j]) == hash_of(keys_[i]); ++j)
        if (name_at(index_of(keys_[i])) == name_at(index_of(keys_[j])))
          return static_cast<int>(index_of(keys_[j]));
    return -1;
  }

 private:
  static std::uint32_t hash(std::string_view s);
  static std::uint64_t key(std::uint32_t h, std::size_t i) { return std::uint64_t{h} << 32 | i; }
  static std::uint32_t hash_of(std::uint64_t k) { return static_cast<std::uint32_t>(k >> 32); }
  static std::size_t index_of(std::uint64_t k) { return static_cast<std::uint32_t>(k); }
  void sort();
  std::vector<std::uint64_t>::const_iterator lower(std::uint32_t h) const;
  std::vector<std::uint64_t> keys_;
};

class TensorTree {
 public:
  std::vector<ModuleNode> modules;  // modules[0] is the root
  std::vector<TensorInfo> tensors;
  std::vector<std::string> no_split_classes;  // the class's _no_split_modules

  const ModuleNode& root() const { return modules.front(); }
  const std::string& class_name() const { return modules.front().class_name; }

  // torch's named_parameters() / named_buffers() order (pre-order over modules), aliases of
  // tied weights removed (remove_duplicate=True). Returns tensor indices.
  std::vector<int> named_parameters() const;
  std::vector<int> named_buffers() const;
  // Parameters then buffers: accelerate's named_module_tensors().
  std::vector<int> named_module_tensors() const;

  // Index of the tensor with this full name, or -1. O(log n) once reindex() has run on the
  // finished tree (TreeBuilder::finish and for_era do it); a linear scan otherwise.
  int find_tensor(std::string_view name) const;
  // Index of the module with this dotted name ("" = root), or -1.
  int find_module(std::string_view name) const;
  // Rebuilds the name indexes; call after adding or renaming tensors or modules.
  void reindex();
  // The indexes of `from` carried over to this tree, a subset of it: new_module / new_tensor
  // give each old module's and tensor's new index (or -1), increasing. Falls back to reindex()
  // when `from` was not indexed.
  void reindex_subset(const TensorTree& from, const std::vector<int>& new_module,
                      const std::vector<int>& new_tensor);
  // A tensor or module name given twice (after reindex()), or "" when every name is unique.
  std::string duplicate_name() const;
  bool is_no_split(const ModuleNode& m) const;

  std::uint64_t parameter_count() const;  // unique parameters (aliases not counted)

  // A compact tree: some module stands for several copies (ModuleNode::repeat > 1).
  bool has_repeats() const;
  // How many copies of each module the tree stands for: the product of the repeats from the
  // root down to it (1 everywhere in an expanded tree). By module index.
  std::vector<std::uint64_t> multiplicities() const;

 private:
  NameIndex tensor_index_, module_index_;
};

// A module or a tensor of a tree (accelerate's modules_to_treat entries, module_sizes keys).
struct TreeItem {
  bool is_tensor = false;
  int index = 0;  // into tree.modules or tree.tensors
  const std::string& name(const TensorTree& t) const {
    return is_tensor ? t.tensors[index].name : t.modules[index].name;
  }
};

// The tree as one transformers era allocates it: `legacy` (4.40) drops kCurrentOnly tensors and
// modules, otherwise kLegacyOnly ones; a module left with nothing (it only held such buffers,
// like 4.40's per-layer rotary_emb today) disappears too, so device maps never name it. Modules
// that never held a tensor (dropouts, activations) stay: accelerate's maps place them.
TensorTree for_era(TensorTree tree, bool legacy);  // by value: pass an rvalue to avoid a copy

// The tree narrowed to the marked modules and tensors (a module also needs its parent kept, a
// tensor its module), renumbered in registration order, ties and the name index carried over:
// what for_era and compact() keep. By value: pass an rvalue to avoid a copy.
TensorTree keep_marked(TensorTree tree, const std::vector<char>& keep_module,
                       const std::vector<char>& keep_tensor);

// The tree with every repeated module written out copy by copy, named and ordered exactly as if
// each copy had been built on its own (what torch's state dict holds). A tree without repeats
// comes back as it is.
TensorTree expand(TensorTree tree);

// The tree with each run of identical siblings named by consecutive indices (decoder layers,
// experts) folded into its first, with the run's length as its repeat: what summing sizes needs.
// A copy holding a tied tensor, or the target of one, is kept as it is.
TensorTree compact(TensorTree tree);

// The name of copy `i` of a repeated module named `first` ("a.experts.0", 5 → "a.experts.5").
std::string repeat_name(std::string_view first, std::int64_t i);
// The index a name ends in ("a.experts.12" → 12; "7" → 7), or nothing when its last component is
// not a plain decimal index (empty, a leading zero, other characters).
std::optional<std::int64_t> last_index(std::string_view name);

// Names below one copy of a repeated module: a name's first `strip` characters (the module's
// compact name) become `prefix` (that copy's own name). The default renames nothing.
struct CopyNames {
  std::size_t strip = 0;
  std::string prefix;
  std::string operator()(std::string_view name) const {
    std::string out = prefix;
    out.append(name.substr(strip));
    return out;
  }
};

}  // namespace memfit
