// The zip directory parser (memfit/format/zip_archive.h): valid STORED and ZIP64 archives, the
// golden torch.save archive, and one hand-broken archive per error code.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "memfit/format/zip_archive.h"
#include "support/reference.h"
#include "support/torch_bin_builder.h"

using memfit::ErrorCode;
using memfit::test::build_zip;
using memfit::test::set16;
using memfit::test::set32;
namespace zip = memfit::zip;

namespace {

memfit::Result<zip::Archive> parse(const std::string& bytes) {
  return zip::read_archive(zip::memory_source(bytes, "t.zip"));
}

void check_error(const memfit::Result<zip::Archive>& r, ErrorCode code, const std::string& fragment) {
  REQUIRE_FALSE(r.ok());
  CHECK_MESSAGE(r.error().code() == code, r.error().message());
  CHECK_MESSAGE(r.error().message().find(fragment) != std::string::npos, r.error().message());
}

const std::vector<memfit::test::ZipSpec>& two_entries() {
  static const std::vector<memfit::test::ZipSpec> e{{"a/data.pkl", "pickle-bytes", 0},
                                                     {"a/data/0", std::string(100, 'x'), 0}};
  return e;
}

}  // namespace

TEST_CASE("zip: entries, 64-byte aligned data offsets and whole-entry reads") {
  const auto z = build_zip(two_entries());
  const auto r = parse(z.bytes);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  REQUIRE(r->entries.size() == 2);
  CHECK(r->entries[0].name == "a/data.pkl");
  CHECK(r->entries[1].data_offset % 64 == 0);
  CHECK(z.bytes.substr(r->entries[1].data_offset, 100) == std::string(100, 'x'));
  CHECK_FALSE(r->zip64);
  const auto src = zip::memory_source(z.bytes, "t.zip");
  const auto data = zip::read_entry(src, *r, *r->find("a/data.pkl"), 1000);
  REQUIRE(data.ok());
  CHECK(*data == "pickle-bytes");
  CHECK(r->find("missing") == nullptr);
}

TEST_CASE("zip: ZIP64 record and extra fields (archives over 4 GiB)") {
  const auto z = build_zip(two_entries(), /*zip64=*/true);
  const auto r = parse(z.bytes);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(r->zip64);
  REQUIRE(r->entries.size() == 2);
  CHECK(r->entries[1].uncompressed_size == 100);
  CHECK(z.bytes.substr(r->entries[1].data_offset, 100) == std::string(100, 'x'));
}

TEST_CASE("zip: the golden torch.save archive") {
  const auto ref = memfit::test::reference_dir();
  if (!ref) return memfit::test::skip_loudly("zip: golden tiny-gpt2 .bin");
  const std::string bytes = memfit::test::read_text(*ref + "/golden/tiny-gpt2/bin/pytorch_model.bin");
  const auto r = parse(bytes);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  // golden README: data.pkl, 52 storages, version
  CHECK(r->entries.size() == 54);
  CHECK(r->entries.front().name == "pytorch_model/data.pkl");
  CHECK(r->entries.back().name == "pytorch_model/version");
  for (const auto& e : r->entries) {
    CHECK(e.stored());
    CHECK_MESSAGE(e.data_offset % 64 == 0, e.name);  // golden README: 64-byte aligned
  }
  const auto v = zip::read_entry(zip::memory_source(bytes, "golden"), *r, *r->find("pytorch_model/version"), 16);
  REQUIRE(v.ok());
  CHECK(*v == "3\n");
}

