// TensorTree's name index and TreeBuilder's checks (names unique, ties resolved).
#include <doctest/doctest.h>

#include "memfit/error.h"
#include "memfit/model/nn_layers.h"
#include "memfit/model/tree_builder.h"

using namespace memfit;

TEST_CASE("find_tensor and find_module use the name index, also on copies and era trees") {
  TreeBuilder b("Net");
  for (int i = 0; i < 50; ++i) nn::linear(b, "layer" + std::to_string(i), 2, 3);
  b.buffer("legacy", {4}, DType::kF32, false, BufferEra::kLegacyOnly);
  const TensorTree t = b.finish();
  CHECK(t.find_tensor("layer7.weight") == t.modules[t.find_module("layer7")].params[0]);
  CHECK(t.find_tensor("layer49.bias") >= 0);
  CHECK(t.find_tensor("layer50.bias") == -1);
  CHECK(t.find_tensor("layer7") == -1);  // a module, not a tensor
  CHECK(t.find_module("") == 0);
  const TensorTree copy = t;
  CHECK(copy.tensors[copy.find_tensor("layer3.weight")].name == "layer3.weight");
  const TensorTree current = for_era(t, false);
  CHECK(current.find_tensor("legacy") == -1);
  CHECK(current.tensors[current.find_tensor("layer49.bias")].name == "layer49.bias");
}

TEST_CASE("for_era carries the index over: every kept name is found at its new place, dropped ones not") {
  TreeBuilder b("Net");
  for (int i = 0; i < 40; ++i) {
    auto layer = b.module("layer" + std::to_string(i), "Layer");
    nn::linear(b, "proj", 3, 3);
    if (i % 3 == 0) {  // a module that only holds a 4.40-era buffer: it disappears with it
      auto rot = b.module("rotary", "Rotary");
      b.buffer("inv_freq", {2}, DType::kF32, false, BufferEra::kLegacyOnly);
    }
    b.buffer("mask", {2}, DType::kBool, false, BufferEra::kCurrentOnly);
  }
  const TensorTree full = b.finish();
  for (const bool legacy : {false, true}) {
    const TensorTree t = for_era(full, legacy);
    TensorTree rebuilt = t;
    rebuilt.reindex();  // the index built from scratch, to compare with
    for (std::size_t i = 0; i < t.tensors.size(); ++i) {
      CHECK(t.find_tensor(t.tensors[i].name) == static_cast<int>(i));
      CHECK(rebuilt.find_tensor(t.tensors[i].name) == static_cast<int>(i));
    }
    for (std::size_t m = 0; m < t.modules.size(); ++m)
      CHECK(t.find_module(t.modules[m].name) == static_cast<int>(m));
    CHECK((t.find_tensor("layer3.rotary.inv_freq") >= 0) == legacy);
    CHECK((t.find_module("layer3.rotary") >= 0) == legacy);
    CHECK((t.find_tensor("layer5.mask") >= 0) == !legacy);
    CHECK(t.duplicate_name().empty());
  }
}

TEST_CASE("a name registered twice is an internal error naming it") {
  TreeBuilder b("Net");
  nn::linear(b, "a", 2, 2);
  {
    auto s = b.module("a", "Linear");  // the same module again
  }
  std::string message;
  try {
    (void)b.finish();
  } catch (const Error& e) {
    message = e.message();
  }
  CHECK(message == "module 'a' registered twice");

  TreeBuilder t("Net");
  t.param("w", {2});
  t.param("w", {3});
  message.clear();
  try {
    (void)t.finish();
  } catch (const Error& e) {
    message = e.message();
  }
  CHECK(message == "tensor 'w' registered twice");
}

TEST_CASE("a tie to a tensor that does not exist is an internal error") {
  TreeBuilder b("Net");
  nn::linear(b, "a", 2, 2);
  CHECK_THROWS(b.tied_param("head", "missing.weight"));
  b.tied_param("head", "a.weight");
  const TensorTree t = b.finish();
  CHECK(t.tensors[t.find_tensor("head")].tied_to == t.find_tensor("a.weight"));
}
