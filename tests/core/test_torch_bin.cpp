// torch.save checkpoints (memfit/format/torch_bin.h): zip + restricted pickle → absolute byte
// ranges. The golden tiny-gpt2 .bin files must give the very bytes of the golden model.safetensors.
#include <doctest/doctest.h>

#include <map>

#include "memfit/format/safetensors.h"
#include "memfit/format/torch_bin.h"
#include "support/reference.h"
#include "support/torch_bin_builder.h"

using memfit::ErrorCode;
using memfit::test::f32_bytes;
using memfit::test::PickledTensor;
using memfit::test::tensor;
using memfit::test::state_dict_pickle;
using memfit::test::torch_bin;
namespace tb = memfit::torch_bin;

namespace {

memfit::Result<tb::Checkpoint> read_bytes(const std::string& bytes) {
  return tb::read(memfit::zip::memory_source(bytes, "m.bin"));
}

void check_error(const std::string& bytes, ErrorCode code, const std::string& fragment) {
  const auto r = read_bytes(bytes);
  REQUIRE_FALSE(r.ok());
  CHECK_MESSAGE(r.error().code() == code, r.error().message());
  CHECK_MESSAGE(r.error().message().find(fragment) != std::string::npos, r.error().message());
}

// name → the tensor's bytes in the golden model.safetensors
std::map<std::string, std::string> safetensors_bytes(const std::string& path) {
  const std::string file = memfit::test::read_text(path);
  const auto h = memfit::safetensors::parse(file, file.size(), path);
  REQUIRE(h.ok());
  std::map<std::string, std::string> out;
  for (const auto& t : h->tensors) out[t.name] = file.substr(h->data_start() + t.begin, t.nbytes());
  return out;
}

}  // namespace

TEST_CASE("torch_bin: golden pytorch_model.bin — 53 keys, tied storage, bytes equal to safetensors") {
  const auto ref = memfit::test::reference_dir();
  if (!ref) return memfit::test::skip_loudly("torch_bin: golden tiny-gpt2 bin/");
  const std::string dir = *ref + "/golden/tiny-gpt2/";
  const std::string file = memfit::test::read_text(dir + "bin/pytorch_model.bin");
  const auto r = read_bytes(file);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(r->stem == "pytorch_model");  // from the archive, not "archive/"
  CHECK(r->tensors.size() == 53);
  CHECK(r->storages == 52);
  CHECK(r->ordered_dict);
  const auto st = safetensors_bytes(dir + "model.safetensors");
  CHECK(st.size() == 52);  // save_pretrained dropped the tied lm_head.weight
  for (const auto& t : r->tensors) {
    CHECK(t.contiguous);
    CHECK(t.span_bytes == t.nbytes);
    CHECK(t.data_offset % 64 == 0);
    const std::string name = t.name == "lm_head.weight" ? "transformer.wte.weight" : t.name;
    REQUIRE_MESSAGE(st.count(name), name);
    CHECK_MESSAGE(file.substr(t.data_offset, t.nbytes) == st.at(name), t.name);
  }
  CHECK(r->tensors.back().name == "lm_head.weight");
  CHECK(r->tensors.back().data_offset == r->tensors.front().data_offset);
}

TEST_CASE("torch_bin: golden bin-sharded shards — key lists and bytes") {
  const auto ref = memfit::test::reference_dir();
  if (!ref) return memfit::test::skip_loudly("torch_bin: golden tiny-gpt2 bin-sharded/");
  const std::string dir = *ref + "/golden/tiny-gpt2/";
  const auto st = safetensors_bytes(dir + "model.safetensors");
  // golden README: shard 1 = wte, wpe, h.0.{ln_1, attn, ln_2} + lm_head (11); 2 = 24; 3 = 18
  const std::vector<std::size_t> counts{11, 24, 18};
  std::size_t total = 0;
  for (int i = 1; i <= 3; ++i) {
    const std::string stem = "pytorch_model-0000" + std::to_string(i) + "-of-00003";
    const std::string file = memfit::test::read_text(dir + "bin-sharded/" + stem + ".bin");
    const auto r = read_bytes(file);
    REQUIRE_MESSAGE(r.ok(), r.error().message());
    CHECK(r->stem == stem);
    CHECK_FALSE(r->ordered_dict);  // plain dicts (golden README)
    CHECK(r->tensors.size() == counts[static_cast<std::size_t>(i - 1)]);
    total += r->tensors.size();
    for (const auto& t : r->tensors) {
      const std::string name = t.name == "lm_head.weight" ? "transformer.wte.weight" : t.name;
      CHECK_MESSAGE(file.substr(t.data_offset, t.nbytes) == st.at(name), t.name);
    }
    if (i == 1) {
      CHECK(r->tensors[0].name == "transformer.wte.weight");
      CHECK(r->tensors[2].name == "transformer.h.0.ln_1.weight");
      CHECK(r->tensors.back().name == "lm_head.weight");
      CHECK(r->tensors.back().storage_key == r->tensors[0].storage_key);
    }
    if (i == 2) {
      CHECK(r->tensors.front().name == "transformer.h.0.mlp.c_fc.weight");
      CHECK(r->tensors.back().name == "transformer.h.2.ln_2.bias");
    }
    if (i == 3) CHECK(r->tensors.back().name == "transformer.ln_f.bias");
  }
  CHECK(total == 53);
}

