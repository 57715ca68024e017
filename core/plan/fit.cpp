#include "memfit/plan/fit.h"

#include <algorithm>
#include <deque>
#include <numeric>

#include <fmt/format.h>

#include "memfit/memory/largest_layer.h"
#include "memfit/report/convert_bytes.h"

namespace memfit::plan {
namespace {

struct Unit {
  TreeItem item;
  std::string name;
  std::uint64_t weights = 0;  // bytes (rounded up from bits)
  std::uint64_t buffers = 0;  // of those, buffers
  std::uint64_t kv = 0;
  std::uint64_t on_gpu() const { return weights + kv; }
};

std::uint64_t bytes_up(Bits b) { return (b + 7) / 8; }

// Sum of buffer bits under a unit.
Bits buffer_bits(const TensorTree& tree, const TreeItem& item, const SizeOptions& so) {
  if (item.is_tensor) {
    const TensorInfo& t = tree.tensors[item.index];
    return t.kind == TensorKind::kBuffer ? tensor_bits(t, so) : 0;
  }
  Bits sum = 0;
  std::vector<int> stack{item.index};
  while (!stack.empty()) {
    const int m = stack.back();
    stack.pop_back();
    for (int b : tree.modules[m].buffers) sum += tensor_bits(tree.tensors[b], so);
    for (int c : tree.modules[m].children) stack.push_back(c);
  }
  return sum;
}

// One placement of the units so far, with GPU `g` current.
struct State {
  std::uint64_t kept = 0;  // bytes kept on GPUs so far
  std::uint64_t used = 0;  // bytes used on the current GPU
  int prev_gpu = -1;       // backtracking: the state this one came from
  int prev_index = -1;
  int choice = -1;         // -1: the unit was streamed, else the GPU it went to
};

// Keeps the Pareto front (more kept, less used) of states for one (unit, GPU) cell, at most
// kMaxFront states (evenly thinned): exact for the uniform blocks real models have.
constexpr std::size_t kMaxFront = 48;

void add_state(std::vector<State>& front, const State& s) {
  for (const State& o : front)
    if (o.kept >= s.kept && o.used <= s.used) return;  // dominated
  front.erase(std::remove_if(front.begin(), front.end(),
                             [&](const State& o) { return s.kept >= o.kept && s.used <= o.used; }),
              front.end());
  front.push_back(s);
  if (front.size() > kMaxFront) {
    std::sort(front.begin(), front.end(), [](const State& x, const State& y) { return x.kept > y.kept; });
    std::vector<State> thin;
    for (std::size_t i = 0; i < front.size(); i += 2) thin.push_back(front[i]);
    front = std::move(thin);
  }
}

}  // namespace

std::vector<TreeItem> placement_units(const TensorTree& tree, const std::vector<std::string>& no_split) {
  std::vector<TreeItem> out;
  std::deque<TreeItem> queue;
  const auto root = root_items(tree);
  queue.assign(root.begin(), root.end());
  while (!queue.empty()) {
    const TreeItem it = queue.front();
    queue.pop_front();
    if (!it.is_tensor) {
      const ModuleNode& m = tree.modules[it.index];
      const bool keep = m.children.empty() ||
                        std::find(no_split.begin(), no_split.end(), m.class_name) != no_split.end();
      if (!keep) {
        const auto members = member_items(tree, it.index, true, true);
        queue.insert(queue.begin(), members.begin(), members.end());
        continue;
      }
    }
    out.push_back(it);
  }
  return out;
}

namespace {

// Phase 1: the units to place, in order, with their bytes on a GPU.
std::vector<Unit> make_units(const TensorTree& tree, const FitOptions& opt) {
  const std::vector<std::string> no_split = opt.sizes.no_split ? *opt.sizes.no_split : tree.no_split_classes;
  const ModuleSizes sizes = planner_sizes(tree, opt.sizes);
  SizeOptions so;
  so.include_legacy_buffers = opt.sizes.include_legacy_buffers;
  so.dtype = opt.sizes.dtype;
  so.special_dtypes = opt.sizes.special_dtypes;
  std::vector<Unit> units;
  for (const TreeItem& it : placement_units(tree, no_split)) {
    Unit u;
    u.item = it;
    u.name = it.name(tree);
    u.weights = bytes_up(sizes.at(it));
    u.buffers = bytes_up(buffer_bits(tree, it, so));
    if (auto kv = opt.kv_bytes.find(u.name); kv != opt.kv_bytes.end()) u.kv = kv->second;
    units.push_back(std::move(u));
  }
  return units;
}

// The budgets: the GPUs in max_memory's order, their room for weights + KV (before the
// streaming reserve, known only after placing), and the CPU's.
struct Budgets {
  std::vector<std::size_t> gpu_pos;  // index in max_memory of each GPU
  std::vector<std::uint64_t> cap;    // per GPU: budget − overhead − activations
  std::uint64_t cpu = 0;
  bool has_cpu = false;
  std::size_t gpus() const { return gpu_pos.size(); }
};

Budgets make_budgets(const MaxMemory& max_memory, const FitOptions& opt) {
  Budgets b;
  for (std::size_t i = 0; i < max_memory.size(); ++i)
    if (max_memory[i].first.is_gpu()) b.gpu_pos.push_back(i);
  for (const auto& [d, bytes] : max_memory)
    if (d == Device::cpu()) { b.cpu = bytes; b.has_cpu = true; }
  const std::uint64_t fixed = opt.overhead_bytes + opt.activation_bytes;
  for (std::size_t g : b.gpu_pos) {
    const std::uint64_t budget = max_memory[g].second;
    b.cap.push_back(budget > fixed ? budget - fixed : 0);
  }
  return b;
}

// The capacities with GPU 0 shrunk by the streaming reserve.
std::vector<std::uint64_t> with_reserve(std::vector<std::uint64_t> cap, std::uint64_t reserve) {
  if (!cap.empty()) cap[0] = cap[0] > reserve ? cap[0] - reserve : 0;
  return cap;
}

// Phase 2a: one placement by DP over the units' order, for capacities `c`: where[i] is the GPU
// of unit i, or -1 when it is streamed.
std::vector<int> place_once(const std::vector<Unit>& units, const std::vector<std::uint64_t>& c) {
  const std::size_t n = units.size(), G = c.size();
  // dp[i][g]: Pareto front of placements of units < i with GPU g current.
  const std::size_t gw = std::max<std::size_t>(G, 1);
  std::vector<std::vector<std::vector<State>>> dp(n + 1, std::vector<std::vector<State>>(gw));
  dp[0][0].push_back(State{});
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t s = units[i].on_gpu();
    for (std::size_t g = 0; g < gw; ++g)
      for (std::size_t k = 0; k < dp[i][g].size(); ++k) {
        const State& st = dp[i][g][k];
        const int pg = static_cast<int>(g), pk = static_cast<int>(k);
        add_state(dp[i + 1][g], State{st.kept, st.used, pg, pk, -1});  // stream unit i
        if (G == 0) continue;
        if (st.used + s <= c[g])  // on the current GPU
          add_state(dp[i + 1][g], State{st.kept + s, st.used + s, pg, pk, pg});
        for (std::size_t h = g + 1; h < G; ++h)  // on a later GPU
          if (s <= c[h]) add_state(dp[i + 1][h], State{st.kept + s, s, pg, pk, static_cast<int>(h)});
      }
  }
  int bg = -1, bk = -1;
  for (std::size_t g = 0; g < gw; ++g)
    for (std::size_t k = 0; k < dp[n][g].size(); ++k) {
      const State& st = dp[n][g][k];
      if (bg < 0 || st.kept > dp[n][bg][bk].kept) bg = static_cast<int>(g), bk = static_cast<int>(k);
    }
  std::vector<int> where(n, -1);
  for (std::size_t i = n; i-- > 0;) {
    const State& st = dp[i + 1][bg][bk];
    where[i] = st.choice;
    bg = st.prev_gpu;
    bk = st.prev_index;
  }
  return where;
}

// The largest streamed unit: GPU 0 stages it.
std::uint64_t largest_streamed(const std::vector<Unit>& units, const std::vector<int>& where) {
  std::uint64_t staging = 0;
  for (std::size_t i = 0; i < units.size(); ++i)
    if (where[i] < 0) staging = std::max(staging, units[i].weights);
  return staging;
}

struct Placement {
  std::vector<int> where;     // per unit: GPU, or -1 (streamed)
  std::uint64_t reserve = 0;  // GPU 0's room for staging and the streamed units' KV cache
};

// Phase 2: streamed units execute on GPU 0: it needs room to stage the largest one and holds
// their KV cache, so shrink GPU 0 by that and place again until it is covered (the need only
// grows as fewer units stay, so this ends within n rounds).
Placement place_units(const std::vector<Unit>& units, const Budgets& b) {
  Placement p;
  for (std::size_t round = 0; round <= units.size(); ++round) {
    p.where = place_once(units, with_reserve(b.cap, p.reserve));
    std::uint64_t streamed_kv = 0;
    for (std::size_t i = 0; i < units.size(); ++i)
      if (p.where[i] < 0) streamed_kv += units[i].kv;
    const std::uint64_t staging = largest_streamed(units, p.where);
    if (b.gpus() == 0 || staging + streamed_kv <= p.reserve) break;
    p.reserve = staging + streamed_kv;
  }
  return p;
}

// Phase 3: equal units are interchangeable: prefer keeping the earlier ones (a natural pipeline).
void prefer_earlier(const std::vector<Unit>& units, std::vector<int>& where) {
  for (std::size_t i = 0; i < units.size(); ++i)
    if (where[i] < 0)
      for (std::size_t j = i + 1; j < units.size(); ++j)
        if (where[j] >= 0 && units[j].weights == units[i].weights && units[j].kv == units[i].kv) {
          std::swap(where[i], where[j]);
          break;
        }
}

// Phase 4: re-split the units kept on GPUs (in order) into contiguous ranges minimizing the
// largest fill ratio, never above capacity.
void balance_gpus(const std::vector<Unit>& units, const Budgets& b, std::uint64_t reserve, std::vector<int>& where) {
  const std::size_t G = b.gpus();
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < units.size(); ++i)
    if (where[i] >= 0) kept.push_back(i);
  if (G <= 1 || kept.empty()) return;
  const std::vector<std::uint64_t> c = with_reserve(b.cap, reserve);
  auto assign = [&](double ratio, std::vector<int>* out) {
    std::size_t g = 0;
    std::uint64_t used = 0;
    for (std::size_t k : kept) {
      const std::uint64_t s = units[k].on_gpu();
      while (g < G && used + s > std::min<double>(c[g], ratio * static_cast<double>(c[g]))) {
        ++g;
        used = 0;
      }
      if (g == G) return false;
      used += s;
      if (out) (*out)[k] = static_cast<int>(g);
    }
    return true;
  };
  double lo = 0, hi = 1.0;
  if (!assign(hi, nullptr)) return;
  for (int it = 0; it < 40; ++it) {
    const double mid = (lo + hi) / 2;
    (assign(mid, nullptr) ? hi : lo) = mid;
  }
  assign(hi, &where);
}

