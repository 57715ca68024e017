// Compact trees (repeated experts described once) against trees built copy by copy.
//
// The oracle for expand() is TreeBuilder itself: the same model built one copy at a time, the
// way families built experts before repeats existed. The oracle for compact sizing is the same
// estimate over the named tree.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "memfit/memory/estimate.h"
#include "memfit/memory/largest_layer.h"
#include "memfit/memory/module_sizes.h"
#include "memfit/model/model.h"
#include "memfit/model/tree_builder.h"
#include "support/reference.h"

using namespace memfit;

namespace {

// Own tensors before, between and after children; a stateless child; a buffer below; a tie to a
// tensor of the same copy; experts nested in repeated layers; a tie across the whole model.
TensorTree sample(bool compact, bool ties = true) {
  TreeBuilder t("Root");
  {
    auto e = t.module("embed", "Embedding");
    t.param("weight", {2, 4});
  }
  auto expert = [&] {
    t.param("w", {4, 3});
    {
      auto inner = t.module("inner", "Inner");
      t.buffer("b", {3}, DType::kF32, true);
    }
    t.stateless("act", "SiLU");
    t.param("after", {2}, DType::kBF16);
    if (ties) t.tied_param("w_again", t.path("w"));
  };
  auto layer = [&] {
    t.param("scale", {4});
    {
      auto list = t.module("experts", "ModuleList");
      if (compact) {
        auto r = t.repeated("0", "Expert", 3);
        expert();
      } else {
        for (int e = 0; e < 3; ++e) {
          auto m = t.module(std::to_string(e), "Expert");
          expert();
        }
      }
    }
    t.buffer("tail", {1}, DType::kBool, false);
  };
  {
    auto layers = t.module("layers", "ModuleList");
    {
      auto first = t.module("0", "DenseLayer");
      t.param("dense", {3, 4});
    }
    if (compact) {
      auto r = t.repeated("1", "Layer", 2);
      layer();
    } else {
      for (int l = 1; l < 3; ++l) {
        auto m = t.module(std::to_string(l), "Layer");
        layer();
      }
    }
  }
  t.tied_param("head", "embed.weight");
  return t.finish();
}

void check_same(const TensorTree& got, const TensorTree& want) {
  REQUIRE(got.modules.size() == want.modules.size());
  REQUIRE(got.tensors.size() == want.tensors.size());
  for (std::size_t i = 0; i < want.modules.size(); ++i) {
    const ModuleNode &g = got.modules[i], &w = want.modules[i];
    INFO("module " << i << " " << w.name);
    CHECK(g.name == w.name);
    CHECK(g.class_name == w.class_name);
    CHECK(g.parent == w.parent);
    CHECK(g.children == w.children);
    CHECK(g.params == w.params);
    CHECK(g.buffers == w.buffers);
    CHECK(g.era == w.era);
    CHECK(g.repeat == 1);
  }
  for (std::size_t i = 0; i < want.tensors.size(); ++i) {
    const TensorInfo &g = got.tensors[i], &w = want.tensors[i];
    INFO("tensor " << i << " " << w.name);
    CHECK(g.name == w.name);
    CHECK(g.shape == w.shape);
    CHECK(g.dtype == w.dtype);
    CHECK(g.kind == w.kind);
    CHECK(g.persistent == w.persistent);
    CHECK(g.tied_to == w.tied_to);
    CHECK(g.module == w.module);
  }
  CHECK(got.no_split_classes == want.no_split_classes);
  CHECK(got.find_tensor("layers.2.experts.2.inner.b") == want.find_tensor("layers.2.experts.2.inner.b"));
}

// What may differ between two layers, for item(): each variant changes one call, at the start,
// in the middle or at the end of a layer, or adds one inside a nested list or a tie.
enum class Differs { kNothing, kShape, kMissing, kExtra, kClass, kEra, kExperts, kNested, kTie };

void layer(TreeBuilder& t, Differs d, bool items) {
  t.param("scale", {4});
  {
    auto attn = t.module("attn", "Attention");
    t.param("q", {4, d == Differs::kShape ? 8 : 4});
    if (d != Differs::kMissing) t.param("k", {4, 4});
    t.buffer("mask", {4}, DType::kBool, false, BufferEra::kLegacyOnly);
  }
  t.stateless("act", "SiLU", d == Differs::kEra ? BufferEra::kCurrentOnly : BufferEra::kAlways);
  {
    auto list = t.module("experts", "ModuleList");
    auto r = t.repeated("0", "Expert", d == Differs::kExperts ? 3 : 2);
    t.param("w", {2, 2});
  }
  if (d == Differs::kNested) {
    auto list = t.module("sub", "ModuleList");
    for (int i = 0; i < 2; ++i) {
      auto s = items ? t.item(i, "Sub") : t.module(std::to_string(i), "Sub");
      t.param("p", {1});
    }
  }
  if (d == Differs::kTie) t.tied_param("scale_again", t.path("scale"));
  if (d == Differs::kExtra) t.param("extra", {1});
}

// The layers `ds` describe, opened with item() or, as the oracle, with module().
TensorTree layers(const std::vector<Differs>& ds, bool items) {
  TreeBuilder t("Root");
  {
    auto e = t.module("embed", "Embedding");
    t.param("weight", {8, 4});
  }
  {
    auto list = t.module("layers", "ModuleList");
    for (std::size_t i = 0; i < ds.size(); ++i) {
      const char* cls = ds[i] == Differs::kClass ? "OtherLayer" : "Layer";
      auto l = items ? t.item(static_cast<std::int64_t>(i), cls) : t.module(std::to_string(i), cls);
      layer(t, ds[i], items);
    }
  }
  t.tied_param("head", "embed.weight");
  return t.finish();
}

// The repeat of each layer item() kept, in order: {first index, copies}.
std::vector<std::pair<std::string, std::int64_t>> kept_layers(const TensorTree& t) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (int c : t.modules[static_cast<std::size_t>(t.find_module("layers"))].children)
    out.emplace_back(t.modules[static_cast<std::size_t>(c)].name, t.modules[static_cast<std::size_t>(c)].repeat);
  return out;
}

