// compute_module_sizes and the largest layer on hand-sized trees (expected values by hand,
// following accelerate's compute_module_sizes / get_max_layer_size).
#include <doctest/doctest.h>

#include "memfit/memory/estimate.h"
#include "memfit/memory/largest_layer.h"
#include "memfit/memory/module_sizes.h"
#include "memfit/model/nn_layers.h"
#include "memfit/model/tree_builder.h"
#include "support/reference.h"

using namespace memfit;

namespace {

// root: linear1 (Linear 3→4: 12+4 floats), block (Block: direct param `scale` [10], children
// sub1 (Linear 2→2: 6 floats), sub2 (Linear 2→5: 15 floats)), a root buffer `mask` bool [16],
// and head tied to linear1.weight.
TensorTree hand_tree() {
  TreeBuilder b("Net");
  nn::linear(b, "linear1", 3, 4);
  {
    auto s = b.module("block", "Block");
    b.param("scale", {10});
    nn::linear(b, "sub1", 2, 2);
    nn::linear(b, "sub2", 2, 5);
  }
  nn::tied_linear(b, "head", "linear1.weight");
  b.buffer("mask", {16}, DType::kBool, false);
  return b.finish();
}

}  // namespace

TEST_CASE("module sizes add every tensor to every prefix; tied weights once; bool at 1/8 byte") {
  const TensorTree t = hand_tree();
  const ModuleSizes s = compute_module_sizes(t, SizeOptions{});
  CHECK(bits_to_bytes(s.at(t, "linear1")) == 64);        // 16 floats
  CHECK(bits_to_bytes(s.at(t, "block")) == 40 + 24 + 60);
  CHECK(bits_to_bytes(s.at(t, "block.sub2.weight")) == 40);
  CHECK(s.at(t, "head") == 0);                           // tied: counted under linear1
  CHECK(bits_to_bytes(s.at(t, "mask")) == 2);            // 16 bools at 1/8 byte
  CHECK(bits_to_bytes(s.total()) == 64 + 124 + 2);
  CHECK(s.fractional(t, ""));
  CHECK(!s.fractional(t, "block"));
  CHECK(t.parameter_count() == 16 + 10 + 6 + 15);
  SizeOptions storage;
  storage.bool_as_bit = false;
  CHECK(bits_to_bytes(compute_module_sizes(t, storage).at(t, "mask")) == 16);
  SizeOptions half;
  half.dtype = DType::kF16;
  const ModuleSizes h = compute_module_sizes(t, half);
  CHECK(bits_to_bytes(h.at(t, "linear1")) == 32);
  CHECK(bits_to_bytes(h.at(t, "mask")) == 2);  // non-floating tensors keep their size
}

TEST_CASE("sizes with a precomputed tensor order (several sizings of one tree) are the same") {
  const TensorTree t = hand_tree();
  const std::vector<int> order = t.named_module_tensors();
  SizeOptions half;
  half.dtype = DType::kF16;
  half.special_dtypes = {{"block.scale", DType::kI8}};
  const ModuleSizes a = compute_module_sizes(t, half, order);
  // by hand: linear1 16 halves, block = scale 10 int8 + 21 halves, mask 2 bytes
  CHECK(bits_to_bytes(a.at(t, "block")) == 10 + 42);
  CHECK(bits_to_bytes(a.total()) == 32 + 52 + 2);
  const ModuleSizes b = compute_module_sizes(t, half);
  CHECK(a.module_bits == b.module_bits);
  CHECK(a.tensor_bits == b.tensor_bits);
  CHECK(a.order.size() == b.order.size());
}

TEST_CASE("largest layer: accelerate skips direct params of split modules, memfit does not") {
  TreeBuilder b("Net");
  {
    auto s = b.module("block", "Block");
    b.param("big", {100});  // 400 bytes, direct parameter of a module with children
    nn::linear(b, "sub", 2, 2);
  }
  nn::linear(b, "other", 5, 10);  // 60 floats = 240 bytes
  const TensorTree t = b.finish();
  const ModuleSizes s = compute_module_sizes(t, SizeOptions{});
  const LargestLayer acc = largest_layer(t, s, LayerRule::kAccelerate);
  CHECK(bits_to_bytes(acc.bits) == 240);
  CHECK(acc.names == std::vector<std::string>{"other"});
  const LargestLayer full = largest_layer(t, s, LayerRule::kComplete);
  CHECK(bits_to_bytes(full.bits) == 400);
  CHECK(full.names == std::vector<std::string>{"block.big"});
}

