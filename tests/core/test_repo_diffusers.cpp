// diffusers pipelines as a repo kind (core/repo/diffusers*.cpp): the files asked for, round by
// round, and the report — sizes, offload peaks and fits — on tiny synthetic pipelines whose
// safetensors headers are written here. Every expected figure is this file's own arithmetic
// over the shapes it wrote (numel = product of the shape; bytes = numel × the dtype's size).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "memfit/api/api.h"
#include "memfit/error.h"
#include "memfit/format/safetensors.h"
#include "memfit/repo/repo_kind.h"
#include "support/tensor_specs.h"

using namespace memfit;
using memfit::repo::FileNeed;
using memfit::repo::RepoFiles;
using memfit::repo::RepoKind;
using memfit::repo::RepoOptions;
namespace st = memfit::safetensors;

namespace {

using T = memfit::test::TensorSpec;
using memfit::test::numel;
using memfit::test::params_of;

// A pipeline held in memory: what a caller would read from a folder or the Hub.
struct FakeRepo {
  std::map<std::string, std::string> texts;
  std::map<std::string, std::pair<std::string, std::uint64_t>> headers;  // JSON text, file size
  std::vector<std::string> extra;  // listed, never read (tokenizer files, other variants)

  void text(const std::string& path, const std::string& body) { texts[path] = body; }
  void weights(const std::string& path, const std::vector<T>& ts) {
    std::vector<st::TensorEntry> entries;
    for (const auto& t : ts) {
      st::TensorEntry e;
      e.name = t.name;
      e.dtype = t.dtype;
      e.shape = t.shape;
      entries.push_back(e);
    }
    entries = st::layout(entries);
    const std::string prefix = st::write_header(entries, {});
    headers[path] = {prefix.substr(8), prefix.size() + entries.back().end};
  }
  RepoFiles listing() const {
    RepoFiles f;
    f.repo = "org/pipe";
    for (const auto& [p, body] : texts) f.listing.push_back(p), f.sizes[p] = body.size();
    for (const auto& [p, h] : headers) f.listing.push_back(p), f.sizes[p] = h.second;
    for (const auto& p : extra) f.listing.push_back(p), f.sizes[p] = 10;
    std::sort(f.listing.begin(), f.listing.end());
    return f;
  }
  // One round: reads every need into `f` as the CLI does (an absent optional: an empty text).
  void read(const std::vector<FileNeed>& needs, RepoFiles& f) const {
    for (const auto& n : needs) {
      if (n.form == FileNeed::Form::kSafetensorsHeader) {
        REQUIRE_MESSAGE(headers.count(n.path), n.path);
        f.headers[n.path] = headers.at(n.path).first;
      } else if (texts.count(n.path)) {
        f.texts[n.path] = texts.at(n.path);
      } else {
        REQUIRE_MESSAGE(n.optional, n.path);
        f.texts[n.path] = "";
      }
    }
  }
  // Every round until nothing is needed; the paths asked for, per round.
  std::vector<std::set<std::string>> gather(RepoFiles& f) const {
    std::vector<std::set<std::string>> rounds;
    for (int i = 0; i < repo::kMaxRepoSteps; ++i) {
      const auto needs = repo::repo_needs(RepoKind::kDiffusers, f);
      if (needs.empty()) return rounds;
      std::set<std::string> paths;
      for (const auto& n : needs) paths.insert(n.path);
      rounds.push_back(paths);
      read(needs, f);
    }
    REQUIRE(repo::repo_needs(RepoKind::kDiffusers, f).empty());
    return rounds;
  }
  repo::RepoReport report(RepoOptions options = {}) const {
    RepoFiles f = listing();
    gather(f);
    return repo::repo_report(RepoKind::kDiffusers, f, options);
  }
};

const std::string kSdIndex = R"({
  "_class_name": "StableDiffusionPipeline",
  "_diffusers_version": "0.30.0",
  "feature_extractor": ["transformers", "CLIPImageProcessor"],
  "image_encoder": [null, null],
  "requires_safety_checker": true,
  "safety_checker": ["stable_diffusion", "StableDiffusionSafetyChecker"],
  "scheduler": ["diffusers", "PNDMScheduler"],
  "text_encoder": ["transformers", "CLIPTextModel"],
  "tokenizer": ["transformers", "CLIPTokenizer"],
  "unet": ["diffusers", "UNet2DConditionModel"],
  "vae": ["diffusers", "AutoencoderKL"]
})";

