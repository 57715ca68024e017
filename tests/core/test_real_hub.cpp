// Real Hub repos of current models (../shared/reference/real-hub: config.json and the real
// model.safetensors.index.json): the state dict memfit's tree implies must carry exactly the
// index's tensor names, and its bytes at the config's torch_dtype must be the index's
// metadata.total_size.
//
// Names the index holds that transformers ignores on load are not counted against the tree:
// Llama's 4.40-era `rotary_emb.inv_freq` (LlamaPreTrainedModel._keys_to_ignore_on_load_unexpected);
// their bytes are in total_size all the same.
// A repo whose model_type memfit does not know yet is listed loudly, not compared; a run that
// compares no repo at all fails.
#include <doctest/doctest.h>

#include <regex>
#include <set>

#include "memfit/model/model.h"
#include "support/parity.h"
#include "support/reference.h"

using namespace memfit;
using namespace memfit::test;

namespace {

bool ignored_on_load(const std::string& name) {
  static const std::regex kIgnored(R"(.*\.rotary_emb\.inv_freq$)");
  return std::regex_match(name, kIgnored);
}

// Returns false when the model type is not supported (nothing compared).
bool check_repo(const std::string& dir, const std::string& repo) {
  INFO("real-hub " << repo);
  EstimateRequest req;
  req.config_text = read_text(dir + "/config.json");
  req.name = repo;
  const Result<Model> model = build_model(req);
  if (!model && model.error().code() == ErrorCode::kUnknownModelType) {
    MESSAGE("real-hub: " << repo << ": not compared, " << model.error().message().substr(0, 60));
    return false;
  }
  REQUIRE_MESSAGE(model.ok(), model.error().message());
  const TensorTree tree = for_era(model->tree, /*legacy=*/false);
  const OJson index = read_reference_json(dir + "/model.safetensors.index.json");
  // Ignored names still take their bytes in total_size: the 4.40 tree knows their shapes (the
  // per-layer rotary inv_freq, float32, saved by transformers before 4.41).
  const TensorTree legacy = for_era(model->tree, /*legacy=*/true);
  std::set<std::string> stored;
  std::uint64_t ignored_bits = 0;
  for (const auto& entry : index.at("weight_map").items()) {
    const std::string name = entry.key();  // clang 14: a structured binding cannot be captured
    if (!ignored_on_load(name)) {
      stored.insert(name);
      continue;
    }
    const int t = legacy.find_tensor(name);
    REQUIRE_MESSAGE(t >= 0, "ignored index tensor " << name << " is unknown to the 4.40 tree too");
    ignored_bits += legacy.tensors[static_cast<std::size_t>(t)].numel *
                    static_cast<std::uint64_t>(dtype_bits(legacy.tensors[static_cast<std::size_t>(t)].dtype));
  }

  const auto td = model->config.string_opt({"torch_dtype", "dtype"});
  REQUIRE_MESSAGE(td.has_value(), "config has no torch_dtype");
  const auto dtype = dtype_from_name(*td);
  REQUIRE(dtype.has_value());
  std::set<std::string> ours;
  std::uint64_t bits = 0;
  for (const auto& t : tree.tensors) {
    if (t.is_alias() || (t.kind == TensorKind::kBuffer && !t.persistent)) continue;
    ours.insert(t.name);
    bits += t.numel * static_cast<std::uint64_t>(is_floating(t.dtype) ? dtype_bits(*dtype) : dtype_bits(t.dtype));
  }
  std::vector<std::string> missing, unexpected;
  for (const auto& n : ours)
    if (!stored.count(n)) missing.push_back(n);
  for (const auto& n : stored)
    if (!ours.count(n)) unexpected.push_back(n);
  CHECK_MESSAGE(missing.empty(), missing.size() << " tensors of the tree not in the index, e.g. "
                                                << (missing.empty() ? "" : missing.front()));
  CHECK_MESSAGE(unexpected.empty(), unexpected.size() << " index tensors not in the tree, e.g. "
                                                      << (unexpected.empty() ? "" : unexpected.front()));
  CHECK((bits + ignored_bits) / 8 == index.at("metadata").at("total_size").get<std::uint64_t>());
  return true;
}

}  // namespace

TEST_CASE("real-hub: trees equal the real safetensors indexes, names and total_size") {
  const auto ref = reference_dir();
  if (!ref || !file_exists(*ref + "/real-hub")) {
    skip_loudly("real-hub index comparison");
    return;
  }
  std::size_t compared = 0, listed = 0;
  for (const auto& repo : list_dir(*ref + "/real-hub")) {
    const std::string dir = *ref + "/real-hub/" + repo;
    if (!file_exists(dir + "/model.safetensors.index.json")) continue;
    ++listed;
    if (check_repo(dir, repo)) ++compared;
  }
  CHECK(compared > 0);
  MESSAGE("real-hub parity: " << compared << " of " << listed << " indexes compared");
}
