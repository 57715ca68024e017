// Every RoPE family through the block executor (issue 17): the KV cache gives what a full
// forward gives, a batch what each row alone gives, every placement and prefetch depth the same
// bits, and `memfit forward` runs each family's tiny checkpoint end to end.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "memfit/model/model.h"
#include "support/run_process.h"
#include "tiny_decoder.h"

namespace memfit::test {
namespace {

const TinyDims kDims;

// Prefetch off, on one stage ahead, on three stages ahead.
std::vector<torchrt::ExecOptions> prefetch_settings() {
  std::vector<torchrt::ExecOptions> out(3);
  out[0].prefetch = false;
  out[2].prefetch_depth = 3;
  return out;
}

std::int64_t last_argmax(const at::Tensor& logits) {
  return logits.select(1, logits.size(1) - 1).argmax(-1).item<std::int64_t>();
}

}  // namespace

TEST_CASE("family runtime: with the KV cache, greedy ids and logits equal full forwards without it") {
  // 6 prompt tokens + 6 generated: past every window (3, 5).
  const auto prompt = tiny_ids(1, 6, kDims.vocab);
  for_each_family(kDims, [&](const TinyFamily&, const Loaded& m) {
    torchrt::Executor cached(*m.model, *m.program, {/*prefetch=*/false});
    torchrt::ForwardState state;
    state.use_cache = true;
    state.capacity = 12;
    at::Tensor step = cached.forward(prompt, &state);
    at::Tensor full_ids = prompt;
    for (int i = 0; i < 6; ++i) {
      const at::Tensor full = logits_of(m, full_ids);
      check_close(step.select(1, step.size(1) - 1), full.select(1, full.size(1) - 1), 1e-4);
      const std::int64_t next = last_argmax(full);
      CHECK(last_argmax(step) == next);
      const auto next_ids = at::full({1, 1}, next, at::TensorOptions().dtype(at::kLong));
      full_ids = at::cat({full_ids, next_ids}, 1);
      step = cached.forward(next_ids, &state);
    }
    CHECK(state.past == 12);
  });
}

TEST_CASE("family runtime: a batch equals each row run alone") {
  const auto ids = tiny_ids(3, 9, kDims.vocab, 4);
  for_each_family(kDims, [&](const TinyFamily&, const Loaded& m) {
    const at::Tensor batch = logits_of(m, ids);
    for (std::int64_t r = 0; r < ids.size(0); ++r) {
      CAPTURE(r);
      check_close(batch.narrow(0, r, 1), logits_of(m, ids.narrow(0, r, 1)), 1e-4);
    }
  });
}

TEST_CASE("family runtime: resident, CPU-streamed and disk placements, prefetch on or off, give the same bits") {
  TempDir tmp;
  const auto ids = tiny_ids(2, 7, kDims.vocab, 9);
  const std::string mixed =
      R"({"model.embed_tokens": "disk", "model.layers.0": "cpu", "model.layers.1": "disk",
          "model.layers.2": "cpu", "model.norm": "disk", "lm_head": "cpu"})";
  for (const TinyFamily& f : tiny_families(kDims)) {
    CAPTURE(f.name);
    const at::Tensor expected = logits_of(load_tiny(tmp, f.name, f.weights, f.config), ids);
    // Gemma ties lm_head to embed_tokens: its map has no lm_head entry.
    std::string map = mixed;
    if (f.name == "gemma") map.replace(map.find(R"(, "lm_head": "cpu")"), 18, "");
    for (const std::string& device_map : {std::string(R"({"": "cpu"})"), std::string(R"({"": "disk"})"), map}) {
      CAPTURE(device_map);
      const Loaded m = load_tiny(tmp, f.name, f.weights, f.config, device_map);
      for (const torchrt::ExecOptions& opt : prefetch_settings()) {
        CAPTURE(opt.prefetch);
        CAPTURE(opt.prefetch_depth);
        torchrt::Executor exec(*m.model, *m.program, opt);
        CHECK(bitwise_equal(exec.forward(ids), expected));
        // Generation through the cache streams the same weights every token.
        torchrt::Executor gen(*m.model, *m.program, opt);
        CHECK(gen.generate({3, 1, 4, 1, 5}, 4).size() == 4u);
      }
    }
  }
}