const std::string kClipTextConfig = R"({"architectures": ["CLIPTextModel"], "model_type": "clip_text_model",
  "hidden_size": 32, "intermediate_size": 37, "num_attention_heads": 4, "num_hidden_layers": 2,
  "vocab_size": 1000, "max_position_embeddings": 77, "projection_dim": 16, "torch_dtype": "float32"})";

const std::vector<T> kUnet = {
    {"conv_in.weight", DType::kF32, {32, 4, 3, 3}},
    {"conv_in.bias", DType::kF32, {32}},
    {"down_blocks.0.attentions.0.proj_in.weight", DType::kF32, {32, 32}},
    {"mid_block.resnets.0.conv1.weight", DType::kF32, {64, 32, 3, 3}},
};
const std::vector<T> kVaeShard1 = {{"encoder.conv_in.weight", DType::kF32, {8, 3, 3, 3}}};
const std::vector<T> kVaeShard2 = {{"decoder.conv_out.weight", DType::kF32, {3, 8, 3, 3}},
                                   {"decoder.conv_out.bias", DType::kF32, {3}}};
const std::vector<T> kTextEncoderFp16 = {
    {"text_model.embeddings.token_embedding.weight", DType::kF16, {1000, 32}},
    {"text_model.final_layer_norm.weight", DType::kF16, {32}},
};
const std::vector<T> kSafety = {
    {"vision_model.embeddings.patch_embedding.weight", DType::kF32, {16, 3, 4, 4}},
    {"visual_projection.weight", DType::kF32, {8, 16}},
};

std::vector<T> with_dtype(std::vector<T> ts, DType dt) {
  for (auto& t : ts) t.dtype = dt;
  return ts;
}

// A Stable Diffusion pipeline in miniature: a UNet (and an fp16 variant that is not read), a
// VAE in two shards, a text encoder published as fp16 only, a safety checker, and the
// weightless tokenizer, scheduler and image processor.
FakeRepo sd_pipeline() {
  FakeRepo r;
  r.text("model_index.json", kSdIndex);
  r.text("unet/config.json", R"({"_class_name": "UNet2DConditionModel"})");
  r.weights("unet/diffusion_pytorch_model.safetensors", kUnet);
  r.weights("unet/diffusion_pytorch_model.fp16.safetensors", with_dtype(kUnet, DType::kF16));
  r.text("vae/config.json", R"({"_class_name": "AutoencoderKL"})");
  r.text("vae/diffusion_pytorch_model.safetensors.index.json",
         R"({"metadata": {"total_size": 1740}, "weight_map": {
              "encoder.conv_in.weight": "diffusion_pytorch_model-00001-of-00002.safetensors",
              "decoder.conv_out.weight": "diffusion_pytorch_model-00002-of-00002.safetensors",
              "decoder.conv_out.bias": "diffusion_pytorch_model-00002-of-00002.safetensors"}})");
  r.weights("vae/diffusion_pytorch_model-00001-of-00002.safetensors", kVaeShard1);
  r.weights("vae/diffusion_pytorch_model-00002-of-00002.safetensors", kVaeShard2);
  r.text("text_encoder/config.json", kClipTextConfig);
  r.weights("text_encoder/model.fp16.safetensors", kTextEncoderFp16);
  r.text("safety_checker/config.json", R"({"_class_name": "StableDiffusionSafetyChecker"})");
  r.weights("safety_checker/model.safetensors", kSafety);
  r.extra = {"tokenizer/vocab.json", "tokenizer/merges.txt", "tokenizer/tokenizer_config.json",
             "scheduler/scheduler_config.json", "feature_extractor/preprocessor_config.json", "README.md"};
  return r;
}

const Json& component(const repo::RepoReport& r, const std::string& name) {
  for (const auto& c : r.fields["components"])
    if (c["name"] == name) return c;
  FAIL("no component " << name);
  static const Json none;
  return none;
}

template <typename Fn>
ErrorCode code_of(Fn&& fn, std::string* message = nullptr) {
  try {
    fn();
  } catch (const Error& e) {
    if (message) *message = e.message();
    return e.code();
  }
  FAIL("no error");
  return ErrorCode::kInternal;
}

}  // namespace

