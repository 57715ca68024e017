// Inference totals, the inverse solver, the GPU catalogue and api::inference
// (core/include/memfit/memory/{will_it_run,gpu_fit,gpu_catalog}.h, api/api.h).
//
// The solver's contract is checked by round trip: what it returns fits, and one more token or
// one more sequence does not. Where an engine's activations do not depend on the context
// (vLLM's profile run), the answer is also derived by hand from the KV formula.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "memfit/api/api.h"
#include "memfit/memory/gpu_catalog.h"
#include "memfit/memory/quantization.h"
#include "memfit/memory/will_it_run.h"
#include "memfit/model/model.h"
#include "memfit/model/model_dims.h"
#include "support/reference.h"

using namespace memfit;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

EstimateRequest request_of(const std::string& stem) {
  EstimateRequest req;
  req.config_text = test::fixture("configs/" + stem + ".json");
  req.name = stem;
  return req;
}

RunReport run(const EstimateRequest& req, const RunOptions& o) {
  auto r = will_it_run(req, o);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  return *r;
}

}  // namespace

TEST_CASE("Llama-3-8B at 8k × 4: every part, and the total is their sum") {
  RunOptions o;
  o.context = 8192;
  o.batch = 4;
  const RunReport r = run(request_of("meta-llama--Meta-Llama-3-8B"), o);
  const InferenceEstimate& i = r.inference;
  CHECK(i.dtype == "bfloat16");  // config torch_dtype
  CHECK(i.kv_dtype == "bfloat16");
  // 8,030,261,248 parameters × 2 bytes + the rotary inv_freq buffer (64 values, float32 in any
  // load: memfit/model/keep_fp32.h).
  CHECK(i.weights_bytes == 8030261248.0 * 2 + 64 * 4);
  CHECK(i.kv.total() == 4294967296.0);  // 4 × 8,192 × 131,072
  CHECK(i.overhead_bytes == 500.0 * 1024 * 1024);
  // transformers prefill: 32,768 tokens; MLP intermediate 32,768 × 14,336 × 2 bytes × 3 (gate, up,
  // product) = 2,818,572,288; hidden states 2 × 32,768 × 4,096 × 2 = 536,870,912; logits of the
  // last positions 4 × 128,256 × (2 + 4) = 3,078,144.
  CHECK(i.activations.tokens_per_step == 32768);
  CHECK(i.activations.bytes == 2818572288.0 + 536870912.0 + 3078144.0);
  CHECK(i.total_bytes() == i.weights_bytes + i.kv.total() + i.activations.bytes + i.overhead_bytes);
  CHECK_FALSE(r.fit.has_value());
}

TEST_CASE("eager attention materializes batch × heads × s² scores (model dtype + float32 softmax)") {
  RunOptions o;
  o.context = 2048;
  o.attention = AttentionImpl::kEager;
  const RunReport r = run(request_of("meta-llama--Meta-Llama-3-8B"), o);
  // 1 × 32 heads × 2048² × (2 + 4) = 805,306,368, plus Q/K/V/O: 2048 × (2·4096 + 2·1024) × 2.
  const auto& parts = r.inference.activations.parts;
  REQUIRE(parts.size() == 4);
  CHECK(parts[1].bytes == 805306368.0 + 2048.0 * (2 * 4096 + 2 * 1024) * 2);
}

TEST_CASE("inverse solver round-trips: the answer fits, one more token or sequence does not") {
  for (Engine engine : {Engine::kTransformers, Engine::kVllm, Engine::kLlamaCpp}) {
    CAPTURE(engine_name(engine));
    const EstimateRequest req = request_of("meta-llama--Meta-Llama-3-8B");
    RunOptions o;
    o.engine = engine;
    o.context = 8192;
    o.batch = 2;
    o.vram_bytes = 24 * kGiB;
    const FitReport fit = *run(req, o).fit;
    REQUIRE(fit.max_context > 0);
    REQUIRE(fit.max_batch > 0);
    RunOptions at = o;
    at.context = fit.max_context;
    CHECK(run(req, at).fit->fits);
    at.context = fit.max_context + 1;
    CHECK_FALSE(run(req, at).fit->fits);
    RunOptions wide = o;
    wide.batch = fit.max_batch;
    CHECK(run(req, wide).fit->fits);
    wide.batch = fit.max_batch + 1;
    CHECK_FALSE(run(req, wide).fit->fits);
  }
}

