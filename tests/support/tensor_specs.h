// tests/support/tensor_specs.h — a tensor as tests write it into a synthetic checkpoint (name,
// dtype, shape), and the element counts their expected figures are the arithmetic of. Shared by
// the core and CLI tests of repo kinds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/model/dtype.h"
#include "memfit/model/tensor_tree.h"

namespace memfit::test {

struct TensorSpec {
  std::string name;
  DType dtype;
  Shape shape;
};

inline std::uint64_t numel(const Shape& s) {
  std::uint64_t n = 1;
  for (auto d : s) n *= static_cast<std::uint64_t>(d);
  return n;
}

// The elements of all of them: their parameters, when every one is floating.
inline std::uint64_t params_of(const std::vector<TensorSpec>& ts) {
  std::uint64_t n = 0;
  for (const auto& t : ts) n += numel(t.shape);
  return n;
}

}  // namespace memfit::test
