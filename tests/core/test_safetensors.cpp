// The safetensors header parser: one test per error code, built from byte literals, and the
// real files written by safetensors 0.4.3 in ../shared/reference/golden.
#include <doctest/doctest.h>

#include <string>

#include "memfit/format/safetensors.h"
#include "support/reference.h"

using namespace memfit;
namespace st = memfit::safetensors;

namespace {

std::string le64(std::uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return s;
}

// A file prefix: length + header text (no data bytes needed: only the header is parsed).
std::string file(const std::string& header) { return le64(header.size()) + header; }

ErrorCode code_of(const std::string& bytes, std::optional<std::uint64_t> size = std::nullopt) {
  auto r = st::parse(bytes, size, "m.safetensors");
  REQUIRE_FALSE(r.ok());
  return r.error().code();
}

std::string message_of(const std::string& bytes, std::optional<std::uint64_t> size = std::nullopt) {
  return st::parse(bytes, size, "m.safetensors").error().message();
}

const std::string kGood =
    R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
    R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[16,22]}})";

}  // namespace

TEST_CASE("a valid header: tensors, metadata, sizes") {
  auto h = st::parse(file(kGood), 8 + kGood.size() + 22, "m.safetensors");
  REQUIRE_MESSAGE(h.ok(), h.error().message());
  REQUIRE(h->tensors.size() == 2);
  CHECK(h->tensors[0].name == "a");
  CHECK(h->tensors[0].shape == Shape{2, 2});
  CHECK(h->tensors[1].dtype == DType::kBF16);
  CHECK(h->data_size == 22);
  CHECK(h->metadata == std::vector<std::pair<std::string, std::string>>{{"format", "pt"}});
  // Zero-element tensors and empty shapes (scalars) are legal.
  auto z = st::parse(file(R"({"e":{"dtype":"F16","shape":[0,4],"data_offsets":[0,0]},"s":{"dtype":"I64","shape":[],"data_offsets":[0,8]}})"),
                     std::nullopt, "z");
  REQUIRE_MESSAGE(z.ok(), z.error().message());
  CHECK(z->tensors[1].numel == 1);
  // Sub-byte types on a byte boundary.
  CHECK(st::parse(file(R"({"q":{"dtype":"F4","shape":[6],"data_offsets":[0,3]}})"), std::nullopt, "f4").ok());
  CHECK(st::parse(file(R"({"q":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[0,3]}})"), std::nullopt, "f6").ok());
}

TEST_CASE("kSafetensorsHeaderTooSmall") {
  CHECK(code_of(std::string("\x01\x00\x00", 3)) == ErrorCode::kSafetensorsHeaderTooSmall);
  CHECK(code_of("") == ErrorCode::kSafetensorsHeaderTooSmall);
}

TEST_CASE("kSafetensorsHeaderTooLarge: 2^63 and just over the cap") {
  CHECK(code_of(le64(std::uint64_t{1} << 63) + "{}") == ErrorCode::kSafetensorsHeaderTooLarge);
  CHECK(message_of(le64(100000001) + "{}") ==
        "m.safetensors: header length 100000001 exceeds the format's limit of 100000000 bytes");
}

TEST_CASE("kSafetensorsHeaderTruncated") {
  CHECK(code_of(le64(100) + "{}") == ErrorCode::kSafetensorsHeaderTruncated);
}

TEST_CASE("kSafetensorsHeaderStart: whitespace or anything but '{' first") {
  CHECK(code_of(file("   {}")) == ErrorCode::kSafetensorsHeaderStart);
  CHECK(code_of(file("")) == ErrorCode::kSafetensorsHeaderStart);
  CHECK(!st::check_header_start("  ", "x").ok());
  CHECK(st::check_header_start("{\"a", "x").ok());
}

TEST_CASE("kSafetensorsInvalidUtf8") {
  CHECK(code_of(file("{\"\xff\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}")) ==
        ErrorCode::kSafetensorsInvalidUtf8);
  CHECK(code_of(file("{\"\xc0\xaf\":1}")) == ErrorCode::kSafetensorsInvalidUtf8);  // overlong '/'
  CHECK(code_of(file("{\"\xed\xa0\x80\":1}")) == ErrorCode::kSafetensorsInvalidUtf8);  // surrogate
}