TEST_CASE("vLLM's max context by hand: KV in 16-token blocks within 0.9 × VRAM") {
  const EstimateRequest req = request_of("meta-llama--Meta-Llama-3-8B");
  RunOptions o;
  o.engine = Engine::kVllm;
  o.context = 4096;
  o.batch = 4;
  o.vram_bytes = 24 * kGiB;
  const RunReport r = run(req, o);
  const FitReport& f = *r.fit;
  CHECK(f.usable_bytes == 0.9 * 24 * kGiB);
  // vLLM's activations (its max_num_batched_tokens profile run) do not grow with the context, so
  // the room for KV is fixed: C = 16 × ⌊room / (4 sequences × 131,072 bytes × 16 tokens)⌋.
  const double fixed = r.inference.weights_bytes + r.inference.activations.bytes + r.inference.overhead_bytes;
  const double blocks = std::floor((f.usable_bytes - fixed) / (4.0 * 131072 * 16));
  CHECK(f.max_context == static_cast<std::int64_t>(blocks) * 16);
}

TEST_CASE("--gpu: the catalogue gives memory, GPUs needed and a roofline estimate") {
  CHECK(find_gpu("RTX 4090").memory_bytes == 24 * kGiB);
  CHECK(find_gpu("nvidia-h100-sxm").bandwidth_bytes_s == 3350e9);
  CHECK(std::string(find_gpu("a100 40gb").name) == "NVIDIA A100 40GB");
  CHECK(std::string(find_gpu("MI300X").name) == "AMD Instinct MI300X");
  CHECK_THROWS_AS(find_gpu("RTX 2080"), Error);
  CHECK_THROWS_AS(find_gpu("RTX 40"), Error);  // 4080 or 4090: ambiguous

  RunOptions o;
  o.context = 4096;
  o.gpu = "RTX 4090";
  // Llama-3-70B in bf16: 141 GB of weights; (total − overhead) / (24 GiB − 500 MiB) rounded up.
  const RunReport r = run(request_of("meta-llama--Meta-Llama-3-70B"), o);
  const FitReport& f = *r.fit;
  CHECK_FALSE(f.fits);
  const double shared = r.inference.total_bytes() - r.inference.overhead_bytes;
  CHECK(f.gpus_needed == static_cast<std::int64_t>(std::ceil(shared / (24 * kGiB - 500.0 * 1024 * 1024))));
  CHECK(f.gpus_needed >= 6);
  REQUIRE(f.roofline.has_value());
  // Decode is memory-bound: (weights + KV) / (n × 1008 GB/s) per step, one token per sequence.
  const double step = (r.inference.weights_bytes + r.inference.kv.total()) / (static_cast<double>(f.gpus_needed) * 1008e9);
  CHECK(f.roofline->decode_tokens_per_s == doctest::Approx(1.0 / step));
}

