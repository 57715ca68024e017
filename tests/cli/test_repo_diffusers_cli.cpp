// `memfit estimate` on diffusers pipelines: a folder of tiny real .safetensors files written here,
// and the same pipeline on the mock Hub (listing with sizes from api/models?blobs=true, headers
// by HTTP Range). Expected figures are this file's arithmetic over the shapes it wrote.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memfit/format/safetensors.h"
#include "support/mock_hub.h"
#include "support/run_process.h"
#include "support/scratch_files.h"
#include "support/tensor_specs.h"

using memfit::test::MockHub;
using memfit::test::run_memfit;
using namespace memfit;
namespace st = memfit::safetensors;

namespace {

using T = memfit::test::TensorSpec;
using memfit::test::numel;
using memfit::test::params_of;

// A whole .safetensors file: the header, then zeroed data.
std::string safetensors_file(const std::vector<T>& ts) {
  std::vector<st::TensorEntry> entries;
  for (const auto& t : ts) {
    st::TensorEntry e;
    e.name = t.name;
    e.dtype = t.dtype;
    e.shape = t.shape;
    entries.push_back(e);
  }
  entries = st::layout(entries);
  return st::write_header(entries, {}) + std::string(entries.back().end, '\0');
}

const std::vector<T> kUnet = {{"conv_in.weight", DType::kF32, {32, 4, 3, 3}},
                              {"conv_in.bias", DType::kF32, {32}},
                              {"mid_block.resnets.0.conv1.weight", DType::kF32, {64, 32, 3, 3}}};
const std::vector<T> kVae = {{"decoder.conv_out.weight", DType::kF32, {3, 8, 3, 3}}};
const std::vector<T> kTextEncoder = {{"text_model.embeddings.token_embedding.weight", DType::kF16, {1000, 32}}};
const std::vector<T> kSafety = {{"visual_projection.weight", DType::kF32, {8, 16}}};

// A miniature Stable Diffusion pipeline, path → bytes.
std::map<std::string, std::string> sd_files() {
  std::vector<T> unet_fp16 = kUnet;
  for (auto& t : unet_fp16) t.dtype = DType::kF16;
  return {
      {"model_index.json", R"({"_class_name": "StableDiffusionPipeline", "_diffusers_version": "0.30.0",
        "feature_extractor": ["transformers", "CLIPImageProcessor"], "image_encoder": [null, null],
        "safety_checker": ["stable_diffusion", "StableDiffusionSafetyChecker"],
        "scheduler": ["diffusers", "PNDMScheduler"], "text_encoder": ["transformers", "CLIPTextModel"],
        "tokenizer": ["transformers", "CLIPTokenizer"], "unet": ["diffusers", "UNet2DConditionModel"],
        "vae": ["diffusers", "AutoencoderKL"]})"},
      {"unet/config.json", R"({"_class_name": "UNet2DConditionModel"})"},
      {"unet/diffusion_pytorch_model.safetensors", safetensors_file(kUnet)},
      {"unet/diffusion_pytorch_model.fp16.safetensors", safetensors_file(unet_fp16)},
      {"vae/config.json", R"({"_class_name": "AutoencoderKL"})"},
      {"vae/diffusion_pytorch_model.safetensors", safetensors_file(kVae)},
      {"text_encoder/config.json", R"({"architectures": ["CLIPTextModel"], "model_type": "clip_text_model"})"},
      {"text_encoder/model.fp16.safetensors", safetensors_file(kTextEncoder)},
      {"safety_checker/config.json", "{}"},
      {"safety_checker/model.safetensors", safetensors_file(kSafety)},
      {"tokenizer/vocab.json", "{}"},
      {"scheduler/scheduler_config.json", "{}"},
      {"feature_extractor/preprocessor_config.json", "{}"},
  };
}

std::string write_folder(const std::map<std::string, std::string>& files) {
  const std::string dir = test::scratch_dir("diffusers");
  for (const auto& [path, bytes] : files) {
    std::filesystem::create_directories(std::filesystem::path(dir + "/" + path).parent_path());
    test::write_file(dir + "/" + path, bytes);
  }
  return dir;
}

const nlohmann::json& component(const nlohmann::json& j, const std::string& name) {
  for (const auto& c : j["fields"]["components"])
    if (c["name"] == name) return c;
  FAIL("no component " << name);
  static const nlohmann::json none;
  return none;
}