TEST_CASE("no-split modules are layers as a whole; ties list every layer of that size") {
  TreeBuilder b("Net");
  {
    auto l = b.module("layers", "ModuleList");
    for (int i = 0; i < 3; ++i) {
      auto blk = b.module(std::to_string(i), "Block");
      nn::linear(b, "a", 4, 4);
      nn::linear(b, "b", 4, 4);
    }
  }
  nn::embedding(b, "emb", 10, 4);  // 40 floats = 160 bytes
  b.set_no_split({"Block"});
  const TensorTree t = b.finish();
  const ModuleSizes s = compute_module_sizes(t, SizeOptions{});
  const LargestLayer l = largest_layer(t, s, LayerRule::kAccelerate);
  CHECK(bits_to_bytes(l.bits) == 160);  // a block is 2 × 20 floats = 160 bytes too
  CHECK(l.names == std::vector<std::string>{"layers.0", "layers.1", "layers.2", "emb"});
}

TEST_CASE("named_parameters order is torch's pre-order") {
  const TensorTree t = hand_tree();
  std::vector<std::string> names;
  for (int i : t.named_parameters()) names.push_back(t.tensors[i].name);
  CHECK(names == std::vector<std::string>{"linear1.weight", "linear1.bias", "block.scale",
                                          "block.sub1.weight", "block.sub1.bias",
                                          "block.sub2.weight", "block.sub2.bias"});
}

namespace {

std::vector<ReportRow> rows_of(EstimateRequest req, const std::vector<std::string>& dtypes) {
  req.dtypes = dtypes;
  const auto r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message()));
  return r.value().rows;
}

// Every row of a several-dtype estimate must be what that dtype gives alone (where it is
// sized directly): memfit derives the narrower widths from two sizings.
void check_rows_match_alone(const EstimateRequest& req) {
  const std::vector<std::vector<std::string>> orders = {
      {"float32", "float16", "bfloat16", "int8", "int4"},
      {"int4", "int8", "float16", "float32", "bfloat16"},
      {"float16", "bfloat16", "int8", "int4"},
      {"int8", "int4", "float32"}};
  for (const auto& dtypes : orders) {
    const auto together = rows_of(req, dtypes);
    REQUIRE(together.size() == dtypes.size());
    for (std::size_t i = 0; i < dtypes.size(); ++i) {
      CAPTURE(dtypes[i]);
      const auto alone = rows_of(req, {dtypes[i]});
      CHECK(together[i].total_bytes == alone[0].total_bytes);
      CHECK(together[i].largest_layer_bytes == alone[0].largest_layer_bytes);
      CHECK(together[i].total == alone[0].total);
      CHECK(together[i].largest_layer == alone[0].largest_layer);
      CHECK(together[i].training == alone[0].training);
    }
  }
}

}  // namespace

TEST_CASE("memfit rows: each dtype of a several-dtype estimate equals that dtype sized alone") {
  for (const char* fixture : {"gpt2.json", "bert-base-cased.json", "mistralai--Mixtral-8x7B-v0.1.json",
                              "openai--whisper-tiny.json", "timm--resnet50.a1_in1k.json"}) {
    CAPTURE(fixture);
    EstimateRequest req;
    req.config_text = test::fixture(std::string("configs/") + fixture);
    req.name = fixture;
    req.mode = Mode::kMemfit;
    check_rows_match_alone(req);
  }
  // From checkpoint headers: integer, bool and quantized tensors keep their own size at every
  // row width, floating ones take the row's (int64 and uint8 make A non-zero in S = A + B·bits).
  EstimateRequest ck;
  ck.name = "mixed";
  ck.mode = Mode::kMemfit;
  ck.checkpoint = {{"embed.weight", DType::kF32, {1000, 64}, "model.safetensors"},
                   {"layers.0.w.weight", DType::kF16, {64, 64}, "model.safetensors"},
                   {"layers.0.w.qweight", DType::kU8, {64, 32}, "model.safetensors"},
                   {"layers.0.ids", DType::kI64, {77}, "model.safetensors"},
                   {"layers.1.mask", DType::kBool, {9, 9}, "model.safetensors"},
                   {"layers.1.w.weight", DType::kBF16, {64, 300}, "model.safetensors"}};
  check_rows_match_alone(ck);
}