std::string config(const std::string& relative) {
  if (relative.rfind("real-hub/", 0) != 0) return test::fixture("configs/" + relative);
  const auto ref = test::reference_dir();
  if (!ref) return {};
  const std::string path = *ref + "/" + relative;
  return test::file_exists(path) ? test::read_text(path) : std::string();
}

}  // namespace

TEST_CASE("repeat_name counts up the last component of a name") {
  CHECK(repeat_name("model.layers.3.mlp.experts.0", 255) == "model.layers.3.mlp.experts.255");
  CHECK(repeat_name("layers.1", 1) == "layers.2");
  CHECK(repeat_name("7", 3) == "10");
  CHECK_THROWS_AS(repeat_name("model.experts", 1), Error);
}

TEST_CASE("expand writes a compact tree out exactly as the copy-by-copy build") {
  const TensorTree compact = sample(true);
  const TensorTree named = sample(false);
  CHECK(compact.has_repeats());
  CHECK_FALSE(named.has_repeats());
  CHECK(compact.tensors.size() < named.tensors.size());
  CHECK(compact.parameter_count() == named.parameter_count());
  check_same(expand(compact), named);
  // A tree without repeats comes back as it is.
  check_same(expand(named), named);
}

TEST_CASE("compact folds identical consecutive siblings, and expand gives the named tree back") {
  const TensorTree named = sample(false, /*ties=*/false);
  const TensorTree folded = compact(named);
  CHECK(folded.has_repeats());
  CHECK(folded.parameter_count() == named.parameter_count());
  // Layers 1 and 2 fold into one, its three experts into one; layer 0 differs and stays.
  const int layer = folded.find_module("layers.1");
  REQUIRE(layer >= 0);
  CHECK(folded.modules[static_cast<std::size_t>(layer)].repeat == 2);
  CHECK(folded.find_module("layers.2") < 0);
  const int expert = folded.find_module("layers.1.experts.0");
  REQUIRE(expert >= 0);
  CHECK(folded.modules[static_cast<std::size_t>(expert)].repeat == 3);
  CHECK(folded.find_module("layers.0") >= 0);
  check_same(expand(folded), named);
  check_same(expand(compact(sample(true, false))), named);
  // Copies holding a tie (or its target) are kept whole: the alias must still find its tensor.
  const TensorTree tied = sample(false);
  check_same(expand(compact(tied)), tied);
  CHECK(compact(tied).find_tensor("layers.2.experts.1.w_again") >= 0);
}

