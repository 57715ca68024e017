// Parity with the real `accelerate estimate-memory` (../shared/reference/accelerate/*.json, schema
// in its README): accelerate 0.30.1 + transformers 4.40, with 1.2.1 and 0.28.0 run beside it.
//
// `--compat accelerate` claims 0.30.1, and 1.2.1 where it prints the same; every field those
// runs recorded is compared: the printed table char for char, its rows, the raw bytes per dtype
// (training included), the parameter count, buffer bytes, every compute_module_sizes entry, the
// largest layer, tied parameters, _no_split_modules, the class, and the four
// infer_auto_device_map runs (map, bytes per device). 0.28.0 printed the same "Largest
// Layer" and "Total Size" columns and a different training column (4× each row) that no mode
// claims: its size columns are compared, its training column is not.
//
// The three seed cases are partial (only `summary`): their configs come from tests/fixtures when
// ../shared has none. A case that compares nothing fails.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "memfit/memory/estimate.h"
#include "support/parity.h"
#include "support/reference.h"

using namespace memfit;
using namespace memfit::test;

namespace {

std::string config_for(const std::string& ref, const std::string& stem, const OJson& file) {
  if (const OJson* runs = member(file, "runs"))
    if (const OJson* run = member(*runs, "accelerate_0.30.1"))
      if (const OJson* path = member(*run, "config_file"); path && path->is_string())
        return read_text(ref + "/" + path->get<std::string>());
  if (file_exists(ref + "/configs/" + stem + "/config.json"))
    return read_text(ref + "/configs/" + stem + "/config.json");
  std::string hub = file.value("hub_id", stem);
  for (auto p = hub.find('/'); p != std::string::npos; p = hub.find('/')) hub.replace(p, 1, "--");
  if (file_exists(fixture_path("configs/" + hub + ".json"))) return fixture("configs/" + hub + ".json");
  return {};
}

std::string library_of(const OJson& file) {
  if (const OJson* runs = member(file, "runs"))
    for (const auto& [k, run] : runs->items())
      if (const OJson* info = member(run, "hub_model_info_stand_in"))
        if (const OJson* lib = member(*info, "library_name")) return lib->get<std::string>();
  return file.value("library", "transformers");
}

// "accelerate estimate-memory X --library_name L --dtypes a b c" → {a, b, c}.
std::vector<std::string> dtypes_of(const OJson& run) {
  std::vector<std::string> out;
  std::istringstream in(run.value("cli_equivalent", ""));
  std::string w;
  bool on = false;
  while (in >> w) {
    if (w.rfind("--", 0) == 0) on = w == "--dtypes";
    else if (on) out.push_back(w);
  }
  return out;
}

// find_tied_parameters: one sorted list of names per tied weight.
std::vector<std::vector<std::string>> tied_groups(const TensorTree& tree) {
  std::map<int, std::vector<std::string>> groups;
  for (const auto& t : tree.tensors)
    if (t.is_alias()) groups[t.tied_to].push_back(t.name);
  std::vector<std::vector<std::string>> out;
  for (auto& [primary, names] : groups) {
    names.push_back(tree.tensors[primary].name);
    std::sort(names.begin(), names.end());
    out.push_back(names);
  }
  return out;
}

const ReportRow* row_of(const Report& r, const std::string& dtype) {
  for (const auto& row : r.rows)
    if (row.dtype == dtype) return &row;
  return nullptr;
}

// Rows as printed: {"dtype", "Largest Layer", "Total Size", "Training using Adam"}.
void check_rows(const Report& r, const OJson& rows, bool with_training, std::size_t* n) {
  REQUIRE(rows.is_array());
  for (const OJson& want : rows) {
    const std::string dtype = want.at("dtype").get<std::string>();
    const ReportRow* row = row_of(r, dtype);
    REQUIRE_MESSAGE(row != nullptr, "no row for " << dtype);
    CHECK_MESSAGE(row->largest_layer == want.at("Largest Layer").get<std::string>(), dtype << " Largest Layer");
    CHECK_MESSAGE(row->total == want.at("Total Size").get<std::string>(), dtype << " Total Size");
    if (with_training)
      CHECK_MESSAGE(row->training == want.at("Training using Adam").get<std::string>(), dtype << " Training");
    ++*n;
  }
}

void check_module_sizes(const Report& r, const OJson& want, std::size_t* n) {
  const auto named = named_module_sizes(r);  // a compact report's repeated layers, each named
  std::map<std::string, double> ours(named.begin(), named.end());
  std::size_t mismatches = 0, ours_listed = 0;
  for (const auto& [key, v] : want.items()) {
    const std::string k = key == "<total>" ? "" : key;
    auto it = ours.find(k);
    if (it == ours.end() || it->second != v.get<double>())
      if (++mismatches <= 8)
        FAIL_CHECK("compute_module_sizes['" << k << "']: accelerate " << v.dump() << ", memfit "
                                            << (it == ours.end() ? std::string("absent") : std::to_string(it->second)));
    ++*n;
  }
  CHECK(mismatches == 0);
  // The record keeps names of at most two components: memfit must list no other such name.
  for (const auto& [k, v] : named) {
    if (std::count(k.begin(), k.end(), '.') > 1) continue;
    ++ours_listed;
    if (!want.contains(k.empty() ? "<total>" : k)) FAIL_CHECK("memfit lists '" << k << "', accelerate does not");
  }
  CHECK(ours_listed == want.size());
}

void check_device_map_runs(const std::string& config, const std::string& name, const OJson& iadm, std::size_t* n) {
  const OJson* mm = member(iadm, "max_memory_arg");
  const OJson* runs = member(iadm, "runs");
  REQUIRE_MESSAGE((mm && runs && !runs->empty()), "infer_auto_device_map: no max_memory_arg or runs");
  for (const auto& [label, run] : runs->items()) {
    const OJson& kwargs = run.at("kwargs");
    PlanCase p;
    p.label = name + " infer_auto_device_map " + label;
    p.config_text = config;
    p.name = name;
    p.strategy = "sequential";
    p.max_memory = mm;
    p.dtype = member(kwargs, "dtype");
    p.no_split = member(kwargs, "no_split_module_classes");
    p.device_map = member(run, "device_map");
    p.bytes_per_device = member(run, "bytes_per_device");
    *n += check_plan_case(p);
  }
}

// What `accelerate estimate-memory` was asked in this run, as memfit's compat request.
EstimateRequest accelerate_request(const std::string& config, const std::string& library, const OJson& run) {
  EstimateRequest req;
  req.name = run.at("name").get<std::string>();
  req.config_text = config;
  req.library = library;
  req.mode = Mode::kAccelerate;
  req.dtypes = dtypes_of(run);
  return req;
}

// One run of accelerate (0.30.1 or 1.2.1: the versions --compat accelerate claims).
void check_claimed_run(const std::string& config, const std::string& library, const OJson& run, std::size_t* n) {
  const EstimateRequest req = accelerate_request(config, library, run);
  auto r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());