TEST_CASE("diffusers needs: model_index.json, then configs and headers of model components only, then shards") {
  const FakeRepo r = sd_pipeline();
  RepoFiles f = r.listing();
  CHECK((repo::detect_kind(f.listing, "") == RepoKind::kDiffusers));
  const auto rounds = r.gather(f);
  REQUIRE(rounds.size() == 3);
  CHECK(rounds[0] == std::set<std::string>{"model_index.json"});
  CHECK(rounds[1] == std::set<std::string>{
                         "unet/config.json", "unet/diffusion_pytorch_model.safetensors",
                         "vae/config.json", "vae/diffusion_pytorch_model.safetensors.index.json",
                         "text_encoder/config.json", "text_encoder/model.fp16.safetensors",
                         "safety_checker/config.json", "safety_checker/model.safetensors"});
  CHECK(rounds[2] == std::set<std::string>{"vae/diffusion_pytorch_model-00001-of-00002.safetensors",
                                           "vae/diffusion_pytorch_model-00002-of-00002.safetensors"});
}

TEST_CASE("diffusers report: components at their stored dtypes, the total, and the three offload modes") {
  const auto rep = sd_pipeline().report();
  CHECK((rep.kind == RepoKind::kDiffusers));
  CHECK(rep.fields["pipeline"] == "StableDiffusionPipeline");
  CHECK(rep.fields["absent"] == Json::array({"image_encoder"}));

  const std::uint64_t unet = params_of(kUnet) * 4;
  const std::uint64_t vae = (params_of(kVaeShard1) + params_of(kVaeShard2)) * 4;
  const std::uint64_t te = params_of(kTextEncoderFp16) * 2;
  const std::uint64_t safety = params_of(kSafety) * 4;
  CHECK(component(rep, "unet")["parameters"] == params_of(kUnet));
  CHECK(component(rep, "unet")["bytes"] == unet);
  CHECK(component(rep, "unet")["variant"].is_null());
  CHECK(component(rep, "unet")["files"] == Json::array({"unet/diffusion_pytorch_model.safetensors"}));
  CHECK(component(rep, "unet")["largest_module"] == "mid_block.resnets.0.conv1");
  CHECK(component(rep, "unet")["largest_module_bytes"] == numel({64, 32, 3, 3}) * 4);
  CHECK(component(rep, "vae")["bytes"] == vae);
  CHECK(component(rep, "vae")["largest_module"] == "decoder.conv_out");
  CHECK(component(rep, "vae")["largest_module_bytes"] == (numel({3, 8, 3, 3}) + 3) * 4);
  CHECK(component(rep, "text_encoder")["variant"] == "fp16");
  CHECK(component(rep, "text_encoder")["dtypes"] == Json::array({"float16"}));
  CHECK(component(rep, "text_encoder")["bytes"] == te);
  CHECK(component(rep, "safety_checker")["bytes"] == safety);
  for (const char* weightless : {"tokenizer", "scheduler", "feature_extractor"}) {
    CHECK(component(rep, weightless)["has_weights"] == false);
    CHECK(component(rep, weightless)["bytes"] == 0);
  }
  const std::uint64_t total = unet + vae + te + safety;
  CHECK(rep.fields["total"]["bytes"] == total);
  CHECK(rep.fields["total"]["parameters"] ==
        params_of(kUnet) + params_of(kVaeShard1) + params_of(kVaeShard2) + params_of(kTextEncoderFp16) +
            params_of(kSafety));

  const Json& off = rep.fields["offload"];
  CHECK(off["none"]["peak_bytes"] == total);
  // StableDiffusionPipeline: model_cpu_offload_seq text_encoder->image_encoder->unet->vae, and
  // the safety checker _exclude_from_cpu_offload (moved to the GPU whole).
  CHECK(off["model"]["largest_component"] == "unet");
  CHECK(off["model"]["peak_bytes"] == unet + safety);
  CHECK(off["model"]["known_pipeline"] == true);
  CHECK(off["model"]["resident"][0]["component"] == "safety_checker");
  CHECK(off["sequential"]["component"] == "unet");
  CHECK(off["sequential"]["module"] == "mid_block.resnets.0.conv1");
  CHECK(off["sequential"]["peak_bytes"] == numel({64, 32, 3, 3}) * 4 + safety);
  CHECK_FALSE(rep.fields["offload"]["none"].contains("fits"));

  // The generic tables: one row per component plus the total; the three modes.
  REQUIRE(rep.tables.size() == 2);
  CHECK(rep.tables[0].rows.size() == 7 + 1);  // image_encoder is null: no row
  CHECK(rep.tables[1].rows.size() == 3);
  const Json j = repo::report_json(rep);
  CHECK(j["kind"] == "diffusers");
}

