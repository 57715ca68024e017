// Trees from checkpoint headers, their comparison with config trees, quantized counts.
#include <doctest/doctest.h>

#include "memfit/format/safetensors.h"
#include "memfit/memory/estimate.h"
#include "memfit/memory/largest_layer.h"
#include "memfit/memory/module_sizes.h"
#include "memfit/model/checkpoint_tree.h"
#include "support/reference.h"

using namespace memfit;

namespace {

std::vector<CheckpointTensor> golden_tensors(const std::string& rel) {
  const auto ref = test::reference_dir();
  const std::string bytes = test::read_text(*ref + "/golden/" + rel);
  auto h = safetensors::parse(bytes, bytes.size(), rel);
  REQUIRE(h.ok());
  return checkpoint_tensors({{rel, *h}});
}

}  // namespace

TEST_CASE("a tree from names alone: natural order, numbered blocks are no-split units") {
  std::vector<CheckpointTensor> t{
      {"model.layers.10.w", DType::kF16, {4}, "a"}, {"model.layers.9.w", DType::kF16, {4}, "a"},
      {"model.layers.2.w", DType::kF16, {4}, "a"},  {"model.embed.weight", DType::kF16, {100, 4}, "a"},
      {"lm_head.weight", DType::kF16, {100, 4}, "a"}};
  const TensorTree tree = tree_from_checkpoint(t);
  const int layers = tree.find_module("model.layers");
  REQUIRE(layers >= 0);
  std::vector<std::string> order;
  for (int c : tree.modules[layers].children) order.push_back(tree.modules[c].name);
  CHECK(order == std::vector<std::string>{"model.layers.2", "model.layers.9", "model.layers.10"});
  CHECK(tree.modules[tree.find_module("model.layers.9")].class_name == kRepeatedBlockClass);
  CHECK(tree.is_no_split(tree.modules[tree.find_module("model.layers.9")]));
  const ModuleSizes s = compute_module_sizes(tree, SizeOptions{});
  CHECK(bits_to_bytes(s.total()) == 3 * 8 + 2 * 800);
}

TEST_CASE("golden tiny-llama: checkpoint and config agree; estimate from the checkpoint") {
  if (!test::reference_dir()) return test::skip_loudly("golden tiny-llama checkpoint");
  const auto fp16 = golden_tensors("tiny-llama/fp16/model.safetensors");
  EstimateRequest req;
  req.config_text = test::read_text(*test::reference_dir() + "/golden/tiny-llama/fp16/config.json");
  req.name = "tiny-llama";
  req.checkpoint = fp16;
  req.dtypes = {"float16", "float32"};
  auto r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(r->source == "checkpoint");
  REQUIRE(r->comparison);
  CHECK(r->comparison->matches());
  CHECK(r->comparison->dtype_differences.empty());  // config says torch_dtype float16
  // index.json total_size for the fp32 checkpoint is 1,251,584 bytes (golden README): the fp16
  // file stores half of it, and memfit's float16 row is exactly that.
  CHECK(r->stored_bytes == 1251584 / 2);
  CHECK(r->rows[0].total_bytes == 1251584 / 2);
  CHECK(r->rows[1].total_bytes == 1251584);  // loading with torch_dtype=float32 casts up
  CHECK(r->model_class == "LlamaForCausalLM");
  CHECK(r->largest_layer_names == std::vector<std::string>{"lm_head", "model.embed_tokens"});
  // The config path gives the same parameter count as the checkpoint's tensors.
  req.checkpoint.clear();
  auto c = estimate(req);
  REQUIRE(c.ok());
  CHECK(c->parameters == r->parameters);
}

TEST_CASE("comparison by name: missing, unexpected, shape mismatch, base-model prefix") {
  if (!test::reference_dir()) return test::skip_loudly("golden tiny-gpt2 checkpoint");
  auto t = golden_tensors("tiny-gpt2/model.safetensors");
  EstimateRequest req;
  req.config_text = test::read_text(*test::reference_dir() + "/golden/tiny-gpt2/config.json");
  auto tree = build_tree(req);
  REQUIRE(tree.ok());
  CHECK(compare_trees(*tree, t, std::nullopt).matches());
  t.erase(t.begin());  // drop one tensor
  t.push_back({"transformer.extra.weight", DType::kF32, {1}, "x"});
  for (auto& x : t)
    if (x.name == "transformer.wte.weight") x.shape = {999, 64};
  const TreeComparison c = compare_trees(*tree, t, std::nullopt);
  CHECK(c.missing.size() == 1);
  CHECK(c.unexpected == std::vector<std::string>{"transformer.extra.weight"});
  REQUIRE(c.shape_mismatches.size() == 1);
  CHECK(c.shape_mismatches[0].expected == Shape{1000, 64});
  CHECK(c.shape_mismatches[0].got == Shape{999, 64});
  // A GPT2Model checkpoint (no "transformer." prefix) against the LM-head class.
  auto base = golden_tensors("tiny-gpt2/model.safetensors");
  for (auto& x : base) x.name = x.name.substr(std::string("transformer.").size());
  const TreeComparison p = compare_trees(*tree, base, std::nullopt);
  CHECK(p.matches());
  CHECK(p.prefix_note == "checkpoint names lack the model's prefix 'transformer.'");
}

