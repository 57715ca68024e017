// A SentencePiece ModelProto read from its protobuf wire format (the encoding:
// protobuf.dev/programming-guides/encoding; the schema: sentencepiece's src/sentencepiece_model.proto,
// v0.1.97 — field numbers below). Each length and offset is checked before it is used.
#include "memfit/tokenizer/sentencepiece_model.h"

#include <cstring>

#include <fmt/format.h>

namespace memfit::tokenizer {
namespace {

enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// One message's bytes, read field by field. `where` names the message in errors ("trainer_spec").
class WireReader {
 public:
  WireReader(std::string_view bytes, std::string where) : bytes_(bytes), where_(std::move(where)) {}

  // The next field's number and wire type; false at the end of the message.
  bool next(std::uint32_t& field, std::uint32_t& wire) {
    if (at_ == bytes_.size()) return false;
    const std::uint64_t key = varint("a field key");
    field = static_cast<std::uint32_t>(key >> 3);
    wire = static_cast<std::uint32_t>(key & 7);
    if (field == 0 || key >> 3 > 0x1FFFFFFF) malformed(fmt::format("field number {} is not valid", key >> 3));
    field_ = field;
    return true;
  }
  std::uint64_t varint(const char* what) {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ >= bytes_.size()) truncated(fmt::format("{} (a varint) runs past the end", what));
      const auto b = static_cast<unsigned char>(bytes_[at_++]);
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    malformed(fmt::format("{} is a varint longer than 10 bytes", what));
  }
  std::string_view length_delimited() {
    const std::uint64_t n = varint("a length");
    if (n > bytes_.size() - at_)
      truncated(fmt::format("field {} announces {} bytes, {} remain", field_, n, bytes_.size() - at_));
    const std::string_view out = bytes_.substr(at_, static_cast<std::size_t>(n));
    at_ += static_cast<std::size_t>(n);
    return out;
  }
  float fixed32_float() {
    if (bytes_.size() - at_ < 4) truncated(fmt::format("field {} (4 bytes) runs past the end", field_));
    std::uint32_t bits = 0;
    for (int i = 0; i < 4; ++i) bits |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes_[at_ + i])) << (8 * i);
    at_ += 4;
    float f = 0;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  void skip(std::uint32_t wire) {
    switch (wire) {
      case kVarint: varint("a skipped value"); return;
      case kFixed64: skip_bytes(8); return;
      case kLengthDelimited: length_delimited(); return;
      case kFixed32: skip_bytes(4); return;
      default: malformed(fmt::format("field {} has wire type {} (groups and unknown types are not allowed)", field_, wire));
    }
  }
  void expect(std::uint32_t wire, std::uint32_t wanted, const char* name) {
    if (wire != wanted) malformed(fmt::format("{} (field {}) has wire type {}, expected {}", name, field_, wire, wanted));
  }
  [[noreturn]] void malformed(const std::string& what) const {
    throw Error(ErrorCode::kSentencePieceMalformed, fmt::format("{}: {}", where_, what));
  }

 private:
  void skip_bytes(std::size_t n) {
    if (bytes_.size() - at_ < n) truncated(fmt::format("field {} ({} bytes) runs past the end", field_, n));
    at_ += n;
  }
  [[noreturn]] void truncated(const std::string& what) const {
    throw Error(ErrorCode::kSentencePieceTruncated, fmt::format("{}: {}", where_, what));
  }
  std::string_view bytes_;
  std::string where_;
  std::size_t at_ = 0;
  std::uint32_t field_ = 0;
};

// A protobuf int32 is sent as a 64-bit two's-complement varint (-1 is ten bytes).
std::int32_t as_int32(std::uint64_t v) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(v)); }

