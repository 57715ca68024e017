// The GGUF header parser: every value type, one test per error code (hostile files built from
// core's writer and patched bytes), truncation at every byte, and the real files llama.cpp's
// converter wrote in ../shared/reference/golden/llamacpp.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "memfit/format/gguf.h"
#include "memfit/format/safetensors.h"
#include "memfit/model/gguf_model.h"
#include "support/gguf_builder.h"
#include "support/reference.h"

using namespace memfit;
using gguf::ValueType;

namespace {

std::string le(std::uint64_t v, int n) {
  std::string s(static_cast<std::size_t>(n), '\0');
  // Bytes past the 8 a uint64 has are zero (a shift by 64 or more is undefined).
  for (int i = 0; i < n && i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}
std::string str(const std::string& s) { return le(s.size(), 8) + s; }
// "GGUF", version, tensor count, metadata count.
std::string preamble(std::uint32_t version, std::int64_t tensors, std::int64_t kvs) {
  return "GGUF" + le(version, 4) + le(static_cast<std::uint64_t>(tensors), 8) + le(static_cast<std::uint64_t>(kvs), 8);
}

Error error_of(const std::string& bytes, std::optional<std::uint64_t> size = std::nullopt) {
  auto r = gguf::parse(bytes, "m.gguf", size);
  REQUIRE_FALSE(r.ok());
  return r.error();
}
void check_error(const std::string& bytes, ErrorCode code, const std::string& needle) {
  const Error e = error_of(bytes);
  CHECK(error_code_name(e.code()) == error_code_name(code));
  CHECK_MESSAGE(e.message().find(needle) != std::string::npos, e.message());
}

test::GgufSpec small_spec() {
  test::GgufSpec s;
  s.metadata = {{"general.architecture", gguf::make_string("llama")}};
  s.tensors = {test::gguf_tensor("a", {64, 2}, 0), test::gguf_tensor("b", {256, 3}, 12)};
  return s;
}

}  // namespace

TEST_CASE("GGUF: every metadata value type reads back as written, nested arrays included") {
  test::GgufSpec s;
  s.version = 2;
  using gguf::make_uint, gguf::make_int, gguf::make_float;
  s.metadata = {
      {"u8", make_uint(ValueType::kUint8, 255)},        {"i8", make_int(ValueType::kInt8, -128)},
      {"u16", make_uint(ValueType::kUint16, 65535)},    {"i16", make_int(ValueType::kInt16, -32768)},
      {"u32", make_uint(ValueType::kUint32, 4000000000u)}, {"i32", make_int(ValueType::kInt32, -2000000000)},
      {"u64", make_uint(ValueType::kUint64, ~0ull)},    {"i64", make_int(ValueType::kInt64, INT64_MIN)},
      {"f32", make_float(ValueType::kFloat32, 0.5)},    {"f64", make_float(ValueType::kFloat64, 1e300)},
      {"b", gguf::make_bool(true)},                     {"s", gguf::make_string("héllo")},
      {"ai32", gguf::make_array(ValueType::kInt32, {make_int(ValueType::kInt32, -1), make_int(ValueType::kInt32, 7)})},
      {"as", gguf::make_array(ValueType::kString, {gguf::make_string("a"), gguf::make_string("")})},
      {"ab", gguf::make_array(ValueType::kBool, {gguf::make_bool(false), gguf::make_bool(true)})},
      {"nested", gguf::make_array(ValueType::kArray,
                                  {gguf::make_array(ValueType::kUint8, {make_uint(ValueType::kUint8, 3)}),
                                   gguf::make_array(ValueType::kString, {gguf::make_string("x")})})},
      {"empty", gguf::make_array(ValueType::kFloat32, {})},
  };
  const std::string bytes = test::build_gguf(s);
  auto r = gguf::parse(bytes, "m.gguf");
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  const gguf::File& f = *r;
  CHECK(f.version == 2);
  CHECK(f.tensors.empty());
  CHECK(f.header_size == bytes.size());
  CHECK(f.find("u8")->u == 255);
  CHECK(f.find("i8")->i == -128);
  CHECK(f.find("u16")->u == 65535);
  CHECK(f.find("i16")->i == -32768);
  CHECK(f.find("u32")->u == 4000000000u);
  CHECK(f.find("i32")->i == -2000000000);
  CHECK(f.find("u64")->u == ~0ull);
  CHECK_FALSE(f.find("u64")->as_int().has_value());  // above INT64_MAX
  CHECK(f.find("i64")->i == INT64_MIN);
  CHECK(f.find("f32")->f == 0.5);
  CHECK(f.find("f64")->f == 1e300);
  CHECK(f.find("b")->as_int() == 1);
  CHECK(f.find("s")->text == "héllo");
  const gguf::Value& a = *f.find("ai32");
  CHECK(a.count == 2);
  CHECK(a.int_at(0) == -1);
  CHECK(a.int_at(1) == 7);
  CHECK_FALSE(a.int_at(2).has_value());
  CHECK(f.find("as")->strings == std::vector<std::string>{"a", ""});
  CHECK(f.find("ab")->int_at(1) == 1);
  const gguf::Value& n = *f.find("nested");
  REQUIRE(n.items.size() == 2);
  CHECK(n.items[0].int_at(0) == 3);
  CHECK(n.items[1].strings == std::vector<std::string>{"x"});
  CHECK(f.find("empty")->count == 0);
  CHECK(f.find("missing") == nullptr);
}

TEST_CASE("GGUF: tensor infos, byte sizes per ggml type, alignment and the data section") {
  test::GgufSpec s = small_spec();
  s.alignment = 64;
  s.metadata.push_back({"general.alignment", gguf::make_uint(ValueType::kUint32, 64)});
  const std::string bytes = test::build_gguf(s);
  auto r = gguf::parse(bytes, "m.gguf");
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  const gguf::File& f = *r;
  CHECK(f.alignment == 64);
  REQUIRE(f.tensors.size() == 2);
  CHECK(f.tensors[0].nbytes == 64 * 2 * 4);        // f32
  CHECK(f.tensors[1].nbytes == 3 * 144);            // q4_K: one 256-value block of 144 bytes per row
  CHECK(f.tensors[1].shape() == Shape{3, 256});
  CHECK(f.tensors[1].offset == 512);
  CHECK(f.data_offset % 64 == 0);
  CHECK(f.data_offset + f.data_size + (64 - (3 * 144) % 64) == bytes.size());
  CHECK(f.tensor_bytes() == 512 + 432);
}

TEST_CASE("ggml types: block sizes and bytes per block from ggml-common.h's block structs") {
  // Each size is the block struct's fields: e.g. block_q6_K = ql[128] + qh[64] + scales[16] + d.
  struct Row { const char* name; std::uint32_t id; std::int64_t block; std::uint64_t bytes; };
  const Row rows[] = {{"q4_0", 2, 32, 2 + 16},          {"q5_1", 7, 32, 2 + 2 + 4 + 16},
                      {"q8_0", 8, 32, 2 + 32},          {"q2_K", 10, 256, 16 + 64 + 2 + 2},
                      {"q3_K", 11, 256, 32 + 64 + 12 + 2}, {"q6_K", 14, 256, 128 + 64 + 16 + 2},
                      {"q8_K", 15, 256, 4 + 256 + 32},  {"iq2_xxs", 16, 256, 2 + 64},
                      {"iq1_m", 29, 256, 32 + 16 + 8},  {"iq4_xs", 23, 256, 2 + 2 + 4 + 128},
                      {"tq1_0", 34, 256, 48 + 4 + 2},   {"mxfp4", 39, 32, 1 + 16},
                      {"bf16", 30, 1, 2},               {"i64", 27, 1, 8}};
  for (const Row& row : rows) {
    const ggml::TypeTraits* t = ggml::type_traits(row.id);
    REQUIRE_MESSAGE(t, row.name);
    CHECK(t->name == std::string(row.name));
    CHECK(t->block_size == row.block);
    CHECK(t->type_size == row.bytes);
    CHECK(ggml::type_by_name(row.name) == t);
  }
  CHECK(ggml::type_by_name("Q4_K")->id == 12);
  CHECK(ggml::all_types().size() == 34);
  for (std::uint32_t removed : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u}) {
    CHECK(ggml::type_traits(removed) == nullptr);
    CHECK(ggml::removed_type(removed).has_value());
  }
}

