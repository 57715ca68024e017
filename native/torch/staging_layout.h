// native/torch/staging_layout.h — where a stage's disk weights land when they are read (pread)
// into one staging buffer, instead of being faulted in through the shard's mapping.
//
// Why read and not map: paging a mapped shard in (MADV_POPULATE_READ) and dropping it again
// (MADV_DONTNEED: a TLB shootdown that interrupts the compute threads) is several times slower
// than read() of the same bytes, which runs at the storage's speed (scripts/bench-load.sh). A
// buffer kept across forwards also costs no page faults after the first.
//
// Reads are merged where the tensors are adjacent in a file (a block's tensors usually are: one
// read per block), and each read starts on a 4096-byte boundary both in the file and in the
// buffer — so every tensor's address has the same remainder modulo 4096 (hence 64) as in the
// mapping: kernels pick code paths by alignment, and streamed weights must give the same bits
// as the zero-copy resident ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memfit::torchrt {

struct DiskSpan {
  std::size_t file = 0;  // caller's index of the file holding the bytes
  std::uint64_t offset = 0, length = 0;
};

struct StagedRead {
  std::size_t file = 0;
  std::uint64_t file_offset = 0, length = 0, buffer_offset = 0;
};

struct StagingLayout {
  std::vector<StagedRead> reads;              // in file order
  std::vector<std::uint64_t> span_offsets;    // per input span: where its first byte lands
  std::uint64_t buffer_bytes = 0;             // what the buffer must hold (from a 4096-aligned base)
  std::uint64_t read_bytes = 0;               // sum of the reads (≥ the spans: page rounding, gaps)
};

constexpr std::uint64_t kStagingAlign = 4096;
// Spans closer than this in one file are read as one (the gap is read and ignored): a second
// syscall and a readahead restart cost more than a few KB of extra bytes.
constexpr std::uint64_t kStagingMergeGap = 64 * 1024;

StagingLayout layout_staging(const std::vector<DiskSpan>& spans);

}  // namespace memfit::torchrt
