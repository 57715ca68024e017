#include "memfit/format/zip_archive.h"

#include <algorithm>
#include <array>
#include <unordered_set>

#include <fmt/format.h>

namespace memfit::zip {
namespace {

// Record sizes and signatures of the zip format (APPNOTE.TXT 4.3).
constexpr std::uint32_t kEocdSignature = 0x06054b50;
constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr std::uint32_t kZip64EocdSignature = 0x06064b50;
constexpr std::uint32_t kCentralSignature = 0x02014b50;
constexpr std::uint32_t kLocalSignature = 0x04034b50;
constexpr std::uint64_t kEocdSize = 22;
constexpr std::uint64_t kMaxCommentSize = 0xFFFF;
constexpr std::uint64_t kZip64LocatorSize = 20;
constexpr std::uint64_t kZip64EocdMinSize = 56;
constexpr std::uint64_t kCentralFixedSize = 46;
constexpr std::uint64_t kLocalFixedSize = 30;
constexpr std::uint16_t kZip64ExtraId = 0x0001;

std::uint16_t u16(std::string_view b, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(b[at]) |
                                    (static_cast<unsigned char>(b[at + 1]) << 8));
}
std::uint32_t u32(std::string_view b, std::size_t at) {
  return static_cast<std::uint32_t>(u16(b, at)) | (static_cast<std::uint32_t>(u16(b, at + 2)) << 16);
}
std::uint64_t u64(std::string_view b, std::size_t at) {
  return static_cast<std::uint64_t>(u32(b, at)) | (static_cast<std::uint64_t>(u32(b, at + 4)) << 32);
}

[[noreturn]] void fail(ErrorCode code, std::string message) { throw Error(code, std::move(message)); }

// Reads exactly [offset, offset + length) of the source, after checking it lies inside.
std::string read_exact(const ByteSource& src, std::uint64_t offset, std::uint64_t length,
                       std::string_view what) {
  if (offset > src.size || length > src.size - offset)
    fail(ErrorCode::kZipReadFailed,
         fmt::format("{}: {} at offset {} (+{} bytes) is past the end of the archive ({} bytes)",
                     src.name, what, offset, length, src.size));
  Result<std::string> r = src.read(offset, length);
  if (!r) throw r.error();
  if (r->size() != length)
    fail(ErrorCode::kZipReadFailed, fmt::format("{}: reading {} at offset {}: asked {} bytes, got {}",
                                                src.name, what, offset, length, r->size()));
  return std::move(r).value();
}

struct Eocd {
  std::uint64_t offset = 0;  // where the EOCD record starts
  std::uint64_t entries = 0;
  std::uint64_t cd_size = 0;
  std::uint64_t cd_offset = 0;
  std::uint64_t data_end = 0;  // entries' data must end here (the directory or zip64 record)
  bool zip64 = false;
};

// The EOCD record found at `i` in `tail` (which starts at `tail_start` in the archive).
Eocd parse_eocd(const ByteSource& src, const std::string& tail, std::uint64_t i,
                std::uint64_t tail_start) {
  Eocd e;
  e.offset = tail_start + i;
  const std::uint16_t disk = u16(tail, i + 4), cd_disk = u16(tail, i + 6);
  const std::uint16_t disk_entries = u16(tail, i + 8), entries = u16(tail, i + 10);
  if ((disk != 0 && disk != 0xFFFF) || (cd_disk != 0 && cd_disk != 0xFFFF) ||
      disk_entries != entries)
    fail(ErrorCode::kZipMultiDisk,
         fmt::format("{}: a split (multi-disk) archive (disk {}, directory on disk {}, {} of {} "
                     "entries on this disk); only single-file archives are supported",
                     src.name, disk, cd_disk, disk_entries, entries));
  e.entries = entries;
  e.cd_size = u32(tail, i + 12);
  e.cd_offset = u32(tail, i + 16);
  e.data_end = e.offset;
  return e;
}

// The EOCD is the last record, followed only by a comment of at most 64 KiB: search backwards.
// torch.save writes no comment, so the last 22 bytes are tried first (the same record the
// backward search would find first): a reader that pays per byte (HTTP Range) reads only those.
Eocd find_eocd(const ByteSource& src) {
  if (src.size < kEocdSize)
    fail(ErrorCode::kZipTooSmall, fmt::format("{}: {} bytes is too small for a zip archive (an "
                                              "End Of Central Directory record alone is {})",
                                              src.name, src.size, kEocdSize));
  const std::string last = read_exact(src, src.size - kEocdSize, kEocdSize, "the archive tail");
  if (u32(last, 0) == kEocdSignature && u16(last, 20) == 0)
    return parse_eocd(src, last, 0, src.size - kEocdSize);
  const std::uint64_t tail_len = std::min<std::uint64_t>(src.size, kEocdSize + kMaxCommentSize);
  const std::uint64_t tail_start = src.size - tail_len;
  const std::string tail = read_exact(src, tail_start, tail_len, "the archive tail");
  for (std::uint64_t i = tail_len - kEocdSize + 1; i-- > 0;) {
    if (u32(tail, i) != kEocdSignature) continue;
    const std::uint16_t comment_len = u16(tail, i + 20);
    if (i + kEocdSize + comment_len != tail_len) continue;  // a signature inside the comment
    return parse_eocd(src, tail, i, tail_start);
  }
  fail(ErrorCode::kZipNoEndOfCentralDirectory,
       fmt::format("{}: not a zip archive: no End Of Central Directory record in the last {} bytes",
                   src.name, tail_len));
}

// ZIP64: a locator right before the EOCD points at a ZIP64 EOCD record with 64-bit fields. It is
// required when a 32-bit field is saturated, and used whenever it is present.
void read_zip64(const ByteSource& src, Eocd& e) {
  const bool saturated = e.entries == 0xFFFF || e.cd_size == 0xFFFFFFFF || e.cd_offset == 0xFFFFFFFF;
  if (e.offset < kZip64LocatorSize) {
    if (saturated)
      fail(ErrorCode::kZipInvalidZip64,
           fmt::format("{}: the End Of Central Directory has saturated fields (entries {}, "
                       "directory size {}, offset {}) but there is no room for a ZIP64 locator",
                       src.name, e.entries, e.cd_size, e.cd_offset));
    return;
  }
  const std::string loc = read_exact(src, e.offset - kZip64LocatorSize, kZip64LocatorSize, "the ZIP64 locator");
  if (u32(loc, 0) != kZip64LocatorSignature) {
    if (saturated)
      fail(ErrorCode::kZipInvalidZip64,
           fmt::format("{}: the End Of Central Directory has saturated fields (entries {}, "
                       "directory size {}, offset {}) but no ZIP64 locator precedes it",
                       src.name, e.entries, e.cd_size, e.cd_offset));
    return;
  }
  const std::uint32_t disk = u32(loc, 4), disks = u32(loc, 16);
  const std::uint64_t record_offset = u64(loc, 8);
  if (disk != 0 || disks > 1)
    fail(ErrorCode::kZipMultiDisk, fmt::format("{}: the ZIP64 locator names disk {} of {}; only "
                                               "single-file archives are supported",
                                               src.name, disk, disks));
  const std::uint64_t locator_offset = e.offset - kZip64LocatorSize;
  if (record_offset > locator_offset || locator_offset - record_offset < kZip64EocdMinSize)
    fail(ErrorCode::kZipInvalidZip64,
         fmt::format("{}: the ZIP64 locator points at offset {}; a ZIP64 record ({} bytes) must "
                     "end by the locator at {}", src.name, record_offset, kZip64EocdMinSize,
                     locator_offset));
  const std::string rec = read_exact(src, record_offset, kZip64EocdMinSize, "the ZIP64 record");
  if (u32(rec, 0) != kZip64EocdSignature)
    fail(ErrorCode::kZipInvalidZip64,
         fmt::format("{}: no ZIP64 End Of Central Directory signature at offset {} (found 0x{:08x})",
                     src.name, record_offset, u32(rec, 0)));
  const std::uint64_t rec_size = u64(rec, 4);  // size of the rest of the record
  if (rec_size < kZip64EocdMinSize - 12 || rec_size > locator_offset - record_offset - 12)
    fail(ErrorCode::kZipInvalidZip64,
         fmt::format("{}: the ZIP64 record at {} says it is {} bytes long; it must be between {} "
                     "and {} (up to the locator)", src.name, record_offset, rec_size,
                     kZip64EocdMinSize - 12, locator_offset - record_offset - 12));
  const std::uint32_t rdisk = u32(rec, 16), rcd_disk = u32(rec, 20);
  const std::uint64_t disk_entries = u64(rec, 24), entries = u64(rec, 32);
  if (rdisk != 0 || rcd_disk != 0 || disk_entries != entries)
    fail(ErrorCode::kZipMultiDisk, fmt::format("{}: the ZIP64 record describes a split archive "
                                               "(disk {}, directory on disk {})",
                                               src.name, rdisk, rcd_disk));
  e.entries = entries;
  e.cd_size = u64(rec, 40);
  e.cd_offset = u64(rec, 48);
  e.data_end = record_offset;
  e.zip64 = true;
}

// The ZIP64 extended-information extra field holds, in this order, only those of uncompressed
// size, compressed size and local header offset whose 32-bit field is saturated.
void apply_zip64_extra(std::string_view extra, Entry& en, bool sat_usize, bool sat_csize,
                       bool sat_offset, const std::string& archive, std::string_view where) {
  std::size_t at = 0;
  while (at + 4 <= extra.size()) {
    const std::uint16_t id = u16(extra, at), len = u16(extra, at + 2);
    if (at + 4 + len > extra.size())
      fail(ErrorCode::kZipInvalidCentralDirectory,
           fmt::format("{}: entry '{}': an extra field in the {} runs past its end", archive,
                       en.name, where));
    if (id == kZip64ExtraId) {
      std::size_t p = at + 4;
      const std::size_t end = p + len;
      auto take = [&](std::uint64_t& field, const char* label) {
        if (p + 8 > end)
          fail(ErrorCode::kZipInvalidZip64,
               fmt::format("{}: entry '{}': the ZIP64 extra field in the {} lacks the {}",
                           archive, en.name, where, label));
        field = u64(extra, p);
        p += 8;
      };
      if (sat_usize) take(en.uncompressed_size, "uncompressed size");
      if (sat_csize) take(en.compressed_size, "compressed size");
      if (sat_offset) take(en.local_header_offset, "local header offset");
      return;
    }
    at += 4 + len;
  }
  if (sat_usize || sat_csize || sat_offset)
    fail(ErrorCode::kZipInvalidZip64,
         fmt::format("{}: entry '{}' has saturated 32-bit fields but no ZIP64 extra field in the {}",
                     archive, en.name, where));
}

std::vector<Entry> parse_central_directory(const ByteSource& src, const Eocd& e) {
  if (e.cd_offset > e.data_end || e.cd_size > e.data_end - e.cd_offset)
    fail(ErrorCode::kZipCentralDirectoryOutOfBounds,
         fmt::format("{}: the central directory (offset {}, {} bytes) does not fit before the end "
                     "record at {}", src.name, e.cd_offset, e.cd_size, e.data_end));
  if (e.cd_size > kMaxCentralDirectory)
    fail(ErrorCode::kZipInvalidCentralDirectory,
         fmt::format("{}: the central directory is {} bytes; the cap is {}", src.name, e.cd_size,
                     kMaxCentralDirectory));
  if (e.entries > kMaxEntries || e.entries > e.cd_size / kCentralFixedSize)
    fail(ErrorCode::kZipInvalidCentralDirectory,
         fmt::format("{}: {} entries cannot fit in a central directory of {} bytes (≥ {} bytes "
                     "each; cap {} entries)", src.name, e.entries, e.cd_size, kCentralFixedSize,
                     kMaxEntries));
  const std::string cd = read_exact(src, e.cd_offset, e.cd_size, "the central directory");
  std::vector<Entry> entries;
  entries.reserve(static_cast<std::size_t>(e.entries));
  std::size_t at = 0;
  for (std::uint64_t i = 0; i < e.entries; ++i) {
    if (at + kCentralFixedSize > cd.size() || u32(cd, at) != kCentralSignature)
      fail(ErrorCode::kZipInvalidCentralDirectory,
           fmt::format("{}: central directory entry {} of {} (at directory offset {}): {}",
                       src.name, i + 1, e.entries, at,
                       at + kCentralFixedSize > cd.size() ? "truncated" : "bad signature"));
    Entry en;
    en.flags = u16(cd, at + 8);
    en.method = u16(cd, at + 10);
    en.crc32 = u32(cd, at + 16);
    en.compressed_size = u32(cd, at + 20);
    en.uncompressed_size = u32(cd, at + 24);
    const std::size_t name_len = u16(cd, at + 28), extra_len = u16(cd, at + 30),
                      comment_len = u16(cd, at + 32);
    const std::uint16_t disk = u16(cd, at + 34);
    en.local_header_offset = u32(cd, at + 42);
    const std::size_t var = name_len + extra_len + comment_len;
    if (at + kCentralFixedSize + var > cd.size())
      fail(ErrorCode::kZipInvalidCentralDirectory,
           fmt::format("{}: central directory entry {} of {}: its name/extra/comment ({} bytes) "
                       "run past the directory", src.name, i + 1, e.entries, var));
    en.name = cd.substr(at + kCentralFixedSize, name_len);
    const std::string_view extra = std::string_view(cd).substr(at + kCentralFixedSize + name_len, extra_len);
    apply_zip64_extra(extra, en, en.uncompressed_size == 0xFFFFFFFF, en.compressed_size == 0xFFFFFFFF,
                      en.local_header_offset == 0xFFFFFFFF, src.name, "central directory");
    if (disk != 0 && disk != 0xFFFF)
      fail(ErrorCode::kZipMultiDisk,
           fmt::format("{}: entry '{}' starts on disk {}", src.name, en.name, disk));
    entries.push_back(std::move(en));
    at += kCentralFixedSize + var;
  }
  if (at != cd.size())
    fail(ErrorCode::kZipInvalidCentralDirectory,
         fmt::format("{}: the central directory is {} bytes, its {} entries use {}", src.name,
                     cd.size(), e.entries, at));
  return entries;
}

// The local header gives the data offset (its name and extra field may differ in length from the
// directory's: torch pads the local extra field so data is 64-byte aligned).
void read_local_header(const ByteSource& src, Entry& en, std::uint64_t data_end) {
  if (en.local_header_offset > data_end || data_end - en.local_header_offset < kLocalFixedSize)
    fail(ErrorCode::kZipLocalHeaderOutOfBounds,
         fmt::format("{}: entry '{}': its local header at offset {} does not fit before the "
                     "central directory at {}", src.name, en.name, en.local_header_offset, data_end));
  const std::string fixed = read_exact(src, en.local_header_offset, kLocalFixedSize, "a local header");
  if (u32(fixed, 0) != kLocalSignature)
    fail(ErrorCode::kZipLocalHeaderMismatch,
         fmt::format("{}: entry '{}': no local header signature at offset {} (found 0x{:08x})",
                     src.name, en.name, en.local_header_offset, u32(fixed, 0)));
  const std::uint64_t name_len = u16(fixed, 26), extra_len = u16(fixed, 28);
  const std::uint64_t header_end = en.local_header_offset + kLocalFixedSize + name_len + extra_len;
  if (header_end > data_end)
    fail(ErrorCode::kZipLocalHeaderOutOfBounds,
         fmt::format("{}: entry '{}': its local header (offset {}, {} bytes) runs past the central "
                     "directory at {}", src.name, en.name, en.local_header_offset,
                     header_end - en.local_header_offset, data_end));
  const std::string name = read_exact(src, en.local_header_offset + kLocalFixedSize, name_len, "a local header name");
  if (name != en.name)
    fail(ErrorCode::kZipLocalHeaderMismatch,
         fmt::format("{}: entry '{}': the local header at offset {} names '{}'", src.name, en.name,
                     en.local_header_offset, name));
  if (u16(fixed, 8) != en.method)
    fail(ErrorCode::kZipLocalHeaderMismatch,
         fmt::format("{}: entry '{}': compression method {} in the directory, {} in the local header",
                     src.name, en.name, en.method, u16(fixed, 8)));
  en.data_offset = header_end;
  if (en.compressed_size > data_end - en.data_offset)
    fail(ErrorCode::kZipEntryOutOfBounds,
         fmt::format("{}: entry '{}': its {} bytes of data at offset {} run past the central "
                     "directory at {}", src.name, en.name, en.compressed_size, en.data_offset, data_end));
}

// Entries must not share bytes: overlapping entries are how "zip bombs" and parser confusion
// attacks are built, and torch never writes them.
void check_no_overlap(const std::string& archive, const std::vector<Entry>& entries) {
  std::vector<const Entry*> sorted;
  sorted.reserve(entries.size());
  for (const auto& en : entries) sorted.push_back(&en);
  std::sort(sorted.begin(), sorted.end(), [](const Entry* a, const Entry* b) {
    return a->local_header_offset < b->local_header_offset;
  });
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    const Entry& prev = *sorted[i - 1];
    const std::uint64_t prev_end = prev.data_offset + prev.compressed_size;
    if (sorted[i]->local_header_offset < prev_end)
      fail(ErrorCode::kZipEntryOverlap,
           fmt::format("{}: entry '{}' (local header at {}) overlaps entry '{}' (data up to {})",
                       archive, sorted[i]->name, sorted[i]->local_header_offset, prev.name, prev_end));
  }
}