// Phase 5: what each device holds. Kept units on their GPU; streamed ones on the CPU (while it
// has room), then disk; their KV cache and (unless offload_buffers) buffers on GPU 0.
void assign_devices(const std::vector<Unit>& units, const std::vector<int>& where, const MaxMemory& max_memory,
                    const Budgets& b, std::uint64_t staging, const FitOptions& opt, FitPlan& plan) {
  const std::size_t G = b.gpus();
  std::vector<DeviceUse> uses;
  for (std::size_t g = 0; g < G; ++g) {
    DeviceUse u;
    u.device = max_memory[b.gpu_pos[g]].first;
    u.budget = max_memory[b.gpu_pos[g]].second;
    u.overhead = opt.overhead_bytes;
    u.activations = opt.activation_bytes;
    u.reserve = g == 0 ? staging : 0;
    uses.push_back(u);
  }
  DeviceUse cpu;
  cpu.device = Device::cpu();
  cpu.budget = b.cpu;
  DeviceUse disk;
  disk.device = Device::disk();
  std::uint64_t stay_buffers = 0;
  for (std::size_t i = 0; i < units.size(); ++i) {
    const Unit& u = units[i];
    if (where[i] >= 0) {
      DeviceUse& d = uses[static_cast<std::size_t>(where[i])];
      d.weights += u.weights;
      d.kv_cache += u.kv;
      d.units.push_back(u.name);
      plan.device_map.emplace_back(u.name, d.device);
      continue;
    }
    plan.streamed_bytes += u.weights;
    if (!opt.sizes.offload_buffers) stay_buffers += u.buffers;
    const bool fits_cpu = b.has_cpu && cpu.weights + u.weights <= b.cpu;
    DeviceUse& d = fits_cpu || !opt.allow_disk ? cpu : disk;
    if (!fits_cpu && !opt.allow_disk)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("the model does not fit without disk: '{}' ({}) does not fit in the "
                              "CPU budget ({} left of {})",
                              u.name, convert_bytes(static_cast<double>(u.weights)),
                              convert_bytes(static_cast<double>(b.cpu - std::min(b.cpu, cpu.weights))),
                              convert_bytes(static_cast<double>(b.cpu))));
    d.weights += u.weights;
    d.units.push_back(u.name);
    plan.device_map.emplace_back(u.name, d.device);
  }
  // KV cache of streamed layers lives on the execution device (GPU 0).
  for (std::size_t i = 0; i < units.size(); ++i)
    if (where[i] < 0 && G > 0) uses[0].kv_cache += units[i].kv;
  if (G > 0 && stay_buffers > 0) uses[0].weights += stay_buffers;
  plan.devices = uses;
  if (cpu.weights > 0 || b.has_cpu) plan.devices.push_back(cpu);
  if (disk.weights > 0) plan.devices.push_back(disk);
  plan.device_map = clean_device_map(std::move(plan.device_map));
}

