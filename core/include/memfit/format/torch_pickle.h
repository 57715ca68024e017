// memfit/format/torch_pickle.h — a restricted unpickler for torch.save's `data.pkl` (no I/O, no
// Python).
//
// A pickle is a program for a stack machine; Python's unpickler imports and calls whatever
// GLOBAL + REDUCE name, which is why loading an untrusted .bin can run `os.system`. This VM
// interprets the opcodes torch.save emits (protocol 2, plus the common protocol 3–5 opcodes) and
// *executes nothing*: the only globals it accepts (checked at the GLOBAL / STACK_GLOBAL opcode,
// before anything is built — torch.load(weights_only=True)'s rule) are
//   collections.OrderedDict, torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter,
//   torch._utils._rebuild_parameter_with_state, torch.{Double,Float,Half,BFloat16,Long,Int,Short,
//   Char,Byte,Bool}Storage,
// and REDUCE on them only builds descriptors (a storage reference, a tensor view record).
// Any other global (`os.system`, `builtins.eval`, `__builtin__.getattr`, …) is refused with
// kPickleForbiddenGlobal naming it.
//
// Bounded: the stack, the memo, nesting and every length are capped (by the caps below and by
// the input size), so a hostile pickle costs at most O(input) memory and time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/error.h"
#include "memfit/model/dtype.h"
#include "memfit/model/tensor_tree.h"

namespace memfit::torch_pickle {

inline constexpr std::size_t kMaxStackDepth = 100'000;
inline constexpr std::size_t kMaxMemoEntries = 1'000'000;
inline constexpr std::size_t kMaxNesting = 256;     // containers inside containers
inline constexpr std::size_t kMaxTensorRank = 64;
inline constexpr std::size_t kMaxNodes = 4'000'000;   // values built (each opcode builds at most one)

// A storage as the persistent id names it: ('storage', torch.FloatStorage, key, location, numel).
struct Storage {
  std::string key;        // "0", "1", …: the archive entry `<stem>/data/<key>`
  DType dtype = DType::kF32;
  std::string location;   // "cpu", "cuda:0", … (informative: memfit reads bytes, not devices)
  std::uint64_t numel = 0;  // elements of `dtype`
};

// One state-dict entry: a strided view of a storage (torch._utils._rebuild_tensor_v2).
struct TensorRecord {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  std::vector<std::int64_t> stride;  // elements
  std::string storage_key;
  std::uint64_t storage_offset = 0;  // elements
  std::uint64_t storage_numel = 0;
  bool requires_grad = false;
  bool parameter = false;            // wrapped in _rebuild_parameter[_with_state]
};

struct StateDict {
  std::vector<TensorRecord> tensors;  // pickle (= state-dict) order
  std::vector<Storage> storages;      // first-use order, one per key
  bool ordered_dict = false;          // collections.OrderedDict (vs a plain dict)
  std::vector<std::string> attributes;  // BUILD state keys set on it (e.g. "_metadata"), ignored
  int protocol = 0;
};

// Interprets `pickle`; `source` names it in messages (e.g. "pytorch_model.bin/data.pkl").
Result<StateDict> load_state_dict(std::string_view pickle, std::string_view source);

// The dtype of a torch storage class name ("FloatStorage" → F32), if allowed.
std::optional<DType> storage_dtype(std::string_view class_name);

}  // namespace memfit::torch_pickle
