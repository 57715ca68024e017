// The `fit` strategy on hand-sized models (expected values worked out by hand in comments).
#include <doctest/doctest.h>

#include <map>

#include "memfit/model/nn_layers.h"
#include "memfit/model/tree_builder.h"
#include "memfit/plan/fit.h"
#include "memfit/plan/infer_device_map.h"

using namespace memfit;
using namespace memfit::plan;

namespace {

// emb: Embedding(1000, 100) = 400,000 B; layers.0..3: Block of two Linear(100, 100) = 80,800 B.
TensorTree big_embedding_model() {
  TreeBuilder b("Model");
  nn::embedding(b, "emb", 1000, 100);
  {
    auto l = b.module("layers", "ModuleList");
    for (int i = 0; i < 4; ++i) {
      auto blk = b.module(std::to_string(i), "Block");
      nn::linear(b, "a", 100, 100);
      nn::linear(b, "b", 100, 100);
    }
  }
  b.set_no_split({"Block"});
  return b.finish();
}

std::map<std::string, std::string> as_map(const DeviceMap& m) {
  std::map<std::string, std::string> out;
  for (const auto& [k, d] : m) out[k] = d.key();
  return out;
}

FitOptions no_runtime() {
  FitOptions o;
  o.overhead_bytes = 0;
  o.activation_bytes = 0;
  return o;
}

}  // namespace

TEST_CASE("fit does not abandon a GPU because one big module did not fit") {
  // a, b, c, d: Blocks of 80,800 B; mid: Embedding(1000, 100) = 400,000 B between a and b.
  TreeBuilder bld("Model");
  auto block = [&](const char* name) {
    auto s = bld.module(name, "Block");
    nn::linear(bld, "x", 100, 100);
    nn::linear(bld, "y", 100, 100);
  };
  block("a");
  nn::embedding(bld, "mid", 1000, 100);
  block("b");
  block("c");
  block("d");
  bld.set_no_split({"Block"});
  const TensorTree t = bld.finish();
  const MaxMemory mm = *normalize_max_memory({{Device::gpu(0), 500000}, {Device::cpu(), 10000000}});
  // accelerate: a fits (reserve 400,000 for mid); mid then needs 480,800 > 500,000 − 80,800, so
  // GPU 0 is left for good: 642,400 B are streamed every forward pass.
  using M = std::map<std::string, std::string>;
  CHECK(as_map(infer_auto_device_map(t, mm, {})) ==
        M{{"a", "0"}, {"mid", "cpu"}, {"b", "cpu"}, {"c", "cpu"}, {"d", "cpu"}});
  // fit: keeping mid (400,000) + staging room for one streamed block (80,800) = 480,800 fits;
  // any set holding more bytes does not. 323,200 B are streamed.
  auto p = plan_fit(t, mm, no_runtime());
  REQUIRE_MESSAGE(p.ok(), p.error().message());
  CHECK(as_map(p->device_map) == M{{"a", "cpu"}, {"mid", "0"}, {"b", "cpu"}, {"c", "cpu"}, {"d", "cpu"}});
  CHECK(p->streamed_bytes == 4 * 80800);
  CHECK(p->devices[0].reserve == 80800);
  CHECK(p->devices[0].total() == 480800);
}

TEST_CASE("fit charges the KV cache: held layers on their GPU, streamed ones on GPU 0") {
  const TensorTree t = big_embedding_model();
  const MaxMemory mm = *normalize_max_memory({{Device::gpu(0), 900000}, {Device::cpu(), 10000000}});
  FitOptions o = no_runtime();
  for (int i = 0; i < 4; ++i) o.kv_bytes["layers." + std::to_string(i)] = 50000;
  // Blocks need 130,800 with their KV. emb + 3 blocks (792,400) leaves no room to stage the
  // fourth (80,800 + its 50,000 KV); emb + 2 blocks: 661,600 + 80,800 + 100,000 = 842,400 fits.
  auto p = plan_fit(t, mm, o);
  REQUIRE_MESSAGE(p.ok(), p.error().message());
  CHECK(as_map(p->device_map) == std::map<std::string, std::string>{
                                     {"emb", "0"}, {"layers.0", "0"}, {"layers.1", "0"},
                                     {"layers.2", "cpu"}, {"layers.3", "cpu"}});
  CHECK(p->devices[0].kv_cache == 4 * 50000);
  CHECK(p->devices[0].reserve == 80800);
  CHECK(p->devices[0].total() == 842400);
  CHECK(p->streamed_bytes == 2 * 80800);
}

TEST_CASE("fit balances the GPUs and counts overhead and activations") {
  const TensorTree t = big_embedding_model();
  // 2 GPUs of 1,000,000 minus 100,000 overhead and 50,000 activations = 850,000 each. The most
  // even contiguous split of emb (400,000) + 4 × 80,800 is emb | layers (400,000 vs 323,200).
  const MaxMemory mm = *normalize_max_memory({{Device::gpu(0), 1000000}, {Device::gpu(1), 1000000}});
  FitOptions o;
  o.overhead_bytes = 100000;
  o.activation_bytes = 50000;
  auto p = plan_fit(t, mm, o);
  REQUIRE(p.ok());
  CHECK(as_map(p->device_map) == std::map<std::string, std::string>{{"emb", "0"}, {"layers", "1"}});
  CHECK(p->streamed_bytes == 0);
  CHECK(p->devices[0].total() == 400000 + 150000);
  CHECK(p->devices[1].total() == 323200 + 150000);
}

TEST_CASE("fit without disk fails with a clear message when the CPU is too small") {
  const TensorTree t = big_embedding_model();
  const MaxMemory mm = *normalize_max_memory({{Device::gpu(0), 500000}, {Device::cpu(), 100000}});
  FitOptions o = no_runtime();
  o.allow_disk = false;
  auto p = plan_fit(t, mm, o);
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().message().find("does not fit without disk") != std::string::npos);
  o.allow_disk = true;
  auto d = plan_fit(t, mm, o);
  REQUIRE(d.ok());
  // emb stays on GPU 0 (400,000 + staging 80,800); the CPU takes one block, disk the rest.
  CHECK(as_map(d->device_map) == std::map<std::string, std::string>{
                                     {"emb", "0"}, {"layers.0", "cpu"}, {"layers.1", "disk"},
                                     {"layers.2", "disk"}, {"layers.3", "disk"}});
}