// The tail, the ZIP64 records and the central directory; entries are not located yet.
Archive parse_directory(const ByteSource& source) {
  Eocd e = find_eocd(source);
  read_zip64(source, e);
  Archive a;
  a.name = source.name;
  a.size = source.size;
  a.central_directory_offset = e.cd_offset;
  a.zip64 = e.zip64;
  a.entries = parse_central_directory(source, e);
  std::unordered_set<std::string_view> names;
  for (const auto& en : a.entries)
    if (!names.insert(en.name).second)
      fail(ErrorCode::kZipDuplicateEntry,
           fmt::format("{}: the entry '{}' appears twice in the central directory", source.name, en.name));
  return a;
}

// Without the local headers, each entry still needs at least 30 + name + data bytes from its
// local header on: those spans must not overlap and must end by the central directory, so the
// sizes the directory declares cannot add up to more than the archive holds.
void check_directory_bounds(const Archive& a) {
  std::vector<const Entry*> sorted;
  sorted.reserve(a.entries.size());
  for (const auto& en : a.entries) sorted.push_back(&en);
  std::sort(sorted.begin(), sorted.end(), [](const Entry* x, const Entry* y) {
    return x->local_header_offset < y->local_header_offset;
  });
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const Entry& en = *sorted[i];
    std::uint64_t min_end = 0;
    const bool overflow =
        __builtin_add_overflow(en.local_header_offset, kLocalFixedSize + en.name.size(), &min_end) ||
        __builtin_add_overflow(min_end, en.compressed_size, &min_end);
    if (overflow || min_end > a.central_directory_offset)
      fail(ErrorCode::kZipEntryOutOfBounds,
           fmt::format("{}: entry '{}': its local header at offset {} and {} bytes of data run past "
                       "the central directory at {}", a.name, en.name, en.local_header_offset,
                       en.compressed_size, a.central_directory_offset));
    if (i + 1 < sorted.size() && min_end > sorted[i + 1]->local_header_offset)
      fail(ErrorCode::kZipEntryOverlap,
           fmt::format("{}: entry '{}' (local header at {}) overlaps entry '{}' (at least {} + {} "
                       "bytes from offset {})", a.name, sorted[i + 1]->name,
                       sorted[i + 1]->local_header_offset, en.name, kLocalFixedSize + en.name.size(),
                       en.compressed_size, en.local_header_offset));
  }
}

}  // namespace