TEST_CASE("GGUF hostile: magic, versions") {
  check_error("GGML" + le(3, 4) + le(0, 16), ErrorCode::kGgufBadMagic, "expected \"GGUF\"");
  check_error(preamble(1, 0, 0), ErrorCode::kGgufUnsupportedVersion, "version 1 is no longer supported");
  check_error(preamble(4, 0, 0), ErrorCode::kGgufUnsupportedVersion, "GGUF version 4; memfit reads versions 2 and 3");
  check_error(preamble(0x03000000, 0, 0), ErrorCode::kGgufUnsupportedVersion, "big-endian");
  check_error("GG", ErrorCode::kGgufTruncated, "the magic");
}

TEST_CASE("GGUF hostile: huge counts fail before anything is allocated") {
  check_error(preamble(3, INT64_MAX, 0), ErrorCode::kGgufTooLarge, "the tensor count is 9223372036854775807");
  check_error(preamble(3, -1, 0), ErrorCode::kGgufTooLarge, "the tensor count is -1");
  check_error(preamble(3, 0, 1'000'000'000'000), ErrorCode::kGgufTooLarge, "the metadata count");
  // A string that claims more bytes than the file has.
  check_error(preamble(3, 0, 1) + le(~0ull, 8) + le(0, 16), ErrorCode::kGgufTooLarge,
              "metadata key 0 claims 18446744073709551615 bytes at offset 32; only 16 are left");
  // An array of 2^61 uint64, and of 2^40 strings.
  check_error(preamble(3, 0, 1) + str("k") + le(9, 4) + le(10, 4) + le(1ull << 61, 8) + le(0, 64),
              ErrorCode::kGgufTooLarge, "'k' claims 2305843009213693952 uint64 elements");
  check_error(preamble(3, 0, 1) + str("k") + le(9, 4) + le(8, 4) + le(1ull << 40, 8),
              ErrorCode::kGgufTooLarge, "string elements (at least 8 bytes each)");
  // Arrays nested past the cap.
  std::string deep = preamble(3, 0, 1) + str("k") + le(9, 4);
  for (int i = 0; i < 10; ++i) deep += le(9, 4) + le(1, 8);
  check_error(deep + le(0, 64), ErrorCode::kGgufTooLarge, "nested deeper than 8");
}

