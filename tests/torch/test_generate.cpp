// Generation on the golden checkpoints: greedy ids equal transformers' generate() for every
// placement and prefetch depth, with the KV cache equal to running without it; half-precision
// weights stay half in memory; every placement names bad input before anything runs.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include "failure.h"
#include "generation.h"
#include "half_linear.h"
#include "support/reference.h"
#include "torch_test_support.h"

namespace memfit::test {
namespace {

struct GoldenGeneration {
  const char* model;    // golden folder with golden.json
  const char* weights;  // folder with the weights ("" = the model's)
  const char* mixed_map;
};

const GoldenGeneration kGenerations[] = {
    {"tiny-gpt2", "", R"({"transformer.wte": "cpu", "transformer.h.0": "disk", "transformer.h.1": "cpu",
                         "transformer.h.2": "disk", "transformer.h.3": "cpu", "transformer.wpe": "disk",
                         "transformer.ln_f": "cpu", "lm_head": "cpu"})"},
    {"tiny-llama", "", R"({"model.embed_tokens": "disk", "model.layers.0": "cpu", "model.layers.1": "disk",
                          "model.layers.2": "cpu", "model.layers.3": "disk", "model.norm": "cpu", "lm_head": "disk"})"},
    {"tiny-llama-ropescaled", "tiny-llama", R"({"": "disk"})"},
};

std::vector<std::int64_t> prompt_of(const nlohmann::json& golden) {
  const auto& gen = golden["generation"];
  return golden["inputs"][gen["input"].get<std::string>()]["input_ids"][0].get<std::vector<std::int64_t>>();
}

// Greedy decoding without a cache: the whole sequence runs again for every new token.
std::vector<std::int64_t> greedy_without_cache(torchrt::Executor& exec, std::vector<std::int64_t> ids, int n) {
  std::vector<std::int64_t> out;
  for (int i = 0; i < n; ++i) {
    const auto input = at::tensor(ids, at::TensorOptions().dtype(at::kLong)).view({1, -1});
    const at::Tensor logits = exec.forward(input);
    out.push_back(logits[0][logits.size(1) - 1].argmax().item<std::int64_t>());
    ids.push_back(out.back());
  }
  return out;
}

Failure failure_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Failure& e) {
    return e;
  }
  FAIL("expected a Failure");
  return Failure{FailureKind::kInternal, ""};
}

}  // namespace

TEST_CASE("generate: greedy ids equal transformers' for every placement and prefetch depth, cache or not") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("golden generation by placement");
  int compared = 0;
  for (const GoldenGeneration& g : kGenerations) {
    CAPTURE(g.model);
    const auto golden = golden_json(g.model);
    const auto expected = golden["generation"]["new_token_ids"].get<std::vector<std::int64_t>>();
    const int n = golden["generation"]["max_new_tokens"].get<int>();
    const std::string weights = *dir + "/" + (*g.weights ? g.weights : g.model);
    const std::string config = *g.weights ? *dir + "/" + g.model : "";
    for (const std::string& map : {std::string(), std::string(R"({"": "cpu"})"), std::string(R"({"": "disk"})"),
                                  std::string(g.mixed_map)}) {
      CAPTURE(map);
      const Loaded m = load(weights, map, config);
      for (int depth : {0, 1, 3}) {
        CAPTURE(depth);
        torchrt::ExecOptions opt;
        opt.prefetch = depth > 0;
        opt.prefetch_depth = std::max(depth, 1);
        torchrt::Executor exec(*m.model, *m.program, opt);
        torchrt::GenerateRequest req;
        req.prompt = prompt_of(golden);
        req.max_new_tokens = n;
        const auto r = torchrt::generate(exec, req);
        CHECK(r.new_ids == expected);
        CHECK(r.stopped_at == "max_new_tokens");
        CHECK(r.decode_forwards == n - 1);
        if (depth == 1) CHECK(greedy_without_cache(exec, req.prompt, n) == expected);
        ++compared;
      }
    }
  }
  CHECK(compared == 36);
}