TEST_CASE("zip: hostile archives, one error code each") {
  const auto z = build_zip(two_entries());
  const std::size_t eocd = z.eocd_offset;

  SUBCASE("too small") { check_error(parse("PK\x05\x06"), ErrorCode::kZipTooSmall, "4 bytes"); }
  SUBCASE("truncated: the tail lost") {
    check_error(parse(z.bytes.substr(0, z.bytes.size() - 10)), ErrorCode::kZipNoEndOfCentralDirectory,
                "not a zip archive");
  }
  SUBCASE("truncated: the head lost, the directory points past the start") {
    check_error(parse(z.bytes.substr(200)), ErrorCode::kZipCentralDirectoryOutOfBounds, "does not fit");
  }
  SUBCASE("EOCD points past the end") {
    std::string b = z.bytes;
    set32(b, eocd + 16, static_cast<std::uint32_t>(b.size() + 1000));
    check_error(parse(b), ErrorCode::kZipCentralDirectoryOutOfBounds, "t.zip");
  }
  SUBCASE("multi-disk") {
    std::string b = z.bytes;
    set16(b, eocd + 4, 1);
    check_error(parse(b), ErrorCode::kZipMultiDisk, "multi-disk");
  }
  SUBCASE("entry count larger than the directory") {
    std::string b = z.bytes;
    set16(b, eocd + 8, 3);
    set16(b, eocd + 10, 3);
    check_error(parse(b), ErrorCode::kZipInvalidCentralDirectory, "3 entries cannot fit");
  }
  SUBCASE("bad central directory signature") {
    std::string b = z.bytes;
    b[z.central_offset] = 'X';
    check_error(parse(b), ErrorCode::kZipInvalidCentralDirectory, "bad signature");
  }
  SUBCASE("entry's local header offset past the end") {
    std::string b = z.bytes;
    set32(b, z.central_offset + 42, 0x7FFFFFF0);
    check_error(parse(b), ErrorCode::kZipLocalHeaderOutOfBounds, "'a/data.pkl'");
  }
  SUBCASE("local header names another entry") {
    std::string b = z.bytes;
    b[z.local_offsets[0] + 30] = 'b';
    check_error(parse(b), ErrorCode::kZipLocalHeaderMismatch, "names 'b/data.pkl'");
  }
  SUBCASE("entry data runs into the directory") {
    std::string b = z.bytes;
    const std::size_t second_cd = z.central_offset + 46 + 10;  // after "a/data.pkl"
    set32(b, second_cd + 20, 100000);
    set32(b, second_cd + 24, 100000);
    check_error(parse(b), ErrorCode::kZipEntryOutOfBounds, "'a/data/0': its 100000 bytes");
  }
  SUBCASE("duplicate names") {
    const auto d = build_zip({{"a/x", "1", 0}, {"a/x", "2", 0}});
    check_error(parse(d.bytes), ErrorCode::kZipDuplicateEntry, "'a/x' appears twice");
  }
  SUBCASE("ZIP64 locator points nowhere") {
    const auto d = build_zip(two_entries(), true);
    std::string b = d.bytes;
    set32(b, d.eocd_offset - 20 + 8, 5);  // locator → record offset 5
    check_error(parse(b), ErrorCode::kZipInvalidZip64, "ZIP64");
  }
  SUBCASE("saturated EOCD without ZIP64") {
    std::string b = z.bytes;
    set32(b, eocd + 16, 0xFFFFFFFF);
    check_error(parse(b), ErrorCode::kZipInvalidZip64, "no ZIP64 locator");
  }
  SUBCASE("compressed entry: listed, refused by name when read") {
    const auto d = build_zip({{"a/data.pkl", "zzz", 8}});
    const auto r = parse(d.bytes);
    REQUIRE(r.ok());
    const auto data = zip::read_entry(zip::memory_source(d.bytes, "t.zip"), *r, r->entries[0], 100);
    REQUIRE_FALSE(data.ok());
    CHECK(data.error().code() == ErrorCode::kZipUnsupportedCompression);
    CHECK(data.error().message().find("'a/data.pkl' is compressed (method 8)") != std::string::npos);
  }
  SUBCASE("CRC mismatch and size cap") {
    const std::string& b = z.bytes;
    const auto r = parse(b);
    REQUIRE(r.ok());
    std::string c = b;
    c[r->entries[0].data_offset] ^= 1;
    const auto bad = zip::read_entry(zip::memory_source(c, "t.zip"), *r, r->entries[0], 100);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code() == ErrorCode::kZipCrcMismatch);
    const auto big = zip::read_entry(zip::memory_source(b, "t.zip"), *r, r->entries[1], 10);
    REQUIRE_FALSE(big.ok());
    CHECK(big.error().code() == ErrorCode::kZipEntryTooLarge);
  }
}

