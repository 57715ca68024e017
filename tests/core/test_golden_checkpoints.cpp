// The config-derived tree against real checkpoints written by transformers 4.40's
// save_pretrained (../shared/reference/golden): every state-dict tensor, by name, shape, dtype.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "memfit/memory/estimate.h"
#include "support/reference.h"

using namespace memfit;

namespace {

// name → shape of every tensor in a safetensors header (read here independently of memfit).
std::map<std::string, std::vector<std::int64_t>> header_shapes(const std::string& path) {
  const std::string bytes = test::read_text(path);
  REQUIRE(bytes.size() >= 8);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);  // little-endian host
  const auto header = nlohmann::json::parse(bytes.substr(8, n));
  std::map<std::string, std::vector<std::int64_t>> out;
  for (const auto& [k, v] : header.items())
    if (k != "__metadata__") out[k] = v["shape"].get<std::vector<std::int64_t>>();
  return out;
}

// name → shape of the state dict memfit derives: parameters (no tied aliases: save_pretrained
// drops them) and persistent buffers.
std::map<std::string, std::vector<std::int64_t>> state_dict_shapes(const TensorTree& t) {
  std::map<std::string, std::vector<std::int64_t>> out;
  for (const auto& x : t.tensors)
    if (!x.is_alias() && (x.kind == TensorKind::kParameter || x.persistent))
      out[x.name] = x.shape;
  return out;
}

void check_dir(const std::string& model) {
  const auto ref = test::reference_dir();
  if (!ref) {
    test::skip_loudly("golden checkpoint " + model);
    return;
  }
  const std::string dir = *ref + "/golden/" + model;
  EstimateRequest req;
  req.config_text = test::read_text(dir + "/config.json");
  req.name = model;
  auto tree = build_tree(req);
  REQUIRE_MESSAGE(tree.ok(), tree.error().message());
  CHECK(tree->class_name() == (model == "tiny-gpt2" ? "GPT2LMHeadModel" : "LlamaForCausalLM"));
  CHECK(state_dict_shapes(*tree) == header_shapes(dir + "/model.safetensors"));
}

}  // namespace

TEST_CASE("golden tiny-gpt2: config tree == model.safetensors") { check_dir("tiny-gpt2"); }
TEST_CASE("golden tiny-llama: config tree == model.safetensors") { check_dir("tiny-llama"); }

TEST_CASE("gpt2: published parameter count and the tied lm_head") {
  EstimateRequest req;
  req.config_text = test::fixture("configs/gpt2.json");
  req.name = "gpt2";
  auto r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(r->model_class == "GPT2LMHeadModel");
  CHECK(r->parameters == 124439808);  // the published GPT-2 small count
  // 4.40 buffers per layer: bool mask [1,1,1024,1024] (1/8 byte each) + a float scalar.
  req.mode = Mode::kAccelerate;
  auto acc = estimate(req);
  REQUIRE(acc.ok());
  CHECK(acc->model_class == "GPT2Model");  // accelerate builds AutoModel (no auto_map)
  CHECK(acc->buffers_bytes == 12 * (1024.0 * 1024 / 8 + 4));
  CHECK(acc->rows[0].total_bytes == (124439808.0) * 4 + 12 * (1024.0 * 1024 / 8 + 4));
}

TEST_CASE("Meta-Llama-3-70B: published parameter count; GQA k/v projections") {
  EstimateRequest req;
  req.config_text = test::fixture("configs/meta-llama--Meta-Llama-3-70B.json");
  req.name = "meta-llama/Meta-Llama-3-70B";
  auto r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(r->parameters == 70553706496ULL);  // the Hub's safetensors total for the model
  auto tree = build_tree(req);
  REQUIRE(tree.ok());
  const int k = tree->find_tensor("model.layers.79.self_attn.k_proj.weight");
  REQUIRE(k >= 0);
  CHECK(tree->tensors[k].shape == Shape{1024, 8192});  // 8 KV heads × 128
}