TEST_CASE("generate: the cache's logits equal the full forward's at every step; EOS and a caller's stop end it") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("KV cache vs full forward");
  const auto golden = golden_json("tiny-llama");
  const Loaded m = load(*dir + "/tiny-llama", R"({"": "disk"})");
  torchrt::Executor exec(*m.model, *m.program);
  std::vector<std::int64_t> ids = prompt_of(golden);
  torchrt::ForwardState s;
  s.use_cache = true;
  s.capacity = 4;  // smaller than the prompt: the cache grows (one copy) and must stay exact
  at::Tensor input = at::tensor(ids, at::TensorOptions().dtype(at::kLong)).view({1, -1});
  double worst = 0;
  for (int step = 0; step < 6; ++step) {
    const at::Tensor cached = exec.forward(input, &s);
    const at::Tensor full = exec.forward(at::tensor(ids, at::TensorOptions().dtype(at::kLong)).view({1, -1}));
    const at::Tensor a = cached[0][cached.size(1) - 1], b = full[0][full.size(1) - 1];
    worst = std::max(worst, (a - b).abs().max().item<double>());
    ids.push_back(a.argmax().item<std::int64_t>());
    input = at::tensor(std::vector<std::int64_t>{ids.back()}, at::TensorOptions().dtype(at::kLong)).view({1, 1});
  }
  MESSAGE("cache vs full forward, worst last-position logit diff " << worst);
  CHECK(worst <= 1e-5);

  const auto expected = golden["generation"]["new_token_ids"].get<std::vector<std::int64_t>>();
  torchrt::GenerateRequest req;
  req.prompt = prompt_of(golden);
  req.max_new_tokens = 12;
  req.eos = {expected[2]};  // generation stops at its first occurrence, which it keeps
  const auto first = std::find(expected.begin(), expected.end(), expected[2]) + 1;
  auto r = torchrt::generate(exec, req);
  CHECK(r.stopped_at == "eos");
  CHECK(r.new_ids == std::vector<std::int64_t>(expected.begin(), first));
  req.eos.clear();
  int seen = 0;
  req.on_token = [&](std::int64_t) { return ++seen < 2; };
  r = torchrt::generate(exec, req);
  CHECK(r.stopped_at == "stop");
  CHECK(r.new_ids.size() == 2);
}

TEST_CASE("half precision: fp16/bf16 weights stay half in memory and compute in float32 on a CPU, exactly upcast") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("half-precision weights");
  for (const char* model : {"tiny-gpt2", "tiny-llama"})
    for (const char* half : {"fp16", "bf16"}) {
      CAPTURE(model);
      CAPTURE(half);
      const auto golden = golden_json(model);
      for (const std::string& map : {std::string(), std::string(R"({"": "disk"})")}) {
        const Loaded m = load(std::string(*dir) + "/" + model + "/" + half, map);
        const at::ScalarType want = std::string(half) == "fp16" ? at::kHalf : at::kBFloat16;
        CHECK((m.model->dtype == want));
        for (const auto& w : m.model->weights) CHECK((w.tensor.scalar_type() == want));
        CHECK((torchrt::default_compute_dtype(*m.model) == at::kFloat));
        // Upcasting per block gives what transformers gives for torch_dtype=float32 on these files.
        const std::string variant = std::string(half) + "_upcast_fp32";
        const at::Tensor logits = run(m, golden_input(golden, "A"));
        CHECK(compare_to_golden(logits, golden["logits"][variant]["A"]).max_abs <= 1e-4);
      }
    }
  // --compute-dtype bfloat16 against transformers' own bf16 forward (torch_dtype=bfloat16 on a CPU).
  const auto golden = golden_json("tiny-llama");
  const Loaded m = load(*dir + "/tiny-llama/bf16");
  torchrt::ExecOptions opt;
  opt.compute_dtype = at::kBFloat16;
  const at::Tensor logits = run(m, golden_input(golden, "A"), opt);
  const GoldenDiff d = compare_to_golden(logits, golden["logits"]["bf16_native"]["A"]);
  // The logits come out of a bfloat16 linear: they are rounded to bf16's spacing at their size
  // (8 significant bits: 2^(e-7) for |x| in [2^e, 2^(e+1))). The same math in another rounding
  // order may land a few spacings away; transformers' own bf16 forward is 0.30 from fp32.
  double largest = 0;
  for (const auto& row : golden["logits"]["bf16_native"]["A"]["last"])
    for (const auto& v : row) largest = std::max(largest, std::abs(v.get<double>()));
  const double spacing = std::ldexp(1.0, static_cast<int>(std::floor(std::log2(largest))) - 7);
  MESSAGE("bf16 compute vs transformers' bf16 forward: max abs diff " << d.max_abs << " (bf16 spacing at the "
          "largest logit " << spacing << "), argmax mismatches " << d.argmax_mismatches << " of " << d.positions);
  CHECK(d.max_abs <= 4 * spacing);
  CHECK(d.max_abs < golden["tolerances_observed"]["bf16_native_vs_fp32_max_abs_diff"].get<double>() / 2);
  CHECK(d.argmax_mismatches <= 1);
}

