// A Hub repo of GGUF files (memfit/repo/gguf_repo.h): quantization names, split groups, which
// header is read (and read again, longer, while it is cut short), the fit column against
// llama.cpp's placement worked by hand, the api's base64 binaries, and the strict base64 decoder.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "memfit/api/api.h"
#include "memfit/format/base64.h"
#include "memfit/repo/gguf_repo.h"
#include "support/gguf_builder.h"

using namespace memfit;
using gguf::ValueType;

namespace {

// The tiny model's bytes, worked from ggml's type sizes (q8_0: 34 bytes per 32 values; f32: 4),
// not from memfit: llama_gguf(4 blocks, n_embd 256, 4 heads, 2 KV heads of 64, vocab 1000,
// ff 512, q8_0).
constexpr std::uint64_t q8(std::uint64_t ne0, std::uint64_t ne1) { return ne0 / 32 * 34 * ne1; }
constexpr std::uint64_t kBlock = 4 * 256 + q8(256, 256) + 2 * q8(256, 128) + q8(256, 256) + 4 * 256 +
                                 2 * q8(256, 512) + q8(512, 256);
constexpr std::uint64_t kOutput = 4 * 256 + q8(256, 1000);  // output_norm + output: the output layer
constexpr std::uint64_t kEmbd = q8(256, 1000);              // token_embd: always on the CPU
constexpr std::uint64_t kWeights = 4 * kBlock + kOutput + kEmbd;
// llama.cpp at --ctx-size 4096, f16 cache: n_ctx 4096 (a multiple of 256 already); each layer's
// K and V are n_ctx × n_embd_k_gqa (2 heads × 64) × 2 bytes each.
constexpr double kKvPerLayer = 2.0 * 4096 * 128 * 2;
// memfit's stated compute buffer (llamacpp_offload.h: llama.cpp reserves a graph, which metadata
// cannot reproduce): n_ubatch 512 × (4·n_embd + 2·n_ff + n_vocab where the output is) × 4 bytes.
constexpr double kCompute = 512.0 * (4 * 256 + 2 * 512 + 1000) * 4;
constexpr double kOverhead = 500.0 * 1024 * 1024;
// Every layer on the GPU: the blocks and the output layer, their KV, compute and overhead.
constexpr double kAllOnGpu = 4.0 * kBlock + kOutput + 4 * kKvPerLayer + kCompute + kOverhead;

test::GgufSpec tiny_spec() { return test::llama_gguf(4, 256, 4, 2, 1000, 512, 8); }

std::string tiny() { return test::build_gguf(tiny_spec()); }

// The bytes before the data section: what a caller reads of a file (its header, padded).
std::uint64_t data_offset(const test::GgufSpec& spec, const std::string& file) {
  auto tensors = spec.tensors;
  return file.size() - gguf::layout(tensors, spec.alignment);
}

repo::RepoFiles listing(std::vector<std::pair<std::string, std::uint64_t>> files) {
  repo::RepoFiles f;
  f.repo = "org/tiny-GGUF";
  for (auto& [path, size] : files) {
    f.listing.push_back(path);
    f.sizes[path] = size;
  }
  return f;
}

// RFC 4648 §4 by the table, for the api tests' requests.
std::string base64(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t(std::uint8_t(bytes[i])) << 16) | (std::uint32_t(std::uint8_t(bytes[i + 1])) << 8) |
                            std::uint8_t(bytes[i + 2]);
    for (int s : {18, 12, 6, 0}) out += kAlphabet[(v >> s) & 63];
  }
  if (bytes.size() - i == 1) {
    const std::uint32_t v = std::uint32_t(std::uint8_t(bytes[i])) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (bytes.size() - i == 2) {
    const std::uint32_t v = (std::uint32_t(std::uint8_t(bytes[i])) << 16) | (std::uint32_t(std::uint8_t(bytes[i + 1])) << 8);
    for (int s : {18, 12, 6}) out += kAlphabet[(v >> s) & 63];
    out += '=';
  }
  return out;
}

