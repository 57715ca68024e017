// ForwardState::cached_kv — the KV cache, preallocated: each forward writes its new positions in
// place instead of concatenating the whole history (O(context) copies per token, as transformers'
// DynamicCache does with torch.cat).
//
// What a layer holds follows transformers' StaticCache layers (cache_utils.py, 4.56+), which is
// what memfit's estimate and `plan --device-map fit` count (core/memory/kv_cache.cpp):
//  - a full-attention layer: every position, [B, kv, capacity, d];
//  - a sliding layer (window W): min(W, capacity) positions (StaticSlidingWindowLayer), a ring —
//    position p sits in slot p % W, so a decoding step overwrites the one position its query no
//    longer sees instead of shifting the window (transformers rolls it: a copy of W per token);
//  - in the cache's dtype (ForwardState::cache_dtype: the model's own, as transformers keeps it),
//    read back in the compute dtype: a CPU computing half weights in float32 holds half the bytes.
#include <algorithm>

#include "model_program.h"

namespace memfit::torchrt {
namespace {

// A buffer for `x`'s batch, heads and head_dim with `slots` positions, in `dtype`, holding the
// first `keep` positions of `old` (a buffer that has not wrapped: position p in slot p).
at::Tensor regrown(const at::Tensor& old, const at::Tensor& x, std::int64_t slots, std::int64_t keep,
                   at::ScalarType dtype) {
  auto sizes = x.sizes().vec();
  sizes[2] = slots;
  at::Tensor out = at::empty(sizes, x.options().dtype(dtype));
  if (old.defined() && keep > 0) out.narrow(2, 0, keep).copy_(old.narrow(2, 0, keep));
  return out;
}

// Writes x [B, h, T, d], positions past … past+T−1, into `buf` at slot p % slots (the last
// `slots` of them when T is larger: the earlier ones would be overwritten).
void write_slots(at::Tensor& buf, const at::Tensor& x, std::int64_t past) {
  const std::int64_t slots = buf.size(2), T = x.size(2);
  for (std::int64_t i = std::max<std::int64_t>(0, T - slots); i < T;) {
    const std::int64_t slot = (past + i) % slots, n = std::min(T - i, slots - slot);
    buf.narrow(2, slot, n).copy_(x.narrow(2, i, n));
    i += n;
  }
}

// Positions [from, to) of `buf` in order (to − from ≤ its slots): a view unless they wrap.
at::Tensor read_slots(const at::Tensor& buf, std::int64_t from, std::int64_t to) {
  const std::int64_t slots = buf.size(2), s0 = from % slots, n = to - from;
  if (s0 + n <= slots) return buf.narrow(2, s0, n);
  return at::cat({buf.narrow(2, s0, slots - s0), buf.narrow(2, 0, n - (slots - s0))}, 2);
}

// One layer's keys or values: stores x (positions past … past+T−1) in `buf` and gives what
// attention reads, in x's dtype — see ForwardState::cached_kv for the order.
at::Tensor append(at::Tensor& buf, const at::Tensor& x, std::int64_t past, std::int64_t window,
                  std::int64_t capacity, at::ScalarType dtype) {
  const std::int64_t T = x.size(2), end = past + T;
  const std::int64_t needed = window > 0 ? std::min(end, window) : end;
  if (buf.defined() && (buf.device() != x.device() || buf.scalar_type() != dtype)) buf = buf.to(x.device(), dtype);
  if (!buf.defined() || buf.size(2) < needed) {
    // Only a buffer below its window grows, and such a buffer has not wrapped: [0, past) in place.
    const std::int64_t grown = buf.defined() ? 2 * buf.size(2) : 0;
    std::int64_t slots = std::max({end, capacity, grown});
    if (window > 0) slots = std::min(slots, window);
    buf = regrown(buf, x, slots, past, dtype);
  }
  const std::int64_t slots = buf.size(2);
  at::Tensor keys;
  if (end <= slots || T == 1) {
    // Nothing a query of this forward sees is overwritten: write, then read the held positions.
    // One new token in a full ring: its W slots are exactly the positions its query sees.
    write_slots(buf, x, past);
    keys = end <= slots ? buf.narrow(2, 0, end) : buf;
  } else {
    // Several tokens past the window (a long prompt, a chunk): the held positions, then the new
    // ones as stored (rounded to the cache dtype like every other key), then the window's last.
    keys = at::cat({read_slots(buf, past - std::min(past, slots), past), x.to(dtype)}, 2);
    write_slots(buf, x, past);
  }
  return keys.scalar_type() == x.scalar_type() ? keys : keys.to(x.scalar_type());
}

}  // namespace

std::pair<at::Tensor, at::Tensor> ForwardState::cached_kv(std::int64_t layer, const at::Tensor& k,
                                                          const at::Tensor& v, std::int64_t window) {
  if (!use_cache) return {k, v};
  const auto i = static_cast<std::size_t>(layer);
  if (keys.size() <= i) keys.resize(i + 1), values.resize(i + 1);
  const at::ScalarType dtype = cache_dtype == at::ScalarType::Undefined ? k.scalar_type() : cache_dtype;
  return {append(keys[i], k, past, window, capacity, dtype), append(values[i], v, past, window, capacity, dtype)};
}

}  // namespace memfit::torchrt