TEST_CASE("GGUF hostile: keys and value types") {
  check_error(preamble(3, 0, 1) + str("") + le(4, 4) + le(1, 4), ErrorCode::kGgufInvalidKey, "metadata key 0 is empty");
  check_error(preamble(3, 0, 2) + str("k") + le(4, 4) + le(1, 4) + str("k") + le(4, 4) + le(2, 4),
              ErrorCode::kGgufDuplicateKey, "metadata key 'k' appears twice");
  check_error(preamble(3, 0, 1) + str("k") + le(13, 4) + le(0, 8), ErrorCode::kGgufInvalidValueType,
              "the value of 'k' has value type 13; GGUF's types are 0 (uint8) to 12 (float64)");
  check_error(preamble(3, 0, 1) + str("k") + le(9, 4) + le(99, 4) + le(0, 8), ErrorCode::kGgufInvalidValueType,
              "the elements of 'k' has value type 99");
  check_error(preamble(3, 0, 1) + str("k") + le(7, 4) + le(2, 1), ErrorCode::kGgufInvalidValue, "'k' is a bool of byte 2");
  check_error(preamble(3, 0, 1) + str("general.alignment") + le(10, 4) + le(32, 8), ErrorCode::kGgufInvalidValue,
              "general.alignment must be a uint32, got uint64");
  check_error(preamble(3, 0, 1) + str("general.alignment") + le(4, 4) + le(48, 4), ErrorCode::kGgufInvalidValue,
              "general.alignment is 48; it must be a power of two");
}