TEST_CASE("bad input is named before anything runs, in every placement, and the executor still works after") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("bad input by placement");
  const auto golden = golden_json("tiny-gpt2");
  const at::Tensor good = golden_input(golden, "A");
  for (const std::string& map : {std::string(), std::string(R"({"": "cpu"})"), std::string(R"({"": "disk"})"),
                                std::string(kGenerations[0].mixed_map)}) {
    CAPTURE(map);
    const Loaded m = load(*dir + "/tiny-gpt2", map);
    torchrt::Executor exec(*m.model, *m.program);
    const at::Tensor before = exec.forward(good);
    const auto long_ids = at::tensor(std::vector<std::int64_t>{1, 2, 99999}).view({1, 3});
    Failure e = failure_of([&] { exec.forward(long_ids); });
    CHECK((e.kind == FailureKind::kUsage));
    CHECK(e.message.find("token id 99999") != std::string::npos);
    CHECK(e.message.find("transformer.wte.weight") != std::string::npos);
    e = failure_of([&] { exec.forward(at::tensor(std::vector<std::int64_t>{-1}).view({1, 1})); });
    CHECK(e.message.find("token id -1") != std::string::npos);
    e = failure_of([&] { exec.forward(at::empty({1, 0}, at::kLong)); });
    CHECK(e.message.find("empty") != std::string::npos);
    const std::int64_t positions = golden["config"]["n_positions"].get<std::int64_t>();
    e = failure_of([&] { exec.forward(at::ones({1, positions + 1}, at::kLong)); });
    CHECK(e.message.find("learned positions") != std::string::npos);
    CHECK(e.message.find(std::to_string(positions)) != std::string::npos);
    CHECK(bitwise_equal(exec.forward(good), before));
  }
}

TEST_CASE("half_linear: x·wᵀ from float16/bfloat16 weights equals at::linear on the float32 upcast") {
  at::manual_seed(7);
  using torchrt::HalfLinearKernel;
  for (const HalfLinearKernel kernel : {HalfLinearKernel::kScalar, HalfLinearKernel::kAvx2, HalfLinearKernel::kAvx512}) {
  const HalfLinearKernel used = torchrt::use_half_linear_kernel(kernel);
  CAPTURE(static_cast<int>(used));
  if (used != kernel) MESSAGE("half_linear: this CPU has no kernel " << static_cast<int>(kernel) << "; checked "
                              << static_cast<int>(used) << " again");
  for (const at::ScalarType half : {at::kHalf, at::kBFloat16})
    for (const std::int64_t rows : {1, 2, 3, 5, 8})
      for (const std::int64_t k : {7, 64, 100, 1000}) {
        CAPTURE(rows);
        CAPTURE(k);
        const std::int64_t n = 130;  // two blocks of 64 rows and a part of one
        const at::Tensor w = at::randn({n, k}).to(half);
        const at::Tensor b = at::randn({n}).to(half);
        const at::Tensor x = at::randn({1, rows, k});
        REQUIRE(torchrt::half_linear_applies(x, w));
        const at::Tensor expected = at::linear(x, w.to(at::kFloat), b.to(at::kFloat));
        const at::Tensor got = torchrt::half_linear(x, w, b);
        CHECK(got.sizes() == expected.sizes());
        // float32 sums in another order: relative to the sum of |terms|.
        const at::Tensor scale = at::linear(x.abs(), w.to(at::kFloat).abs()) + 1;
        CHECK(((got - expected).abs() / scale).max().item<double>() < 1e-5);
      }
  }
  torchrt::use_half_linear_kernel(HalfLinearKernel::kAvx512);  // the best again
  CHECK_FALSE(torchrt::half_linear_applies(at::randn({9, 8}), at::randn({4, 8}).to(at::kHalf)));   // rows
  CHECK_FALSE(torchrt::half_linear_applies(at::randn({1, 8}), at::randn({4, 8})));                 // float32 w
  CHECK_FALSE(torchrt::half_linear_applies(at::randn({1, 8}), at::randn({8, 4}).to(at::kHalf).t()));  // strided
}