TEST_CASE("kSafetensorsInvalidJson: syntax, not an object, nested too deep") {
  CHECK(code_of(file("{\"a\":")) == ErrorCode::kSafetensorsInvalidJson);
  CHECK(code_of(file("{} trailing")) == ErrorCode::kSafetensorsInvalidJson);
  CHECK(code_of(file("{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}")) ==
        ErrorCode::kSafetensorsInvalidJson);
  // A deeply nested header is rejected by a linear scan before any tree is built.
  CHECK(code_of(file("{\"a\":" + std::string(1000000, '[') + "}")) == ErrorCode::kSafetensorsInvalidJson);
}

TEST_CASE("kSafetensorsDuplicateName") {
  const std::string h = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                        R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  CHECK(code_of(file(h)) == ErrorCode::kSafetensorsDuplicateName);
  CHECK(message_of(file(h)) == "m.safetensors: header JSON: duplicate key 'a'");
}

TEST_CASE("kSafetensorsInvalidMetadata") {
  CHECK(code_of(file(R"({"__metadata__":{"format":1}})")) == ErrorCode::kSafetensorsInvalidMetadata);
  CHECK(code_of(file(R"({"__metadata__":[1]})")) == ErrorCode::kSafetensorsInvalidMetadata);
}

TEST_CASE("kSafetensorsInvalidEntry") {
  CHECK(code_of(file(R"({"a":5})")) == ErrorCode::kSafetensorsInvalidEntry);
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[1]}})")) == ErrorCode::kSafetensorsInvalidEntry);
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})")) ==
        ErrorCode::kSafetensorsInvalidEntry);
  CHECK(message_of(file(R"({"a":{"dtype":"F32","shape":[1]}})")) ==
        "m.safetensors: tensor 'a': missing 'data_offsets'");
}

TEST_CASE("kSafetensorsUnknownDtype") {
  CHECK(code_of(file(R"({"a":{"dtype":"F12","shape":[1],"data_offsets":[0,4]}})")) ==
        ErrorCode::kSafetensorsUnknownDtype);
}

TEST_CASE("kSafetensorsInvalidShape") {
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})")) ==
        ErrorCode::kSafetensorsInvalidShape);
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})")) ==
        ErrorCode::kSafetensorsInvalidShape);
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":"2","data_offsets":[0,4]}})")) ==
        ErrorCode::kSafetensorsInvalidShape);
}

TEST_CASE("kSafetensorsSizeOverflow: a shape whose product overflows") {
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,2],"data_offsets":[0,4]}})")) ==
        ErrorCode::kSafetensorsSizeOverflow);
  CHECK(code_of(file(R"({"a":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,4]}})")) ==
        ErrorCode::kSafetensorsSizeOverflow);  // numel fits, numel × 64 bits does not
}

TEST_CASE("kSafetensorsMisalignedSize: sub-byte sizes must end on a byte") {
  CHECK(code_of(file(R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})")) ==
        ErrorCode::kSafetensorsMisalignedSize);
}

TEST_CASE("kSafetensorsInvalidOffsets") {
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})")) ==
        ErrorCode::kSafetensorsInvalidOffsets);
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})")) ==
        ErrorCode::kSafetensorsInvalidOffsets);
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,-4]}})")) ==
        ErrorCode::kSafetensorsInvalidOffsets);
}

TEST_CASE("kSafetensorsSizeMismatch names tensor, shape and both sizes") {
  const std::string h = R"({"w":{"dtype":"F16","shape":[2,3],"data_offsets":[0,16]}})";
  CHECK(code_of(file(h)) == ErrorCode::kSafetensorsSizeMismatch);
  CHECK(message_of(file(h)) ==
        "m.safetensors: tensor 'w': F16 [2, 3] needs 12 bytes, data_offsets [0, 16] give 16");
}