TEST_CASE("diffusers report: --dtype casts floating weights; --vram says which modes fit") {
  RepoOptions o;
  o.dtype = "float16";
  // In float16 the text encoder (kept fp16) outweighs the UNet: it is the model offload's turn
  // that peaks; the budget is exactly that peak.
  REQUIRE(params_of(kTextEncoderFp16) > params_of(kUnet));
  o.gpu_bytes = params_of(kTextEncoderFp16) * 2 + params_of(kSafety) * 2;
  const auto rep = sd_pipeline().report(o);
  CHECK(component(rep, "unet")["bytes"] == params_of(kUnet) * 2);
  CHECK(component(rep, "unet")["dtypes"] == Json::array({"float16"}));
  CHECK(component(rep, "safety_checker")["bytes"] == params_of(kSafety) * 2);
  const Json& off = rep.fields["offload"];
  CHECK(off["model"]["peak_bytes"] == o.gpu_bytes);
  CHECK(off["model"]["largest_component"] == "text_encoder");
  CHECK(off["sequential"]["module"] == "text_model.embeddings.token_embedding");
  CHECK(off["sequential"]["peak_bytes"] == numel({1000, 32}) * 2 + params_of(kSafety) * 2);
  CHECK(off["none"]["fits"] == false);
  CHECK(off["model"]["fits"] == true);
  CHECK(off["sequential"]["fits"] == true);
  CHECK(rep.tables[1].columns.size() == 5);

  o.dtype = "float32";
  o.gpu_bytes = 0;
  const auto f32 = sd_pipeline().report(o);
  CHECK(component(f32, "text_encoder")["bytes"] == params_of(kTextEncoderFp16) * 4);
}

TEST_CASE("diffusers variants: non-variant first, then fp16, then bf16; legacy index names") {
  FakeRepo r;
  r.text("model_index.json", R"({"_class_name": "FluxPipeline", "transformer": ["diffusers", "FluxTransformer2DModel"]})");
  r.text("transformer/config.json", "{}");
  const std::vector<T> t = {{"x_embedder.weight", DType::kBF16, {16, 8}}};
  r.weights("transformer/diffusion_pytorch_model.bf16.safetensors", t);
  r.weights("transformer/diffusion_pytorch_model.fp16.safetensors", with_dtype(t, DType::kF16));
  auto rep = r.report();
  CHECK(component(rep, "transformer")["variant"] == "fp16");

  FakeRepo legacy;
  legacy.text("model_index.json", R"({"_class_name": "FluxPipeline", "transformer": ["diffusers", "FluxTransformer2DModel"]})");
  legacy.text("transformer/config.json", "{}");
  legacy.text("transformer/diffusion_pytorch_model.safetensors.fp16.index.json",
              R"({"weight_map": {"x_embedder.weight": "diffusion_pytorch_model-00001-of-00001.fp16.safetensors"}})");
  legacy.weights("transformer/diffusion_pytorch_model-00001-of-00001.fp16.safetensors", with_dtype(t, DType::kF16));
  rep = legacy.report();
  CHECK(component(rep, "transformer")["variant"] == "fp16");
  CHECK(component(rep, "transformer")["bytes"] == numel({16, 8}) * 2);
}