TEST_CASE("--gpu: an MoE decode step reads its dense weights and only the experts its tokens use") {
  // Mixtral-8x7B, 2 of 8 experts per token. One sequence touches 2/8 of each layer's experts; a
  // batch of B uniformly routed tokens 1 − (6/8)^B of them (B = 64: all but 1e-8).
  RunOptions o;
  o.context = 1024;
  o.gpu = "H100";
  const EstimateRequest req = request_of("mistralai--Mixtral-8x7B-v0.1");
  const Result<Model> built = build_model(req);
  REQUIRE(built.ok());
  const Model& m = *built;
  const GpuSpec& h100 = find_gpu("H100");
  double experts = 0;
  for (int i : m.tree.named_parameters())
    if (m.tree.tensors[static_cast<std::size_t>(i)].name.find(".experts.") != std::string::npos)
      experts += static_cast<double>(m.tree.tensors[static_cast<std::size_t>(i)].numel);
  const double share = experts / static_cast<double>(m.parameters);
  CHECK(share > 0.9);  // Mixtral's experts are ~96% of it
  for (std::int64_t batch : {1, 64}) {
    o.batch = batch;
    const RunReport r = run(req, o);
    REQUIRE(r.fit->roofline.has_value());
    const double touched = 1.0 - std::pow(6.0 / 8.0, static_cast<double>(batch));
    const double read = r.inference.weights_bytes * (1.0 - share * (1.0 - touched)) + r.inference.kv.total();
    const double n = static_cast<double>(std::max<std::int64_t>(1, r.fit->gpus_needed));
    const double step = std::max(read / (n * h100.bandwidth_bytes_s), 2.0 * active_parameters(m.tree, *m.dims.get()) *
                                                                          static_cast<double>(batch) / (n * h100.bf16_flops));
    CHECK(r.fit->roofline->decode_tokens_per_s == doctest::Approx(static_cast<double>(batch) / step));
  }
}

TEST_CASE("memory sizes read as accelerate reads max_memory") {
  CHECK(parse_memory_size("24GiB", "--vram") == 24 * kGiB);
  CHECK(parse_memory_size("24GB", "--vram") == 24e9);
  CHECK(parse_memory_size("500MiB", "--overhead") == 500.0 * 1024 * 1024);
  CHECK(parse_memory_size("1.5 GiB", "--vram") == 1.5 * kGiB);
  CHECK(parse_memory_size("8Gb", "--vram") == 1e9);  // gigabits
  CHECK(parse_memory_size("1024", "--vram") == 1024);
  CHECK_THROWS_AS(parse_memory_size("lots", "--vram"), Error);
  CHECK_THROWS_AS(parse_memory_size("-1GB", "--vram"), Error);
}

TEST_CASE("models that do not generate have no KV cache; unknown families are a clear error") {
  RunOptions o;
  o.context = 512;
  const RunReport bert = run(request_of("bert-base-cased"), o);
  CHECK_FALSE(bert.generative);
  CHECK(bert.inference.kv.total() == 0);
  EstimateRequest u;
  u.config_text = R"({"model_type": "not_a_model_type", "num_hidden_layers": 2})";
  auto unknown = will_it_run(u, o);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code() == ErrorCode::kUnknownModelType);
  // Gemma 2 (google/gemma-2-9b's real config): the Hub's 9,241,705,984 parameters, and the
  // hybrid cache — every other layer slides over 4,096 tokens.
  EstimateRequest g;
  g.config_text = test::fixture("kv/google--gemma-2-9b.json");
  const RunReport gemma2 = run(g, o);
  REQUIRE(gemma2.generative);
  CHECK(gemma2.layout.sliding_layers() == 21);
  CHECK(estimate(g)->parameters == 9241705984ULL);
}

TEST_CASE("quantization_config sizes the weights; --dtype int4 asks for bitsandbytes NF4") {
  RunOptions o;
  o.context = 1024;
  const RunReport v3 = run(request_of("deepseek-ai--DeepSeek-V3"), o);
  CHECK(v3.weights_source == "quantization_config");
  CHECK(v3.quantization == "fp8, 128×128 block scales");
  o.dtype = parse_weight_dtype("int4", "dtype");
  const RunReport nf4 = run(request_of("meta-llama--Meta-Llama-3-8B"), o);
  CHECK(nf4.weights_source == "--dtype");
  CHECK(nf4.quantization == "bitsandbytes 4-bit");
  CHECK(nf4.inference.weights_bytes < 8030261248.0 * 2 / 2.5);
  CHECK_THROWS_AS(parse_weight_dtype("int3", "dtype"), Error);
}