TEST_CASE("item() folds a layer made by the same calls as the one before, and expand gives the named tree back") {
  using D = Differs;
  const std::vector<D> same(5, D::kNothing);
  const TensorTree folded = layers(same, true);
  CHECK(kept_layers(folded) == std::vector<std::pair<std::string, std::int64_t>>{{"layers.0", 5}});
  CHECK(folded.parameter_count() == layers(same, false).parameter_count());
  check_same(expand(folded), expand(layers(same, false)));

  // Every kind of difference, each between copies of the same layer: a run breaks there, and the
  // differing layer (written out from the calls that matched) is what the next one is compared with.
  const std::vector<D> mixed = {D::kNothing, D::kNothing, D::kShape, D::kShape, D::kNothing, D::kMissing,
                                D::kMissing, D::kExtra, D::kExtra, D::kNothing, D::kClass, D::kClass,
                                D::kEra, D::kEra, D::kExperts, D::kExperts, D::kNested, D::kNested,
                                D::kTie, D::kTie, D::kNothing, D::kNothing};
  const TensorTree items = layers(mixed, true);
  CHECK(kept_layers(items) == std::vector<std::pair<std::string, std::int64_t>>{
                                  {"layers.0", 2}, {"layers.2", 2}, {"layers.4", 1}, {"layers.5", 2},
                                  {"layers.7", 2}, {"layers.9", 1}, {"layers.10", 2}, {"layers.12", 2},
                                  {"layers.14", 2}, {"layers.16", 2},
                                  // a layer holding a tie is never folded
                                  {"layers.18", 1}, {"layers.19", 1}, {"layers.20", 2}});
  // Items inside an item are modules: the nested list is folded later, by compact().
  CHECK(items.find_module("layers.16.sub.1") >= 0);
  const TensorTree named = expand(layers(mixed, false));  // (its experts are repeated())
  CHECK(items.parameter_count() == named.parameter_count());
  check_same(expand(items), named);
  check_same(expand(compact(items)), named);
}

TEST_CASE("item() names a compared layer as its own, and refuses too many tensors as module() does") {
  {
    TreeBuilder t("Root");
    auto list = t.module("layers", "ModuleList");
    std::vector<std::string> paths;
    for (int i = 0; i < 3; ++i) {
      auto l = t.item(i, "Layer");
      auto attn = t.module("attn", "Attention");
      paths.push_back(t.path("q"));
      t.param("q", {2});
    }
    CHECK(paths == std::vector<std::string>{"layers.0.attn.q", "layers.1.attn.q", "layers.2.attn.q"});
  }
  // Identical layers past kMaxTreeTensors: the error names the tensor that crossed it, both ways.
  auto too_many = [](bool items) -> std::string {
    TreeBuilder t("Root");
    auto list = t.module("layers", "ModuleList");
    try {
      for (std::int64_t i = 0; i < 1'000'000'000; ++i) {
        auto l = items ? t.item(i, "Layer") : t.module(std::to_string(i), "Layer");
        t.param("a", {1});
        t.param("b", {1});
        t.param("c", {1});
      }
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidValue);
      return e.what();
    }
    return "no error";
  };
  const std::string by_module = too_many(false);
  CHECK(by_module.find("(at 'layers.83333.b')") != std::string::npos);
  CHECK(too_many(true) == by_module);
}

TEST_CASE("a compact tree sizes and finds its largest layer as the named one does") {
  const TensorTree compact = sample(true);
  const TensorTree named = sample(false);
  for (const bool bit : {true, false}) {
    SizeOptions opt;
    opt.bool_as_bit = bit;
    const ModuleSizes c = compute_module_sizes(compact, opt), n = compute_module_sizes(named, opt);
    CHECK(c.total() == n.total());
    // Every name the compact dict lists weighs what the named dict says.
    std::size_t compared = 0;
    for (const TreeItem& item : c.order) {
      CHECK_MESSAGE(c.at(item) == n.at(named, item.name(compact)), item.name(compact));
      ++compared;
    }
    CHECK(compared > 10);
    // No no-split classes: the search splits repeated modules and must name every copy.
    for (const LayerRule rule : {LayerRule::kAccelerate, LayerRule::kComplete}) {
      const LargestLayer lc = largest_layer(compact, c, rule), ln = largest_layer(named, n, rule);
      CHECK(lc.bits == ln.bits);
      CHECK(lc.names == ln.names);
    }
  }
  // A repeated module that is itself the layer: every copy is named.
  TensorTree with_split = sample(true), named_split = sample(false);
  with_split.no_split_classes = named_split.no_split_classes = {"Expert"};
  const LargestLayer lc = largest_layer(with_split, compute_module_sizes(with_split, {}), LayerRule::kComplete);
  const LargestLayer ln = largest_layer(named_split, compute_module_sizes(named_split, {}), LayerRule::kComplete);
  CHECK(lc.bits == ln.bits);
  CHECK(lc.names == ln.names);
  CHECK(ln.names.size() == 6);
}