// GPU 0 must hold the runtime parts even when every unit is streamed.
void check_gpu0(const FitPlan& plan, std::size_t gpus) {
  if (gpus == 0) return;
  const DeviceUse& gpu0 = plan.devices[0];
  if (gpu0.total() > gpu0.budget)
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("GPU 0 cannot hold even the runtime parts: overhead {} + activations {} "
                            "+ staging {} + KV of streamed layers {} exceed its budget {}",
                            convert_bytes(static_cast<double>(gpu0.overhead)),
                            convert_bytes(static_cast<double>(gpu0.activations)),
                            convert_bytes(static_cast<double>(gpu0.reserve)),
                            convert_bytes(static_cast<double>(gpu0.kv_cache)),
                            convert_bytes(static_cast<double>(gpu0.budget))));
}

std::string device_line(const DeviceUse& d) {
  std::string line = fmt::format("{}: {} units, {}", d.device.key(), d.units.size(),
                                 convert_bytes(static_cast<double>(d.weights)));
  if (d.device.is_gpu())
    line += fmt::format(" weights + {} KV cache + {} activations + {} overhead{} = {} of {}",
                        convert_bytes(static_cast<double>(d.kv_cache)),
                        convert_bytes(static_cast<double>(d.activations)),
                        convert_bytes(static_cast<double>(d.overhead)),
                        d.reserve ? fmt::format(" + {} staging for streamed units",
                                                convert_bytes(static_cast<double>(d.reserve)))
                                  : std::string(),
                        convert_bytes(static_cast<double>(d.total())),
                        convert_bytes(static_cast<double>(d.budget)));
  else if (d.device == Device::cpu())
    line += fmt::format(" of {}", convert_bytes(static_cast<double>(d.budget)));
  if (!d.units.empty()) line += fmt::format(" [{} … {}]", d.units.front(), d.units.back());
  return line;
}