TEST_CASE("api::inference: the documented fields, and errors as {error: {code, message}}") {
  const std::string config = test::fixture("configs/meta-llama--Meta-Llama-3-8B.json");
  const std::string request = R"({"config": )" + config +
                              R"(, "context": 8192, "batch": 4, "engine": "vllm", "vram": "24GiB",
                                  "train": {"method": "lora", "rank": 16, "targets": "q_proj,v_proj"}})";
  const auto j = nlohmann::json::parse(api::inference(request));
  REQUIRE_MESSAGE(!j.contains("error"), j.dump());
  for (const char* k : {"context", "batch", "kv_dtype", "kv_bytes_per_token", "kv_cache_bytes", "weights_bytes",
                        "activation_bytes", "overhead_bytes", "total_bytes"})
    CHECK_MESSAGE(j["inference"].contains(k), k);
  for (const char* k : {"method", "trainable_parameters", "weights_bytes", "gradient_bytes", "optimizer_bytes",
                        "activation_bytes", "total_bytes"})
    CHECK_MESSAGE(j["training"].contains(k), k);
  for (const char* k : {"vram_bytes", "max_context", "max_batch", "fits"}) CHECK_MESSAGE(j["fit"].contains(k), k);
  CHECK(j["inference"]["kv_bytes_per_token"] == 131072);
  CHECK(j["inference"]["kv_cache_bytes"] == 4294967296.0);
  CHECK(j["training"]["trainable_parameters"] == 16 * 32 * (4096 + 4096 + 4096 + 1024));
  CHECK(j["fit"]["for"] == "training");

  const auto bad = nlohmann::json::parse(api::inference(R"({"config": )" + config + R"(, "engine": "tgi"})"));
  CHECK(bad["error"]["code"] == "invalid_argument");
  CHECK(bad["error"]["message"] == "engine: unknown value 'tgi' (transformers, vllm, llama.cpp)");
  const auto bad_size = nlohmann::json::parse(api::inference(R"({"config": )" + config + R"(, "vram": "big"})"));
  CHECK(bad_size["error"]["code"] == "invalid_argument");
}

TEST_CASE("api::inference sizes the weights from checkpoint headers when given") {
  // A one-layer GPTQ-style checkpoint: what is stored is what is loaded.
  const std::string request = R"({
    "config": {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 256,
               "intermediate_size": 512, "num_hidden_layers": 1, "num_attention_heads": 4,
               "num_key_value_heads": 4, "vocab_size": 1000, "torch_dtype": "float16"},
    "checkpoint": [
      {"name": "model.embed_tokens.weight", "dtype": "F16", "shape": [1000, 256]},
      {"name": "model.layers.0.self_attn.q_proj.qweight", "dtype": "I32", "shape": [32, 256]},
      {"name": "model.layers.0.self_attn.q_proj.scales", "dtype": "F16", "shape": [2, 256]}],
    "context": 64})";
  const auto j = nlohmann::json::parse(api::inference(request));
  REQUIRE_MESSAGE(!j.contains("error"), j.dump());
  CHECK(j["inference"]["weights_source"] == "checkpoint");
  // 1000 × 256 × 2 + 32 × 256 × 4 + 2 × 256 × 2 = 512,000 + 32,768 + 1,024.
  CHECK(j["inference"]["weights_bytes"] == 545792.0);
}

TEST_CASE("the training fit round-trips too (QLoRA on Llama-2-7b in 24 GiB)") {
  const EstimateRequest req = request_of("meta-llama--Llama-2-7b-hf");
  RunOptions o;
  o.context = 2048;
  o.batch = 4;
  o.vram_bytes = 24 * kGiB;
  TrainingOptions t;
  t.method = TrainMethod::kQlora;
  t.rank = 16;
  t.grad_checkpointing = true;
  o.train = t;
  const FitReport fit = *run(req, o).fit;
  REQUIRE(fit.max_context > 0);
  RunOptions at = o;
  at.context = fit.max_context;
  CHECK(run(req, at).fit->fits);
  at.context = fit.max_context + 1;
  CHECK_FALSE(run(req, at).fit->fits);
  at = o;
  at.batch = fit.max_batch + 1;
  CHECK_FALSE(run(req, at).fit->fits);
}

