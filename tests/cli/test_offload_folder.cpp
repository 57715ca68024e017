// Accelerate's offload folder (native/checkpoint/offload_folder.h): the exact index.json format, round
// trips through a mapping, atomic writes (a failure leaves nothing), reuse and rebuild.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "failure.h"
#include "file_reader.h"
#include "mapped_file.h"
#include "offload_folder.h"

using memfit::DType;
using memfit::Failure;
using memfit::checkpoint::OffloadEntry;
namespace fs = std::filesystem;

namespace {

std::string temp_dir() {
  char tmpl[] = "/tmp/memfit-offload-XXXXXX";
  return mkdtemp(tmpl);
}

// Deterministic bytes per tensor: byte k of tensor i is (i * 31 + k) mod 251.
std::string tensor_bytes(std::size_t i, std::uint64_t n) {
  std::string s(n, '\0');
  for (std::uint64_t k = 0; k < n; ++k) s[k] = static_cast<char>((i * 31 + k) % 251);
  return s;
}

const std::vector<OffloadEntry> kEntries{{"a.weight", DType::kF32, {2, 3}},
                                         {"b", DType::kBF16, {4}},
                                         {"s", DType::kI64, {}},
                                         {"caf\xc3\xa9", DType::kBool, {1}}};

memfit::checkpoint::TensorProducer producer(int* calls = nullptr, std::size_t fail_at = SIZE_MAX) {
  return [=](std::size_t i, const OffloadEntry& e, const memfit::checkpoint::ChunkWriter& write) {
    if (calls) ++*calls;
    if (i == fail_at) throw Failure{memfit::FailureKind::kCancelled, "cancelled"};
    const std::string b = tensor_bytes(i, e.nbytes());
    write(b.data(), b.size() / 2);  // two chunks
    write(b.data() + b.size() / 2, b.size() - b.size() / 2);
  };
}

// The message of the Failure `fn` throws ("" when it throws nothing).
template <typename Fn>
std::string failure_message(Fn&& fn) {
  try {
    fn();
  } catch (const Failure& e) {
    return e.message;
  }
  return "";
}

std::size_t entries_in(const std::string& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += !e.path().empty();
  return n;
}

}  // namespace

TEST_CASE("offload folder: index.json exactly as accelerate's json.dump(indent=2) writes it") {
  // Python: json.dumps({...}, indent=2) for these entries (ensure_ascii escapes 'é')
  const std::string expected =
      "{\n  \"a.weight\": {\n    \"dtype\": \"float32\",\n    \"shape\": [\n      2,\n      3\n    ]\n  },\n"
      "  \"b\": {\n    \"dtype\": \"bfloat16\",\n    \"shape\": [\n      4\n    ]\n  },\n"
      "  \"s\": {\n    \"dtype\": \"int64\",\n    \"shape\": []\n  },\n"
      "  \"caf\\u00e9\": {\n    \"dtype\": \"bool\",\n    \"shape\": [\n      1\n    ]\n  }\n}";
  CHECK(memfit::checkpoint::offload_index_json(kEntries) == expected);
  CHECK(memfit::checkpoint::offload_dtype_name(DType::kBF16) == "bfloat16");  // int16 bytes, own name
  CHECK_FALSE(memfit::checkpoint::offload_dtype_name(DType::kF8_E4M3));       // numpy has no float8
}

TEST_CASE("offload folder: round trip, 0-d as one element, reuse") {
  const std::string dir = temp_dir() + "/offload";
  int calls = 0;
  auto r = memfit::checkpoint::write_offload_folder(dir, kEntries, producer(&calls), {false});
  CHECK_FALSE(r.reused);
  CHECK(calls == 4);
  CHECK(r.bytes_written == 24 + 8 + 8 + 1);
  CHECK(entries_in(fs::path(dir).parent_path().string()) == 1);  // no temporary left
  const auto back = memfit::checkpoint::read_offload_index(dir);
  REQUIRE(back.size() == kEntries.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    CHECK(back[i].name == kEntries[i].name);
    CHECK(back[i].dtype == kEntries[i].dtype);
    CHECK(back[i].shape == kEntries[i].shape);
    const memfit::io::MappedFile f = memfit::checkpoint::map_offloaded(dir, back[i]);
    CHECK(std::string(reinterpret_cast<const char*>(f.data()), f.size()) == tensor_bytes(i, kEntries[i].nbytes()));
  }
  CHECK(fs::file_size(dir + "/s.dat") == 8);  // 0-d: one int64
  r = memfit::checkpoint::write_offload_folder(dir, kEntries, producer(&calls), {false});
  CHECK(r.reused);
  CHECK(calls == 4);  // nothing produced again
}

