#include "validate_command.h"

#include <filesystem>

#include <fmt/format.h>

#include "cli_error.h"
#include "file_reader.h"
#include "hub_checkpoint.h"
#include "inspect_command.h"
#include "memfit/memory/checkpoint_validation.h"
#include "memfit/report/report_json.h"
#include "model_source.h"
#include "safetensors_checkpoint.h"

namespace memfit::cli {
namespace {

namespace fs = std::filesystem;

// What the checkpoint holds: names (and, with headers, shapes and dtypes) and the bytes it states.
struct CheckpointNames {
  std::vector<CheckpointTensor> tensors;
  bool have_headers = false;
  std::optional<std::uint64_t> total_size;  // the index's metadata.total_size
  std::string label;                        // what was read, for the text output
};

CheckpointNames from_index_text(const std::string& text, const std::string& source) {
  const Result<CheckpointIndex> index = parse_index(text, source);
  if (!index) cli_raise(index.error());
  CheckpointNames out;
  for (const auto& [name, shard] : index->weight_map) out.tensors.push_back({name, DType::kF32, {}, shard});
  out.total_size = index->total_size;
  out.label = source + " (names only)";
  return out;
}

CheckpointNames from_checkpoint(const checkpoint::Checkpoint& ck, const std::string& label) {
  CheckpointNames out;
  out.tensors = ck.tree_tensors();
  out.have_headers = true;
  if (ck.index) out.total_size = ck.index->total_size;
  out.label = label;
  return out;
}

bool is_index_file(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  return name.size() > 11 && name.compare(name.size() - 11, 11, ".index.json") == 0;
}

// An index beside all its shards is read with their headers (shapes checked); a bare index, by
// its names.
CheckpointNames local_names(const std::string& path) {
  std::error_code ec;
  if (is_index_file(path) && fs::is_regular_file(path, ec)) {
    const std::string text = io::read_file(path);
    const Result<CheckpointIndex> index = parse_index(text, path);
    if (!index) cli_raise(index.error());
    bool shards_here = !index->shards.empty();
    for (const auto& shard : index->shards)
      shards_here = shards_here && fs::is_regular_file(fs::path(path).parent_path() / shard, ec);
    if (!shards_here) return from_index_text(text, path);
  }
  return from_checkpoint(load_checkpoint(path), path);
}

// A Hub repo: its model.safetensors.index.json (one small file), else model.safetensors's header
// by Range.
CheckpointNames hub_names(const std::string& repo) {
  hub::HubClient client(hub::HubOptions::from_environment());
  std::optional<std::string> index;
  try {
    index = hub::unless_missing([&] { return client.fetch_file(repo, checkpoint::kSafetensorsIndexName); });
  } catch (const hub::HubError& e) {
    throw e.failure();
  }
  if (index) return from_index_text(*index, repo + "/" + checkpoint::kSafetensorsIndexName);
  return from_checkpoint(checkpoint::open_hub_safetensors(client, repo), repo + " (headers by Range)");
}

CheckpointNames checkpoint_names(const ValidateArgs& args) {
  const std::string& target = args.checkpoint.empty() ? args.config : args.checkpoint;
  std::error_code ec;
  if (fs::exists(target, ec)) return local_names(target);
  if (!hub::looks_like_repo_id(target))
    throw CliError{kExitFile, fmt::format("{}: no such file or folder, and not a Hub model id", target)};
  return hub_names(target);
}

void print_text(const ValidateArgs& args, const CheckpointNames& ck, const std::string& model_class,
                const CheckpointValidation& v) {
  fmt::print("{} vs {} ({}):\n", args.config, ck.label, model_class);
  if (!v.prefix_note.empty()) fmt::print("  note: {}\n", v.prefix_note);
  for (const auto& n : v.notes) fmt::print("  note: {}\n", n);
  for (const auto& n : v.missing) fmt::print("  missing:    {}\n", n);
  for (const auto& n : v.unexpected) fmt::print("  unexpected: {}\n", n);
  for (const auto& n : v.ignored) fmt::print("  ignored:    {} (transformers ignores it on load)\n", n);
  for (const auto& m : v.shape_mismatches)
    fmt::print("  shape:      {} is {} in the checkpoint; the config implies {}\n", m.name,
               shape_text(m.got), shape_text(m.expected));
  for (const auto& d : v.dtype_differences)
    fmt::print("  dtype:      {} is {} (expected {}; loading casts it)\n", d.name,
               safetensors_name(d.got), safetensors_name(d.expected));
  if (v.index_total_size)
    fmt::print("  bytes:      {} stored per the index; the config implies {} ({}){}\n", *v.index_total_size,
               v.expected_total_size, v.dtype, *v.index_total_size == v.expected_total_size ? "" : ": MISMATCH");
  fmt::print("{}: {} missing, {} unexpected, {} ignored, {} shape mismatches, {} dtype differences\n",
             v.ok() ? "OK" : "MISMATCH", v.missing.size(), v.unexpected.size(), v.ignored.size(),
             v.shape_mismatches.size(), v.dtype_differences.size());
}

}  // namespace

int run_validate(const ValidateArgs& args) {
  return guarded([&] {
    hub::HubClient client(hub::HubOptions::from_environment());
    const ModelSource src = resolve_model(args.config, {"", ""}, &client);
    const CheckpointNames ck = checkpoint_names(args);
    EstimateRequest req;
    req.config_text = src.config_text;
    req.name = src.name;
    req.library = src.library;
    req.class_override = args.class_name;
    const Result<Model> model = build_model(std::move(req));
    if (!model) cli_raise(model.error());
    const CheckpointValidation v = validate_checkpoint(*model, ck.tensors, ck.have_headers, ck.total_size);
    if (args.json) {
      auto j = validation_to_json(v);
      j["model_class"] = model->class_name();
      fmt::print("{}\n", j.dump(2));
    } else {
      print_text(args, ck, model->class_name(), v);
    }
    return int{v.ok() ? kExitOk : kExitMismatch};
  });
}

}  // namespace memfit::cli
