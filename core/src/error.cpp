#include "memfit/error.h"

namespace memfit {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidJson: return "invalid_json";
    case ErrorCode::kMissingKey: return "missing_key";
    case ErrorCode::kWrongType: return "wrong_type";
    case ErrorCode::kInvalidValue: return "invalid_value";
    case ErrorCode::kOverflow: return "overflow";
    case ErrorCode::kUnknownModelType: return "unknown_model_type";
    case ErrorCode::kUnknownClass: return "unknown_class";
    case ErrorCode::kUnsupportedLibrary: return "unsupported_library";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kInternal: return "internal";
    case ErrorCode::kSafetensorsHeaderTooSmall: return "safetensors_header_too_small";
    case ErrorCode::kSafetensorsHeaderTooLarge: return "safetensors_header_too_large";
    case ErrorCode::kSafetensorsHeaderTruncated: return "safetensors_header_truncated";
    case ErrorCode::kSafetensorsHeaderStart: return "safetensors_header_start";
    case ErrorCode::kSafetensorsInvalidUtf8: return "safetensors_invalid_utf8";
    case ErrorCode::kSafetensorsInvalidJson: return "safetensors_invalid_json";
    case ErrorCode::kSafetensorsDuplicateName: return "safetensors_duplicate_name";
    case ErrorCode::kSafetensorsInvalidMetadata: return "safetensors_invalid_metadata";
    case ErrorCode::kSafetensorsInvalidEntry: return "safetensors_invalid_entry";
    case ErrorCode::kSafetensorsUnknownDtype: return "safetensors_unknown_dtype";
    case ErrorCode::kSafetensorsInvalidShape: return "safetensors_invalid_shape";
    case ErrorCode::kSafetensorsSizeOverflow: return "safetensors_size_overflow";
    case ErrorCode::kSafetensorsMisalignedSize: return "safetensors_misaligned_size";
    case ErrorCode::kSafetensorsInvalidOffsets: return "safetensors_invalid_offsets";
    case ErrorCode::kSafetensorsSizeMismatch: return "safetensors_size_mismatch";
    case ErrorCode::kSafetensorsHole: return "safetensors_hole";
    case ErrorCode::kSafetensorsOverlap: return "safetensors_overlap";
    case ErrorCode::kSafetensorsFileSizeMismatch: return "safetensors_file_size_mismatch";
    case ErrorCode::kIndexInvalid: return "index_invalid";
    case ErrorCode::kIndexDuplicateName: return "index_duplicate_name";
    case ErrorCode::kIndexInvalidShardName: return "index_invalid_shard_name";
    case ErrorCode::kIndexTensorNotInShard: return "index_tensor_not_in_shard";
    case ErrorCode::kIndexTensorNotListed: return "index_tensor_not_listed";
    case ErrorCode::kIndexTotalSizeMismatch: return "index_total_size_mismatch";
  }
  return "internal";
}

}  // namespace memfit
