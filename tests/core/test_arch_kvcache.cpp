// Which Gemma 2 layers slide when a config names no pattern (core/model/arch/gemma2.cpp):
// Gemma2Config's default layer_types (transformers configuration_gemma2.py: "sliding_attention"
// if (i + 1) % 2 else "full_attention", sliding_window 4096), which the runtime runs and the
// KV cache estimate and `plan --device-map fit` must count the same way.
#include <doctest/doctest.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "memfit/memory/kv_cache.h"
#include "support/model_of.h"
#include "support/reference.h"

using namespace memfit;

namespace {

// google/gemma-2-9b's real config.json (42 layers, sliding_window 4096), edited by `edit`.
AttentionLayout gemma2_9b(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json c = nlohmann::json::parse(test::fixture("kv/google--gemma-2-9b.json"));
  edit(c);
  return attention_layout(test::model_of(c.dump()));
}

}  // namespace

TEST_CASE("gemma2: without cache_implementation, every other layer slides, as with the Hub's hybrid") {
  const AttentionLayout hybrid = gemma2_9b([](nlohmann::json&) {});
  const AttentionLayout plain = gemma2_9b([](nlohmann::json& c) { c.erase("cache_implementation"); });
  REQUIRE(plain.layers.size() == 42u);
  CHECK(plain.sliding_layers() == 21);
  for (std::size_t i = 0; i < plain.layers.size(); ++i) {
    CAPTURE(i);
    CHECK(plain.layers[i].sliding == (i % 2 == 0));
    CHECK(plain.layers[i].sliding == hybrid.layers[i].sliding);
    CHECK(plain.layers[i].window == (i % 2 == 0 ? 4096 : 0));
  }
  // Gemma2Config's default window when the config has none; a null window: no sliding layer.
  const AttentionLayout no_window = gemma2_9b([](nlohmann::json& c) {
    c.erase("cache_implementation");
    c.erase("sliding_window");
    c.erase("sliding_window_size");
  });
  CHECK(no_window.sliding_layers() == 21);
  CHECK(no_window.layers[0].window == 4096);
  const AttentionLayout null_window = gemma2_9b([](nlohmann::json& c) {
    c.erase("cache_implementation");
    c["sliding_window"] = nullptr;
  });
  CHECK(null_window.sliding_layers() == 0);
  // layer_types, when given, decide.
  const AttentionLayout listed = gemma2_9b([](nlohmann::json& c) {
    c.erase("cache_implementation");
    c["layer_types"] = std::vector<std::string>(42, "full_attention");
    c["layer_types"][41] = "sliding_attention";
  });
  CHECK(listed.sliding_layers() == 1);
  CHECK(listed.layers[41].sliding);
}