TEST_CASE("comparison by name: a family's own base prefix is found without a list (mpnet, deberta)") {
  // An MPNetModel checkpoint (sentence-transformers saves the bare encoder) against the config's
  // MPNetForMaskedLM, and a DebertaV2ForSequenceClassification checkpoint against DebertaV2Model.
  const struct {
    const char* config;
    const char* head_prefix;  // the head class's base module
    bool checkpoint_is_head;
  } cases[] = {
      {R"({"model_type": "mpnet", "architectures": ["MPNetForMaskedLM"], "vocab_size": 50, "hidden_size": 8,
           "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 20})",
       "mpnet.", false},
      {R"({"model_type": "deberta-v2", "architectures": ["DebertaV2Model"], "vocab_size": 50, "hidden_size": 8,
           "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 20})",
       "deberta.", true},
  };
  for (const auto& c : cases) {
    CAPTURE(c.head_prefix);
    EstimateRequest req;
    req.config_text = c.config;
    auto tree = build_tree(req);
    REQUIRE(tree.ok());
    std::vector<CheckpointTensor> ckpt;
    for (const auto& t : tree->tensors) {
      if (t.is_alias() || (t.kind != TensorKind::kParameter && !t.persistent)) continue;
      std::string name = t.name;
      const std::string pre = c.head_prefix;
      if (c.checkpoint_is_head) name = pre + name;                          // the head's names
      else if (name.rfind(pre, 0) == 0) name = name.substr(pre.size());     // the base's names
      else continue;                                                        // the head's own tensors
      ckpt.push_back({name, t.dtype, t.shape, "model.safetensors"});
    }
    REQUIRE(ckpt.size() > 5);
    const TreeComparison cmp = compare_trees(*tree, ckpt, std::nullopt);
    CHECK(cmp.unexpected.empty());
    CHECK(cmp.prefix_note == std::string(c.checkpoint_is_head ? "checkpoint names carry the prefix '"
                                                               : "checkpoint names lack the model's prefix '") +
                                 c.head_prefix + "'");
  }
}

TEST_CASE("quantized checkpoints: GPTQ int32 weights unpacked, constants not parameters") {
  // One 4-bit GPTQ linear 4096→4096, group 128: qweight [4096/8, 4096] int32, qzeros
  // [32, 4096/8] int32, scales [32, 4096] f16, g_idx [4096] int32; plus a bias.
  std::vector<CheckpointTensor> t{{"l.qweight", DType::kI32, {512, 4096}, "f"},
                                  {"l.qzeros", DType::kI32, {32, 512}, "f"},
                                  {"l.scales", DType::kF16, {32, 4096}, "f"},
                                  {"l.g_idx", DType::kI32, {4096}, "f"},
                                  {"l.bias", DType::kF16, {4096}, "f"}};
  Config cfg(Json::parse(R"({"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128}})"),
             "config.json");
  CHECK(checkpoint_parameter_count(t, &cfg) == 4096ull * 4096 + 4096);
  Config cfg8(Json::parse(R"({"quantization_config": {"bits": 8}})"), "config.json");
  t[0].shape = {1024, 4096};
  CHECK(checkpoint_parameter_count(t, &cfg8) == 4096ull * 4096 + 4096);
  // Stored bytes: exactly what the file holds.
  const TensorTree tree = tree_from_checkpoint(t);
  SizeOptions stored;
  stored.bool_as_bit = false;
  CHECK(bits_to_bytes(compute_module_sizes(tree, stored).total()) ==
        1024.0 * 4096 * 4 + 32 * 512 * 4 + 32 * 4096 * 2 + 4096 * 4 + 4096 * 2);
}

TEST_CASE("exact path == config path for every fixture config (synthesised zero-data checkpoints)") {
  // For each config: write the safetensors header of the state dict the config implies, parse it
  // back with the strict parser, and estimate from it. Names, shapes, parameter counts and bytes
  // must agree with the config path.
  std::size_t checked = 0;
  for (const auto& file : test::list_dir(test::fixture_path("configs"))) {
    if (file.size() < 5 || file.substr(file.size() - 5) != ".json") continue;
    EstimateRequest req;
    req.config_text = test::fixture("configs/" + file);
    req.name = file;
    auto tree = build_tree(req);
    REQUIRE_MESSAGE(tree.ok(), file << ": " << tree.error().message());
    std::vector<safetensors::TensorEntry> entries;
    std::uint64_t state_bytes = 0;
    bool has_persistent_buffers = false;
    for (const auto& t : tree->tensors) {
      if (t.is_alias() || (t.kind == TensorKind::kBuffer && !t.persistent)) continue;
      if (t.kind == TensorKind::kBuffer) has_persistent_buffers = true;
      entries.push_back({t.name, t.dtype, t.shape});
      state_bytes += t.numel * static_cast<std::uint64_t>(dtype_bits(t.dtype)) / 8;
    }
    entries = safetensors::layout(entries);
    const std::string prefix = safetensors::write_header(entries, {{"format", "pt"}});
    auto header = safetensors::parse(prefix, prefix.size() + state_bytes, file);
    REQUIRE_MESSAGE(header.ok(), file << ": " << header.error().message());
    req.checkpoint = checkpoint_tensors({{"model.safetensors", *header}});
    req.dtypes = {"float32"};
    auto exact = estimate(req);
    REQUIRE_MESSAGE(exact.ok(), file << ": " << exact.error().message());
    INFO(file);
    CHECK(exact->source == "checkpoint");
    REQUIRE(exact->comparison);
    CHECK(exact->comparison->matches());
    CHECK(exact->stored_bytes == static_cast<double>(state_bytes));
    req.checkpoint.clear();
    auto config_path = estimate(req);
    REQUIRE(config_path.ok());
    if (!has_persistent_buffers) CHECK(exact->parameters == config_path->parameters);
    CHECK(exact->model_class == config_path->model_class);
    ++checked;
  }
  CHECK(checked >= 30);
}
