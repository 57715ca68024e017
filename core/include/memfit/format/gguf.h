// memfit/format/gguf.h — a strict GGUF header parser (llama.cpp's model files), over a byte
// source (no I/O): the metadata, the tensor infos and where each tensor's data lies. Tensor data
// is never read, so a Hub file is parsed from the Range requests of its first megabytes.
//
// Layout (ggml-org/llama.cpp ggml/src/gguf.cpp, docs/gguf.md), all little-endian:
//   "GGUF", u32 version (2 or 3), i64 tensor count, i64 metadata count,
//   metadata: string key, i32 value type, value (an array: i32 element type, u64 count, values),
//   tensor infos: string name, u32 n_dims (<= 4), i64 ne[n_dims], i32 ggml type, u64 offset,
//   padding to general.alignment (default 32), then the data section; offsets count from it.
// A string is a u64 length and that many bytes.
//
// Every rule is checked before anything read from the file is trusted: a count is held to the
// bytes left before anything is allocated for it, dims and byte sizes with checked arithmetic,
// offsets aligned, inside the file and not overlapping. Each failure has its ErrorCode
// (kGguf*); the message names the file, the key or tensor, and the expected vs the got.
// Stricter than llama.cpp in one place, looser in two: a bool must be 0 or 1; nested arrays (the
// format allows them, llama.cpp's reader refuses them) are read; tensors may be stored in any
// order and with gaps (llama.cpp's writer packs them in info order; any aligned, non-overlapping
// layout is a valid file).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/error.h"
#include "memfit/format/ggml_types.h"
#include "memfit/format/zip_archive.h"
#include "memfit/model/tensor_tree.h"

namespace memfit::gguf {

inline constexpr std::uint64_t kDefaultAlignment = 32;
inline constexpr std::uint32_t kMaxDims = 4;  // GGML_MAX_DIMS
// The header (metadata + tensor infos) is read up to this many bytes: real ones, vocabularies
// of 262k tokens included, are a few tens of MiB at most.
inline constexpr std::uint64_t kMaxHeaderSize = 256ull << 20;
inline constexpr int kMaxArrayDepth = 8;  // nested arrays

enum class ValueType : std::uint32_t {
  kUint8 = 0, kInt8 = 1, kUint16 = 2, kInt16 = 3, kUint32 = 4, kInt32 = 5, kFloat32 = 6,
  kBool = 7, kString = 8, kArray = 9, kUint64 = 10, kInt64 = 11, kFloat64 = 12,
};
// "uint8", …, "float64" (gguf.cpp's GGUF_TYPE_NAME).
std::string_view value_type_name(ValueType t);
bool is_integer_type(ValueType t);
bool is_float_type(ValueType t);
// Bytes of one value of a numeric / bool type; 0 for string and array.
std::uint64_t value_type_width(ValueType t);

struct Value {
  ValueType type = ValueType::kUint8;
  // Scalars: unsigned integers and bools in `u`, signed ones in `i`, floats in `f`, strings in
  // `text`.
  std::uint64_t u = 0;
  std::int64_t i = 0;
  double f = 0;
  std::string text;
  // Arrays (type kArray): the element type and count; numeric and bool elements as the file
  // stores them (`raw`: count × width little-endian bytes, decoded by the accessors below),
  // strings in `strings`, nested arrays in `items`.
  ValueType elem = ValueType::kUint8;
  std::uint64_t count = 0;
  std::string raw;
  std::vector<std::string> strings;
  std::vector<Value> items;

  bool is_array() const { return type == ValueType::kArray; }
  // An integer or bool scalar as int64 (nullopt: not one, or a uint64 above INT64_MAX).
  std::optional<std::int64_t> as_int() const;
  // Any numeric scalar as a double.
  std::optional<double> as_number() const;
  // Element `k` of a numeric or bool array (nullopt: not such an array, or k out of range).
  std::optional<std::int64_t> int_at(std::uint64_t k) const;
  std::optional<double> number_at(std::uint64_t k) const;
};

struct KeyValue {
  std::string key;
  Value value;
};

struct TensorInfo {
  std::string name;
  std::vector<std::int64_t> ne;  // as stored: ne[0] is the row (innermost) dimension
  std::uint32_t type = 0;        // ggml type id
  std::uint64_t offset = 0;      // from the start of the data section
  std::uint64_t numel = 0;
  std::uint64_t nbytes = 0;      // ne0 / block × type size × ne1 × …
  const ggml::TypeTraits& traits() const { return *ggml::type_traits(type); }
  // PyTorch's order (outermost first): ne reversed, as the Hugging Face converter wrote them.
  Shape shape() const { return Shape(ne.rbegin(), ne.rend()); }
};

struct File {
  std::uint32_t version = 3;
  std::vector<KeyValue> metadata;   // in file order
  std::vector<TensorInfo> tensors;  // in file order
  std::uint64_t alignment = kDefaultAlignment;
  std::uint64_t header_size = 0;    // bytes up to the end of the tensor infos
  std::uint64_t data_offset = 0;    // the data section's start: header_size aligned up
  std::uint64_t data_size = 0;      // up to the furthest tensor end (offset + bytes)
  std::uint64_t file_size = 0;      // the source's size
  const Value* find(std::string_view key) const;  // nullptr when absent
  std::uint64_t tensor_bytes() const;             // the sum of every tensor's nbytes
};

// Parses the header of the file `source` holds (its size is the file size). Reads only the
// header, in chunks that grow from 64 KiB: a remote source pays a few requests.
Result<File> parse(const zip::ByteSource& source);
// The same over bytes in memory: `bytes` is the whole file (or its first bytes, with the file's
// size in `file_size`: reads past `bytes` then fail as a truncation).
Result<File> parse(std::string_view bytes, std::string_view source,
                   std::optional<std::uint64_t> file_size = std::nullopt);

// Writes a GGUF header (the layout above, each tensor's offset as given) and pads it to the
// alignment: the data section follows. Values are written as typed (arrays with their elements).
// For tests, fuzzing and fixtures.
std::string write_header(std::uint32_t version, const std::vector<KeyValue>& metadata,
                         const std::vector<TensorInfo>& tensors, std::uint64_t alignment = kDefaultAlignment);
// Assigns offsets in order, each aligned, and sets numel / nbytes from ne and type (which must
// be valid); returns the data section's size.
std::uint64_t layout(std::vector<TensorInfo>& tensors, std::uint64_t alignment = kDefaultAlignment);

// Value builders for writers and tests.
Value make_uint(ValueType t, std::uint64_t v);
Value make_int(ValueType t, std::int64_t v);
Value make_float(ValueType t, double v);
Value make_bool(bool v);
Value make_string(std::string v);
Value make_array(ValueType elem, const std::vector<Value>& elements);  // scalars of type elem, or arrays

}  // namespace memfit::gguf
