#include "memfit/format/gguf.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <unordered_set>

#include <fmt/format.h>

namespace memfit::gguf {
namespace {

[[noreturn]] void fail(ErrorCode code, std::string_view source, const std::string& msg) {
  throw Error(code, fmt::format("{}: {}", source, msg));
}

constexpr std::uint64_t kFirstChunk = 64 * 1024;
constexpr std::uint64_t kMaxChunk = 16ull << 20;
// The fewest bytes one element of a type takes in the file: a string is at least its u64
// length, a nested array its i32 type and u64 count.
std::uint64_t min_element_bytes(ValueType t) {
  if (t == ValueType::kString) return 8;
  if (t == ValueType::kArray) return 12;
  return value_type_width(t);
}

// Sequential reads over the source through a window that grows (64 KiB, doubling to 16 MiB), so
// a remote file costs a few requests, and nothing past the header cap is ever asked for.
class Cursor {
 public:
  explicit Cursor(const zip::ByteSource& s) : s_(s) {}

  std::uint64_t pos() const { return pos_; }
  // Bytes a count may claim: up to the file's end, and no further than the header cap.
  std::uint64_t left() const { return std::min(s_.size, kMaxHeaderSize) - std::min(pos_, std::min(s_.size, kMaxHeaderSize)); }

  // `n` bytes at the cursor; `what` names them in the error.
  template <typename What>
  std::string_view take(std::uint64_t n, What&& what) {
    if (n > s_.size - std::min(pos_, s_.size))
      fail(ErrorCode::kGgufTruncated, s_.name,
           fmt::format("the file ends inside {}: {} bytes at offset {}, the file has {}", what(), n,
                       pos_, s_.size));
    if (pos_ + n > kMaxHeaderSize)
      fail(ErrorCode::kGgufTooLarge, s_.name,
           fmt::format("{} at offset {} reaches past the header cap of {} bytes", what(), pos_,
                       kMaxHeaderSize));
    if (pos_ < start_ || pos_ + n > start_ + buf_.size()) fill(n);
    const std::string_view out(buf_.data() + (pos_ - start_), n);
    pos_ += n;
    return out;
  }
  template <typename T, typename What>
  T read(What&& what) {
    const std::string_view b = take(sizeof(T), what);
    T v;
    std::memcpy(&v, b.data(), sizeof(T));  // GGUF is little-endian, as every host memfit runs on
    return v;
  }
  template <typename What>
  std::string read_string(What&& what) {
    const auto n = read<std::uint64_t>([&] { return fmt::format("the length of {}", what()); });
    if (n > left())
      fail(ErrorCode::kGgufTooLarge, s_.name,
           fmt::format("{} claims {} bytes at offset {}; only {} are left", what(), n, pos_, left()));
    return std::string(take(n, what));
  }
  void skip_to(std::uint64_t p) { pos_ = p; }

 private:
  void fill(std::uint64_t n) {
    const std::uint64_t want = std::min(std::max(n, chunk_), std::min(s_.size, kMaxHeaderSize) - pos_);
    Result<std::string> r = s_.read(pos_, want);
    if (!r) throw r.error();
    if (r->size() < n)  // a source may give fewer than asked past what it holds, never fewer than needed
      fail(ErrorCode::kGgufTruncated, s_.name,
           fmt::format("read {} bytes at offset {}, got {}", want, pos_, r->size()));
    buf_ = std::move(r).value();
    start_ = pos_;
    chunk_ = std::min(chunk_ * 2, kMaxChunk);
  }

  const zip::ByteSource& s_;
  std::uint64_t pos_ = 0, start_ = 0;
  std::uint64_t chunk_ = kFirstChunk;
  std::string buf_;
};

bool valid_type(std::uint32_t t) { return t <= static_cast<std::uint32_t>(ValueType::kFloat64); }

class Parser {
 public:
  explicit Parser(const zip::ByteSource& s) : s_(s), c_(s) {}

  File run() {
    File f;
    f.file_size = s_.size;
    read_preamble(f);
    read_metadata(f);
    read_alignment(f);
    read_tensor_infos(f);
    place_data(f);
    return f;
  }