TEST_CASE("half precision: decoding from bf16 weights kept as stored equals decoding from their float32 upcast") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("bf16 decoding");
  const auto golden = golden_json("tiny-llama");
  const Loaded half = load(*dir + "/tiny-llama/bf16", R"({"model.layers.0": "disk", "": "cpu"})");
  const Loaded full = load(*dir + "/tiny-llama/bf16", "", "", DType::kF32);
  // A float32 cache, as b holds it: this compares the weights' path alone (half_linear).
  torchrt::ExecOptions float_cache;
  float_cache.cache_dtype = at::kFloat;
  torchrt::Executor a(*half.model, *half.program, float_cache), b(*full.model, *full.program);
  torchrt::GenerateRequest req;
  req.prompt = prompt_of(golden);
  req.max_new_tokens = 12;
  double worst = 0;
  std::vector<at::Tensor> logits_b;
  req.choose = [&](const at::Tensor& l, const std::vector<std::int64_t>&) {
    logits_b.push_back(l.clone());
    return l.argmax().item<std::int64_t>();
  };
  const auto rb = torchrt::generate(b, req);
  std::size_t step = 0;
  req.choose = [&](const at::Tensor& l, const std::vector<std::int64_t>&) {
    worst = std::max(worst, (l - logits_b.at(step++)).abs().max().item<double>());
    return l.argmax().item<std::int64_t>();
  };
  const auto ra = torchrt::generate(a, req);
  MESSAGE("bf16 kept vs float32 upcast, worst logit diff over 12 steps " << worst);
  CHECK(ra.new_ids == rb.new_ids);
  CHECK(step == 12);
  CHECK(worst < 1e-4);

  // The default cache keeps the weights' dtype, as transformers does (and memfit's planner
  // counts): each key and value is rounded to bf16 once, as stored. That moves the logits by
  // a small part of what computing the whole model in bf16 moves them (transformers' own bf16
  // forward of this checkpoint: tolerances_observed).
  torchrt::Executor c(*half.model, *half.program);
  worst = 0;
  step = 0;
  const auto rc = torchrt::generate(c, req);
  MESSAGE("bf16 cache vs float32 cache, worst logit diff over 12 steps " << worst);
  CHECK(step == 12);
  CHECK(worst > 0);  // the cache really is bf16
  CHECK(worst < golden["tolerances_observed"]["bf16_native_vs_fp32_max_abs_diff"].get<double>() / 4);
  CHECK(rc.new_ids == rb.new_ids);
}

TEST_CASE("a parameter stored in a dtype the runtime cannot compute is refused before loading, by name") {
  const auto dir = golden_dir();
  if (!dir) return skip_loudly("uncomputable dtype");
  TempDir tmp;
  std::ifstream in(*dir + "/tiny-llama/model.safetensors", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Same size per element: only the header's dtype changes (a stand-in for int8/fp8 weights).
  const std::string key = R"("model.layers.1.mlp.up_proj.weight":{"dtype":"F32")";
  const auto at = bytes.find(key);
  REQUIRE(at != std::string::npos);
  bytes.replace(at + key.size() - 4, 3, "I32");
  std::ofstream(tmp.path + "/model.safetensors", std::ios::binary) << bytes;
  std::ofstream(tmp.path + "/config.json") << std::ifstream(*dir + "/tiny-llama/config.json").rdbuf();
  const Failure e = failure_of([&] { load(tmp.path); });
  CHECK((e.kind == FailureKind::kUnsupported));
  CHECK(e.message.find("model.layers.1.mlp.up_proj.weight") != std::string::npos);
  CHECK(e.message.find("I32") != std::string::npos);
}

}  // namespace memfit::test
