// memfit/error.h — one error type for the whole core, with a code per failure mode.
//
// Core code throws memfit::Error internally (it keeps the builders short); every public entry
// point returns Result<T> so callers (CLI, WASM) never see a bare exception. The code is stable
// and machine-readable; the message names the file/key/tensor and the expected vs the got.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace memfit {

enum class ErrorCode {
  kInvalidJson,        // config/index text is not JSON, or not an object where one is needed
  kMissingKey,         // a required config key is absent
  kWrongType,          // a config key has the wrong JSON type
  kInvalidValue,       // zero/negative/out-of-range value
  kOverflow,           // a size computation would overflow
  kUnknownModelType,   // model_type (or timm architecture) not in the registry
  kUnknownClass,       // --class / architectures[0] not provided by the family
  kUnsupportedLibrary, // library other than transformers/timm
  kInvalidArgument,    // bad API/CLI argument (unknown dtype, …)
  kInternal,
  kNotInThisModule,   // the page's first WebAssembly module leaves this out: memfit-all has it
  kRepoMissingFile,   // a repo kind needs a file the caller did not provide (memfit/repo/repo_kind.h)
  kRepoInvalid,       // a repo's own files (model_index.json, modules.json, adapter_config.json) are wrong

  // safetensors headers (one per failure mode; see core/include/memfit/format/safetensors.h)
  kSafetensorsHeaderTooSmall,     // fewer than 8 bytes for the length prefix
  kSafetensorsHeaderTooLarge,     // length prefix > 100,000,000
  kSafetensorsHeaderTruncated,    // fewer header bytes than the prefix announces
  kSafetensorsHeaderStart,        // the header does not start with '{'
  kSafetensorsInvalidUtf8,        // the header is not valid UTF-8
  kSafetensorsInvalidJson,        // not JSON, not an object, or nested too deep
  kSafetensorsDuplicateName,      // a tensor name appears twice
  kSafetensorsInvalidMetadata,    // __metadata__ is not an object of strings
  kSafetensorsInvalidEntry,       // a tensor entry lacks dtype/shape/data_offsets or has others
  kSafetensorsUnknownDtype,       // dtype not in the format's list
  kSafetensorsInvalidShape,       // a dimension is not a non-negative integer
  kSafetensorsSizeOverflow,       // numel × bits overflows 64 bits
  kSafetensorsMisalignedSize,     // numel × bits is not a whole number of bytes (sub-byte types)
  kSafetensorsInvalidOffsets,     // data_offsets not [begin, end] with begin <= end
  kSafetensorsSizeMismatch,       // end − begin differs from the tensor's byte size
  kSafetensorsHole,               // sorted by offset, a gap before a tensor (or first not at 0)
  kSafetensorsOverlap,            // sorted by offset, a tensor starts before the previous ends
  kSafetensorsFileSizeMismatch,   // 8 + header + data differs from the file size

  // sharded checkpoint indexes (model.safetensors.index.json, pytorch_model.bin.index.json)
  kIndexInvalid,                  // not the index format (weight_map missing or wrong types)
  kIndexDuplicateName,            // a tensor listed twice in weight_map
  kIndexInvalidShardName,         // a shard file name that escapes the folder
  kIndexTensorNotInShard,         // weight_map names a tensor its shard does not hold
  kIndexTensorNotListed,          // a shard holds a tensor weight_map does not list
  kIndexTotalSizeMismatch,        // metadata.total_size differs from the sum of tensor bytes

  // zip archives (PyTorch .bin checkpoints; see core/include/memfit/format/zip_archive.h)
  kZipTooSmall,                   // smaller than an End Of Central Directory record (22 bytes)
  kZipNoEndOfCentralDirectory,    // no EOCD signature in the last 64 KiB + 22 bytes
  kZipMultiDisk,                  // a split (multi-disk) archive
  kZipInvalidZip64,               // ZIP64 locator/record missing, malformed or out of bounds
  kZipCentralDirectoryOutOfBounds,  // the central directory does not fit before the EOCD
  kZipInvalidCentralDirectory,    // a bad entry signature, a truncated entry, a count mismatch
  kZipDuplicateEntry,             // two entries with the same name
  kZipLocalHeaderOutOfBounds,     // an entry's local header starts/ends past the data area
  kZipLocalHeaderMismatch,        // bad local header signature, or a name unlike the directory's
  kZipEntryOutOfBounds,           // an entry's data runs past the data area (into the directory)
  kZipEntryOverlap,               // two entries' headers/data overlap
  kZipUnsupportedCompression,     // an entry is compressed (only STORED can be mapped)
  kZipEncrypted,                  // an entry is encrypted
  kZipEntryNotFound,              // a required entry is absent
  kZipEntryTooLarge,              // an entry read whole is larger than its cap
  kZipCrcMismatch,                // an entry read whole does not match its CRC-32
  kZipReadFailed,                 // the byte source returned fewer bytes than asked

  // restricted unpickler (torch.save's data.pkl; see core/include/memfit/format/torch_pickle.h)
  kPickleTruncated,               // the input ends inside an opcode, or before STOP
  kPickleUnsupportedOpcode,       // an opcode outside the supported set
  kPickleUnsupportedProtocol,     // PROTO > 5
  kPickleForbiddenGlobal,         // a GLOBAL outside the allow-list (os.system, builtins.eval, …)
  kPickleStackUnderflow,          // an opcode needs more values than the stack holds
  kPickleMissingMark,             // an opcode needs a MARK and there is none
  kPickleMemoMissing,             // a GET of a memo key never PUT
  kPickleLimitExceeded,           // stack depth, memo size, nesting or a length over its cap
  kPickleInvalidOperand,          // an opcode applied to a value of the wrong kind
  kPickleInvalidCall,             // an allowed global called with the wrong arguments
  kPickleInvalidResult,           // STOP with anything but one dict of name → tensor
  kPickleDuplicateName,           // a tensor name set twice in the state dict