 private:
  void read_preamble(File& f) {
    const std::string_view magic = c_.take(4, [] { return std::string("the magic"); });
    if (magic != "GGUF")
      fail(ErrorCode::kGgufBadMagic, s_.name,
           fmt::format("not a GGUF file: the first 4 bytes are {:?}, expected \"GGUF\"", std::string(magic)));
    f.version = c_.read<std::uint32_t>([] { return std::string("the version"); });
    if (f.version != 2 && f.version != 3) {
      std::string why = f.version == 1 ? "GGUF version 1 is no longer supported (llama.cpp refuses it); convert the model again"
                        : f.version != 0 && (f.version & 0xFFFF) == 0
                            ? fmt::format("GGUF version {} (0x{:08x}): a big-endian file? memfit reads little-endian GGUF", f.version, f.version)
                            : fmt::format("GGUF version {}; memfit reads versions 2 and 3", f.version);
      fail(ErrorCode::kGgufUnsupportedVersion, s_.name, why);
    }
    n_tensors_ = read_count("the tensor count", 24);  // name length, n_dims, type, offset
    n_kv_ = read_count("the metadata count", 13);     // key length, type, a 1-byte value
  }

  // A count held to the bytes left: each item takes at least `min_bytes`.
  std::uint64_t read_count(const char* what, std::uint64_t min_bytes) {
    const auto n = c_.read<std::int64_t>([&] { return std::string(what); });
    if (n < 0) fail(ErrorCode::kGgufTooLarge, s_.name, fmt::format("{} is {}; it must be >= 0", what, n));
    const auto u = static_cast<std::uint64_t>(n);
    if (u > c_.left() / min_bytes)
      fail(ErrorCode::kGgufTooLarge, s_.name,
           fmt::format("{} is {}: at least {} bytes each, but only {} bytes are left", what, u,
                       min_bytes, c_.left()));
    return u;
  }

  void read_metadata(File& f) {
    std::unordered_set<std::string> seen;
    for (std::uint64_t k = 0; k < n_kv_; ++k) {
      std::string key = c_.read_string([&] { return fmt::format("metadata key {}", k); });
      if (key.empty())
        fail(ErrorCode::kGgufInvalidKey, s_.name, fmt::format("metadata key {} is empty", k));
      if (!seen.insert(key).second)
        fail(ErrorCode::kGgufDuplicateKey, s_.name, fmt::format("metadata key '{}' appears twice", key));
      const auto what = [&] { return fmt::format("the value of '{}'", key); };
      const ValueType type = read_type(what);
      Value v = read_value(type, key, 0);
      f.metadata.push_back({std::move(key), std::move(v)});
    }
  }

  template <typename What>
  ValueType read_type(What&& what) {
    const auto t = c_.read<std::uint32_t>([&] { return fmt::format("the type of {}", what()); });
    if (!valid_type(t))
      fail(ErrorCode::kGgufInvalidValueType, s_.name,
           fmt::format("{} has value type {}; GGUF's types are 0 (uint8) to 12 (float64)", what(), t));
    return static_cast<ValueType>(t);
  }

  Value read_value(ValueType type, const std::string& key, int depth) {
    const auto what = [&] { return fmt::format("the value of '{}'", key); };
    Value v;
    v.type = type;
    switch (type) {
      case ValueType::kString: v.text = c_.read_string(what); break;
      case ValueType::kArray: read_array(v, key, depth); break;
      case ValueType::kFloat32: v.f = c_.read<float>(what); break;
      case ValueType::kFloat64: v.f = c_.read<double>(what); break;
      case ValueType::kBool: {
        const auto b = c_.read<std::uint8_t>(what);
        if (b > 1)
          fail(ErrorCode::kGgufInvalidValue, s_.name, fmt::format("'{}' is a bool of byte {}; expected 0 or 1", key, b));
        v.u = b;
        break;
      }
      case ValueType::kInt8: v.i = c_.read<std::int8_t>(what); break;
      case ValueType::kInt16: v.i = c_.read<std::int16_t>(what); break;
      case ValueType::kInt32: v.i = c_.read<std::int32_t>(what); break;
      case ValueType::kInt64: v.i = c_.read<std::int64_t>(what); break;
      case ValueType::kUint8: v.u = c_.read<std::uint8_t>(what); break;
      case ValueType::kUint16: v.u = c_.read<std::uint16_t>(what); break;
      case ValueType::kUint32: v.u = c_.read<std::uint32_t>(what); break;
      case ValueType::kUint64: v.u = c_.read<std::uint64_t>(what); break;
    }
    return v;
  }

