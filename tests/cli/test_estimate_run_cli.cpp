// `memfit estimate` with the will-it-run flags: --context --batch --kv-dtype --engine --dtype
// --overhead --vram --gpu --train --rank --targets --optimizer --grad-checkpointing --zero/--fsdp
// --gpus; --json adds "inference", "training" and "fit". Figures are hand-computed in comments
// (the formulas' sources are in tests/core/test_inference_*.cpp and test_training.cpp).
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/reference.h"
#include "support/run_process.h"

using memfit::test::run_memfit;

namespace {

const std::string kLlama3 = memfit::test::fixture_path("configs/meta-llama--Meta-Llama-3-8B.json");
const std::string kLlama2 = memfit::test::fixture_path("configs/meta-llama--Llama-2-7b-hf.json");

nlohmann::json json_of(const std::vector<std::string>& args) {
  auto r = run_memfit(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("--context --batch: the inference object, next to the usual report") {
  const auto j = json_of({"estimate", kLlama3, "--context", "8192", "--batch", "4", "--json"});
  CHECK(j.contains("rows"));  // the estimate report is still there
  const auto& i = j["inference"];
  CHECK(i["context"] == 8192);
  CHECK(i["batch"] == 4);
  CHECK(i["kv_dtype"] == "bfloat16");
  CHECK(i["kv_bytes_per_token"] == 131072);  // 32 × 8 × 128 × 2 × 2
  CHECK(i["kv_cache_bytes"] == 4294967296.0);
  CHECK(i["overhead_bytes"] == 524288000.0);  // 500 MiB
  CHECK(i["total_bytes"].get<double>() == i["weights_bytes"].get<double>() + i["kv_cache_bytes"].get<double>() +
                                              i["activation_bytes"].get<double>() + i["overhead_bytes"].get<double>());
  CHECK_FALSE(j.contains("training"));
  CHECK_FALSE(j.contains("fit"));
  // Without the flags the report is unchanged.
  CHECK_FALSE(json_of({"estimate", kLlama3, "--json"}).contains("inference"));
}

TEST_CASE("--kv-dtype float8 --engine vllm --overhead") {
  const auto j = json_of({"estimate", kLlama3, "--context", "4096", "--kv-dtype", "float8", "--engine", "vllm",
                          "--overhead", "1GiB", "--json"});
  CHECK(j["inference"]["engine"] == "vllm");
  CHECK(j["inference"]["kv_bytes_per_token"] == 65536);
  CHECK(j["inference"]["kv_cache_bytes"] == 65536.0 * 4096);
  CHECK(j["inference"]["overhead_bytes"] == 1073741824.0);
}

TEST_CASE("--train lora: PEFT's trainable parameters and the training object") {
  const auto j = json_of({"estimate", kLlama2, "--train", "lora", "--rank", "16", "--targets", "q_proj,v_proj",
                          "--optimizer", "adamw8bit", "--grad-checkpointing", "--context", "1024", "--json"});
  const auto& t = j["training"];
  CHECK(t["method"] == "lora");
  CHECK(t["trainable_parameters"] == 8388608);
  CHECK(t["optimizer"] == "adamw8bit");
  CHECK(t["grad_checkpointing"] == true);
  // 8-bit AdamW on 64 adapters: A [16, 4096] and B [4096, 16], 65,536 values each:
  // 2 × 65,536 + 8 × 256 = 133,120 bytes per tensor × 128 tensors = 17,039,360.
  CHECK(t["optimizer_bytes"] == 17039360.0);
  CHECK(t["gradient_bytes"] == 8388608.0 * 4);
  for (const char* k : {"weights_bytes", "activation_bytes", "total_bytes"}) CHECK(t.contains(k));
  // all-linear: 39,976,960.
  CHECK(json_of({"estimate", kLlama2, "--train", "qlora", "--rank", "16", "--targets", "all-linear", "--json"})
            ["training"]["trainable_parameters"] == 39976960);
}

TEST_CASE("--vram and --gpu: the fit object, and the text form") {
  const auto j = json_of({"estimate", kLlama3, "--context", "8192", "--batch", "2", "--vram", "24GiB", "--json"});
  const auto& f = j["fit"];
  CHECK(f["vram_bytes"] == 25769803776.0);
  CHECK(f["fits"] == true);
  CHECK(f["max_context"].get<std::int64_t>() >= 8192);
  CHECK(f["max_batch"].get<std::int64_t>() >= 2);
  CHECK(f["gpu"].is_null());

  const auto g = json_of({"estimate", kLlama3, "--context", "8192", "--gpu", "RTX 4090", "--json"});
  CHECK(g["fit"]["gpu"]["name"] == "NVIDIA RTX 4090");
  CHECK(g["fit"]["gpus_needed"] == 1);
  CHECK(g["fit"]["tokens_per_second"]["decode"].get<double>() > 0);

  auto text = run_memfit({"estimate", kLlama3, "--context", "8192", "--gpu", "RTX 4090"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("inference (transformers, bfloat16 weights, sdpa attention) at context 8,192 × batch 1:") !=
        std::string::npos);
  CHECK(text.out.find("131,072 bytes/token") != std::string::npos);
  CHECK(text.out.find("fit on 24.0 GB (NVIDIA RTX 4090): fits") != std::string::npos);
  CHECK(text.out.find("roofline estimate") != std::string::npos);
}

TEST_CASE("--zero / --fsdp / --gpus shard full fine-tuning") {
  const auto one = json_of({"estimate", kLlama2, "--train", "full", "--dtype", "bfloat16", "--json"});
  const auto z3 = json_of({"estimate", kLlama2, "--train", "full", "--dtype", "bfloat16", "--zero", "3", "--gpus",
                           "8", "--json"});
  // ZeRO-3 divides weights, gradients, master weights and optimizer states by 8.
  CHECK(z3["training"]["optimizer_bytes"].get<double>() == one["training"]["optimizer_bytes"].get<double>() / 8);
  CHECK(z3["training"]["gradient_bytes"].get<double>() == one["training"]["gradient_bytes"].get<double>() / 8);
  CHECK(z3["training"]["sharding"] == "zero-3");
  const auto fsdp = json_of({"estimate", kLlama2, "--train", "full", "--dtype", "bfloat16", "--fsdp", "--gpus", "8",
                             "--json"});
  CHECK(fsdp["training"]["total_bytes"] == z3["training"]["total_bytes"]);
}

TEST_CASE("core names options, the CLI prints its flags in their place") {
  auto context = run_memfit({"estimate", kLlama3, "--context", "99999999999"});
  CHECK(context.exit_code == 2);
  CHECK(context.err == "memfit: error: --context must be between 1 and 67108864, got 99999999999\n");
  auto context_json = run_memfit({"estimate", kLlama3, "--context", "99999999999", "--json"});
  CHECK(nlohmann::json::parse(context_json.err)["message"] == "--context must be between 1 and 67108864, got 99999999999");
  CHECK(run_memfit({"estimate", kLlama3, "--kv-dtype", "int3"}).err ==
        "memfit: error: --kv-dtype: unknown value 'int3' (float32, float16, bfloat16, float8, int8)\n");
  CHECK(run_memfit({"estimate", kLlama3, "--dtype", "int3"}).err ==
        "memfit: error: --dtype: unknown value 'int3' (float32, float16, bfloat16, int8, int4, nf4, fp4, fp8, q8_0, q4_0)\n");
  CHECK(run_memfit({"estimate", kLlama3, "--train", "dpo"}).err ==
        "memfit: error: --train: unknown value 'dpo' (full, lora, qlora)\n");
  CHECK(run_memfit({"estimate", kLlama3, "--train", "full", "--optimizer", "lion"}).err ==
        "memfit: error: --optimizer: unknown value 'lion' (adamw, adamw8bit, adafactor, sgd)\n");
  CHECK(run_memfit({"estimate", kLlama3, "--train", "full", "--zero", "4"}).err ==
        "memfit: error: --zero must be 0, 1, 2 or 3, got 4\n");
  const auto gpu = run_memfit({"estimate", kLlama3, "--gpu", "RTX 2080"});
  CHECK(gpu.err.rfind("memfit: error: --gpu 'RTX 2080' is not in memfit's catalogue (", 0) == 0);
  CHECK(gpu.err.find("); give --vram instead\n") != std::string::npos);
}

TEST_CASE("bad will-it-run flags: one line on stderr and the usage / unsupported exit codes") {
  auto engine = run_memfit({"estimate", kLlama3, "--engine", "tgi"});
  CHECK(engine.exit_code == 2);
  CHECK(engine.err == "memfit: error: --engine: unknown value 'tgi' (transformers, vllm, llama.cpp)\n");
  CHECK(run_memfit({"estimate", kLlama3, "--rank", "8"}).exit_code == 2);  // --rank needs --train
  CHECK(run_memfit({"estimate", kLlama3, "--vram", "lots"}).exit_code == 2);
  CHECK(run_memfit({"estimate", kLlama3, "--gpu", "RTX 2080"}).exit_code == 2);
  auto targets = run_memfit({"estimate", kLlama3, "--train", "lora", "--targets", "query_key_value"});
  CHECK(targets.exit_code == 2);
  CHECK(targets.err.find("not found in the base model") != std::string::npos);
  // An unknown model_type: exit 4, the message names it and lists what is supported.
  char tmpl[] = "/tmp/memfit-unknown-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  {
    std::FILE* f = std::fopen((dir + "/config.json").c_str(), "w");
    std::fputs(R"({"model_type": "not_a_model_type", "num_hidden_layers": 2})", f);
    std::fclose(f);
  }
  auto unknown = run_memfit({"estimate", dir + "/config.json", "--context", "8192"});
  CHECK(unknown.exit_code == 4);
  CHECK(unknown.err.find("model_type 'not_a_model_type' is not supported") != std::string::npos);
  CHECK(unknown.err.find("gemma2") != std::string::npos);
  std::filesystem::remove_all(dir);
}
