// memfit/model/tree_builder.h — how architecture files describe a model.
//
// Families call module()/param()/buffer() in the same order as the transformers __init__
// registers submodules, so names and iteration order match the real state dict. Dimensions are
// validated and numel is computed with overflow checks as tensors are added.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/model/tensor_tree.h"

namespace memfit {

// A bound on what one model may describe: a hostile config (`"num_hidden_layers": 10^12`) must
// fail fast with a clear error rather than exhaust memory. DeepSeek-V3 needs ~50k tensors.
inline constexpr std::size_t kMaxTreeTensors = 250'000;

class TreeBuilder {
 public:
  explicit TreeBuilder(std::string root_class);

  // Opens a child module of the current one; it stays current until the Scope dies.
  class Scope {
   public:
    explicit Scope(TreeBuilder* b) : b_(b) {}
    Scope(Scope&& o) noexcept : b_(o.b_) { o.b_ = nullptr; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    Scope& operator=(Scope&&) = delete;
    ~Scope() { if (b_) b_->pop(); }

   private:
    TreeBuilder* b_;
  };
  [[nodiscard]] Scope module(std::string_view name, std::string_view class_name);
  // `count` identical sibling modules named `first`, first + 1, … (a ModuleList of routed
  // experts), opened once: what is built inside describes every copy (ModuleNode::repeat).
  // finish() keeps them compact; expand() names each copy where names are needed.
  [[nodiscard]] Scope repeated(std::string_view first, std::string_view class_name,
                               std::int64_t count);
  // A child module that holds no tensors (nn.Dropout, an activation, nn.Identity): accelerate's
  // device maps place such modules like any other child, so they are part of the tree, in
  // registration order. `era`: when only one transformers era registers it.
  void stateless(std::string_view name, std::string_view class_name,
                 BufferEra era = BufferEra::kAlways);

  // A parameter of the current module. Tensors are float32 unless said otherwise: that is how
  // accelerate builds the empty model (torch_dtype=float32).
  void param(std::string_view name, Shape shape, DType dtype = DType::kF32);
  // A parameter that is the same object as an already added tensor (tied weights): it appears
  // in the tree under its own name but is counted once, under the first name.
  void tied_param(std::string_view name, const std::string& target_full_name);
  void buffer(std::string_view name, Shape shape, DType dtype, bool persistent,
              BufferEra era = BufferEra::kAlways);

  // Full dotted name of the current module, or of `leaf` inside it.
  std::string path(std::string_view leaf = {}) const;
  void set_no_split(std::vector<std::string> classes);
  TensorTree finish();

 private:
  void pop();
  int add_tensor(std::string_view name, Shape shape, DType dtype, TensorKind kind);

  // Names are checked for uniqueness once, in finish(), with the tree's sorted name index: a
  // hash map of every name while building cost more than building the tree itself.
  TensorTree tree_;
  std::vector<int> stack_;  // module indices; back() is current
  std::vector<std::uint64_t> copies_;  // beside stack_: how many copies the module stands for
  std::uint64_t expanded_tensors_ = 0;  // tensors once every repeat is written out
};

}  // namespace memfit