TEST_CASE("GGUF hostile: tensor infos") {
  const std::string head = preamble(3, 1, 0);
  auto info = [](const std::string& name, std::vector<std::int64_t> ne, std::uint32_t type, std::uint64_t off) {
    std::string s = str(name) + le(ne.size(), 4);
    for (auto d : ne) s += le(static_cast<std::uint64_t>(d), 8);
    return s + le(type, 4) + le(off, 8);
  };
  const std::string pad(256, '\0');
  check_error(head + info("t", {1, 1, 1, 1, 1}, 0, 0) + pad, ErrorCode::kGgufInvalidShape, "tensor 't' has 5 dimensions; at most 4");
  check_error(head + info("t", {-4}, 0, 0) + pad, ErrorCode::kGgufInvalidShape, "dimension 0 = -4");
  check_error(head + info("t", {1ll << 40, 1ll << 40}, 0, 0) + pad, ErrorCode::kGgufInvalidShape, "element count overflows");
  check_error(head + info("t", {1ll << 62, 1}, 0, 0) + pad, ErrorCode::kGgufInvalidShape, "byte size overflows");
  check_error(head + info("t", {32}, 42, 0) + pad, ErrorCode::kGgufUnknownType, "ggml type 42, which ggml does not define");
  check_error(head + info("t", {32}, 31, 0) + pad, ErrorCode::kGgufRemovedType, "Q4_0_4_4");
  check_error(head + info("t", {32}, 4, 0) + pad, ErrorCode::kGgufRemovedType, "Q4_2");
  check_error(head + info("t", {100, 2}, 12, 0) + pad, ErrorCode::kGgufBlockMismatch,
              "tensor 't' is q4_K with rows of 100 values, not a multiple of its block size 256");
  check_error(head + info("t", {4}, 0, 16) + pad, ErrorCode::kGgufMisaligned, "offset 16, not a multiple of the alignment 32");
  check_error(head + info("t", {4}, 0, 1 << 20) + pad, ErrorCode::kGgufOutOfBounds, "ends past the file's end");
  check_error(head + info("t", {1000}, 0, 0) + pad, ErrorCode::kGgufOutOfBounds, "tensor 't' (4000 bytes at data offset 0)");
  check_error(preamble(3, 2, 0) + info("t", {4}, 0, 0) + info("t", {4}, 0, 32) + pad,
              ErrorCode::kGgufDuplicateTensor, "tensor 't' appears twice");
  check_error(preamble(3, 2, 0) + info("a", {16}, 0, 0) + info("b", {4}, 0, 32) + pad,
              ErrorCode::kGgufOverlap, "tensor 'b' [32, 48) overlaps tensor 'a', which ends at 64");
  // An empty tensor holds no bytes but its offset still lies in the data section.
  auto empty = gguf::parse(preamble(3, 2, 0) + info("x", {32}, 8, 0) + info("e", {0, 4}, 0, 96) + pad, "m.gguf");
  REQUIRE(empty.ok());
  CHECK(empty->data_size == 96);
  // The same two tensors in either order and apart are fine.
  CHECK(gguf::parse(preamble(3, 2, 0) + info("b", {4}, 0, 64) + info("a", {16}, 0, 0) + pad, "m.gguf").ok());
}

