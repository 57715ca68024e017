// ForwardState::cached_kv — the KV cache, preallocated: each forward writes its new positions in
// place instead of concatenating the whole history (O(context) copies per token, as transformers'
// DynamicCache does with torch.cat).
#include <algorithm>

#include "model_program.h"

namespace memfit::torchrt {
namespace {

// A buffer like `x` with `positions` along dim 2, holding the first `keep` positions of `old`.
at::Tensor regrown(const at::Tensor& old, const at::Tensor& x, std::int64_t positions, std::int64_t keep) {
  auto sizes = x.sizes().vec();
  sizes[2] = positions;
  at::Tensor out = at::empty(sizes, x.options());
  if (old.defined() && keep > 0) out.narrow(2, 0, keep).copy_(old.narrow(2, 0, keep));
  return out;
}

}  // namespace

std::pair<at::Tensor, at::Tensor> ForwardState::cached_kv(std::int64_t layer, const at::Tensor& k,
                                                          const at::Tensor& v) {
  if (!use_cache) return {k, v};
  const auto i = static_cast<std::size_t>(layer);
  if (keys.size() <= i) keys.resize(i + 1), values.resize(i + 1);
  at::Tensor& ck = keys[i];
  at::Tensor& cv = values[i];
  const std::int64_t end = past + k.size(2);
  if (!ck.defined() || ck.size(2) < end || ck.device() != k.device() || ck.scalar_type() != k.scalar_type()) {
    const std::int64_t grown = ck.defined() ? 2 * ck.size(2) : 0;
    const std::int64_t positions = std::max({end, capacity, grown});
    ck = regrown(ck, k, positions, past);
    cv = regrown(cv, v, positions, past);
  }
  ck.narrow(2, past, k.size(2)).copy_(k);
  cv.narrow(2, past, v.size(2)).copy_(v);
  return {ck.narrow(2, 0, end), cv.narrow(2, 0, end)};
}

}  // namespace memfit::torchrt