TEST_CASE("diffusers: a transformers text encoder without weights is sized from its config") {
  FakeRepo r;
  r.text("model_index.json", R"({"_class_name": "StableDiffusionPipeline", "text_encoder": ["transformers", "CLIPTextModel"]})");
  r.text("text_encoder/config.json", kClipTextConfig);
  const auto rep = r.report();
  // CLIPTextModel, hidden 32, intermediate 37, 2 layers, vocab 1000, 77 positions: embeddings,
  // per layer q/k/v/out (weight + bias), two layer norms, fc1 and fc2; the final layer norm.
  const std::uint64_t h = 32, inter = 37, layers = 2, vocab = 1000, positions = 77;
  const std::uint64_t per_layer = 4 * (h * h + h) + 2 * (2 * h) + (h * inter + inter) + (inter * h + h);
  const std::uint64_t params = vocab * h + positions * h + layers * per_layer + 2 * h;
  const Json& te = component(rep, "text_encoder");
  CHECK(te["parameters"] == params);
  // float32 (the config's torch_dtype), plus the int64 position_ids buffer [1, 77] in memory.
  CHECK(te["bytes"] == params * 4 + positions * 8);
  CHECK(te["largest_module"] == "text_model.embeddings.token_embedding");
  CHECK(te["source"].get<std::string>().find("config") == 0);
}

TEST_CASE("diffusers: a T5 text encoder keeps 'wo' in float32 in a float16 load (transformers' rule)") {
  FakeRepo r;
  r.text("model_index.json", R"({"_class_name": "StableDiffusion3Pipeline", "text_encoder_3": ["transformers", "T5EncoderModel"]})");
  r.text("text_encoder_3/config.json", R"({"architectures": ["T5EncoderModel"], "model_type": "t5", "d_model": 8,
    "d_ff": 16, "d_kv": 4, "num_heads": 2, "num_layers": 1, "vocab_size": 32, "relative_attention_num_buckets": 32,
    "feed_forward_proj": "relu", "torch_dtype": "float32"})");
  const std::vector<T> t5 = {
      {"shared.weight", DType::kF32, {32, 8}},
      {"encoder.block.0.layer.0.SelfAttention.q.weight", DType::kF32, {8, 8}},
      {"encoder.block.0.layer.0.SelfAttention.k.weight", DType::kF32, {8, 8}},
      {"encoder.block.0.layer.0.SelfAttention.v.weight", DType::kF32, {8, 8}},
      {"encoder.block.0.layer.0.SelfAttention.o.weight", DType::kF32, {8, 8}},
      {"encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", DType::kF32, {32, 2}},
      {"encoder.block.0.layer.0.layer_norm.weight", DType::kF32, {8}},
      {"encoder.block.0.layer.1.DenseReluDense.wi.weight", DType::kF32, {16, 8}},
      {"encoder.block.0.layer.1.DenseReluDense.wo.weight", DType::kF32, {8, 16}},
      {"encoder.block.0.layer.1.layer_norm.weight", DType::kF32, {8}},
      {"encoder.final_layer_norm.weight", DType::kF32, {8}},
  };
  r.weights("text_encoder_3/model.safetensors", t5);
  RepoOptions o;
  o.dtype = "float16";
  const auto rep = r.report(o);
  const std::uint64_t wo = numel({8, 16});
  CHECK(component(rep, "text_encoder_3")["bytes"] == (params_of(t5) - wo) * 2 + wo * 4);
  CHECK(component(rep, "text_encoder_3")["dtypes"] == Json::array({"float16", "float32"}));
  o.dtype = "bfloat16";  // _keep_in_fp32_modules (not _strict): bfloat16 loads cast wo too
  CHECK(component(r.report(o), "text_encoder_3")["bytes"] == params_of(t5) * 2);
}

