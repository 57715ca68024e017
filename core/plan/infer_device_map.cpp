// infer_auto_device_map, step for step as accelerate 0.30.1 runs it (see
// ../shared/docs/accelerate-semantics.md §2). Sizes are kept in bits (bool = 1 bit) so the
// comparisons are exact where accelerate's are fractional.
#include <algorithm>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "memfit/memory/largest_layer.h"
#include "memfit/plan/infer_device_map.h"

namespace memfit::plan {
namespace {

__extension__ typedef __int128 Amount;  // signed: budget − reserve may go below zero

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// find_tied_parameters: one sorted group per tied weight, in discovery order.
std::vector<std::vector<std::string>> tied_groups(const TensorTree& tree) {
  std::vector<int> order;  // primaries in discovery order
  std::map<int, std::vector<std::string>> groups;
  for (int m = 0; m < static_cast<int>(tree.modules.size()); ++m)
    for (int p : tree.modules[m].params) {
      const TensorInfo& t = tree.tensors[p];
      if (!t.is_alias()) continue;
      if (!groups.count(t.tied_to)) {
        order.push_back(t.tied_to);
        groups[t.tied_to].push_back(tree.tensors[t.tied_to].name);
      }
      groups[t.tied_to].push_back(t.name);
    }
  std::vector<std::vector<std::string>> out;
  for (int primary : order) {
    auto g = groups[primary];
    std::sort(g.begin(), g.end());
    g.erase(std::unique(g.begin(), g.end()), g.end());
    out.push_back(std::move(g));
  }
  return out;
}

struct Planner {
  const TensorTree& tree;
  const AccelerateOptions& opt;
  const ModuleSizes sizes;
  const std::vector<std::string> no_split;
  const std::vector<std::vector<std::string>> tied;
  std::vector<Device> devices;
  std::vector<Amount> budgets;  // bits; disk: unused
  std::vector<Device> main_devices;

  std::deque<TreeItem> queue;
  Amount max_layer = 0;
  std::vector<std::string> max_layer_names;
  DeviceMap map;

  Planner(const TensorTree& t, const MaxMemory& mm, const AccelerateOptions& o)
      : tree(t), opt(o), sizes(planner_sizes(t, o)),
        no_split(o.no_split ? *o.no_split : t.no_split_classes), tied(tied_groups(t)) {
    for (const auto& [d, b] : mm) {
      devices.push_back(d);
      budgets.push_back(static_cast<Amount>(b) * 8);
    }
    if (std::find(devices.begin(), devices.end(), Device::disk()) == devices.end()) {
      devices.push_back(Device::disk());
      budgets.push_back(0);
    }
    std::vector<Device> gpus;
    for (const auto& d : devices)
      if (d.kind == Device::Kind::kGpu || d.kind == Device::Kind::kMps) gpus.push_back(d);
    const bool mps = std::any_of(gpus.begin(), gpus.end(), [](const Device& d) { return d.kind == Device::Kind::kMps; });
    if (mps) main_devices = {Device{Device::Kind::kMps, 0}};
    else if (!gpus.empty()) main_devices = {gpus.front(), Device::cpu()};
    else main_devices = {Device::cpu()};
  }

  Amount size_of(const std::string& name) const { return static_cast<Amount>(sizes.at(tree, name)); }

  bool splittable(const TreeItem& item) const {
    if (item.is_tensor) return false;
    const ModuleNode& m = tree.modules[item.index];
    return !m.children.empty() &&
           std::find(no_split.begin(), no_split.end(), m.class_name) == no_split.end();
  }

  void update_max_layer() {
    std::vector<TreeItem> modules;
    for (const auto& it : queue)
      if (!it.is_tensor) modules.push_back(it);
    const LargestLayer l = largest_layer_among(tree, sizes, modules, no_split, LayerRule::kAccelerate);
    max_layer = static_cast<Amount>(l.bits);
    max_layer_names = l.names;
  }

  std::ptrdiff_t queue_index(const std::string& name) const {
    for (std::size_t i = 0; i < queue.size(); ++i)
      if (queue[i].name(tree) == name) return static_cast<std::ptrdiff_t>(i);
    return -1;
  }

