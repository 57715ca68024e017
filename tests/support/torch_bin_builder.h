// tests/support/torch_bin_builder.h — hand-built zip archives and state-dict pickles for the
// .bin tests: the valid shape torch.save writes (STORED, 64-byte aligned data, `<stem>/data.pkl`,
// `<stem>/data/<key>`, `<stem>/version`), which tests then break byte by byte. Header-only, so
// both test binaries (core and CLI) can use it without build changes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/format/zip_archive.h"

namespace memfit::test {

inline void put16(std::string& s, std::uint32_t v) {
  s += static_cast<char>(v & 0xFF);
  s += static_cast<char>((v >> 8) & 0xFF);
}
inline void put32(std::string& s, std::uint32_t v) {
  put16(s, v & 0xFFFF);
  put16(s, v >> 16);
}
inline void put64(std::string& s, std::uint64_t v) {
  put32(s, static_cast<std::uint32_t>(v));
  put32(s, static_cast<std::uint32_t>(v >> 32));
}
inline void set32(std::string& s, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
inline void set16(std::string& s, std::size_t at, std::uint16_t v) {
  s[at] = static_cast<char>(v & 0xFF);
  s[at + 1] = static_cast<char>(v >> 8);
}

struct ZipSpec {
  std::string name;
  std::string data;
  std::uint16_t method = 0;  // 8 = deflate (the data is then used as-is: tests only need the flag)
};

struct BuiltZip {
  std::string bytes;
  std::vector<std::size_t> local_offsets;  // where each local header starts
  std::size_t central_offset = 0;
  std::size_t eocd_offset = 0;
};

// STORED entries with data aligned to `align` bytes (a padding extra field, as torch writes);
// `zip64` writes the ZIP64 record + locator and saturates the EOCD fields.
inline BuiltZip build_zip(const std::vector<ZipSpec>& entries, bool zip64 = false, std::size_t align = 64) {
  BuiltZip z;
  std::string& s = z.bytes;
  for (const auto& e : entries) {
    z.local_offsets.push_back(s.size());
    const std::size_t fixed_end = s.size() + 30 + e.name.size();
    std::size_t pad = align ? (align - (fixed_end + 4) % align) % align : 0;
    const bool extra = align != 0;
    put32(s, 0x04034b50);
    put16(s, 20);
    put16(s, 0);
    put16(s, e.method);
    put16(s, 0);
    put16(s, 0);
    put32(s, zip::crc32(e.data));
    put32(s, static_cast<std::uint32_t>(e.data.size()));
    put32(s, static_cast<std::uint32_t>(e.data.size()));
    put16(s, static_cast<std::uint32_t>(e.name.size()));
    put16(s, extra ? static_cast<std::uint32_t>(4 + pad) : 0);
    s += e.name;
    if (extra) {
      put16(s, 0x4246);  // "FB", torch's padding field
      put16(s, static_cast<std::uint32_t>(pad));
      s.append(pad, 'Z');
    }
    s += e.data;
  }
  z.central_offset = s.size();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    put32(s, 0x02014b50);
    put16(s, 20);
    put16(s, zip64 ? 45 : 20);
    put16(s, 0);
    put16(s, e.method);
    put16(s, 0);
    put16(s, 0);
    put32(s, zip::crc32(e.data));
    put32(s, zip64 ? 0xFFFFFFFF : static_cast<std::uint32_t>(e.data.size()));
    put32(s, zip64 ? 0xFFFFFFFF : static_cast<std::uint32_t>(e.data.size()));
    put16(s, static_cast<std::uint32_t>(e.name.size()));
    put16(s, zip64 ? 28 : 0);
    put16(s, 0);
    put16(s, 0);
    put16(s, 0);
    put32(s, 0);
    put32(s, zip64 ? 0xFFFFFFFF : static_cast<std::uint32_t>(z.local_offsets[i]));
    s += e.name;
    if (zip64) {
      put16(s, 0x0001);
      put16(s, 24);
      put64(s, e.data.size());
      put64(s, e.data.size());
      put64(s, z.local_offsets[i]);
    }
  }
  const std::size_t cd_size = s.size() - z.central_offset;
  if (zip64) {
    const std::size_t record = s.size();
    put32(s, 0x06064b50);
    put64(s, 44);
    put16(s, 45);
    put16(s, 45);
    put32(s, 0);
    put32(s, 0);
    put64(s, entries.size());
    put64(s, entries.size());
    put64(s, cd_size);
    put64(s, z.central_offset);
    put32(s, 0x07064b50);
    put32(s, 0);
    put64(s, record);
    put32(s, 1);
  }
  z.eocd_offset = s.size();
  put32(s, 0x06054b50);
  put16(s, 0);
  put16(s, 0);
  put16(s, zip64 ? 0xFFFF : static_cast<std::uint32_t>(entries.size()));
  put16(s, zip64 ? 0xFFFF : static_cast<std::uint32_t>(entries.size()));
  put32(s, zip64 ? 0xFFFFFFFF : static_cast<std::uint32_t>(cd_size));
  put32(s, zip64 ? 0xFFFFFFFF : static_cast<std::uint32_t>(z.central_offset));
  put16(s, 0);
  return z;
}

// A state-dict pickle the way torch.save writes one (protocol 2, OrderedDict + SETITEMS, every
// tensor `_rebuild_tensor_v2(('storage', torch.<T>Storage, key, 'cpu', numel), offset, size,
// stride, False, OrderedDict())`), without memo optimisations.
struct PickledTensor {
  std::string name;
  std::string storage_class = "FloatStorage";
  std::string key;
  std::uint64_t storage_numel = 0;
  std::uint64_t offset = 0;
  std::vector<std::uint64_t> size, stride;
};

// A float32 tensor `name` viewing storage `key` (of `numel` elements) with these sizes/strides.
inline PickledTensor tensor(std::string name, std::string key, std::uint64_t numel,
                            std::vector<std::uint64_t> size, std::vector<std::uint64_t> stride,
                            std::uint64_t offset = 0) {
  PickledTensor t;
  t.name = std::move(name);
  t.key = std::move(key);
  t.storage_numel = numel;
  t.size = std::move(size);
  t.stride = std::move(stride);
  t.offset = offset;
  return t;
}

inline void pickle_int(std::string& s, std::uint64_t v) {
  if (v < 256) {
    s += 'K';
    s += static_cast<char>(v);
  } else if (v < 65536) {
    s += 'M';
    put16(s, static_cast<std::uint32_t>(v));
  } else {
    s += '\x8a';
    s += '\x08';
    put64(s, v);
  }
}
inline void pickle_str(std::string& s, const std::string& v) {
  s += 'X';
  put32(s, static_cast<std::uint32_t>(v.size()));
  s += v;
}
inline void pickle_tuple(std::string& s, const std::vector<std::uint64_t>& v) {
  s += '(';
  for (auto x : v) pickle_int(s, x);
  s += 't';
}

inline std::string state_dict_pickle(const std::vector<PickledTensor>& tensors, bool ordered = true) {
  std::string s = "\x80\x02";
  if (ordered) s += "ccollections\nOrderedDict\n)R";
  else s += "}";
  s += '(';
  for (const auto& t : tensors) {
    pickle_str(s, t.name);
    s += "ctorch._utils\n_rebuild_tensor_v2\n(";
    s += '(';
    pickle_str(s, "storage");
    s += "ctorch\n" + t.storage_class + "\n";
    pickle_str(s, t.key);
    pickle_str(s, "cpu");
    pickle_int(s, t.storage_numel);
    s += "tQ";
    pickle_int(s, t.offset);
    pickle_tuple(s, t.size);
    pickle_tuple(s, t.stride);
    s += "\x89";  // NEWFALSE
    s += "ccollections\nOrderedDict\n)R";
    s += "tR";
  }
  s += "u.";
  return s;
}

// A whole .bin: data.pkl, one entry per storage (given bytes), version.
inline std::string torch_bin(const std::string& stem, const std::string& pickle,
                             const std::vector<std::pair<std::string, std::string>>& storages,
                             bool zip64 = false) {
  std::vector<ZipSpec> entries{{stem + "/data.pkl", pickle, 0}};
  for (const auto& [key, bytes] : storages) entries.push_back({stem + "/data/" + key, bytes, 0});
  entries.push_back({stem + "/version", "3\n", 0});
  return build_zip(entries, zip64).bytes;
}

// `n` little-endian float32 values start, start+1, …
inline std::string f32_bytes(std::size_t n, float start = 0) {
  std::string s(n * 4, '\0');
  for (std::size_t i = 0; i < n; ++i) {
    const float v = start + static_cast<float>(i);
    std::uint32_t bits;
    static_assert(sizeof bits == sizeof v, "float32");
    __builtin_memcpy(&bits, &v, 4);
    set32(s, i * 4, bits);
  }
  return s;
}

}  // namespace memfit::test