  if (const OJson* t = member(run, "table_text")) {
    CHECK(render_table(*r) == t->get<std::string>());
    ++*n;
  }
  if (const OJson* rows = member(run, "table_rows")) check_rows(*r, *rows, true, n);
  if (const OJson* raw = member(run, "gather_data_raw"))
    for (const OJson& want : *raw) {
      const std::string dtype = want.at("dtype").get<std::string>();
      const ReportRow* row = row_of(*r, dtype);
      REQUIRE_MESSAGE(row != nullptr, "no row for " << dtype);
      CHECK_MESSAGE(row->largest_layer_bytes == want.at("largest_layer_bytes").get<double>(), dtype);
      CHECK_MESSAGE(row->total_bytes == want.at("total_size_bytes").get<double>(), dtype);
      const OJson& tr = want.at("training");
      const double step = tr.is_object() ? tr.at("step").get<double>() : tr.get<double>();
      if (step < 0) CHECK_MESSAGE(!row->training_bytes, dtype << " training: N/A");
      else CHECK_MESSAGE(row->training_bytes.value_or(-1) == step, dtype << " training");
      *n += 3;
    }
  if (const OJson* mc = member(run, "model_class")) {
    CHECK(r->model_class == mc->get<std::string>());
    ++*n;
  }
  if (const OJson* p = member(run, "parameters")) {
    CHECK(r->parameters == p->at("count").get<std::uint64_t>());
    ++*n;
  }
  if (const OJson* b = member(run, "buffers")) {
    CHECK(r->buffers_bytes == b->at("bytes_accelerate_dtype_byte_size").get<double>());
    ++*n;
  }
  if (const OJson* ms = member(run, "compute_module_sizes")) check_module_sizes(*r, *ms, n);
  if (const OJson* cms = member(run, "calculate_maximum_sizes")) {
    CHECK(r->module_sizes.front().second == cms->at("total_size_bytes").get<double>());
    CHECK(row_of(*r, "float32") != nullptr);
    if (const ReportRow* f32 = row_of(*r, "float32"))
      CHECK(f32->largest_layer_bytes == cms->at("largest_layer_bytes").get<double>());
    CHECK(r->largest_layer_names == cms->at("largest_layer_names").get<std::vector<std::string>>());
    *n += 3;
  }
  if (member(run, "tied_parameters") || member(run, "no_split_modules")) {
    auto full = build_tree(req);
    REQUIRE(full.ok());
    const TensorTree tree = for_era(std::move(full).value(), true);
    if (const OJson* tp = member(run, "tied_parameters")) {
      CHECK(tied_groups(tree) == tp->get<std::vector<std::vector<std::string>>>());
      ++*n;
    }
    if (const OJson* ns = member(run, "no_split_modules")) {
      CHECK(tree.no_split_classes == ns->get<std::vector<std::string>>());
      ++*n;
    }
  }
  if (const OJson* iadm = member(run, "infer_auto_device_map"))
    check_device_map_runs(config, req.name, *iadm, n);
}

