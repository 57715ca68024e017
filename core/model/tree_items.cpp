// TreeBuilder::item(): identical ModuleList items folded while they are built.
//
// The first item of a run is built as any module and its calls are recorded (steps_: which module
// or tensor each call added, in order). The next item's calls are then matched against those
// steps instead of being carried out: a match costs a comparison of a leaf name, a class and a
// shape, where building costs the full dotted names, the nodes and the index. An item whose
// calls all match, up to its own close, is one more copy of the first (its repeat grows). The
// first call that differs writes the item out as far as it matched (materialize()), and from
// there it is built and recorded as the next item's template. Folding at build time gives what
// compact() gives for the same calls: the same subtree below each copy, consecutive indices, and
// nothing of the parent's between them.
#include <string>

#include "memfit/model/tree_builder.h"

namespace memfit {

bool TreeBuilder::continues_template(std::int64_t index, std::string_view class_name) const {
  // Nothing built since the template closed: it is the parent's last child and its tensors the
  // last tensors, so the copy would follow it directly.
  if (template_ < 0 || tree_.modules.size() != template_modules_end_ ||
      tree_.tensors.size() != template_tensors_end_)
    return false;
  const ModuleNode& t = tree_.modules[static_cast<std::size_t>(template_)];
  return t.parent == stack_.back() && t.class_name == class_name && template_index_ + t.repeat == index;
}

std::string_view TreeBuilder::template_leaf(std::string_view full, int parent) const {
  const std::string& base = tree_.modules[static_cast<std::size_t>(parent)].name;
  return base.empty() ? full : full.substr(base.size() + 1);
}

bool TreeBuilder::match_module(Step::Kind kind, std::string_view name, std::string_view class_name,
                               std::int64_t repeat, BufferEra era) {
  if (matched_ >= steps_.size() || steps_[matched_].kind != kind) return false;
  const int index = steps_[matched_].index;
  const ModuleNode& m = tree_.modules[static_cast<std::size_t>(index)];
  if (m.class_name != class_name || m.repeat != repeat || m.era != era ||
      template_leaf(m.name, open_.back()) != name)
    return false;
  ++matched_;
  if (kind != Step::kStateless) {
    open_.push_back(index);
    open_copies_.push_back(times(open_copies_.back(), repeat));
  }
  return true;
}

bool TreeBuilder::match_tensor(std::string_view name, const Shape& shape, DType dtype, TensorKind kind,
                               bool persistent, BufferEra era) {
  if (matched_ >= steps_.size() || steps_[matched_].kind != Step::kTensor) return false;
  const TensorInfo& t = tree_.tensors[static_cast<std::size_t>(steps_[matched_].index)];
  if (t.kind != kind || t.dtype != dtype || t.persistent != persistent || t.era != era ||
      t.tied_to >= 0 || t.shape != shape || template_leaf(t.name, open_.back()) != name)
    return false;
  count_tensor(open_copies_.back(), name);
  ++matched_;
  return true;
}

bool TreeBuilder::match_close() {
  if (matched_ >= steps_.size() || steps_[matched_].kind != Step::kClose) return false;
  ++matched_;
  open_.pop_back();
  open_copies_.pop_back();
  if (open_.empty()) {  // the item's own close (the template's last step): one more copy
    ++tree_.modules[static_cast<std::size_t>(template_)].repeat;
    mode_ = Mode::kBuild;
  }
  return true;
}

void TreeBuilder::start_template(std::int64_t index, std::string_view class_name) {
  template_ = open_node(std::to_string(index), class_name, 1);
  template_index_ = index;
  item_depth_ = stack_.size();
  steps_.assign(1, Step{Step::kOpen, template_});
  mode_ = Mode::kRecord;
}

void TreeBuilder::materialize() {
  // The steps that matched, carried out again under the compared item's own name, recorded as the
  // next item's template. References into tree_ do not survive its growth: each source is copied
  // before anything is added.
  const std::vector<Step> done(steps_.begin(), steps_.begin() + static_cast<std::ptrdiff_t>(matched_));
  const std::string class_name = tree_.modules[static_cast<std::size_t>(template_)].class_name;
  mode_ = Mode::kBuild;
  start_template(item_index_, class_name);
  open_.clear();
  open_copies_.clear();
  for (std::size_t i = 1; i < done.size(); ++i) {
    const Step s = done[i];
    if (s.kind == Step::kClose) {
      pop();
    } else if (s.kind == Step::kTensor) {
      TensorInfo t = tree_.tensors[static_cast<std::size_t>(s.index)];
      t.name = path(template_leaf(t.name, t.module));
      t.module = stack_.back();
      const int index = static_cast<int>(tree_.tensors.size());
      ModuleNode& owner = tree_.modules[static_cast<std::size_t>(t.module)];
      (t.kind == TensorKind::kParameter ? owner.params : owner.buffers).push_back(index);
      tree_.tensors.push_back(std::move(t));  // counted when it matched
      steps_.push_back(Step{s.kind, index});
    } else {
      const ModuleNode& src = tree_.modules[static_cast<std::size_t>(s.index)];
      const std::string leaf(template_leaf(src.name, src.parent));
      const std::string cls = src.class_name;
      open(s.kind, leaf, cls, src.repeat, src.era);
    }
  }
}

void TreeBuilder::end_item() {
  mode_ = Mode::kBuild;
  template_modules_end_ = tree_.modules.size();
  template_tensors_end_ = tree_.tensors.size();
}

std::string TreeBuilder::compared_path() const {
  // The compared item's name, then where its calls are, as the template names it below itself.
  const std::string& parent = tree_.modules[static_cast<std::size_t>(stack_.back())].name;
  std::string out = parent.empty() ? std::to_string(item_index_) : parent + "." + std::to_string(item_index_);
  const std::string& from = tree_.modules[static_cast<std::size_t>(template_)].name;
  out += std::string_view(tree_.modules[static_cast<std::size_t>(open_.back())].name).substr(from.size());
  return out;
}

}  // namespace memfit