  void read_array(Value& v, const std::string& key, int depth) {
    if (depth >= kMaxArrayDepth)
      fail(ErrorCode::kGgufTooLarge, s_.name, fmt::format("'{}': arrays nested deeper than {}", key, kMaxArrayDepth));
    v.elem = read_type([&] { return fmt::format("the elements of '{}'", key); });
    v.count = c_.read<std::uint64_t>([&] { return fmt::format("the element count of '{}'", key); });
    const std::uint64_t min = min_element_bytes(v.elem);
    if (v.count > c_.left() / min)
      fail(ErrorCode::kGgufTooLarge, s_.name,
           fmt::format("'{}' claims {} {} elements (at least {} bytes each); only {} bytes are left",
                       key, v.count, value_type_name(v.elem), min, c_.left()));
    if (v.elem == ValueType::kString) {
      for (std::uint64_t k = 0; k < v.count; ++k)
        v.strings.push_back(c_.read_string([&] { return fmt::format("element {} of '{}'", k, key); }));
    } else if (v.elem == ValueType::kArray) {
      for (std::uint64_t k = 0; k < v.count; ++k) {
        Value item;
        item.type = ValueType::kArray;
        read_array(item, key, depth + 1);
        v.items.push_back(std::move(item));
      }
    } else {
      v.raw = std::string(c_.take(v.count * min, [&] { return fmt::format("the elements of '{}'", key); }));
      if (v.elem == ValueType::kBool)
        for (std::uint64_t k = 0; k < v.count; ++k)
          if (static_cast<unsigned char>(v.raw[k]) > 1)
            fail(ErrorCode::kGgufInvalidValue, s_.name,
                 fmt::format("'{}'[{}] is a bool of byte {}; expected 0 or 1", key, k,
                             static_cast<unsigned>(static_cast<unsigned char>(v.raw[k]))));
    }
  }

  void read_alignment(File& f) {
    const Value* a = f.find("general.alignment");
    if (!a) return;
    if (a->type != ValueType::kUint32)
      fail(ErrorCode::kGgufInvalidValue, s_.name,
           fmt::format("general.alignment must be a uint32, got {}", value_type_name(a->type)));
    if (a->u == 0 || (a->u & (a->u - 1)) != 0)
      fail(ErrorCode::kGgufInvalidValue, s_.name,
           fmt::format("general.alignment is {}; it must be a power of two", a->u));
    f.alignment = a->u;
  }

  void read_tensor_infos(File& f) {
    std::unordered_set<std::string> seen;
    f.tensors.reserve(n_tensors_);  // bounded by the bytes left (read_count)
    for (std::uint64_t k = 0; k < n_tensors_; ++k) {
      TensorInfo t;
      t.name = c_.read_string([&] { return fmt::format("the name of tensor {}", k); });
      if (!seen.insert(t.name).second)
        fail(ErrorCode::kGgufDuplicateTensor, s_.name, fmt::format("tensor '{}' appears twice", t.name));
      const auto what = [&] { return fmt::format("tensor '{}'", t.name); };
      read_shape(t, what);
      read_tensor_type(t, what);
      t.offset = c_.read<std::uint64_t>([&] { return fmt::format("the offset of {}", what()); });
      if (t.offset % f.alignment != 0)
        fail(ErrorCode::kGgufMisaligned, s_.name,
             fmt::format("{} is at offset {}, not a multiple of the alignment {}", what(), t.offset, f.alignment));
      f.tensors.push_back(std::move(t));
    }
    f.header_size = c_.pos();
  }