TEST_CASE("zip: overlapping entries are refused") {
  // Two directory entries for one local header would be the same data twice; here the second
  // entry's header starts inside the first entry's data.
  const auto d = build_zip({{"a/x", std::string(200, 'q'), 0}, {"a/y", "2", 0}}, false, 0);
  std::string b = d.bytes;
  // Forge a local header for "a/y" inside a/x's data, and point the directory at it.
  const std::size_t fake = d.local_offsets[0] + 30 + 3 + 10;
  std::string hdr = b.substr(d.local_offsets[1], 30 + 3 + 1);
  b.replace(fake, hdr.size(), hdr);
  set32(b, d.central_offset + 46 + 3 + 42, static_cast<std::uint32_t>(fake));
  const auto r = parse(b);
  check_error(r, ErrorCode::kZipEntryOverlap, "overlaps entry 'a/x'");
}

namespace {

// A memory source that records every [offset, offset + length) read through it.
struct RecordingSource {
  std::string bytes;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> reads;
  zip::ByteSource source() {
    zip::ByteSource s = zip::memory_source(bytes, "t.zip");
    auto inner = s.read;
    s.read = [this, inner](std::uint64_t offset, std::uint64_t length) {
      reads.emplace_back(offset, offset + length);
      return inner(offset, length);
    };
    return s;
  }
};

}  // namespace

TEST_CASE("zip: directory only — tail and directory read, entries located one by one") {
  for (bool zip64 : {false, true}) {
    const auto z = build_zip(two_entries(), zip64);
    RecordingSource rec{z.bytes, {}};
    const auto src = rec.source();
    const auto read = zip::read_directory(src);
    REQUIRE_MESSAGE(read.ok(), read.error().message());
    zip::Archive dir = *read;
    zip::Archive* d = &dir;
    // Only bytes from the directory on were read: no local header, no entry data.
    for (const auto& [first, end] : rec.reads) CHECK(first >= z.central_offset);
    CHECK(rec.reads.front() == std::pair<std::uint64_t, std::uint64_t>{z.bytes.size() - 22, z.bytes.size()});
    REQUIRE(d->entries.size() == 2);
    CHECK(d->entries[1].data_offset == 0);
    CHECK(d->entries[1].uncompressed_size == 100);
    // Not located yet: reading it whole is refused, not misread.
    const auto early = zip::read_entry(src, *d, d->entries[0], 100);
    REQUIRE_FALSE(early.ok());
    CHECK(early.error().message().find("'a/data.pkl' was not located") != std::string::npos);
    // The extent of data.pkl ends where data/0's local header starts; of data/0, at the directory.
    CHECK(zip::entry_extent(*d, d->entries[0]) == std::pair<std::uint64_t, std::uint64_t>{0, z.local_offsets[1]});
    CHECK(zip::entry_extent(*d, d->entries[1]).second == z.central_offset);
    REQUIRE(zip::locate(src, *d, d->entries[0]).ok());
    const auto full = parse(z.bytes);
    REQUIRE(full.ok());
    CHECK(d->entries[0].data_offset == full->entries[0].data_offset);
    const auto data = zip::read_entry(src, *d, d->entries[0], 100);
    REQUIRE(data.ok());
    CHECK(*data == "pickle-bytes");
  }
}

TEST_CASE("zip: directory only — an archive comment, and declared sizes that cannot fit") {
  const auto z = build_zip(two_entries());
  SUBCASE("a comment after the end record is still found") {
    std::string b = z.bytes;
    set16(b, z.eocd_offset + 20, 5);
    b += "hello";
    CHECK(zip::read_directory(zip::memory_source(b, "t.zip")).ok());
    CHECK(parse(b).ok());
  }
  SUBCASE("an entry whose data would run into the directory") {
    std::string b = z.bytes;
    const std::size_t second_cd = z.central_offset + 46 + 10;  // after "a/data.pkl"
    set32(b, second_cd + 20, 100000);
    set32(b, second_cd + 24, 100000);
    check_error(zip::read_directory(zip::memory_source(b, "t.zip")), ErrorCode::kZipEntryOutOfBounds,
                "t.zip: entry 'a/data/0': its local header at offset");
  }
  SUBCASE("an entry whose declared data overlaps the next entry") {
    std::string b = z.bytes;
    // data.pkl says 150 bytes: 30 + 10 + 150 from offset 0 reach past data/0's header, not the directory
    REQUIRE(z.local_offsets[1] < 190);
    REQUIRE(z.central_offset >= 190);
    set32(b, z.central_offset + 20, 150);
    set32(b, z.central_offset + 24, 150);
    check_error(zip::read_directory(zip::memory_source(b, "t.zip")), ErrorCode::kZipEntryOverlap,
                "entry 'a/data/0' (local header at");
  }
}