TEST_CASE("GGUF hostile: truncated at every byte of a small file fails cleanly, by name") {
  const std::string bytes = test::build_gguf(small_spec());
  auto whole = gguf::parse(bytes, "m.gguf");
  REQUIRE(whole.ok());
  // The last tensor's padding is not needed: the file may end right after its data.
  const std::uint64_t end = whole->data_offset + whole->data_size;
  CHECK(gguf::parse(bytes.substr(0, end), "m.gguf").ok());
  for (std::size_t n = 0; n < end; ++n) {
    const std::string cut = bytes.substr(0, n);
    auto r = gguf::parse(cut, "m.gguf");
    REQUIRE_FALSE_MESSAGE(r.ok(), n);
    const ErrorCode c = r.error().code();
    CHECK_MESSAGE((c == ErrorCode::kGgufTruncated || c == ErrorCode::kGgufOutOfBounds || c == ErrorCode::kGgufTooLarge),
                  n, ": ", r.error().message());
    // With the real size known, the same prefix is a truncation of the header or a valid header.
    auto with_size = gguf::parse(cut, "m.gguf", bytes.size());
    if (!with_size.ok()) CHECK((with_size.error().code() == ErrorCode::kGgufTruncated));
  }
}

TEST_CASE("GGUF: the files llama.cpp's converter wrote (golden/llamacpp): their tensors hold the safetensors' bytes, their dims the config's") {
  const auto ref = test::reference_dir();
  if (!ref) return test::skip_loudly("GGUF golden files: no reference dir");
  // The converter names Mixtral's architecture "llama" and stacks its experts into one tensor per
  // projection; Qwen3 keeps one tensor per HF tensor.
  const struct { const char* family; const char* arch; bool same_count; } cases[] = {{"qwen3", "qwen3", true}, {"mixtral", "llama", false}};
  for (const auto& c : cases) {
    CAPTURE(c.family);
    const std::string dir = *ref + "/golden/llamacpp/" + c.family;
    const std::string bytes = test::read_text(dir + "/model.gguf");
    auto r = gguf::parse(bytes, c.family);
    REQUIRE_MESSAGE(r.ok(), r.error().message());
    const gguf::File& f = *r;
    CHECK(f.version == 3);
    CHECK(f.find("general.architecture")->text == c.arch);
    // llama.cpp's writer packs the tensors in order, each padded to the alignment: the file ends
    // with the last one's padding.
    CHECK(f.data_offset + (f.data_size + f.alignment - 1) / f.alignment * f.alignment == bytes.size());
    const std::string st_bytes = test::read_text(dir + "/model.safetensors");
    auto st = safetensors::parse(st_bytes, st_bytes.size(), "model.safetensors");
    REQUIRE(st.ok());
    std::uint64_t st_total = 0;
    for (const auto& t : st->tensors) st_total += t.nbytes();
    for (const auto& t : f.tensors) CHECK(t.traits().name == "f32");  // both sides F32
    CHECK(f.tensor_bytes() == st_total);
    if (c.same_count) CHECK(f.tensors.size() == st->tensors.size());
    // The dims read from the metadata, against the model's config.json.
    auto m = gguf_model({f}, {c.family});
    REQUIRE_MESSAGE(m.ok(), m.error().message());
    const auto cfg = Json::parse(test::read_text(dir + "/config.json"));
    const ModelDims& d = m->dims;
    CHECK(d.layers == cfg["num_hidden_layers"].get<std::int64_t>());
    CHECK(d.hidden == cfg["hidden_size"].get<std::int64_t>());
    CHECK(d.heads == cfg["num_attention_heads"].get<std::int64_t>());
    CHECK(d.kv_heads == cfg["num_key_value_heads"].get<std::int64_t>());
    CHECK(d.vocab == cfg["vocab_size"].get<std::int64_t>());
    CHECK(d.head_dim == cfg.value("head_dim", d.hidden / d.heads));
    CHECK(d.experts == cfg.value("num_local_experts", std::int64_t{0}));
    CHECK(d.experts_per_token == cfg.value("num_experts_per_tok", std::int64_t{0}));
    CHECK(d.tied_embeddings == cfg.value("tie_word_embeddings", false));
    CHECK(m->params == f.tensor_bytes() / 4);
  }
}