  DeviceMap run() {
    const auto root = root_items(tree);
    queue.assign(root.begin(), root.end());
    {
      const LargestLayer l = largest_layer_among(tree, sizes, root, no_split, LayerRule::kAccelerate);
      max_layer = static_cast<Amount>(l.bits);
      max_layer_names = l.names;
    }
    std::size_t current = 0;
    Amount used = 0;
    while (!queue.empty()) {
      const TreeItem item = queue.front();
      queue.pop_front();
      const std::string name = item.name(tree);
      // The largest remaining layer may have been this one.
      max_layer_names.erase(std::remove_if(max_layer_names.begin(), max_layer_names.end(),
                                           [&](const std::string& n) { return n == name || n.rfind(name + ".", 0) == 0; }),
                            max_layer_names.end());
      if (max_layer_names.empty()) update_max_layer();
      const Amount module_size = size_of(name);

      // Tied parameters: groups with a member inside this module and one outside it.
      std::vector<std::string> tied_params;
      for (const auto& group : tied) {
        bool any = false, all = true;
        for (const auto& k : group) {
          const bool inside = contains(k + ".", name + ".");
          any = any || inside;
          all = all && inside;
        }
        if (any && !all)
          for (const auto& p : group)
            if (!contains(p + ".", name + ".")) tied_params.push_back(p);
      }

      const Device device = devices[current];
      const bool unlimited = device == Device::disk();
      Amount max_size = budgets[current];
      if (std::find(main_devices.begin(), main_devices.end(), device) != main_devices.end())
        max_size -= max_layer;

      if (!unlimited && used + module_size > max_size) {
        if (!splittable(item)) {  // cannot split: the next device, for good
          ++current;
          queue.push_front(item);
          used = 0;
        } else {  // split: direct parameters + children (direct buffers are dropped: #4014)
          const auto members = member_items(tree, item.index, true, false);
          queue.insert(queue.begin(), members.begin(), members.end());
          update_max_layer();
        }
        continue;
      }
      if (tied_params.empty()) {
        used += module_size;
        map.emplace_back(name, device);
        continue;
      }
      // It fits alone; with the tied modules too?
      std::vector<std::string> tied_names;
      std::vector<TreeItem> tied_items;
      Amount with_ties = module_size;
      for (const auto& p : tied_params) {
        std::ptrdiff_t idx = -1;
        for (std::size_t i = 0; i < queue.size(); ++i)
          if (contains(p, queue[i].name(tree))) { idx = static_cast<std::ptrdiff_t>(i); break; }
        if (idx < 0) continue;  // already placed (accelerate would fail here)
        tied_names.push_back(queue[static_cast<std::size_t>(idx)].name(tree));
        tied_items.push_back(queue[static_cast<std::size_t>(idx)]);
        with_ties += size_of(tied_names.back()) - size_of(p);
      }
      if (unlimited || used + with_ties <= max_size) {
        used += with_ties;
        map.emplace_back(name, device);
        for (const auto& tn : tied_names) {
          if (auto idx = queue_index(tn); idx >= 0) queue.erase(queue.begin() + idx);
          map.emplace_back(tn, device);
        }
        continue;
      }
      bool split = false;
      for (std::size_t i = 0; i < tied_items.size() && !split; ++i) {
        if (!splittable(tied_items[i])) continue;
        const auto idx = queue_index(tied_names[i]);
        const auto members = member_items(tree, tied_items[i].index, true, false);
        queue.erase(queue.begin() + idx);
        queue.insert(queue.begin() + idx, members.begin(), members.end());
        queue.push_front(item);
        update_max_layer();
        split = true;
      }
      if (!split) {
        ++current;
        queue.push_front(item);
        used = 0;
      }
    }
    return opt.clean_result ? clean_device_map(std::move(map)) : std::move(map);
  }
};

}  // namespace

DeviceMap infer_auto_device_map(const TensorTree& tree, const MaxMemory& max_memory,
                                const AccelerateOptions& opt) {
  Planner p(tree, max_memory, opt);
  return p.run();
}

Result<AcceleratePlan> plan_accelerate(const TensorTree& tree, const MaxMemory& max_memory,
                                       Strategy strategy, const AccelerateOptions& opt) {
  return capture([&]() -> AcceleratePlan {
    AcceleratePlan plan;
    if (strategy == Strategy::kSequential)
      plan.max_memory = max_memory;
    else if (strategy != Strategy::kFit)
      plan.max_memory = get_balanced_memory(tree, max_memory, opt, strategy == Strategy::kBalancedLow0);
    else
      throw Error(ErrorCode::kInvalidArgument, "plan_accelerate: 'fit' is memfit's planner (plan_fit)");
    plan.device_map = infer_auto_device_map(tree, plan.max_memory, opt);
    return plan;
  });
}

}  // namespace memfit::plan
