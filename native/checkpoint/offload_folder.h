// native/checkpoint/offload_folder.h — Accelerate's disk-offload folder, written atomically, read by
// mapping.
//
// Format (accelerate/utils/offload.py: offload_weight + save_offload_index):
//   index.json   {name: {"dtype": "float32", "shape": [d0, d1, …]}, …}, json.dump(indent=2), in
//                write order, no trailing newline;
//   <name>.dat   the tensor's raw bytes, C order, little-endian — what numpy.memmap writes.
// dtype strings are numpy's (float32, float16, float64, int64, int32, int16, int8, uint8, bool,
// complex64). bfloat16 has no numpy type: accelerate stores its bits as int16 and writes
// "bfloat16" in the index — the .dat bytes are the same. A 0-d tensor is stored as one element
// with "shape": []. Types numpy lacks (float8, …) cannot be offloaded this way.
//
// Atomic (io::AtomicFolder): everything is written into a sibling `D.tmp-XXXXXX`, every file
// fsync'ed, then renamed to D (and the parent fsync'ed). A failure or a cancel (an exception from
// the producer) removes the temporary folder: D is either absent, the previous complete folder,
// or the new complete one.
// A complete existing D whose index.json equals the one to write, and whose .dat files have the
// right sizes, is reused as it is; anything else there is replaced.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mapped_file.h"
#include "memfit/model/dtype.h"
#include "memfit/model/tensor_tree.h"

namespace memfit::checkpoint {

struct OffloadEntry {
  std::string name;     // state-dict key; the file is `<name>.dat`
  DType dtype = DType::kF32;
  Shape shape;          // [] for a 0-d tensor (stored as one element)
  std::uint64_t nbytes() const;  // bytes of the .dat file
};

// The numpy dtype string accelerate writes for `dt` ("bfloat16" for BF16); nullopt when numpy has
// no such type.
std::optional<std::string> offload_dtype_name(DType dt);
std::optional<DType> dtype_from_offload_name(const std::string& name);

// index.json text exactly as accelerate writes it for these entries, in this order.
std::string offload_index_json(const std::vector<OffloadEntry>& entries);

// Hands `write` the bytes of one tensor, in order, in as many chunks as it likes; throwing aborts
// the whole folder (nothing is left behind).
using ChunkWriter = std::function<void(const void* data, std::size_t size)>;
using TensorProducer = std::function<void(std::size_t index, const OffloadEntry& entry, const ChunkWriter& write)>;

struct OffloadWriteResult {
  std::string folder;
  bool reused = false;             // a complete matching folder was already there
  std::uint64_t bytes_written = 0;
};

struct OffloadWriteOptions {
  bool fsync = true;               // tests may turn the flushes off for speed
};

// Writes (or reuses) the folder. Throws Failure: kUsage for a name that cannot be a file name or
// a dtype numpy cannot hold, kFile for I/O failures, kInvalidInput when the producer gives a
// tensor more or fewer bytes than its dtype × shape.
OffloadWriteResult write_offload_folder(const std::string& folder, const std::vector<OffloadEntry>& entries,
                                        const TensorProducer& produce, const OffloadWriteOptions& options = {});

// True when `folder` holds exactly `entries` (index.json equal, each .dat of the right size).
bool offload_folder_matches(const std::string& folder, const std::vector<OffloadEntry>& entries);

// Reads index.json (accelerate's, or ours: the same format). Entries pointing into safetensors
// files ("safetensors_file") are refused: they are not .dat tensors. Throws Failure.
std::vector<OffloadEntry> read_offload_index(const std::string& folder);

// Maps `<folder>/<name>.dat` and checks its size against the entry. Throws Failure.
io::MappedFile map_offloaded(const std::string& folder, const OffloadEntry& entry);

}  // namespace memfit::checkpoint