// accelerate 0.28.0: the size columns only (its training column is claimed by no mode).
void check_028_run(const std::string& config, const std::string& library, const OJson& run, std::size_t* n) {
  const EstimateRequest req = accelerate_request(config, library, run);
  auto r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  if (const OJson* rows = member(run, "table_rows")) check_rows(*r, *rows, false, n);
  if (const OJson* mc = member(run, "model_class")) {
    CHECK(r->model_class == mc->get<std::string>());
    ++*n;
  }
}

// `summary`: what the partial seed cases hold, and a digest of the full ones.
void check_summary(const std::string& config, const std::string& library, const OJson& file, std::size_t* n) {
  const OJson* s = member(file, "summary");
  REQUIRE_MESSAGE(s != nullptr, "no summary");
  EstimateRequest req;
  req.name = file.at("hub_id").get<std::string>();
  req.config_text = config;
  req.library = library;
  req.mode = Mode::kAccelerate;
  auto r = estimate(req);
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  const ReportRow* f32 = row_of(*r, "float32");
  REQUIRE(f32 != nullptr);
  if (const OJson* v = member(*s, "model_class")) { CHECK(r->model_class == v->get<std::string>()); ++*n; }
  if (const OJson* v = member(*s, "parameter_count")) { CHECK(r->parameters == v->get<std::uint64_t>()); ++*n; }
  if (const OJson* v = member(*s, "fp32_total_size_bytes")) { CHECK(f32->total_bytes == v->get<double>()); ++*n; }
  if (const OJson* v = member(*s, "fp32_largest_layer_bytes")) { CHECK(f32->largest_layer_bytes == v->get<double>()); ++*n; }
  if (const OJson* v = member(*s, "largest_layer_names")) {
    CHECK(r->largest_layer_names == v->get<std::vector<std::string>>());
    ++*n;
  }
  if (const OJson* v = member(*s, "buffer_bytes_in_total")) { CHECK(r->buffers_bytes == v->get<double>()); ++*n; }
  if (const OJson* rows = member(*s, "table_rows_accelerate_0.30.1")) check_rows(*r, *rows, true, n);
  if (const OJson* rows = member(*s, "table_rows_accelerate_1.2.1")) check_rows(*r, *rows, true, n);
  if (const OJson* rows = member(*s, "table_rows_accelerate_0.28.0")) check_rows(*r, *rows, false, n);
}

std::size_t check_case(const std::string& ref, const std::string& stem) {
  INFO("reference case " << stem);
  const OJson file = read_reference_json(ref + "/accelerate/" + stem + ".json");
  const std::string config = config_for(ref, stem, file);
  const std::string library = library_of(file);
  REQUIRE_MESSAGE((!config.empty() || library == "timm"), "no config.json for " << stem);
  std::size_t n = 0;
  check_summary(config, library, file, &n);
  if (const OJson* runs = member(file, "runs"))
    for (const auto& entry : runs->items()) {
      const std::string version = entry.key();  // clang 14: a structured binding cannot be captured
      const OJson& run = entry.value();
      INFO("run " << version);
      if (version == "accelerate_0.28.0") check_028_run(config, library, run, &n);
      else check_claimed_run(config, library, run, &n);
    }
  CHECK_MESSAGE(n > 0, stem << ": nothing compared");
  return n;
}

std::vector<std::string> case_stems(const std::string& ref) {
  std::vector<std::string> stems;
  for (const auto& f : list_dir(ref + "/accelerate"))
    if (f.size() > 5 && f.substr(f.size() - 5) == ".json") stems.push_back(f.substr(0, f.size() - 5));
  return stems;
}

void named_case(const std::string& stem) {
  const auto ref = reference_dir();
  if (!ref || !file_exists(*ref + "/accelerate")) {
    skip_loudly("accelerate parity case " + stem);
    return;
  }
  REQUIRE_MESSAGE(file_exists(*ref + "/accelerate/" + stem + ".json"), "no reference case " << stem);
  const std::size_t n = check_case(*ref, stem);
  MESSAGE("accelerate parity: " << stem << ": " << n << " fields compared");
}

}  // namespace

TEST_CASE("parity: every reference case reproduces accelerate estimate-memory") {
  const auto ref = reference_dir();
  if (!ref || !file_exists(*ref + "/accelerate")) {
    skip_loudly("accelerate parity over reference/accelerate/*.json");
    return;
  }
  const auto stems = case_stems(*ref);
  REQUIRE(!stems.empty());
  std::size_t fields = 0;
  for (const auto& stem : stems) fields += check_case(*ref, stem);
  MESSAGE("accelerate parity: " << stems.size() << " cases, " << fields << " fields compared");
}

// The seed's three named cases, each its own test.
TEST_CASE("parity: bert-base-cased") { named_case("bert-base-cased"); }
TEST_CASE("parity: timm/resnet50.a1_in1k") { named_case("timm-resnet50"); }
TEST_CASE("parity: HuggingFaceM4/idefics-80b-instruct") { named_case("idefics-80b-instruct"); }
