// Parity with the real accelerate 0.30.1 + transformers 4.40 (../shared/reference/accelerate).
//
// For every reference case: `--compat accelerate` must reproduce the printed table char for
// char and the byte figures, largest-layer names, parameter count and module sizes exactly.
// The reference format is read defensively: each field is checked when the case has it.
#include <doctest/doctest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "memfit/estimate.h"
#include "support/reference.h"

using namespace memfit;
using nlohmann::json;

namespace {

const json* first_of(const json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (j.contains(k) && !j[k].is_null()) return &j[k];
  return nullptr;
}

std::string model_name_of(const json& ref, const std::string& stem) {
  if (const json* n = first_of(ref, {"model_name", "name", "model_id", "model"}))
    if (n->is_string()) return n->get<std::string>();
  std::string name = stem;
  if (auto p = name.find("--"); p != std::string::npos) name.replace(p, 2, "/");
  return name;
}

void check_case(const std::string& ref_dir, const std::string& stem) {
  const json ref = json::parse(test::read_text(ref_dir + "/accelerate/" + stem + ".json"));
  const std::string name = model_name_of(ref, stem);
  EstimateRequest req;
  req.name = name;
  req.mode = Mode::kAccelerate;
  const std::string config_path = ref_dir + "/configs/" + stem + "/config.json";
  if (test::file_exists(config_path)) req.config_text = test::read_text(config_path);
  if (const json* lib = first_of(ref, {"library_name", "library"}); lib && lib->is_string())
    req.library = lib->get<std::string>();
  if (const json* d = first_of(ref, {"dtypes"}); d && d->is_array())
    req.dtypes = d->get<std::vector<std::string>>();
  auto r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), stem << ": " << r.error().message());
  INFO("case " << stem);
  if (const json* t = first_of(ref, {"table_text", "table"}); t && t->is_string())
    CHECK(render_table(*r) + "\n" == (t->get<std::string>().back() == '\n' ? t->get<std::string>()
                                                                            : t->get<std::string>() + "\n"));
  if (const json* p = first_of(ref, {"parameters", "num_parameters", "parameter_count"}))
    CHECK(r->parameters == p->get<std::uint64_t>());
  // module_sizes starts with "" (the total, float32 bytes).
  if (const json* tb = first_of(ref, {"total_size", "total_bytes", "total_size_bytes"}))
    CHECK(r->module_sizes.front().second == tb->get<double>());
  if (const json* ll = first_of(ref, {"largest_layer_bytes", "largest_layer_size"}))
    for (const auto& row : r->rows)
      if (row.dtype == "float32") CHECK(row.largest_layer_bytes == ll->get<double>());
  if (const json* names = first_of(ref, {"largest_layer_names", "largest_layer"}); names && names->is_array())
    CHECK(r->largest_layer_names == names->get<std::vector<std::string>>());
  if (const json* ms = first_of(ref, {"module_sizes", "compute_module_sizes"}); ms && ms->is_object()) {
    std::map<std::string, double> ours(r->module_sizes.begin(), r->module_sizes.end());
    std::size_t mismatches = 0;
    for (const auto& [k, v] : ms->items()) {
      auto it = ours.find(k);
      if (it == ours.end() || it->second != v.get<double>()) {
        if (++mismatches <= 5)
          FAIL_CHECK("module_sizes['" << k << "']: reference " << v.dump() << ", memfit "
                                      << (it == ours.end() ? std::string("absent")
                                                           : std::to_string(it->second)));
      }
    }
    CHECK(mismatches == 0);
    CHECK(ours.size() == ms->size());
  }
}

std::vector<std::string> case_stems(const std::string& ref_dir) {
  std::vector<std::string> stems;
  for (const auto& f : test::list_dir(ref_dir + "/accelerate"))
    if (f.size() > 5 && f.substr(f.size() - 5) == ".json") stems.push_back(f.substr(0, f.size() - 5));
  return stems;
}

void named_case(const std::string& stem_fragment) {
  const auto ref = test::reference_dir();
  if (!ref || !test::file_exists(*ref + "/accelerate")) {
    test::skip_loudly("accelerate parity case " + stem_fragment);
    return;
  }
  for (const auto& stem : case_stems(*ref))
    if (stem.find(stem_fragment) != std::string::npos) return check_case(*ref, stem);
  FAIL("no reference case matching " << stem_fragment);
}

}  // namespace

TEST_CASE("parity: every reference case reproduces accelerate estimate-memory") {
  const auto ref = test::reference_dir();
  if (!ref || !test::file_exists(*ref + "/accelerate")) {
    test::skip_loudly("accelerate parity over reference/accelerate/*.json");
    return;
  }
  const auto stems = case_stems(*ref);
  CHECK(!stems.empty());
  for (const auto& stem : stems) {
    SUBCASE(stem.c_str()) { check_case(*ref, stem); }
  }
}

TEST_CASE("parity: bert-base-cased") { named_case("bert-base-cased"); }
TEST_CASE("parity: timm/resnet50.a1_in1k") { named_case("resnet50"); }
TEST_CASE("parity: HuggingFaceM4/idefics-80b-instruct") { named_case("idefics-80b"); }
