// staging_layout.h: one read per run of adjacent tensors, every tensor landing at the same
// address remainder modulo 4096 as in its file (so kernels see the alignment of the mapping).
#include <doctest/doctest.h>

#include "staging_layout.h"

namespace memfit::test {
using torchrt::DiskSpan;
using torchrt::kStagingAlign;
using torchrt::layout_staging;

TEST_CASE("staging layout: adjacent tensors of one file are one read; alignment is kept") {
  // Out of file order on purpose: the layout sorts by (file, offset).
  const std::vector<DiskSpan> spans = {{0, 9000, 4000}, {0, 100, 8900}, {0, 13000, 24}};
  const auto l = layout_staging(spans);
  REQUIRE(l.reads.size() == 1);
  CHECK(l.reads[0].file_offset == 0);      // rounded down to a page
  CHECK(l.reads[0].length == 13024);       // up to the last byte of the last tensor
  CHECK(l.reads[0].buffer_offset == 0);
  CHECK(l.read_bytes == 13024);
  CHECK(l.buffer_bytes == 13024);
  REQUIRE(l.span_offsets.size() == 3);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    CAPTURE(i);
    CHECK(l.span_offsets[i] % kStagingAlign == spans[i].offset % kStagingAlign);
    CHECK(l.span_offsets[i] == spans[i].offset);  // one read from 0: the file layout itself
  }
}

TEST_CASE("staging layout: other files and far gaps start new page-aligned reads") {
  const std::uint64_t far = 5'000'000;  // > kStagingMergeGap past the first tensor
  const std::vector<DiskSpan> spans = {{1, 4100, 10}, {0, 64, 5000}, {0, far + 17, 300}};
  const auto l = layout_staging(spans);
  REQUIRE(l.reads.size() == 3);
  // file 0 first, in offset order, then file 1
  CHECK(l.reads[0].file == 0);
  CHECK(l.reads[0].file_offset == 0);
  CHECK(l.reads[0].length == 5064);
  CHECK(l.reads[1].file == 0);
  CHECK(l.reads[1].file_offset == far / kStagingAlign * kStagingAlign);
  CHECK(l.reads[1].buffer_offset == 8192);  // 5064 rounded up to a page
  CHECK(l.reads[2].file == 1);
  CHECK(l.reads[2].file_offset == 4096);
  for (const auto& r : l.reads) CHECK(r.buffer_offset % kStagingAlign == 0);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    CAPTURE(i);
    CHECK(l.span_offsets[i] % kStagingAlign == spans[i].offset % kStagingAlign);
    CHECK(l.span_offsets[i] + spans[i].length <= l.buffer_bytes);
  }
  CHECK(l.read_bytes == l.reads[0].length + l.reads[1].length + l.reads[2].length);
}

TEST_CASE("staging layout: a tensor listed twice (tied names) and an empty stage") {
  const auto l = layout_staging({{0, 8192, 100}, {0, 8192, 100}});
  REQUIRE(l.reads.size() == 1);
  CHECK(l.span_offsets[0] == l.span_offsets[1]);
  CHECK(l.read_bytes == 100);
  const auto none = layout_staging({});
  CHECK(none.reads.empty());
  CHECK(none.buffer_bytes == 0);
}

}  // namespace memfit::test
