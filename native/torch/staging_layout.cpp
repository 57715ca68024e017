#include "staging_layout.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace memfit::torchrt {

StagingLayout layout_staging(const std::vector<DiskSpan>& spans) {
  StagingLayout out;
  out.span_offsets.assign(spans.size(), 0);
  std::vector<std::size_t> order(spans.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(spans[a].file, spans[a].offset) < std::tie(spans[b].file, spans[b].offset);
  });
  for (std::size_t i : order) {
    const DiskSpan& s = spans[i];
    const std::uint64_t start = s.offset / kStagingAlign * kStagingAlign;
    const std::uint64_t end = s.offset + s.length;
    StagedRead* last = out.reads.empty() ? nullptr : &out.reads.back();
    if (last && last->file == s.file && start <= last->file_offset + last->length + kStagingMergeGap) {
      last->length = std::max(last->length, end - last->file_offset);
    } else {
      // A new read starts at the next 4096 boundary of the buffer.
      const std::uint64_t at =
          last ? (last->buffer_offset + last->length + kStagingAlign - 1) / kStagingAlign * kStagingAlign : 0;
      out.reads.push_back({s.file, start, end - start, at});
      last = &out.reads.back();
    }
    out.span_offsets[i] = last->buffer_offset + (s.offset - last->file_offset);
  }
  for (const StagedRead& r : out.reads) {
    out.read_bytes += r.length;
    out.buffer_bytes = std::max(out.buffer_bytes, r.buffer_offset + r.length);
  }
  return out;
}

}  // namespace memfit::torchrt
