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
    case ErrorCode::kZipTooSmall: return "zip_too_small";
    case ErrorCode::kZipNoEndOfCentralDirectory: return "zip_no_end_of_central_directory";
    case ErrorCode::kZipMultiDisk: return "zip_multi_disk";
    case ErrorCode::kZipInvalidZip64: return "zip_invalid_zip64";
    case ErrorCode::kZipCentralDirectoryOutOfBounds: return "zip_central_directory_out_of_bounds";
    case ErrorCode::kZipInvalidCentralDirectory: return "zip_invalid_central_directory";
    case ErrorCode::kZipDuplicateEntry: return "zip_duplicate_entry";
    case ErrorCode::kZipLocalHeaderOutOfBounds: return "zip_local_header_out_of_bounds";
    case ErrorCode::kZipLocalHeaderMismatch: return "zip_local_header_mismatch";
    case ErrorCode::kZipEntryOutOfBounds: return "zip_entry_out_of_bounds";
    case ErrorCode::kZipEntryOverlap: return "zip_entry_overlap";
    case ErrorCode::kZipUnsupportedCompression: return "zip_unsupported_compression";
    case ErrorCode::kZipEncrypted: return "zip_encrypted";
    case ErrorCode::kZipEntryNotFound: return "zip_entry_not_found";
    case ErrorCode::kZipEntryTooLarge: return "zip_entry_too_large";
    case ErrorCode::kZipCrcMismatch: return "zip_crc_mismatch";
    case ErrorCode::kZipReadFailed: return "zip_read_failed";
    case ErrorCode::kPickleTruncated: return "pickle_truncated";
    case ErrorCode::kPickleUnsupportedOpcode: return "pickle_unsupported_opcode";
    case ErrorCode::kPickleUnsupportedProtocol: return "pickle_unsupported_protocol";
    case ErrorCode::kPickleForbiddenGlobal: return "pickle_forbidden_global";
    case ErrorCode::kPickleStackUnderflow: return "pickle_stack_underflow";
    case ErrorCode::kPickleMissingMark: return "pickle_missing_mark";
    case ErrorCode::kPickleMemoMissing: return "pickle_memo_missing";
    case ErrorCode::kPickleLimitExceeded: return "pickle_limit_exceeded";
    case ErrorCode::kPickleInvalidOperand: return "pickle_invalid_operand";
    case ErrorCode::kPickleInvalidCall: return "pickle_invalid_call";
    case ErrorCode::kPickleInvalidResult: return "pickle_invalid_result";
    case ErrorCode::kPickleDuplicateName: return "pickle_duplicate_name";
    case ErrorCode::kTorchBinNotZip: return "torch_bin_not_zip";
    case ErrorCode::kTorchBinNoDataPkl: return "torch_bin_no_data_pkl";
    case ErrorCode::kTorchBinMissingStorage: return "torch_bin_missing_storage";
    case ErrorCode::kTorchBinStorageConflict: return "torch_bin_storage_conflict";
    case ErrorCode::kTorchBinStorageSizeMismatch: return "torch_bin_storage_size_mismatch";
    case ErrorCode::kTorchBinTensorOutOfStorage: return "torch_bin_tensor_out_of_storage";
    case ErrorCode::kTorchBinUnsupportedDtype: return "torch_bin_unsupported_dtype";
    case ErrorCode::kTemplateSyntax: return "template_syntax";
    case ErrorCode::kTemplateRender: return "template_render";
    case ErrorCode::kTemplateLimit: return "template_limit";
    case ErrorCode::kCharsmapTruncated: return "charsmap_truncated";
    case ErrorCode::kCharsmapTrieSize: return "charsmap_trie_size";
    case ErrorCode::kCharsmapOutOfBounds: return "charsmap_out_of_bounds";
    case ErrorCode::kCharsmapInvalidUtf8: return "charsmap_invalid_utf8";
    case ErrorCode::kSentencePieceTruncated: return "sentencepiece_truncated";
    case ErrorCode::kSentencePieceMalformed: return "sentencepiece_malformed";
    case ErrorCode::kSentencePieceUnsupported: return "sentencepiece_unsupported";
  }
  return "internal";
}

}  // namespace memfit