TEST_CASE("diffusers offload: a component outside model_cpu_offload_seq stays resident; unknown pipelines") {
  FakeRepo r;
  r.text("model_index.json", R"({"_class_name": "FluxControlNetPipeline",
    "transformer": ["diffusers", "FluxTransformer2DModel"], "controlnet": ["diffusers", "FluxControlNetModel"],
    "vae": ["diffusers", "AutoencoderKL"]})");
  const std::vector<T> big = {{"blocks.0.weight", DType::kBF16, {64, 64}}, {"blocks.1.weight", DType::kBF16, {64, 32}}};
  const std::vector<T> ctrl = {{"blocks.0.weight", DType::kBF16, {32, 32}}};
  const std::vector<T> vae = {{"conv.weight", DType::kBF16, {16, 16}}};
  for (const char* c : {"transformer", "controlnet", "vae"}) r.text(std::string(c) + "/config.json", "{}");
  r.weights("transformer/diffusion_pytorch_model.safetensors", big);
  r.weights("controlnet/diffusion_pytorch_model.safetensors", ctrl);
  r.weights("vae/diffusion_pytorch_model.safetensors", vae);
  auto rep = r.report();
  CHECK(rep.fields["offload"]["model"]["peak_bytes"] == (params_of(big) + params_of(ctrl)) * 2);
  CHECK(rep.fields["offload"]["model"]["resident"][0]["why"] == "outside_sequence");
  CHECK(rep.fields["offload"]["sequential"]["peak_bytes"] == numel({64, 64}) * 2);

  // A class memfit has no model_cpu_offload_seq for: every model component takes its turn.
  r.text("model_index.json", R"({"_class_name": "MyOwnPipeline",
    "transformer": ["diffusers", "FluxTransformer2DModel"], "controlnet": ["diffusers", "FluxControlNetModel"],
    "vae": ["diffusers", "AutoencoderKL"]})");
  rep = r.report();
  CHECK(rep.fields["offload"]["model"]["known_pipeline"] == false);
  CHECK(rep.fields["offload"]["model"]["peak_bytes"] == params_of(big) * 2);
  CHECK(std::any_of(rep.notes.begin(), rep.notes.end(),
                    [](const std::string& n) { return n.find("MyOwnPipeline") != std::string::npos; }));
}

TEST_CASE("diffusers hostile: model_index.json, configs, indexes and headers that are wrong") {
  std::string msg;
  auto needs_of = [](FakeRepo r) {
    RepoFiles f = r.listing();
    r.gather(f);
  };
  auto report_of = [](FakeRepo r) { r.report(); };

  SUBCASE("model_index.json not JSON, not an object, no class, a bad entry, an escaping name") {
    for (const char* bad : {"{\"_class_name\": ", "[1, 2]", R"({"unet": ["diffusers", "UNet2DConditionModel"]})",
                            R"({"_class_name": "P", "unet": ["diffusers"]})",
                            R"({"_class_name": "P", "unet": ["diffusers", 7]})",
                            R"({"_class_name": "P", "../up": ["diffusers", "UNet2DConditionModel"]})"}) {
      FakeRepo r;
      r.text("model_index.json", bad);
      CHECK_MESSAGE((code_of([&] { needs_of(r); }, &msg) == ErrorCode::kRepoInvalid), bad);
      CHECK(msg.find("model_index.json") != std::string::npos);
    }
  }
  SUBCASE("a component with weights and no config.json") {
    FakeRepo r = sd_pipeline();
    r.texts.erase("unet/config.json");
    CHECK((code_of([&] { report_of(r); }, &msg) == ErrorCode::kRepoMissingFile));
    CHECK(msg.find("unet/config.json") != std::string::npos);
  }
  SUBCASE("a config that is not a JSON object") {
    FakeRepo r = sd_pipeline();
    r.text("vae/config.json", "[]");
    CHECK((code_of([&] { report_of(r); }, &msg) == ErrorCode::kRepoInvalid));
    CHECK(msg.find("vae/config.json") != std::string::npos);
  }
  SUBCASE("a header that is not JSON; a header whose file size disagrees") {
    FakeRepo r = sd_pipeline();
    r.headers["unet/diffusion_pytorch_model.safetensors"].first = "{not json";
    CHECK((code_of([&] { report_of(r); }, &msg) == ErrorCode::kSafetensorsInvalidJson));
    CHECK(msg.find("unet/diffusion_pytorch_model.safetensors") != std::string::npos);
    FakeRepo s = sd_pipeline();
    s.headers["safety_checker/model.safetensors"].second += 1;
    CHECK((code_of([&] { report_of(s); }, &msg) == ErrorCode::kSafetensorsFileSizeMismatch));
    CHECK(msg.find("safety_checker/model.safetensors") != std::string::npos);
  }
  SUBCASE("an index naming a shard the repo lacks, one outside the folder, one that disagrees") {
    FakeRepo r = sd_pipeline();
    r.headers.erase("vae/diffusion_pytorch_model-00002-of-00002.safetensors");
    CHECK((code_of([&] { needs_of(r); }, &msg) == ErrorCode::kRepoMissingFile));
    CHECK(msg.find("vae/diffusion_pytorch_model-00002-of-00002.safetensors") != std::string::npos);
    FakeRepo up = sd_pipeline();
    up.text("vae/diffusion_pytorch_model.safetensors.index.json", R"({"weight_map": {"a": "../../etc/passwd"}})");
    CHECK((code_of([&] { needs_of(up); }, &msg) == ErrorCode::kIndexInvalidShardName));
    CHECK(msg.find("vae/diffusion_pytorch_model.safetensors.index.json") != std::string::npos);
    FakeRepo wrong = sd_pipeline();
    wrong.text("vae/diffusion_pytorch_model.safetensors.index.json",
               R"({"weight_map": {"encoder.conv_in.weight": "diffusion_pytorch_model-00002-of-00002.safetensors",
                   "decoder.conv_out.weight": "diffusion_pytorch_model-00001-of-00002.safetensors",
                   "decoder.conv_out.bias": "diffusion_pytorch_model-00002-of-00002.safetensors"}})");
    CHECK((code_of([&] { report_of(wrong); }) == ErrorCode::kIndexTensorNotInShard));
  }
  SUBCASE("a header whose shape overflows; a dtype the pipeline cannot load in") {
    FakeRepo r;
    r.text("model_index.json", R"({"_class_name": "FluxPipeline", "transformer": ["diffusers", "FluxTransformer2DModel"]})");
    r.text("transformer/config.json", "{}");
    r.weights("transformer/diffusion_pytorch_model.safetensors", {{"w", DType::kF32, {4, 4}}});
    r.headers["transformer/diffusion_pytorch_model.safetensors"] = {
        R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,64]}})", 0};
    RepoFiles f = r.listing();
    f.sizes.erase("transformer/diffusion_pytorch_model.safetensors");
    r.gather(f);
    CHECK((code_of([&] { repo::repo_report(RepoKind::kDiffusers, f, {}); }) == ErrorCode::kSafetensorsSizeOverflow));
    FakeRepo ok = sd_pipeline();
    RepoOptions o;
    o.dtype = "int8";
    CHECK((code_of([&] { ok.report(o); }, &msg) == ErrorCode::kInvalidArgument));
    CHECK(msg.find("int8") != std::string::npos);
  }
  SUBCASE("a component listed in model_index.json with no folder is a note, not an error") {
    FakeRepo r = sd_pipeline();
    r.texts.erase("safety_checker/config.json");
    r.headers.erase("safety_checker/model.safetensors");
    const auto rep = r.report();
    CHECK(component(rep, "safety_checker")["has_weights"] == false);
    CHECK(rep.fields["offload"]["model"]["peak_bytes"] == params_of(kUnet) * 4);
  }
}

