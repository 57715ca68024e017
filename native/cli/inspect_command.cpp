#include "inspect_command.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_error.h"
#include "hub_checkpoint.h"
#include "memfit/memory/estimate.h"
#include "memfit/report/convert_bytes.h"
#include "memfit/report/report_json.h"
#include "model_source.h"
#include "option_flags.h"
#include "open_checkpoint.h"

namespace memfit::cli {

// A local path is read from disk (either format); anything else that looks like a repo id from
// the Hub (safetensors: a .bin read by Range has no file offsets to show).
checkpoint::Checkpoint load_checkpoint(const std::string& target) {
  std::error_code ec;
  if (std::filesystem::exists(target, ec)) return checkpoint::open_checkpoint(target);
  if (!hub::looks_like_repo_id(target))
    throw CliError{kExitFile, fmt::format("{}: no such file or folder, and not a Hub model id", target)};
  hub::HubClient client(hub::HubOptions::from_environment());
  return checkpoint::open_hub_safetensors(client, target);
}

std::string shape_text(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

namespace {

using checkpoint::Checkpoint;

void print_text(const Checkpoint& ck) {
  std::uint64_t total = 0, count = 0;
  for (const auto& f : ck.files) {
    const std::string& file = f.name;
    const safetensors::Header& h = *f.header;
    fmt::print("{}: {} tensors, header {} bytes, data {} bytes\n", file, h.tensors.size(),
               h.header_size, h.data_size);
    for (const auto& [k, v] : h.metadata) fmt::print("  metadata {} = {}\n", k, v);
    for (const auto& t : h.tensors) {
      fmt::print("  {:<60} {:<8} {:<20} {:>12} @ {}\n", t.name, safetensors_name(t.dtype),
                 shape_text(t.shape), t.nbytes(), t.begin);
      total += t.nbytes();
      ++count;
    }
  }
  fmt::print("{} tensors in {} file(s), {} ({} bytes)\n", count, ck.files.size(),
             convert_bytes(static_cast<double>(total)), total);
}

nlohmann::ordered_json to_json(const Checkpoint& ck) {
  nlohmann::ordered_json out;
  out["tensors"] = nlohmann::ordered_json::array();
  nlohmann::ordered_json metadata = nlohmann::ordered_json::object();
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const auto& f : ck.files) {
    const std::string& file = f.name;
    const safetensors::Header& h = *f.header;
    for (const auto& [k, v] : h.metadata) metadata[k] = v;
    files.push_back({{"name", file}, {"header_size", h.header_size}, {"data_size", h.data_size},
                     {"tensors", h.tensors.size()}});
    for (const auto& t : h.tensors)
      out["tensors"].push_back({{"name", t.name},
                                {"dtype", std::string(safetensors_name(t.dtype))},
                                {"shape", t.shape},
                                {"data_offsets", {t.begin, t.end}},
                                {"bytes", t.nbytes()},
                                {"file", file}});
  }
  out["metadata"] = metadata;
  out["files"] = files;
  if (ck.index) {
    out["index"] = {{"name", ck.index_name}, {"shards", ck.index->shards}};
    if (ck.index->total_size) out["index"]["total_size"] = *ck.index->total_size;
  }
  return out;
}

// .bin tensors have no data buffer: their offsets are absolute file offsets of the first element
// (the JSON says so in "offsets"), and a tensor may be a strided view of a shared storage.
void print_bin(const Checkpoint& ck, bool json) {
  std::uint64_t total = 0;
  if (json) {
    nlohmann::ordered_json out;
    out["format"] = "pytorch_bin";
    out["offsets"] = "file";  // data_offsets count from the start of the .bin file
    out["tensors"] = nlohmann::ordered_json::array();
    for (const auto& t : ck.tensors)
      out["tensors"].push_back({{"name", t.name},
                                {"dtype", std::string(safetensors_name(t.dtype))},
                                {"shape", t.shape},
                                {"stride", t.stride},
                                {"data_offsets", {t.data_offset, t.data_offset + t.span_bytes}},
                                {"bytes", t.nbytes},
                                {"file", ck.files[t.file].name},
                                {"storage", t.storage_key},
                                {"contiguous", t.contiguous}});
    out["metadata"] = nlohmann::ordered_json::object();
    out["files"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < ck.files.size(); ++i) {
      std::size_t n = 0;
      for (const auto& t : ck.tensors) n += t.file == i;
      out["files"].push_back({{"name", ck.files[i].name}, {"tensors", n}});
    }
    if (ck.index) {
      out["index"] = {{"name", ck.index_name}, {"shards", ck.index->shards}};
      if (ck.index->total_size) out["index"]["total_size"] = *ck.index->total_size;
    }
    fmt::print("{}\n", out.dump(2));
    return;
  }
  for (const auto& t : ck.tensors) {
    fmt::print("  {:<60} {:<8} {:<20} {:>12} @ {} (file offset; storage '{}'{})\n", t.name,
               safetensors_name(t.dtype), shape_text(t.shape), t.nbytes, t.data_offset, t.storage_key,
               t.contiguous ? "" : ", strided");
    total += t.nbytes;
  }
  fmt::print("{} tensors in {} .bin file(s), {} ({} bytes, shared storages counted per tensor)\n",
             ck.tensors.size(), ck.files.size(), convert_bytes(static_cast<double>(total)), total);
}

}  // namespace

int run_inspect(const InspectArgs& args) {
  return guarded([&] {
    std::optional<Checkpoint> found;
    try {
      found = load_checkpoint(args.target);
    } catch (const Failure& e) {
      // A Hub repo with no safetensors may hold GGUF files: their quantization table.
      if (e.kind != FailureKind::kEntryNotFound) throw;
      GgufArgs g = args.gguf;
      g.target = args.target;
      g.json = args.json;
      if (try_gguf_repo_table(g)) return int{kExitOk};
      throw;
    }
    const Checkpoint& ck = *found;
    if (ck.format == checkpoint::Format::kPytorchBin) {
      print_bin(ck, args.json);
      return int{kExitOk};
    }
    for (const auto& w : ck.warnings) fmt::print(stderr, "memfit: warning: {}\n", w);
    if (args.json) fmt::print("{}\n", to_json(ck).dump(2));
    else print_text(ck);
    return int{kExitOk};
  });
}

}  // namespace memfit::cli