  // torch.save checkpoints (.bin; see core/include/memfit/format/torch_bin.h)
  kTorchBinNotZip,                // not a zip archive (e.g. the legacy pre-1.6 torch.save format)
  kTorchBinNoDataPkl,             // no `<stem>/data.pkl`, or more than one
  kTorchBinMissingStorage,        // a storage key without its `<stem>/data/<key>` entry
  kTorchBinStorageConflict,       // one storage key declared with two dtypes or sizes
  kTorchBinStorageSizeMismatch,   // a storage entry's bytes differ from numel × element size
  kTorchBinTensorOutOfStorage,    // offset/shape/stride reach past the storage
  kTorchBinUnsupportedDtype,      // a storage type memfit has no dtype for

  // chat templates (Jinja; see core/include/memfit/chat/chat_template.h)
  kTemplateSyntax,                // the template does not parse, or uses a construct memfit lacks
  kTemplateRender,                // rendering failed: an undefined value used, a bad operand, raise_exception()
  kTemplateLimit,                 // rendering went past a cap (output size, loop iterations, depth)

  // GGUF files (llama.cpp; see core/include/memfit/format/gguf.h)
  kGgufBadMagic,                  // the file does not start with "GGUF"
  kGgufUnsupportedVersion,        // version 1 (refused by llama.cpp), 0, above 3, or byte-swapped
  kGgufTruncated,                 // the file ends inside the header (a count, a string, a value)
  kGgufTooLarge,                  // a count the bytes left cannot hold, or a header over the cap
  kGgufInvalidKey,                // an empty metadata key
  kGgufDuplicateKey,              // a metadata key appears twice
  kGgufInvalidValueType,          // a metadata value type outside the format's list
  kGgufInvalidValue,              // a bool not 0/1, general.alignment not a uint32 power of two
  kGgufDuplicateTensor,           // a tensor name appears twice
  kGgufInvalidShape,              // n_dims above 4, a negative dimension, an element count overflow
  kGgufUnknownType,               // a ggml type id ggml does not define
  kGgufRemovedType,               // a ggml type id ggml removed (Q4_2, Q4_0_4_4, IQ4_NL_4_4, ...)
  kGgufBlockMismatch,             // the row length (ne0) is not a multiple of the type's block size
  kGgufMisaligned,                // a tensor's offset is not a multiple of the alignment
  kGgufOutOfBounds,               // a tensor's data (or the data section) runs past the file's end
  kGgufOverlap,                   // two tensors' data overlap
  // SentencePiece: a Precompiled normalizer's precompiled_charsmap (core/tokenizer/precompiled_charsmap.h)
  // and a tokenizer.model (core/tokenizer/sentencepiece_model.h)
  kCharsmapTruncated,             // under 4 bytes, or fewer bytes than the trie size announces
  kCharsmapTrieSize,              // the trie size is not a positive multiple of 4
  kCharsmapOutOfBounds,           // a trie unit or leaf value points outside the trie or the strings
  kCharsmapInvalidUtf8,           // the normalized strings are not UTF-8, or a value starts inside a character
  kSentencePieceTruncated,        // a varint or a length-delimited field runs past the end
  kSentencePieceMalformed,        // a wire type or value the ModelProto schema does not allow
  kSentencePieceUnsupported,      // a model type other than Unigram and BPE, or no pieces
};

std::string_view error_code_name(ErrorCode code);

// Where a message names an option of a request (`context`, `train.method`): core names options
// as the JSON API does, and each face may show them in its own spelling (the CLI as its flags).
struct OptionSpan {
  std::size_t begin = 0, size = 0;
};

class Error {
 public:
  Error(ErrorCode code, std::string message, std::vector<OptionSpan> options = {})
      : code_(code), message_(std::move(message)), options_(std::move(options)) {}
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const char* what() const { return message_.c_str(); }
  const std::vector<OptionSpan>& options() const { return options_; }
  // The message with each option name replaced by spell(name).
  template <typename Spell>
  std::string message_spelled(Spell&& spell) const {
    std::string out;
    std::size_t at = 0;
    for (const OptionSpan& o : options_) {
      out.append(message_, at, o.begin - at).append(spell(std::string_view(message_).substr(o.begin, o.size)));
      at = o.begin + o.size;
    }
    return out.append(message_, at, std::string::npos);
  }

 private:
  ErrorCode code_;
  std::string message_;
  std::vector<OptionSpan> options_;  // in message order, not overlapping
};

// A value or an Error. Deliberately tiny: C++17 has no std::expected.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}      // NOLINT(google-explicit-constructor)
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const Error& error() const { return std::get<1>(v_); }
  const T* operator->() const { return &value(); }
  const T& operator*() const { return value(); }

 private:
  std::variant<T, Error> v_;
};

// Runs fn() and turns a thrown memfit::Error (or any std::exception) into a Result.
template <typename Fn>
auto capture(Fn&& fn) -> Result<decltype(fn())>;

}  // namespace memfit

#include <exception>
namespace memfit {
template <typename Fn>
auto capture(Fn&& fn) -> Result<decltype(fn())> {
  try {
    return fn();
  } catch (const Error& e) {
    return e;
  } catch (const std::bad_alloc&) {
    return Error(ErrorCode::kInternal, "out of memory");
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, e.what());
  }
}
}  // namespace memfit