TEST_CASE("estimating MoE configs over compact trees gives the named tree's report") {
  int compared = 0;
  for (const std::string rel : {"deepseek-ai--DeepSeek-V3.json", "mistralai--Mixtral-8x7B-v0.1.json",
                                "Qwen--Qwen1.5-MoE-A2.7B.json", "deepseek-ai--deepseek-moe-16b-base.json",
                                "real-hub/Qwen--Qwen3-30B-A3B/config.json",
                                "real-hub/MiniMaxAI--MiniMax-M2.5/config.json",
                                "real-hub/nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16/config.json"}) {
    const std::string text = config(rel);
    if (text.empty()) {
      test::skip_loudly(rel + " (no reference dir)");
      continue;
    }
    for (const Mode mode : {Mode::kMemfit, Mode::kAccelerate}) {
      INFO(rel << " " << mode_name(mode));
      EstimateRequest req;
      req.config_text = text;
      req.name = rel;
      req.mode = mode;
      const Result<Model> named = build_model(req);
      if (!named.ok()) {  // e.g. a family transformers 4.40 (compat mode) does not have
        const Result<Report> refused = estimate(req);
        REQUIRE_FALSE(refused.ok());
        CHECK(refused.error().message() == named.error().message());
        continue;
      }
      CHECK_FALSE(named->tree.has_repeats());
      const Result<Report> want = estimate(*named);
      const Result<Report> got = estimate(req);  // compact
      REQUIRE(want.ok());
      REQUIRE(got.ok());
      CHECK_FALSE(got->module_repeats.empty());
      CHECK(want->module_repeats.empty());
      CHECK(got->parameters == want->parameters);
      CHECK(got->buffers_bytes == want->buffers_bytes);
      CHECK(got->largest_layer_names == want->largest_layer_names);
      REQUIRE(got->rows.size() == want->rows.size());
      for (std::size_t i = 0; i < got->rows.size(); ++i) {
        CHECK(got->rows[i].total == want->rows[i].total);
        CHECK(got->rows[i].largest_layer == want->rows[i].largest_layer);
        CHECK(got->rows[i].training == want->rows[i].training);
        CHECK(got->rows[i].total_bytes == want->rows[i].total_bytes);
      }
      // The compact dict plus its repeats is the named dict.
      const std::map<std::string, double> all(want->module_sizes.begin(), want->module_sizes.end());
      for (const auto& entry : got->module_sizes) {  // (no structured binding: clang-14
        const auto it = all.find(entry.first);        //  cannot capture one in doctest's lambda)
        REQUIRE_MESSAGE(it != all.end(), entry.first);
        CHECK(it->second == entry.second);
      }
      // Written out, the compact dict is the named one, entry for entry and in order.
      CHECK(named_module_sizes(*got) == want->module_sizes);
      CHECK(named_module_sizes(*want) == want->module_sizes);
      // Each listed name stands for the product of the repeats at and above it.
      std::size_t covered = 0;
      for (const auto& entry : got->module_sizes) {
        std::size_t n = 1;
        for (const auto& rep : got->module_repeats)
          if (entry.first == rep.first || entry.first.rfind(rep.first + ".", 0) == 0) n *= static_cast<std::size_t>(rep.second);
        covered += n;
      }
      for (const auto& rep : got->module_repeats)
        CHECK(all.at(repeat_name(rep.first, rep.second - 1)) == all.at(rep.first));
      CHECK(covered == want->module_sizes.size());
      ++compared;
    }
  }
  CHECK(compared >= 8);
}

// Each count is plausible alone (the config reader caps repeats at 16,384); together they are
// 480,000 expert tensors: a compact tree must be refused as the written-out one would be.
TEST_CASE("a config with absurdly many experts is refused before any memory is spent") {
  const std::string text = R"({"model_type": "mixtral", "vocab_size": 32000, "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 10, "num_attention_heads": 4,
      "num_key_value_heads": 4, "num_local_experts": 16000, "num_experts_per_tok": 2})";
  EstimateRequest req;
  req.config_text = text;
  const Result<Report> r = estimate(req);
  REQUIRE_FALSE(r.ok());
  CHECK_MESSAGE(r.error().message().find("tensors") != std::string::npos, r.error().message());
}
