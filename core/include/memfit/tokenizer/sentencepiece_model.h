// memfit/tokenizer/sentencepiece_model.h — what memfit reads of a SentencePiece tokenizer.model:
// the serialized ModelProto (sentencepiece_model.proto, protobuf wire format), read strictly with
// only the fields the tokenizer needs; every other field is skipped by its wire type. Pure C++ (no
// protobuf, no libsentencepiece), so the page can read a tokenizer.model as well as the CLI.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/error.h"

namespace memfit::tokenizer {

struct SentencePieceModel {
  // ModelProto.SentencePiece.Type
  enum class PieceType : std::uint8_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };
  struct Piece {
    std::string piece;
    float score = 0;
    PieceType type = PieceType::kNormal;
  };
  // TrainerSpec.ModelType
  enum class ModelType : std::uint8_t { kUnigram = 1, kBpe = 2, kWord = 3, kChar = 4 };

  std::vector<Piece> pieces;
  // trainer_spec (defaults as in sentencepiece_model.proto)
  ModelType model_type = ModelType::kUnigram;
  bool byte_fallback = false;
  bool treat_whitespace_as_suffix = false;
  std::int32_t unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
  // normalizer_spec
  std::string normalizer_name;
  std::string precompiled_charsmap;  // raw bytes; empty for the identity normalization
  bool add_dummy_prefix = true, remove_extra_whitespaces = true, escape_whitespaces = true;

  // Errors: kSentencePieceTruncated (a varint, a fixed-size value or a length running past its
  // message), kSentencePieceMalformed (a known field with the wrong wire type, an unknown wire
  // type, a piece type outside the enum, a field number 0), each naming the message and field.
  static Result<SentencePieceModel> parse(std::string_view model_proto);
};

}  // namespace memfit::tokenizer