const nlohmann::ordered_json* row_of(const nlohmann::ordered_json& models, const std::string& file) {
  for (const auto& m : models)
    if (m["file"] == file) return &m;
  return nullptr;
}

}  // namespace

TEST_CASE("GGUF repo: the quantization a file name says (llama.cpp's type names, any case, split suffix off)") {
  CHECK(repo::gguf_quant_of_name("Meta-Llama-3-8B-Instruct-Q4_K_M.gguf") == "Q4_K_M");
  CHECK(repo::gguf_quant_of_name("llama-2-7b.Q5_K_S.gguf") == "Q5_K_S");  // TheBloke's dots
  CHECK(repo::gguf_quant_of_name("qwen2.5-7b-instruct-q8_0.gguf") == "Q8_0");
  CHECK(repo::gguf_quant_of_name("BF16/Qwen3-32B-BF16-00001-of-00002.gguf") == "BF16");
  CHECK(repo::gguf_quant_of_name("gemma-3-4b-it-UD-IQ2_XXS.gguf") == "IQ2_XXS");
  CHECK(repo::gguf_quant_of_name("Qwen3-8B-UD-Q4_K_XL.gguf") == "Q4_K_XL");
  CHECK(repo::gguf_quant_of_name("bitnet-TQ1_0.gguf") == "TQ1_0");
  CHECK(repo::gguf_quant_of_name("gpt-oss-20b-mxfp4.gguf") == "MXFP4");
  CHECK(repo::gguf_quant_of_name("model-f16.gguf") == "F16");
  CHECK(repo::gguf_quant_of_name("Qwen3-8B.gguf") == "");  // "Qwen3" is not Q + a digit
  CHECK(repo::gguf_quant_of_name("Llama-3.1-8B.gguf") == "");
}

TEST_CASE("GGUF repo: one model per file or split group, projectors apart, sizes summed") {
  const auto files = listing({{"README.md", 10},
                              {"m-Q8_0.gguf", 800},
                              {"BF16/m-BF16-00002-of-00002.gguf", 200},
                              {"BF16/m-BF16-00001-of-00002.gguf", 300},
                              {"m-Q2_K-00001-of-00003.gguf", 50},  // two of three parts listed
                              {"m-Q2_K-00003-of-00003.gguf", 50},
                              {"mmproj-m-f16.gguf", 90}});
  const repo::GgufRepoListing l = repo::gguf_repo_listing(files);
  REQUIRE(l.models.size() == 3);
  CHECK(l.models[0].paths == std::vector<std::string>{"m-Q8_0.gguf"});
  CHECK(l.models[0].parts == 1);
  CHECK(l.models[0].size == std::optional<std::uint64_t>(800));
  CHECK(l.models[1].paths == std::vector<std::string>{"BF16/m-BF16-00001-of-00002.gguf", "BF16/m-BF16-00002-of-00002.gguf"});
  CHECK(l.models[1].parts == 2);
  CHECK(l.models[1].quant == "BF16");
  CHECK(l.models[1].size == std::optional<std::uint64_t>(500));
  CHECK(l.models[2].parts == 3);
  CHECK_FALSE(l.models[2].size.has_value());  // a part is missing: no total
  CHECK(l.projectors == std::vector<std::string>{"mmproj-m-f16.gguf"});
  CHECK((repo::detect_kind(files.listing, "") == repo::RepoKind::kGguf));
}

