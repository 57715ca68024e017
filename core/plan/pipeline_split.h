// core/plan/pipeline_split.h — contiguous split of weighted units over weighted bins: the stage
// boundaries of a pipeline.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace memfit::plan {

// Splits `loads` (in order) into weights.size() non-empty contiguous ranges minimizing the
// largest load ÷ weight, each range's load at most its `limit` when one is given. Returns each
// range's first index (the first is 0), or nullopt when no split satisfies the limits. Needs
// loads.size() >= weights.size() >= 1 and every weight > 0.
std::optional<std::vector<std::size_t>> split_contiguous(const std::vector<double>& loads,
                                                         const std::vector<double>& weights,
                                                         const std::vector<std::optional<double>>& limits);

}  // namespace memfit::plan
