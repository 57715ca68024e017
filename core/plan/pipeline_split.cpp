#include "pipeline_split.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace memfit::plan {
namespace {

// Greedy fill at ratio r: each bin takes units while its load stays within r × weight (and its
// limit), leaving at least one unit for every later bin. Taking as much as allowed never hurts
// the bins after, so a split with max ratio ≤ r exists iff this one succeeds.
std::optional<std::vector<std::size_t>> fill(const std::vector<double>& loads, const std::vector<double>& weights,
                                             const std::vector<std::optional<double>>& limits, double r) {
  const std::size_t n = loads.size(), bins = weights.size();
  std::vector<std::size_t> starts{0};
  std::size_t bin = 0;
  double load = 0;
  for (std::size_t u = 0; u < n; ++u) {
    const bool must_leave = n - u < bins - bin;  // later bins need these units (u is not yet taken)
    const double cap = std::min(r * weights[bin], limits[bin].value_or(HUGE_VAL));
    const bool empty = starts.back() == u;
    if (!empty && (must_leave || load + loads[u] > cap)) {
      if (++bin == bins) return std::nullopt;
      starts.push_back(u);
      load = 0;
    }
    if (loads[u] > std::min(r * weights[bin], limits[bin].value_or(HUGE_VAL))) return std::nullopt;
    load += loads[u];
  }
  if (bin + 1 != bins) return std::nullopt;
  return starts;
}

}  // namespace

std::optional<std::vector<std::size_t>> split_contiguous(const std::vector<double>& loads,
                                                         const std::vector<double>& weights,
                                                         const std::vector<std::optional<double>>& limits) {
  const double total = std::accumulate(loads.begin(), loads.end(), 0.0);
  const double lightest = *std::min_element(weights.begin(), weights.end());
  double hi = total / lightest + 1;
  auto best = fill(loads, weights, limits, hi);
  if (!best) return std::nullopt;  // even unbounded ratios break a limit
  double lo = 0;
  // Bisection on the ratio; 64 halvings reach double precision of any practical ratio.
  for (int i = 0; i < 64 && hi - lo > hi * 1e-12; ++i) {
    const double mid = (lo + hi) / 2;
    if (auto s = fill(loads, weights, limits, mid)) {
      hi = mid;
      best = std::move(s);
    } else {
      lo = mid;
    }
  }
  return best;
}

}  // namespace memfit::plan