ByteSource memory_source(std::string_view bytes, std::string name) {
  ByteSource s;
  s.name = std::move(name);
  s.size = bytes.size();
  s.read = [bytes](std::uint64_t offset, std::uint64_t length) -> Result<std::string> {
    if (offset > bytes.size() || length > bytes.size() - offset)
      return Error(ErrorCode::kZipReadFailed, "read past the end of the buffer");
    return std::string(bytes.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length)));
  };
  return s;
}

const Entry* Archive::find(std::string_view entry_name) const {
  for (const auto& e : entries)
    if (e.name == entry_name) return &e;
  return nullptr;
}

Result<Archive> read_archive(const ByteSource& source) {
  return capture([&] {
    Archive a = parse_directory(source);
    for (auto& en : a.entries) read_local_header(source, en, a.central_directory_offset);
    check_no_overlap(source.name, a.entries);
    return a;
  });
}

Result<Archive> read_directory(const ByteSource& source) {
  return capture([&] {
    Archive a = parse_directory(source);
    check_directory_bounds(a);
    return a;
  });
}

Result<bool> locate(const ByteSource& source, const Archive& archive, Entry& entry) {
  return capture([&] {
    read_local_header(source, entry, archive.central_directory_offset);
    return true;
  });
}

std::pair<std::uint64_t, std::uint64_t> entry_extent(const Archive& archive, const Entry& entry) {
  std::uint64_t end = archive.central_directory_offset;
  for (const auto& other : archive.entries)
    if (other.local_header_offset > entry.local_header_offset && other.local_header_offset < end)
      end = other.local_header_offset;
  return {entry.local_header_offset, std::max(end, entry.local_header_offset)};
}