SentencePieceModel::Piece read_piece(std::string_view bytes, std::size_t index) {
  WireReader r(bytes, fmt::format("pieces[{}]", index));
  SentencePieceModel::Piece p;
  std::uint32_t field = 0, wire = 0;
  while (r.next(field, wire)) {
    if (field == 1) {
      r.expect(wire, kLengthDelimited, "piece");
      p.piece = std::string(r.length_delimited());
    } else if (field == 2) {
      r.expect(wire, kFixed32, "score");
      p.score = r.fixed32_float();
    } else if (field == 3) {
      r.expect(wire, kVarint, "type");
      const std::uint64_t t = r.varint("type");
      if (t < 1 || t > 6) r.malformed(fmt::format("type {} is not a SentencePiece.Type (1..6)", t));
      p.type = static_cast<SentencePieceModel::PieceType>(t);
    } else {
      r.skip(wire);
    }
  }
  return p;
}

void read_trainer_spec(std::string_view bytes, SentencePieceModel& m) {
  WireReader r(bytes, "trainer_spec");
  std::uint32_t field = 0, wire = 0;
  const auto varint_field = [&](const char* name) {
    r.expect(wire, kVarint, name);
    return r.varint(name);
  };
  while (r.next(field, wire)) {
    switch (field) {
      case 3: {
        const std::uint64_t t = varint_field("model_type");
        if (t < 1 || t > 4) r.malformed(fmt::format("model_type {} is not a TrainerSpec.ModelType (1..4)", t));
        m.model_type = static_cast<SentencePieceModel::ModelType>(t);
        break;
      }
      case 24: m.treat_whitespace_as_suffix = varint_field("treat_whitespace_as_suffix") != 0; break;
      case 35: m.byte_fallback = varint_field("byte_fallback") != 0; break;
      case 40: m.unk_id = as_int32(varint_field("unk_id")); break;
      case 41: m.bos_id = as_int32(varint_field("bos_id")); break;
      case 42: m.eos_id = as_int32(varint_field("eos_id")); break;
      case 43: m.pad_id = as_int32(varint_field("pad_id")); break;
      default: r.skip(wire);
    }
  }
}

void read_normalizer_spec(std::string_view bytes, SentencePieceModel& m) {
  WireReader r(bytes, "normalizer_spec");
  std::uint32_t field = 0, wire = 0;
  while (r.next(field, wire)) {
    switch (field) {
      case 1: r.expect(wire, kLengthDelimited, "name"); m.normalizer_name = std::string(r.length_delimited()); break;
      case 2:
        r.expect(wire, kLengthDelimited, "precompiled_charsmap");
        m.precompiled_charsmap = std::string(r.length_delimited());
        break;
      case 3: r.expect(wire, kVarint, "add_dummy_prefix"); m.add_dummy_prefix = r.varint("add_dummy_prefix") != 0; break;
      case 4:
        r.expect(wire, kVarint, "remove_extra_whitespaces");
        m.remove_extra_whitespaces = r.varint("remove_extra_whitespaces") != 0;
        break;
      case 5: r.expect(wire, kVarint, "escape_whitespaces"); m.escape_whitespaces = r.varint("escape_whitespaces") != 0; break;
      default: r.skip(wire);
    }
  }
}

}  // namespace

Result<SentencePieceModel> SentencePieceModel::parse(std::string_view model_proto) {
  return capture([&]() -> SentencePieceModel {
    SentencePieceModel m;
    WireReader r(model_proto, "ModelProto");
    std::uint32_t field = 0, wire = 0;
    while (r.next(field, wire)) {
      switch (field) {
        case 1: r.expect(wire, kLengthDelimited, "pieces"); m.pieces.push_back(read_piece(r.length_delimited(), m.pieces.size())); break;
        case 2: r.expect(wire, kLengthDelimited, "trainer_spec"); read_trainer_spec(r.length_delimited(), m); break;
        case 3: r.expect(wire, kLengthDelimited, "normalizer_spec"); read_normalizer_spec(r.length_delimited(), m); break;
        default: r.skip(wire);
      }
    }
    return m;
  });
}

}  // namespace memfit::tokenizer