TEST_CASE("kSafetensorsHole and kSafetensorsOverlap") {
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})")) ==
        ErrorCode::kSafetensorsHole);
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})")) ==
        ErrorCode::kSafetensorsHole);
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})")) ==
        ErrorCode::kSafetensorsOverlap);
}

TEST_CASE("kSafetensorsFileSizeMismatch: trailing bytes or a short file") {
  const std::string f = file(kGood);
  CHECK(code_of(f, f.size() + 22 + 1) == ErrorCode::kSafetensorsFileSizeMismatch);
  CHECK(code_of(f, f.size() + 21) == ErrorCode::kSafetensorsFileSizeMismatch);
  CHECK(st::parse(f, f.size() + 22, "m").ok());
}

TEST_CASE("write_header round-trips and pads to 8 bytes like safetensors") {
  auto entries = st::layout({{"x", DType::kF16, {3, 5}}, {"y", DType::kI64, {2}}});
  const std::string prefix = st::write_header(entries, {{"format", "pt"}});
  CHECK((prefix.size() - 8) % 8 == 0);
  auto h = st::parse(prefix, prefix.size() + 30 + 16, "w");
  REQUIRE_MESSAGE(h.ok(), h.error().message());
  CHECK(h->tensors[1].begin == 30);
  CHECK(h->data_size == 46);
}

TEST_CASE("golden files written by safetensors 0.4.3 parse, with the documented header sizes") {
  const auto ref = test::reference_dir();
  if (!ref) return test::skip_loudly("golden safetensors files");
  struct Case { const char* path; std::uint64_t header; std::size_t tensors; };
  // Header lengths and tensor counts as documented in golden/README.md.
  for (const Case& c : {Case{"tiny-gpt2/model.safetensors", 4888, 52},
                        Case{"tiny-gpt2/fp16/model.safetensors", 4880, 52},
                        Case{"tiny-gpt2/bf16/model.safetensors", 4936, 52},
                        Case{"tiny-llama/model.safetensors", 4032, 39}}) {
    const std::string bytes = test::read_text(*ref + "/golden/" + c.path);
    auto h = st::parse(bytes, bytes.size(), c.path);
    REQUIRE_MESSAGE(h.ok(), h.error().message());
    CHECK(h->header_size == c.header);
    CHECK(h->tensors.size() == c.tensors);
  }
}

TEST_CASE("well-formed headers read by the fast path equal what the strict rules accept; odd ones are still named") {
  // Field order, whitespace, metadata anywhere, integers written as 4.0e0 (not integers: refused).
  const std::string shuffled =
      R"({ "b" : {"shape":[3], "data_offsets":[16,22], "dtype":"BF16"},)"
      R"( "__metadata__" : {"k2":"v2","k1":"v1"}, "a":{"data_offsets":[0,16],"dtype":"F32","shape":[2,2]} }   )";
  auto h = st::parse(file(shuffled), std::nullopt, "m.safetensors");
  REQUIRE_MESSAGE(h.ok(), h.error().message());
  REQUIRE(h->tensors.size() == 2);
  CHECK(h->tensors[0].name == "b");  // header order is kept
  CHECK(h->tensors[0].begin == 16);
  CHECK(h->tensors[1].numel == 4);
  CHECK(h->metadata == std::vector<std::pair<std::string, std::string>>{{"k2", "v2"}, {"k1", "v1"}});
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}})")) ==
        ErrorCode::kSafetensorsInvalidShape);
  // A field or a metadata key given twice, a second __metadata__: the strict parser names them.
  CHECK(message_of(file(R"({"a":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}})")) ==
        "m.safetensors: header JSON: duplicate key 'dtype'");
  CHECK(code_of(file(R"({"__metadata__":{"k":"1","k":"2"}})")) == ErrorCode::kSafetensorsDuplicateName);
  CHECK(code_of(file(R"({"__metadata__":{},"__metadata__":{}})")) == ErrorCode::kSafetensorsDuplicateName);
  // Three offsets, a tensor whose bytes do not match: refused with their own codes.
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})")) ==
        ErrorCode::kSafetensorsInvalidOffsets);
  CHECK(code_of(file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})")) ==
        ErrorCode::kSafetensorsSizeMismatch);
}
