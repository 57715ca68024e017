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
  // Item `index` of a ModuleList (a decoder layer), opened as module(std::to_string(index), …)
  // would be. An item described by the same calls as the item just before it (the same modules,
  // classes, tensors, shapes and dtypes, in the same order) is not added: the one before stands
  // for both (ModuleNode::repeat), as if repeated() had opened it. So 80 identical layers are
  // built once and compared 79 times, call by call, without naming anything; an item that turns
  // out different is written out from the calls that matched, and goes on as a module. The tree
  // then needs expand() where names are needed, as with repeated(). An item holding a tie
  // (tied_param) is never folded, and a tie from outside into a folded item is refused (expand()
  // would point it at the last copy). Inside an item, item() is module().
  [[nodiscard]] Scope item(std::int64_t index, std::string_view class_name);
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
  // One call that described an item, as item() compares them: the module or tensor it added.
  struct Step {
    enum Kind : std::uint8_t { kOpen, kRepeated, kStateless, kTensor, kClose } kind;
    int index;  // into tree_.modules (opens) or tree_.tensors; -1 for a close
  };
  enum class Mode : std::uint8_t { kBuild, kRecord, kCompare };

  void pop();
  // module(), repeated() and stateless(): a module opened (a stateless one closed again), or,
  // while an item is compared, matched with the template's next step.
  void open(Step::Kind kind, std::string_view name, std::string_view class_name, std::int64_t repeat,
            BufferEra era);
  // `copies` × `repeat`, at most UINT64_MAX: how many copies a module inside a repeat stands for.
  static std::uint64_t times(std::uint64_t copies, std::int64_t repeat);
  int open_node(std::string_view name, std::string_view class_name, std::int64_t repeat);
  void close_node();
  int add_tensor(std::string_view name, Shape shape, DType dtype, TensorKind kind,
                 bool persistent = true, BufferEra era = BufferEra::kAlways);
  void count_tensor(std::uint64_t copies, std::string_view name);
  // item()'s comparison (tree_items.cpp).
  bool continues_template(std::int64_t index, std::string_view class_name) const;
  bool match_module(Step::Kind kind, std::string_view name, std::string_view class_name,
                    std::int64_t repeat, BufferEra era);
  bool match_tensor(std::string_view name, const Shape& shape, DType dtype, TensorKind kind,
                    bool persistent, BufferEra era);
  bool match_close();
  void start_template(std::int64_t index, std::string_view class_name);
  void materialize();
  void end_item();
  std::string_view template_leaf(std::string_view full, int parent) const;
  std::string compared_path() const;

  // Names are checked for uniqueness once, in finish(), with the tree's sorted name index: a
  // hash map of every name while building cost more than building the tree itself.
  TensorTree tree_;
  std::vector<int> stack_;  // module indices; back() is current
  std::vector<std::uint64_t> copies_;  // beside stack_: how many copies the module stands for
  std::uint64_t expanded_tensors_ = 0;  // tensors once every repeat is written out

  // item(): the last item written out (the template), the calls that described it, and while the
  // next one is compared with it, how far it matched.
  Mode mode_ = Mode::kBuild;
  std::vector<Step> steps_;
  int template_ = -1;             // its module; -1: none an item could continue
  std::int64_t template_index_ = 0;
  std::size_t template_modules_end_ = 0, template_tensors_end_ = 0;  // nothing built since
  std::size_t item_depth_ = 0;    // kRecord: stack_'s size with the item open
  std::int64_t item_index_ = 0;   // kCompare: the item compared
  std::size_t matched_ = 0;       // kCompare: steps matched
  std::vector<int> open_;         // kCompare: the template's modules the compared calls are in
  std::vector<std::uint64_t> open_copies_;
};

}  // namespace memfit