  template <typename What>
  void read_shape(TensorInfo& t, What&& what) {
    const auto n_dims = c_.read<std::uint32_t>([&] { return fmt::format("the n_dims of {}", what()); });
    if (n_dims > kMaxDims)
      fail(ErrorCode::kGgufInvalidShape, s_.name, fmt::format("{} has {} dimensions; at most {}", what(), n_dims, kMaxDims));
    std::uint64_t numel = 1;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      const auto ne = c_.read<std::int64_t>([&] { return fmt::format("dimension {} of {}", d, what()); });
      if (ne < 0)
        fail(ErrorCode::kGgufInvalidShape, s_.name, fmt::format("{} has dimension {} = {}; expected >= 0", what(), d, ne));
      if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(ne), &numel) || numel > static_cast<std::uint64_t>(INT64_MAX))
        fail(ErrorCode::kGgufInvalidShape, s_.name, fmt::format("{}: its element count overflows int64", what()));
      t.ne.push_back(ne);
    }
    t.numel = numel;
  }

  template <typename What>
  void read_tensor_type(TensorInfo& t, What&& what) {
    t.type = c_.read<std::uint32_t>([&] { return fmt::format("the type of {}", what()); });
    const ggml::TypeTraits* tr = ggml::type_traits(t.type);
    if (!tr) {
      if (const auto removed = ggml::removed_type(t.type))
        fail(ErrorCode::kGgufRemovedType, s_.name, fmt::format("{} has ggml type {}: {}", what(), t.type, *removed));
      fail(ErrorCode::kGgufUnknownType, s_.name, fmt::format("{} has ggml type {}, which ggml does not define", what(), t.type));
    }
    const std::int64_t ne0 = t.ne.empty() ? 1 : t.ne[0];
    if (ne0 % tr->block_size != 0)
      fail(ErrorCode::kGgufBlockMismatch, s_.name,
           fmt::format("{} is {} with rows of {} values, not a multiple of its block size {}", what(),
                       tr->name, ne0, tr->block_size));
    // ne0 / block × type_size × ne1 × ne2 × ne3 (ggml_nbytes of a contiguous tensor).
    std::uint64_t bytes = static_cast<std::uint64_t>(ne0 / tr->block_size);
    bool overflow = __builtin_mul_overflow(bytes, tr->type_size, &bytes);
    for (std::size_t d = 1; d < t.ne.size(); ++d)
      overflow = overflow || __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(t.ne[d]), &bytes);
    if (overflow)
      fail(ErrorCode::kGgufInvalidShape, s_.name, fmt::format("{}: its byte size overflows 64 bits", what()));
    t.nbytes = bytes;
  }

  // The data section starts at the header's end aligned up; each tensor must lie inside the file
  // and no two may overlap.
  void place_data(File& f) {
    const std::uint64_t a = f.alignment;
    f.data_offset = f.tensors.empty() ? f.header_size : (f.header_size + a - 1) / a * a;
    if (f.data_offset > f.file_size)
      fail(ErrorCode::kGgufOutOfBounds, s_.name,
           fmt::format("the data section starts at {} (the header's end aligned to {}), past the file's end at {}",
                       f.data_offset, a, f.file_size));
    const std::uint64_t room = f.file_size - f.data_offset;
    std::vector<std::size_t> order(f.tensors.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      return std::tie(f.tensors[x].offset, f.tensors[x].nbytes) < std::tie(f.tensors[y].offset, f.tensors[y].nbytes);
    });
    const TensorInfo* prev = nullptr;
    std::uint64_t end = 0;  // of the data seen so far (empty tensors hold none)
    for (std::size_t k : order) {
      const TensorInfo& t = f.tensors[k];
      if (t.offset > room || t.nbytes > room - t.offset)
        fail(ErrorCode::kGgufOutOfBounds, s_.name,
             fmt::format("tensor '{}' ({} bytes at data offset {}) ends past the file's end: the data "
                         "section holds {} bytes (file {} − data start {})",
                         t.name, t.nbytes, t.offset, room, f.file_size, f.data_offset));
      if (prev && t.offset < end && t.nbytes > 0)
        fail(ErrorCode::kGgufOverlap, s_.name,
             fmt::format("tensor '{}' [{}, {}) overlaps tensor '{}', which ends at {}", t.name,
                         t.offset, t.offset + t.nbytes, prev->name, end));
      if (t.nbytes > 0 && t.offset + t.nbytes >= end) {
        end = t.offset + t.nbytes;
        prev = &t;
      }
      // The data section reaches every tensor's end, an empty tensor's offset included.
      f.data_size = std::max(f.data_size, t.offset + t.nbytes);
    }
  }

  const zip::ByteSource& s_;
  Cursor c_;
  std::uint64_t n_tensors_ = 0, n_kv_ = 0;
};

}  // namespace

Result<File> parse(const zip::ByteSource& source) {
  return capture([&] { return Parser(source).run(); });
}

Result<File> parse(std::string_view bytes, std::string_view source, std::optional<std::uint64_t> file_size) {
  zip::ByteSource s;
  s.name = std::string(source);
  s.size = file_size.value_or(bytes.size());
  s.read = [bytes, &s](std::uint64_t offset, std::uint64_t length) -> Result<std::string> {
    if (offset >= bytes.size())
      return Error(ErrorCode::kGgufTruncated,
                   fmt::format("{}: {} bytes at offset {} are past the {} bytes given (file of {})", s.name,
                               length, offset, bytes.size(), s.size));
    return std::string(bytes.substr(offset, length));  // the bytes given, up to `length`
  };
  return parse(s);
}

}  // namespace memfit::gguf