TEST_CASE("torch_bin: any stem, ZIP64, views with offsets and strides") {
  // storage of 12 floats: a [3,4] view, its transpose [4,3] (non-contiguous), a row at offset 8
  const std::string pickle = state_dict_pickle({tensor("m", "0", 12, {3, 4}, {4, 1}),
                                                tensor("m_t", "0", 12, {4, 3}, {1, 4}),
                                                tensor("row", "0", 12, {4}, {1}, 8),
                                                tensor("s", "1", 1, {}, {})});
  for (bool zip64 : {false, true}) {
    const std::string bin = torch_bin("my model", pickle, {{"0", f32_bytes(12)}, {"1", f32_bytes(1, 7)}}, zip64);
    const auto r = read_bytes(bin);
    REQUIRE_MESSAGE(r.ok(), r.error().message());
    CHECK(r->stem == "my model");
    REQUIRE(r->tensors.size() == 4);
    const auto& m = r->tensors[0];
    const auto& mt = r->tensors[1];
    const auto& row = r->tensors[2];
    CHECK(m.contiguous);
    CHECK_FALSE(mt.contiguous);
    CHECK(mt.span_bytes == 48);
    CHECK(row.data_offset == m.data_offset + 32);
    CHECK(bin.substr(row.data_offset, 16) == f32_bytes(4, 8));
    CHECK(r->tensors[3].shape.empty());
    CHECK(r->tensors[3].nbytes == 4);
  }
}

TEST_CASE("torch_bin: hostile checkpoints") {
  const std::string ok_pickle = state_dict_pickle({tensor("w", "0", 4, {2, 2}, {2, 1})});
  SUBCASE("storage shorter than the tensor needs") {
    check_error(torch_bin("m", state_dict_pickle({tensor("w", "0", 4, {2, 3}, {3, 1})}), {{"0", f32_bytes(4)}}),
                ErrorCode::kTorchBinTensorOutOfStorage,
                "tensor 'w' (shape [2, 3], stride [3, 1], offset 0) needs 6 elements of storage '0', which has 4");
  }
  SUBCASE("offset past the storage") {
    check_error(torch_bin("m", state_dict_pickle({tensor("w", "0", 4, {2}, {1}, 3)}), {{"0", f32_bytes(4)}}),
                ErrorCode::kTorchBinTensorOutOfStorage, "needs 5 elements");
  }
  SUBCASE("strides that overflow") {
    check_error(torch_bin("m", state_dict_pickle({tensor("w", "0", 4, {5, 2}, {1ull << 62, 1})}), {{"0", f32_bytes(4)}}),
                ErrorCode::kTorchBinTensorOutOfStorage, "more than 2^64");
  }
  SUBCASE("storage entry shorter than declared") {
    check_error(torch_bin("m", ok_pickle, {{"0", f32_bytes(3)}}), ErrorCode::kTorchBinStorageSizeMismatch,
                "storage '0' declares 4 × float32 = 16 bytes; its entry 'm/data/0' holds 12");
  }
  SUBCASE("missing storage entry") {
    check_error(torch_bin("m", ok_pickle, {{"1", f32_bytes(4)}}), ErrorCode::kTorchBinMissingStorage,
                "no entry 'm/data/0'");
  }
  SUBCASE("compressed storage entry") {
    const auto z = memfit::test::build_zip({{"m/data.pkl", ok_pickle, 0}, {"m/data/0", f32_bytes(4), 8}});
    check_error(z.bytes, ErrorCode::kZipUnsupportedCompression, "'m/data/0' is compressed");
  }
  SUBCASE("no data.pkl") {
    const auto z = memfit::test::build_zip({{"m/data/0", f32_bytes(4), 0}});
    check_error(z.bytes, ErrorCode::kTorchBinNoDataPkl, "without a '<name>/data.pkl'");
  }
  SUBCASE("two data.pkl") {
    const auto z = memfit::test::build_zip({{"a/data.pkl", ok_pickle, 0}, {"b/data.pkl", ok_pickle, 0}});
    check_error(z.bytes, ErrorCode::kTorchBinNoDataPkl, "two pickles");
  }
  SUBCASE("legacy torch.save (a bare pickle stream)") {
    static const char legacy[] = "\x80\x02\x8a\x0al\xfc\x9c\x46\xf9 j\xa8P\x19.";  // torch's magic number
    check_error(std::string(legacy, sizeof legacy - 1) + std::string(100, 'x'),
                ErrorCode::kTorchBinNotZip, "legacy pickle-stream");
  }
  SUBCASE("forbidden global inside a real archive") {
    static const char evil[] = "\x80\x02" "cos\nsystem\nX\x02\x00\x00\x00idR.";
    check_error(torch_bin("m", std::string(evil, sizeof evil - 1), {}),
                ErrorCode::kPickleForbiddenGlobal, "m.bin/m/data.pkl: at byte 2");
  }
  SUBCASE("truncated archive") {
    const std::string bin = torch_bin("m", ok_pickle, {{"0", f32_bytes(4)}});
    check_error(bin.substr(0, bin.size() / 2), ErrorCode::kTorchBinNotZip, "not a zip archive");
  }
}