Result<bool> check_stored(const Archive& archive, const Entry& entry) {
  if (entry.flags & 1)
    return Error(ErrorCode::kZipEncrypted,
                 fmt::format("{}: entry '{}' is encrypted; it cannot be read", archive.name, entry.name));
  if (entry.method != 0)
    return Error(ErrorCode::kZipUnsupportedCompression,
                 fmt::format("{}: entry '{}' is compressed (method {}); only STORED (method 0) "
                             "entries can be read in place, as torch.save writes them",
                             archive.name, entry.name, entry.method));
  if (entry.compressed_size != entry.uncompressed_size)
    return Error(ErrorCode::kZipInvalidCentralDirectory,
                 fmt::format("{}: entry '{}' is STORED but its stored size {} differs from its "
                             "size {}", archive.name, entry.name, entry.compressed_size,
                             entry.uncompressed_size));
  return true;
}

Result<std::string> read_entry(const ByteSource& source, const Archive& archive, const Entry& entry,
                               std::uint64_t max_size) {
  if (auto ok = check_stored(archive, entry); !ok) return ok.error();
  if (entry.uncompressed_size > max_size)
    return Error(ErrorCode::kZipEntryTooLarge,
                 fmt::format("{}: entry '{}' is {} bytes; at most {} are read whole", archive.name,
                             entry.name, entry.uncompressed_size, max_size));
  if (entry.data_offset == 0)  // a located entry's data starts after its 30-byte local header
    return Error(ErrorCode::kZipReadFailed,
                 fmt::format("{}: entry '{}' was not located (its local header was not read)",
                             archive.name, entry.name));
  return capture([&] {
    std::string data = read_exact(source, entry.data_offset, entry.uncompressed_size, "entry data");
    const std::uint32_t crc = crc32(data);
    if (crc != entry.crc32)
      fail(ErrorCode::kZipCrcMismatch,
           fmt::format("{}: entry '{}': CRC-32 is 0x{:08x}, the directory says 0x{:08x}",
                       archive.name, entry.name, crc, entry.crc32));
    return data;
  });
}

std::uint32_t crc32(std::string_view bytes, std::uint32_t crc) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (unsigned char b : bytes) crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

}  // namespace memfit::zip