TEST_CASE("family runtime: memfit forward runs each family's tiny checkpoint end to end") {
  TempDir tmp;
  for (const TinyFamily& f : tiny_families(kDims)) {
    CAPTURE(f.name);
    const std::string dir = tmp.path + "/" + f.name;
    write_checkpoint(dir, f.weights, f.config);
    const Loaded m = load(dir);
    const auto ids = at::tensor(std::vector<std::int64_t>{5, 17, 42, 8, 91, 3}, at::TensorOptions().dtype(at::kLong))
                         .view({1, 6});
    const at::Tensor expected = logits_of(m, ids);
    const ProcessResult r = run_memfit({"forward", dir, "--tokens", "5,17,42,8,91,3", "--json", "--threads", "1",
                                        "--device-map", R"({"": "disk"})"});
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["shape"] == nlohmann::json::array({1, 6, kDims.vocab}));
    const auto last = j["last_logits"][0].get<std::vector<double>>();
    REQUIRE(last.size() == static_cast<std::size_t>(kDims.vocab));
    double worst = 0;
    for (std::int64_t v = 0; v < kDims.vocab; ++v)
      worst = std::max(worst, std::abs(last[static_cast<std::size_t>(v)] - expected[0][5][v].item<double>()));
    CHECK(worst <= 1e-4 * std::max(1.0, expected.abs().max().item<double>()));
  }
}

TEST_CASE("family runtime: gemma3 (the vision-language config) runs its language model as gemma3_text does") {
  TempDir tmp;
  nlohmann::json text = gemma2_config(kDims, "gemma3_text");
  text["sliding_window"] = 3;
  text["sliding_window_pattern"] = 2;
  text["tie_word_embeddings"] = true;
  text.erase("architectures");
  Weights w = gemma2_weights(kDims, true);
  w.erase("lm_head.weight");
  nlohmann::json text_only = text;
  text_only["architectures"] = {"Gemma3ForCausalLM"};
  const auto ids = tiny_ids(2, 8, kDims.vocab, 2);
  const at::Tensor expected = logits_of(load_tiny(tmp, "gemma3_text", w, text_only), ids);

  const nlohmann::json vlm = {
      {"model_type", "gemma3"},
      {"architectures", {"Gemma3ForConditionalGeneration"}},
      {"text_config", text},
      {"vision_config", {{"model_type", "siglip_vision_model"}, {"hidden_size", 16}, {"intermediate_size", 32},
                         {"num_hidden_layers", 1}, {"num_attention_heads", 2}, {"image_size", 28},
                         {"patch_size", 14}, {"vision_use_head", false}}}};
  // The language model's weights under language_model.*, as its checkpoints store them; the
  // vision tower and projector (never run here) as zeros of the tree's shapes.
  Weights composite;
  for (const auto& [name, t] : w) composite["language_model." + name] = t;
  EstimateRequest request;
  request.config_text = vlm.dump();
  const Result<TensorTree> tree = build_tree(request);
  REQUIRE(tree);
  for (const TensorInfo& t : tree.value().tensors) {
    if (t.is_alias() || (t.kind == TensorKind::kBuffer && !t.persistent) || t.era == BufferEra::kLegacyOnly) continue;
    if (t.name.rfind("language_model.", 0) != 0) composite[t.name] = at::zeros(t.shape);
  }
  CHECK(bitwise_equal(logits_of(load_tiny(tmp, "gemma3", composite, vlm), ids), expected));
}

TEST_CASE("family runtime: every family computes in bfloat16 (norms, softmax and logits in float32)") {
  const auto ids = tiny_ids(2, 8, kDims.vocab, 6);
  for_each_family(kDims, [&](const TinyFamily&, const Loaded& m) {
    const at::Tensor expected = logits_of(m, ids);
    // bfloat16 only: LibTorch 1.13 has no float16 GEMM on the CPU.
    torchrt::ExecOptions opt;
    opt.prefetch = false;
    opt.compute_dtype = at::kBFloat16;
    const at::Tensor half = run(m, ids, opt);
    CHECK(bool(half.scalar_type() == at::kFloat));
    CHECK(bool(at::isfinite(half).all().item<bool>()));
    // bfloat16 keeps 8 bits of mantissa: through these tiny models' large gains the logits move
    // by up to ~8% of their largest, and the greedy choice stays mostly the same.
    check_close(half, expected, 0.2);
    CHECK((half.argmax(-1) == expected.argmax(-1)).to(at::kFloat).mean().item<double>() >= 0.75);
  });
}

}  // namespace memfit::test