namespace {

// Records every byte range read: read_metadata must never touch a storage's entry.
struct Recorded {
  std::string bytes;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> reads;
  memfit::zip::ByteSource source() {
    auto s = memfit::zip::memory_source(bytes, "m.bin");
    auto inner = s.read;
    s.read = [this, inner](std::uint64_t offset, std::uint64_t length) {
      reads.emplace_back(offset, offset + length);
      return inner(offset, length);
    };
    return s;
  }
};

// Every read of `rec` avoids [lho, data end) of every storage entry of a fully read archive.
void check_no_storage_read(const Recorded& rec, const tb::Checkpoint& full) {
  const auto archive = memfit::zip::read_archive(memfit::zip::memory_source(rec.bytes, "m.bin"));
  REQUIRE(archive.ok());
  for (const auto& e : archive->entries) {
    if (e.name.find("/data/") == std::string::npos) continue;
    for (const auto& read : rec.reads) {  // not a structured binding: doctest's lambda captures it
      const std::uint64_t first = read.first, end = read.second;
      CHECK_MESSAGE((end <= e.local_header_offset || first >= e.data_offset + e.compressed_size),
                    e.name << " read at [" << first << ", " << end << ")");
    }
  }
  CHECK(full.storages > 0);
}

void check_same_tensors(const tb::Checkpoint& md, const tb::Checkpoint& full) {
  CHECK_FALSE(md.located);
  CHECK(md.stem == full.stem);
  CHECK(md.storages == full.storages);
  REQUIRE(md.tensors.size() == full.tensors.size());
  for (std::size_t i = 0; i < md.tensors.size(); ++i) {
    const auto& a = md.tensors[i];
    const auto& b = full.tensors[i];
    CHECK(a.name == b.name);
    CHECK(a.dtype == b.dtype);
    CHECK(a.shape == b.shape);
    CHECK(a.stride == b.stride);
    CHECK(a.nbytes == b.nbytes);
    CHECK(a.storage_key == b.storage_key);
    CHECK(a.data_offset == 0);
    CHECK(a.storage_file_offset == 0);
  }
}

}  // namespace

TEST_CASE("torch_bin: read_metadata — the same tensors as read, without reading a storage") {
  const std::string pickle = state_dict_pickle({tensor("m", "0", 12, {3, 4}, {4, 1}),
                                                tensor("m_t", "0", 12, {4, 3}, {1, 4}),
                                                tensor("s", "1", 1, {}, {})});
  auto check = [](Recorded rec) {
    const auto full = read_bytes(rec.bytes);
    REQUIRE(full.ok());
    const auto md = tb::read_metadata(rec.source());
    REQUIRE_MESSAGE(md.ok(), md.error().message());
    check_same_tensors(*md, *full);
    check_no_storage_read(rec, *full);
  };
  for (bool zip64 : {false, true})
    check(Recorded{torch_bin("m", pickle, {{"0", f32_bytes(12)}, {"1", f32_bytes(1, 7)}}, zip64), {}});
  const auto ref = memfit::test::reference_dir();
  if (!ref) return memfit::test::skip_loudly("torch_bin: read_metadata on the golden .bin");
  for (const char* f : {"bin/pytorch_model.bin", "bin-sharded/pytorch_model-00002-of-00003.bin"})
    check(Recorded{memfit::test::read_text(*ref + "/golden/tiny-gpt2/" + f), {}});
}

TEST_CASE("torch_bin: read_metadata refuses what read refuses, by the same error") {
  SUBCASE("a forbidden global") {
    static const char evil[] = "\x80\x02" "cos\nsystem\nX\x02\x00\x00\x00idR.";
    const auto r = tb::read_metadata(memfit::zip::memory_source(
        torch_bin("m", std::string(evil, sizeof evil - 1), {}), "m.bin"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == ErrorCode::kPickleForbiddenGlobal);
    CHECK(r.error().message().find("m.bin/m/data.pkl: at byte 2") != std::string::npos);
  }
  SUBCASE("a storage entry shorter than declared") {
    const std::string bin = torch_bin("m", state_dict_pickle({tensor("w", "0", 4, {2, 2}, {2, 1})}),
                                      {{"0", f32_bytes(3)}});
    const auto r = tb::read_metadata(memfit::zip::memory_source(bin, "m.bin"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == ErrorCode::kTorchBinStorageSizeMismatch);
  }
  SUBCASE("metadata_entries names data.pkl (and byteorder when present)") {
    const auto z = memfit::test::build_zip({{"x/data.pkl", "p", 0}, {"x/byteorder", "little", 0}});
    const auto a = memfit::zip::read_directory(memfit::zip::memory_source(z.bytes, "m.bin"));
    REQUIRE(a.ok());
    const auto names = tb::metadata_entries(*a);
    REQUIRE(names.ok());
    CHECK(*names == std::vector<std::string>{"x/data.pkl", "x/byteorder"});
  }
}
