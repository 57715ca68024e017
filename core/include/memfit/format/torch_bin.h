// memfit/format/torch_bin.h — a torch.save checkpoint (`pytorch_model.bin`): its zip directory plus
// its restricted-unpickled state dict, resolved to absolute byte ranges (no I/O: a ByteSource).
//
// Layout written by torch.save (>= 1.6): `<stem>/data.pkl` (the pickled state dict), one
// `<stem>/data/<key>` entry per storage, `<stem>/version` (and, from torch 2.x,
// `<stem>/byteorder`). `<stem>` comes from the archive (torch takes it from the file name), never
// assumed to be `archive/`. Each tensor is a strided view of one storage; several tensors may view
// the same storage (tied weights). Every view is checked to lie inside its storage, and every
// storage entry to hold exactly numel × element-size bytes, STORED, inside the archive.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/error.h"
#include "memfit/format/zip_archive.h"
#include "memfit/model/dtype.h"
#include "memfit/model/tensor_tree.h"

namespace memfit::torch_bin {

inline constexpr std::uint64_t kMaxPickleSize = 256ull << 20;  // data.pkl read whole; real ones are < 10 MiB

struct Tensor {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  std::vector<std::int64_t> stride;       // elements
  std::string storage_key;
  std::uint64_t storage_file_offset = 0;  // absolute offset of the storage's first byte
  std::uint64_t storage_nbytes = 0;
  std::uint64_t storage_offset = 0;       // elements into the storage
  std::uint64_t data_offset = 0;          // absolute offset of the tensor's first element
  std::uint64_t span_bytes = 0;           // from data_offset to past the last element touched
  std::uint64_t numel = 0;
  std::uint64_t nbytes = 0;               // numel × element size
  bool contiguous = true;                 // C order (sizes of 1 ignored, as torch does)
};

struct Checkpoint {
  std::string stem;                 // "pytorch_model", "archive", …
  std::vector<Tensor> tensors;      // state-dict order
  std::size_t storages = 0;
  bool ordered_dict = false;
  bool located = true;              // false from read_metadata: every file offset is 0 (unknown)
  std::vector<std::string> warnings;
};

// Reads the directory, data.pkl and the local headers of the storages through `source`.
Result<Checkpoint> read(const zip::ByteSource& source);

// Names, dtypes, shapes, strides and byte counts only, for a reader that pays per request (the
// Hub by HTTP Range): reads the tail, the central directory and the local headers + data of the
// metadata_entries() — never a storage's local header or bytes. Storages are checked against the
// directory (present, STORED, numel × element size bytes, inside the archive without overlap);
// storage_file_offset and data_offset stay 0 and `located` is false.
Result<Checkpoint> read_metadata(const zip::ByteSource& source);
// The entries read_metadata reads whole (`<stem>/data.pkl`, and `<stem>/byteorder` when
// present), so a remote reader can fetch each one's zip::entry_extent() in one request first.
Result<std::vector<std::string>> metadata_entries(const zip::Archive& archive);

// Elements spanned by a strided view: 0 for an empty one, else 1 + Σ (size−1)·stride; nullopt on
// overflow.
std::optional<std::uint64_t> span_elements(const Shape& shape, const std::vector<std::int64_t>& stride);
bool is_contiguous(const Shape& shape, const std::vector<std::int64_t>& stride);

}  // namespace memfit::torch_bin