TEST_CASE("--engine llama.cpp --dtype int4 means GGUF q4_0 (18 bytes per 32 values), every matrix") {
  LinearLayer l;
  l.in = 4096;
  l.out = 4096;
  const QuantScheme q4 = quant_scheme_for(WeightQuant::kInt4, /*gguf=*/true);
  // 128 blocks per row × 4,096 rows × 18 bytes (16 packed + one fp16 scale).
  CHECK(quantized_layer_bytes(l, q4) == 9437184.0);
  RunOptions o;
  o.context = 4096;
  o.engine = Engine::kLlamaCpp;
  o.dtype = parse_weight_dtype("int4", "dtype");
  const RunReport r = run(request_of("meta-llama--Meta-Llama-3-8B"), o);
  CHECK(r.quantization == "gguf q4_0");
  // All 2-D weights at 4.5 bits, the 65 norm vectors (4096 each) at bf16, inv_freq in float32:
  // (8,030,261,248 − 65 × 4096) × 18/32 + 65 × 4096 × 2 + 64 × 4.
  CHECK(r.inference.weights_bytes == (8030261248.0 - 65 * 4096) * 18 / 32 + 65.0 * 4096 * 2 + 64 * 4);
}

TEST_CASE("api::inference: messages name the request's options, never a CLI flag") {
  const std::string config = test::fixture("configs/meta-llama--Meta-Llama-3-8B.json");
  auto message = [&](const std::string& fields) {
    const auto j = nlohmann::json::parse(api::inference(R"({"config": )" + config + ", " + fields + "}"));
    REQUIRE(j.contains("error"));
    return j["error"]["message"].get<std::string>();
  };
  CHECK(message(R"("context": 0)") == fmt::format("context must be between 1 and {}, got 0", kMaxSolvedContext));
  CHECK(message(R"("batch": 0)") == fmt::format("batch must be between 1 and {}, got 0", kMaxSolvedBatch));
  CHECK(message(R"("kv_dtype": "int3")") == "kv_dtype: unknown value 'int3' (float32, float16, bfloat16, float8, int8)");
  CHECK(message(R"("dtype": "int3")") ==
        "dtype: unknown value 'int3' (float32, float16, bfloat16, int8, int4, nf4, fp4, fp8, q8_0, q4_0)");
  CHECK(message(R"("train": {"method": "dpo"})") == "train.method: unknown value 'dpo' (full, lora, qlora)");
  CHECK(message(R"("train": {"method": "full", "zero": 4})") == "zero must be 0, 1, 2 or 3, got 4");
  CHECK(message(R"("train": {"method": "full", "gpus": 0})") == "gpus must be at least 1");
  const std::string gpu = message(R"("gpu": "RTX 2080")");
  CHECK(gpu.rfind("gpu 'RTX 2080' is not in memfit's catalogue (", 0) == 0);
  CHECK(gpu.find("); give vram instead") != std::string::npos);
  for (const char* fields : {R"("context": 0)", R"("kv_dtype": "x")", R"("gpu": "RTX 2080")", R"("gpu": "RTX 40")"})
    CHECK_MESSAGE(message(fields).find("--") == std::string::npos, fields);
}

TEST_CASE("api::inference: train without a method takes RunOptions' default (full), as a TrainingOptions does") {
  const std::string config = test::fixture("configs/meta-llama--Meta-Llama-3-8B.json");
  const auto j = nlohmann::json::parse(api::inference(R"({"config": )" + config + R"(, "train": {}})"));
  REQUIRE(j.contains("training"));
  CHECK(j["training"]["method"] == std::string(train_method_name(kRunDefaults.train_method)));
  CHECK(j["training"]["method"] == "full");
}