// Phase 6: the explanation — each device, why the first streamed unit did not stay, and the
// bytes streamed per forward pass.
void explain(const std::vector<Unit>& units, const std::vector<int>& where, const Budgets& b, FitPlan& plan) {
  for (const auto& d : plan.devices) plan.explain.push_back(device_line(d));
  for (std::size_t i = 0; i < units.size(); ++i)
    if (where[i] < 0) {
      std::uint64_t free_max = 0;
      for (std::size_t g = 0; g < b.gpus(); ++g) {
        const DeviceUse& u = plan.devices[g];
        free_max = std::max(free_max, b.cap[g] - std::min(b.cap[g], u.weights + u.kv_cache + u.reserve));
      }
      plan.explain.push_back(fmt::format(
          "first streamed unit: '{}' needs {} (weights {} + KV {}); the most any GPU has left is {}",
          units[i].name, convert_bytes(static_cast<double>(units[i].on_gpu())),
          convert_bytes(static_cast<double>(units[i].weights)),
          convert_bytes(static_cast<double>(units[i].kv)), convert_bytes(static_cast<double>(free_max))));
      break;
    }
  plan.explain.push_back(fmt::format("streamed per forward pass: {}",
                                     convert_bytes(static_cast<double>(plan.streamed_bytes))));
}

}  // namespace

Result<FitPlan> plan_fit(const TensorTree& tree, const MaxMemory& max_memory, const FitOptions& opt) {
  return capture([&]() -> FitPlan {
    const std::vector<Unit> units = make_units(tree, opt);
    const Budgets budgets = make_budgets(max_memory, opt);
    Placement p = place_units(units, budgets);
    prefer_earlier(units, p.where);
    const std::uint64_t staging = largest_streamed(units, p.where);
    balance_gpus(units, budgets, p.reserve, p.where);
    FitPlan plan;
    assign_devices(units, p.where, max_memory, budgets, staging, opt, plan);
    check_gpu0(plan, budgets.gpus());
    explain(units, p.where, budgets, plan);
    return plan;
  });
}

}  // namespace memfit::plan