TEST_CASE("offload folder: a failure midway leaves no folder; an old complete one survives") {
  const std::string parent = temp_dir();
  const std::string dir = parent + "/offload";
  CHECK_THROWS_AS(memfit::checkpoint::write_offload_folder(dir, kEntries, producer(nullptr, 2), {false}), Failure);
  CHECK_FALSE(fs::exists(dir));
  CHECK(entries_in(parent) == 0);  // the temporary folder was removed

  // a previous, different folder stays as it was when the new write fails
  memfit::checkpoint::write_offload_folder(dir, {kEntries[0]}, producer(), {false});
  CHECK_THROWS_AS(memfit::checkpoint::write_offload_folder(dir, kEntries, producer(nullptr, 3), {false}), Failure);
  CHECK(memfit::checkpoint::offload_folder_matches(dir, {kEntries[0]}));
  CHECK(entries_in(parent) == 1);
}

TEST_CASE("offload folder: incomplete or mismatching folders are rebuilt") {
  const std::string dir = temp_dir() + "/offload";
  memfit::checkpoint::write_offload_folder(dir, kEntries, producer(), {false});
  SUBCASE("a truncated .dat") {
    fs::resize_file(dir + "/b.dat", 3);
    CHECK_FALSE(memfit::checkpoint::offload_folder_matches(dir, kEntries));
  }
  SUBCASE("a missing .dat") {
    fs::remove(dir + "/s.dat");
    CHECK_FALSE(memfit::checkpoint::offload_folder_matches(dir, kEntries));
  }
  SUBCASE("another shape") {
    auto other = kEntries;
    other[0].shape = {3, 2};
    CHECK_FALSE(memfit::checkpoint::offload_folder_matches(dir, other));
  }
  int calls = 0;
  const auto r = memfit::checkpoint::write_offload_folder(dir, kEntries, producer(&calls), {false});
  CHECK(memfit::checkpoint::offload_folder_matches(dir, kEntries));
  if (calls > 0) CHECK_FALSE(r.reused);
}

TEST_CASE("offload folder: refused inputs") {
  const std::string dir = temp_dir() + "/offload";
  CHECK(failure_message([&] { memfit::checkpoint::write_offload_folder(dir, {{"../evil", DType::kF32, {1}}}, producer(), {false}); })
            .find("not a plain file name") != std::string::npos);
  CHECK_THROWS_AS(memfit::checkpoint::write_offload_folder(dir, {{"x", DType::kF8_E4M3, {1}}}, producer(), {false}),
                  Failure);
  auto short_producer = [](std::size_t, const OffloadEntry&, const memfit::checkpoint::ChunkWriter& write) {
    write("abc", 3);
  };
  try {
    memfit::checkpoint::write_offload_folder(dir, {{"w", DType::kF32, {2}}}, short_producer, {false});
    FAIL("expected an error");
  } catch (const Failure& e) {
    CHECK(e.message.find("3 bytes were produced; float32 [2] needs 8") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(dir));
  // a .dat whose size does not match the index cannot be mapped
  memfit::checkpoint::write_offload_folder(dir, kEntries, producer(), {false});
  fs::resize_file(dir + "/a.weight.dat", 4);
  CHECK(failure_message([&] { memfit::checkpoint::map_offloaded(dir, kEntries[0]); }).find("needs 24") != std::string::npos);
}

TEST_CASE("mapped file: ranges are checked, errors name the path") {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/f") << "hello";
  memfit::io::MappedFile f(dir + "/f");
  CHECK(f.size() == 5);
  CHECK(f.bytes(1, 3) == "ell");
  f.at(0, 1)[0] = 'J';  // private mapping: writable, never reaches the file
  CHECK(f.bytes(0, 5) == "Jello");
  CHECK(memfit::io::read_file(dir + "/f") == "hello");
  CHECK(failure_message([&] { (void)f.bytes(3, 10, "tensor 'x'"); }).find("tensor 'x' at offset 3 (+10 bytes)") !=
        std::string::npos);
  CHECK(failure_message([&] { memfit::io::MappedFile m(dir + "/missing"); }).find("No such file") != std::string::npos);
  std::ofstream(dir + "/empty").close();
  memfit::io::MappedFile e(dir + "/empty");
  CHECK(e.size() == 0);
}
