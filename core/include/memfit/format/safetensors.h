// memfit/format/safetensors.h — a small, strict safetensors header parser (no I/O).
//
// Layout: 8-byte little-endian N, N bytes of UTF-8 JSON, then the data buffer. Every rule of
// the format is enforced, each with its own ErrorCode (see error.h) and a message that names
// the source, the tensor, and the expected vs the got. Arithmetic is checked; nothing read from
// the file is trusted before it is checked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memfit/error.h"
#include "memfit/model/dtype.h"
#include "memfit/model/tensor_tree.h"

namespace memfit::safetensors {

inline constexpr std::uint64_t kMaxHeaderSize = 100'000'000;
inline constexpr std::size_t kMaxJsonDepth = 4;  // root → entry → shape/offsets array (+1 spare)

struct TensorEntry {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  std::uint64_t begin = 0, end = 0;  // data_offsets, relative to the data buffer
  std::uint64_t numel = 0;
  std::uint64_t nbytes() const { return end - begin; }
};

struct Header {
  std::uint64_t header_size = 0;               // N
  std::vector<TensorEntry> tensors;            // in the header's order
  std::vector<std::pair<std::string, std::string>> metadata;  // __metadata__, in order
  std::uint64_t data_size = 0;                 // bytes of the data buffer (the last end)
  std::uint64_t data_start() const { return 8 + header_size; }
  std::uint64_t file_size() const { return 8 + header_size + data_size; }
};

// Reads N from the first 8 bytes; checks the cap. `source` names the file in messages.
Result<std::uint64_t> read_header_size(std::string_view first_bytes, std::string_view source);

// Checks what can be checked from the first bytes of the header alone (it must start with '{'),
// so a reader can give up before fetching a huge hostile header.
Result<bool> check_header_start(std::string_view header_prefix, std::string_view source);

// Parses the N header bytes. `file_size`, when known, must equal 8 + N + data size.
Result<Header> parse_header(std::string_view header_json, std::optional<std::uint64_t> file_size,
                            std::string_view source);

// Convenience: `bytes` holds at least the first 8 + N bytes of the file.
Result<Header> parse(std::string_view bytes, std::optional<std::uint64_t> file_size,
                     std::string_view source);

// Writes a header for these tensors, laid out as safetensors writes them (offsets in the given
// order, JSON compact, padded with spaces to a multiple of 8). Returns the 8 + N prefix; the
// data buffer (data_size bytes) follows it in a file.
std::string write_header(const std::vector<TensorEntry>& tensors,
                         const std::vector<std::pair<std::string, std::string>>& metadata);
// Tensor entries for a layout: offsets assigned in order, shapes/dtypes as given.
std::vector<TensorEntry> layout(std::vector<TensorEntry> tensors);

}  // namespace memfit::safetensors