TEST_CASE("GGUF repo: needs Q4_K_M's header (the quantization most people download), a first 1 MiB, never a projector") {
  auto files = listing({{"mmproj-tiny-f16.gguf", 5'000'000}, {"tiny-Q8_0.gguf", 900'000'000},
                        {"tiny-Q4_K_M.gguf", 500'000'000}, {"tiny-F16.gguf", 2'000'000'000}});
  auto needs = repo::repo_needs(repo::RepoKind::kGguf, files);
  REQUIRE(needs.size() == 1);
  CHECK(needs[0].path == "tiny-Q4_K_M.gguf");
  CHECK((needs[0].form == repo::FileNeed::Form::kGgufHeader));
  CHECK(needs[0].bytes == 1024 * 1024);
  // Without a Q4_K_M: the first single-file model; a file smaller than 1 MiB is asked whole.
  files = listing({{"a-F16-00001-of-00002.gguf", 10}, {"a-F16-00002-of-00002.gguf", 10}, {"a-Q8_0.gguf", 4000}});
  needs = repo::repo_needs(repo::RepoKind::kGguf, files);
  REQUIRE(needs.size() == 1);
  CHECK(needs[0].path == "a-Q8_0.gguf");
  CHECK(needs[0].bytes == 4000);
}

TEST_CASE("GGUF repo: a header longer than the bytes read is asked again with twice as many, until it is whole") {
  test::GgufSpec s = test::llama_gguf(1, 64, 2, 2, 64, 128, 0);
  std::vector<gguf::Value> tokens;
  for (int i = 0; i < 100000; ++i) tokens.push_back(gguf::make_string("token-number-" + std::to_string(i)));
  s.metadata.push_back({"tokenizer.ggml.tokens", gguf::make_array(ValueType::kString, tokens)});
  const std::string file = test::build_gguf(s);
  const std::uint64_t header = data_offset(s, file);
  REQUIRE(header > 2 * 1024 * 1024);
  REQUIRE(header < 4 * 1024 * 1024);
  auto files = listing({{"big-Q8_0.gguf", 7'000'000'000}});  // the listing's size: the data is not read
  std::vector<std::uint64_t> asked;
  for (int round = 0; round < 5; ++round) {
    const auto needs = repo::repo_needs(repo::RepoKind::kGguf, files);
    if (needs.empty()) break;
    REQUIRE(needs.size() == 1);
    asked.push_back(needs[0].bytes);
    files.binaries["big-Q8_0.gguf"] = file.substr(0, static_cast<std::size_t>(needs[0].bytes));
  }
  CHECK(asked == std::vector<std::uint64_t>{1u << 20, 2u << 20, 4u << 20});
  const repo::RepoReport r = repo::repo_report(repo::RepoKind::kGguf, files, {});
  CHECK(r.fields["model"]["vocab"] == 64);  // the embedding's rows
  // Bytes that are not a GGUF header are not asked again: the report names the parse error.
  files.binaries["big-Q8_0.gguf"] = "GGUF" + std::string(100, '\xff');
  CHECK(repo::repo_needs(repo::RepoKind::kGguf, files).empty());
  try {
    (void)repo::repo_report(repo::RepoKind::kGguf, files, {});
    FAIL("a bad header was answered");
  } catch (const Error& e) {
    CHECK((e.code() == ErrorCode::kGgufUnsupportedVersion));
    CHECK(e.message().find("big-Q8_0.gguf") != std::string::npos);
  }
}

TEST_CASE("GGUF repo: VRAM with every layer offloaded and the largest --gpu-layers, against llama.cpp's placement by hand") {
  const test::GgufSpec spec = tiny_spec();
  const std::string file = tiny();
  const std::uint64_t header = data_offset(spec, file);
  REQUIRE(file.size() == header + kWeights);
  const std::uint64_t q8_size = header + 2 * kWeights;  // another quantization: twice the weights
  auto files = listing({{"README.md", 10}, {"tiny-Q8_0.gguf", q8_size}, {"tiny-Q4_K_M.gguf", file.size()},
                        {"tiny-F16-00001-of-00002.gguf", 3'000'000'000}, {"tiny-F16-00002-of-00002.gguf", 2'000'000'000},
                        {"mmproj-tiny-f16.gguf", 1000}});
  files.binaries["tiny-Q4_K_M.gguf"] = file.substr(0, static_cast<std::size_t>(header));
  REQUIRE(repo::repo_needs(repo::RepoKind::kGguf, files).empty());

  repo::RepoOptions o;
  o.gpu_bytes = static_cast<std::uint64_t>(kAllOnGpu);  // exactly enough
  repo::RepoReport r = repo::repo_report(repo::RepoKind::kGguf, files, o);
  const auto& models = r.fields["models"];
  REQUIRE(models.size() == 3);
  CHECK(models[0]["file"] == "tiny-Q4_K_M.gguf");  // smallest first
  CHECK(models[1]["file"] == "tiny-Q8_0.gguf");
  CHECK(models[2]["file"] == "tiny-F16-00001-of-00002.gguf");
  const auto& rep = models[0];
  CHECK(rep["exact"] == true);
  CHECK(rep["quant"] == "Q4_K_M");
  CHECK(rep["size"] == file.size());
  CHECK(rep["vram_needed"].get<double>() == doctest::Approx(kAllOnGpu).epsilon(1e-12));
  CHECK(rep["fits"] == true);
  CHECK(rep["max_gpu_layers"] == 5);  // n_layer + 1: the output layer and every block
  CHECK(r.fields["kv_cache"].get<double>() == doctest::Approx(4 * kKvPerLayer));
  CHECK(r.fields["compute"].get<double>() == doctest::Approx(kCompute));
  CHECK(r.fields["n_ctx"] == 4096);
  // The other quantization: every tensor twice as large (its size less the header, over these weights).
  const auto& other = models[1];
  CHECK(other["exact"] == false);
  CHECK(other["vram_needed"].get<double>() ==
        doctest::Approx(kAllOnGpu + 4.0 * kBlock + kOutput).epsilon(1e-12));
  CHECK(other["fits"] == false);
  CHECK(models[2]["files"] == 2);
  CHECK(models[2]["size"] == 5'000'000'000ull);
  CHECK(models[2]["fits"] == false);
  CHECK(r.fields["projectors"] == nlohmann::ordered_json::array({"mmproj-tiny-f16.gguf"}));
  REQUIRE(r.tables.size() == 2);
  CHECK(r.tables[0].rows.size() == 3);
  CHECK(r.tables[0].columns.size() == 7);

  // One byte short: the first block goes back to the CPU with its KV (llama.cpp offloads the
  // output layer first, then the last blocks).
  o.gpu_bytes = static_cast<std::uint64_t>(kAllOnGpu) - 1;
  r = repo::repo_report(repo::RepoKind::kGguf, files, o);
  CHECK(r.fields["models"][0]["fits"] == false);
  CHECK(r.fields["models"][0]["max_gpu_layers"] == 4);
  o.gpu_bytes = static_cast<std::uint64_t>(kAllOnGpu - kBlock - kKvPerLayer) - 1;  // 4 slots, less a byte
  r = repo::repo_report(repo::RepoKind::kGguf, files, o);
  CHECK(r.fields["models"][0]["max_gpu_layers"] == 3);
  // Below the output layer + compute + overhead: nothing offloaded.
  o.gpu_bytes = static_cast<std::uint64_t>(kOutput + kCompute + kOverhead) - 1;
  r = repo::repo_report(repo::RepoKind::kGguf, files, o);
  CHECK(r.fields["models"][0]["max_gpu_layers"] == 0);
  // Another context: the KV cache scales with n_ctx (8192 cells).
  o = {};
  o.context = 8192;
  r = repo::repo_report(repo::RepoKind::kGguf, files, o);
  CHECK(r.fields["kv_cache"].get<double>() == doctest::Approx(8 * kKvPerLayer));
  CHECK_FALSE(r.fields.contains("vram"));
  CHECK_FALSE(r.fields["models"][0].contains("fits"));
  CHECK(r.tables[0].columns.size() == 5);
}

TEST_CASE("GGUF repo of split models only: every part of one is read (the first holds the metadata)") {
  const test::GgufSpec whole = tiny_spec();
  test::GgufSpec a = whole, b = whole;
  a.tensors.assign(whole.tensors.begin(), whole.tensors.begin() + 10);
  b.tensors.assign(whole.tensors.begin() + 10, whole.tensors.end());
  b.metadata.clear();
  for (auto [s, no] : {std::pair{&a, 0}, std::pair{&b, 1}}) {
    s->metadata.push_back({"split.no", gguf::make_uint(ValueType::kUint16, static_cast<std::uint64_t>(no))});
    s->metadata.push_back({"split.count", gguf::make_uint(ValueType::kUint16, 2)});
    s->metadata.push_back({"split.tensors.count", gguf::make_int(ValueType::kInt32, static_cast<std::int64_t>(whole.tensors.size()))});
  }
  const std::string fa = test::build_gguf(a), fb = test::build_gguf(b);
  auto files = listing({{"t-Q8_0-00001-of-00002.gguf", fa.size()}, {"t-Q8_0-00002-of-00002.gguf", fb.size()},
                        {"t-F16-00001-of-00003.gguf", 1}, {"t-F16-00002-of-00003.gguf", 1}, {"t-F16-00003-of-00003.gguf", 1}});
  const auto needs = repo::repo_needs(repo::RepoKind::kGguf, files);
  REQUIRE(needs.size() == 2);
  CHECK(needs[0].path == "t-Q8_0-00001-of-00002.gguf");
  CHECK(needs[1].path == "t-Q8_0-00002-of-00002.gguf");
  files.binaries[needs[0].path] = fa;
  files.binaries[needs[1].path] = fb;
  repo::RepoOptions o;
  o.gpu_bytes = static_cast<std::uint64_t>(kAllOnGpu);
  const repo::RepoReport r = repo::repo_report(repo::RepoKind::kGguf, files, o);
  const auto* rep = row_of(r.fields["models"], "t-Q8_0-00001-of-00002.gguf");
  REQUIRE(rep);
  CHECK((*rep)["exact"] == true);
  CHECK((*rep)["vram_needed"].get<double>() == doctest::Approx(kAllOnGpu).epsilon(1e-12));
  CHECK((*rep)["max_gpu_layers"] == 5);
}

TEST_CASE("GGUF repo: without .gguf files, or without the header, a named error") {
  auto files = listing({{"README.md", 10}});
  CHECK_THROWS_AS(repo::repo_needs(repo::RepoKind::kGguf, files), Error);
  files = listing({{"m-Q8_0.gguf", 1000}});
  try {
    (void)repo::repo_report(repo::RepoKind::kGguf, files, {});
    FAIL("answered without the header");
  } catch (const Error& e) {
    CHECK((e.code() == ErrorCode::kRepoMissingFile));
    CHECK(e.message().find("m-Q8_0.gguf") != std::string::npos);
  }
}

TEST_CASE("api repo: a GGUF repo in two calls, the header base64 in 'binaries'") {
  const test::GgufSpec spec = tiny_spec();
  const std::string file = tiny();
  const std::uint64_t header = data_offset(spec, file);
  nlohmann::json req = {{"repo", "org/tiny-GGUF"}, {"listing", {"tiny-Q4_K_M.gguf", "tiny-Q8_0.gguf"}},
                        {"sizes", {{"tiny-Q4_K_M.gguf", file.size()}, {"tiny-Q8_0.gguf", header + 2 * kWeights}}},
                        {"options", {{"gpu_bytes", kAllOnGpu}}}};
  auto reply = nlohmann::json::parse(api::repo(req.dump()));
  CHECK(reply["kind"] == "gguf");
  REQUIRE(reply["needs"].size() == 1);
  CHECK(reply["needs"][0] == nlohmann::json({{"repo", ""}, {"path", "tiny-Q4_K_M.gguf"}, {"form", "gguf_header"},
                                             {"optional", false}, {"bytes", 1024 * 1024}}));
  REQUIRE(file.size() > 1024 * 1024);  // the zero-filled weights: a first read of 1 MiB, not the file
  req["binaries"] = {{"tiny-Q4_K_M.gguf", base64(file.substr(0, static_cast<std::size_t>(header)))}};
  reply = nlohmann::json::parse(api::repo(req.dump()));
  REQUIRE_MESSAGE(reply.contains("report"), reply.dump());
  CHECK(reply["report"]["kind"] == "gguf");
  const auto& models = reply["report"]["fields"]["models"];
  REQUIRE(models.size() == 2);
  CHECK(models[0]["fits"] == true);
  CHECK(models[0]["max_gpu_layers"] == 5);
  CHECK(models[1]["fits"] == false);
  // Cut short: asked again, for at least the first read; twice what was sent past it.
  req["binaries"] = {{"tiny-Q4_K_M.gguf", base64(file.substr(0, 60))}};
  reply = nlohmann::json::parse(api::repo(req.dump()));
  REQUIRE(reply.contains("needs"));
  CHECK(reply["needs"][0]["bytes"] == 1024 * 1024);
  // Not base64: the field named.
  req["binaries"] = {{"tiny-Q4_K_M.gguf", "R0dVRg=\n"}};
  reply = nlohmann::json::parse(api::repo(req.dump()));
  CHECK(reply["error"]["code"] == "invalid_argument");
  CHECK(reply["error"]["message"].get<std::string>().find("binaries['tiny-Q4_K_M.gguf']") != std::string::npos);
}

TEST_CASE("base64: RFC 4648's test vectors and every byte value") {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},  {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, text] : vectors) {
    const auto r = base64_decode(text, "t");
    REQUIRE_MESSAGE(r.ok(), r.error().message());
    CHECK(*r == plain);
    CHECK(base64_encode(plain) == text);
  }
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (std::size_t cut : {256u, 255u, 254u}) {
    const auto r = base64_decode(base64(all.substr(0, cut)), "t");
    REQUIRE(r.ok());
    CHECK(*r == all.substr(0, cut));
    CHECK(base64_encode(all.substr(0, cut)) == base64(all.substr(0, cut)));
  }
}

TEST_CASE("base64 hostile: length, alphabet, padding and leftover bits are refused with the position") {
  const std::pair<std::string, const char*> bad[] = {
      {"Zg=", "groups of 4"},        {"Zg", "groups of 4"},           {"Zm9vY", "groups of 4"},
      {"Z===", "'=' at position 1"}, {"====", "'=' at position 0"},   {"Zg==Zg==", "'=' at position 2"},
      {"Zm9v\nZg=", "byte 0x0a at position 4"},                       {"Zm9v Zg=", "' ' at position 4"},
      {"Zm-_", "'-' at position 2"}, {std::string("Zm9\xff", 4), "byte 0xff at position 3"},
      {std::string("Zm\0v", 4), "byte 0x00 at position 2"},
      {"Zh==", "unused bits"},       {"Zm9=", "unused bits"}};
  for (const auto& entry : bad) {
    // named copies, not a structured binding: doctest's message macros capture them in a lambda,
    // which clang 14 (Emscripten's) refuses for bindings
    const std::string& text = entry.first;
    const char* why = entry.second;
    const auto r = base64_decode(text, "binaries['x']");
    REQUIRE_MESSAGE(!r.ok(), text);
    CHECK((r.error().code() == ErrorCode::kInvalidArgument));
    CHECK_MESSAGE(r.error().message().find(why) != std::string::npos, r.error().message());
    CHECK(r.error().message().find("binaries['x']") != std::string::npos);
  }
}
