// memfit/format/zip_archive.h — a strict, read-only zip directory parser over a byte source (no
// I/O).
//
// torch.save writes a zip archive (PyTorch's "zip file serialization", torch >= 1.6): entries
// are STORED (never compressed) and each entry's data starts 64-byte aligned, so a reader can
// map tensors in place. This parser reads only the tail (End Of Central Directory, and the ZIP64
// locator + record that archives over 4 GiB need), the central directory and every entry's local
// header — never the entry data — through a ByteSource, so the archive need not be in memory.
//
// Every offset and size is checked against the archive size before use; each failure mode has
// its own ErrorCode (kZip*), and messages name the archive, the entry, expected vs got.
// Only STORED (method 0) entries can be read; a compressed or encrypted entry is refused by name
// when it is read (its presence alone is not an error: torch never writes one, but a reader that
// only needs other entries need not care).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memfit/error.h"

namespace memfit::zip {

// Where the archive bytes come from: `read(offset, length)` returns exactly `length` bytes (or an
// Error). native/ backs it with pread or a mapping; tests with a string.
struct ByteSource {
  std::string name;    // the archive's name in messages (its path)
  std::uint64_t size;  // total bytes
  std::function<Result<std::string>(std::uint64_t offset, std::uint64_t length)> read;
};

// A source over bytes already in memory (the string must outlive the source).
ByteSource memory_source(std::string_view bytes, std::string name);

struct Entry {
  std::string name;
  std::uint16_t method = 0;             // 0 = STORED; anything else cannot be read
  std::uint16_t flags = 0;              // general purpose bit flag (bit 0: encrypted)
  std::uint32_t crc32 = 0;
  std::uint64_t compressed_size = 0;    // bytes stored in the archive
  std::uint64_t uncompressed_size = 0;
  std::uint64_t local_header_offset = 0;
  std::uint64_t data_offset = 0;        // absolute offset of the entry's first data byte
  bool stored() const { return method == 0 && (flags & 1) == 0; }
};

struct Archive {
  std::string name;
  std::uint64_t size = 0;
  std::vector<Entry> entries;           // central directory order
  std::uint64_t central_directory_offset = 0;
  bool zip64 = false;
  const Entry* find(std::string_view entry_name) const;  // nullptr when absent
};

// Caps that keep a hostile directory from costing more than the archive is worth.
inline constexpr std::uint64_t kMaxEntries = 1'000'000;
inline constexpr std::uint64_t kMaxCentralDirectory = 256ull << 20;  // 256 MiB

// Parses the tail, the central directory and every local header. Entry data is not read.
Result<Archive> read_archive(const ByteSource& source);

// For a reader that pays per request (HTTP Range) and needs only a few entries: the tail and the
// central directory, nothing else. Entries are not located (data_offset 0) until locate() reads
// their local header; instead, each entry's 30 + name + data bytes from its local header on are
// checked to fit before the directory without overlapping another entry's.
Result<Archive> read_directory(const ByteSource& source);
// Reads one entry's local header, checked as read_archive checks it, and sets its data_offset.
Result<bool> locate(const ByteSource& source, const Archive& archive, Entry& entry);
// [first, end) from the entry's local header to the next entry's (or the central directory):
// its local header, data and padding, and no byte of any other entry — what a remote reader can
// fetch in one request before locate() and read_entry().
std::pair<std::uint64_t, std::uint64_t> entry_extent(const Archive& archive, const Entry& entry);

// The data of a located STORED entry, whole: for small entries (data.pkl, version); refuses
// entries over `max_size` (kZipEntryTooLarge) and checks the CRC-32.
Result<std::string> read_entry(const ByteSource& source, const Archive& archive,
                               const Entry& entry, std::uint64_t max_size);

// Checks that the entry can be read in place: STORED, not encrypted, sizes agree.
Result<bool> check_stored(const Archive& archive, const Entry& entry);

std::uint32_t crc32(std::string_view bytes, std::uint32_t crc = 0);

}  // namespace memfit::zip