TEST_CASE("diffusers through the JSON api: needs in rounds, then the report with fields") {
  const FakeRepo r = sd_pipeline();
  const RepoFiles listing = r.listing();
  Json req = {{"repo", "org/pipe"}, {"listing", listing.listing}, {"sizes", listing.sizes},
              {"texts", Json::object()}, {"headers", Json::object()},
              {"options", {{"dtype", "float16"}, {"gpu_bytes", 1 << 20}}}};
  Json reply;
  for (int round = 0; round < repo::kMaxRepoSteps + 1; ++round) {
    reply = Json::parse(api::repo(req.dump()));
    REQUIRE_MESSAGE(!reply.contains("error"), reply.dump());
    CHECK(reply["kind"] == "diffusers");
    if (!reply.contains("needs")) break;
    for (const auto& n : reply["needs"]) {
      const std::string path = n["path"];
      if (n["form"] == "safetensors_header") req["headers"][path] = r.headers.at(path).first;
      else req["texts"][path] = r.texts.count(path) ? r.texts.at(path) : "";
    }
  }
  REQUIRE(reply.contains("report"));
  const Json& f = reply["report"]["fields"];
  CHECK(f["dtype"] == "float16");
  CHECK(f["offload"]["model"]["largest_component"] == "text_encoder");
  CHECK(f["offload"]["none"]["fits"] == true);
  CHECK(f["total"]["bytes"] == (params_of(kUnet) + params_of(kVaeShard1) + params_of(kVaeShard2) +
                                params_of(kTextEncoderFp16) + params_of(kSafety)) * 2);
}