// The figures both the folder and the Hub answer must give.
void check_sd_report(const nlohmann::json& j) {
  CHECK(j["kind"] == "diffusers");
  CHECK(j["fields"]["pipeline"] == "StableDiffusionPipeline");
  const std::uint64_t unet = params_of(kUnet) * 4, vae = params_of(kVae) * 4;
  const std::uint64_t te = params_of(kTextEncoder) * 2, safety = params_of(kSafety) * 4;
  CHECK(component(j, "unet")["bytes"] == unet);
  CHECK(component(j, "unet")["parameters"] == params_of(kUnet));
  CHECK(component(j, "unet")["variant"].is_null());
  CHECK(component(j, "text_encoder")["variant"] == "fp16");
  CHECK(component(j, "text_encoder")["bytes"] == te);
  CHECK(j["fields"]["total"]["bytes"] == unet + vae + te + safety);
  CHECK(j["fields"]["offload"]["none"]["peak_bytes"] == unet + vae + te + safety);
  CHECK(j["fields"]["offload"]["model"]["peak_bytes"] == unet + safety);
  CHECK(j["fields"]["offload"]["sequential"]["peak_bytes"] == numel({64, 32, 3, 3}) * 4 + safety);
}

}  // namespace

TEST_CASE("estimate FOLDER: a diffusers pipeline of real .safetensors files") {
  const std::string dir = write_folder(sd_files());
  auto r = run_memfit({"estimate", dir, "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  check_sd_report(nlohmann::json::parse(r.out));

  // The printed form: both tables, the total, the notes.
  auto text = run_memfit({"estimate", dir, "--dtype", "float16", "--vram", "1MiB"});
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  CHECK(text.out.find("StableDiffusionPipeline") != std::string::npos);
  CHECK(text.out.find("enable_model_cpu_offload()") != std::string::npos);
  CHECK(text.out.find("enable_sequential_cpu_offload()") != std::string::npos);
  CHECK(text.out.find("fits 1.0 MB: pipe.to(\"cuda\"), enable_model_cpu_offload(), "
                      "enable_sequential_cpu_offload()") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("estimate ORG/NAME: a diffusers pipeline on the Hub, headers by Range, nothing else read") {
  const auto files = sd_files();
  MockHub hub;
  hub.add_model("org/sd", "diffusers", files);
  nlohmann::json siblings = nlohmann::json::array();
  for (const auto& [path, bytes] : files) siblings.push_back({{"rfilename", path}, {"size", bytes.size()}});
  hub.add_raw("/api/models/org/sd", 200,
              nlohmann::json({{"id", "org/sd"}, {"library_name", "diffusers"}, {"siblings", siblings}}).dump());
  auto r = run_memfit({"estimate", "org/sd", "--json"}, {{"HF_ENDPOINT", hub.endpoint()}});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  check_sd_report(nlohmann::json::parse(r.out));
  bool ranged = false;
  for (const auto& q : hub.requests()) {
    CHECK(q.path.find("unet/diffusion_pytorch_model.fp16") == std::string::npos);  // never the variant
    CHECK(q.path.find("tokenizer/") == std::string::npos);
    CHECK(q.path.find("scheduler/") == std::string::npos);
    if (q.path == "/org/sd/resolve/main/unet/diffusion_pytorch_model.safetensors") ranged = !q.range.empty();
  }
  CHECK(ranged);
}

TEST_CASE("estimate on a hostile diffusers pipeline: the file named, exit 3") {
  SUBCASE("model_index.json that is not JSON") {
    auto files = sd_files();
    files["model_index.json"] = "{\"_class_name\": ";
    const std::string dir = write_folder(files);
    auto r = run_memfit({"estimate", dir});
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("model_index.json") != std::string::npos);
    std::filesystem::remove_all(dir);
  }
  SUBCASE("a weights file cut inside its header") {
    auto files = sd_files();
    files["vae/diffusion_pytorch_model.safetensors"].resize(20);
    const std::string dir = write_folder(files);
    auto r = run_memfit({"estimate", dir});
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("vae/diffusion_pytorch_model.safetensors") != std::string::npos);
    std::filesystem::remove_all(dir);
  }
  SUBCASE("weights whose data is shorter than the header says") {
    auto files = sd_files();
    auto& unet = files["unet/diffusion_pytorch_model.safetensors"];
    unet.resize(unet.size() - 4);
    const std::string dir = write_folder(files);
    auto r = run_memfit({"estimate", dir});
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("unet/diffusion_pytorch_model.safetensors") != std::string::npos);
    std::filesystem::remove_all(dir);
  }
  SUBCASE("a component with weights and no config.json") {
    auto files = sd_files();
    files.erase("vae/config.json");
    const std::string dir = write_folder(files);
    auto r = run_memfit({"estimate", dir});
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("vae/config.json") != std::string::npos);
    std::filesystem::remove_all(dir);
  }
}
