// Real Hub repos of current models (../shared/reference/real-hub: config.json and the real
// model.safetensors.index.json): the stored form memfit derives from the config (names, and
// bytes at the config's dtype with quantized weights as their pieces: core's
// memfit/memory/stored_form.h, the code behind `memfit validate`) must carry exactly the index's
// tensor names, and its bytes must be the index's metadata.total_size.
//
// Names the index holds that transformers ignores on load are not counted against the tree:
// Llama's 4.40-era `rotary_emb.inv_freq` (_keys_to_ignore_on_load_unexpected); their bytes are
// in total_size all the same.
// A repo whose model_type memfit does not know yet is listed loudly, not compared; a run that
// compares no repo at all fails.
#include <doctest/doctest.h>

#include "memfit/memory/checkpoint_validation.h"
#include "memfit/model/model.h"
#include "support/parity.h"
#include "support/reference.h"

using namespace memfit;
using namespace memfit::test;

namespace {

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
  const OJson index = read_reference_json(dir + "/model.safetensors.index.json");
  std::vector<CheckpointTensor> names;
  for (const auto& entry : index.at("weight_map").items()) names.push_back({entry.key(), DType::kF32, {}, ""});
  const auto total = index.at("metadata").at("total_size").get<std::uint64_t>();
  const CheckpointValidation v = validate_checkpoint(*model, names, /*have_headers=*/false, total);
  CHECK_MESSAGE(v.missing.empty(), v.missing.size() << " tensors of the tree not in the index, e.g. "
                                                  << (v.missing.empty() ? "" : v.missing.front()));
  CHECK_MESSAGE(v.unexpected.empty(), v.unexpected.size() << " index tensors not in the tree, e.g. "
                                                        << (v.unexpected.empty() ? "" : v.unexpected.front()));
  CHECK_MESSAGE(v.expected_total_size == total, "stored form at " << v.dtype);
  CHECK(v.ok());
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
