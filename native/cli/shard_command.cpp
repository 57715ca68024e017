#include "shard_command.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "atomic_write.h"
#include "cli_error.h"
#include "file_reader.h"
#include "mapped_file.h"
#include "memfit/format/safetensors.h"
#include "memfit/memory/estimate.h"
#include "memfit/plan/device.h"
#include "open_checkpoint.h"

namespace memfit::cli {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kChunk = 8u << 20;  // bytes copied per read/write: the memory bound

using checkpoint::TensorRecord;

// The checkpoint to reshard: its tensors in the order they will be written.
struct Source {
  checkpoint::Checkpoint checkpoint;
  fs::path folder;  // where config.json would be
  std::string kind;  // "safetensors" | "bin"
  const std::string& path_of(const TensorRecord& t) const { return checkpoint.files[t.file].path; }
};

Source read_source(const std::string& input) {
  Source src;
  src.checkpoint = checkpoint::open_checkpoint(input);
  std::error_code ec;
  src.folder = fs::is_directory(input, ec) ? fs::path(input) : fs::path(input).parent_path();
  if (src.checkpoint.format == checkpoint::Format::kPytorchBin) {
    src.kind = "bin";
  } else {
    src.kind = "safetensors";
    for (const auto& w : src.checkpoint.warnings) fmt::print(stderr, "memfit: warning: {}\n", w);
  }
  return src;
}

// torch's state_dict() order for a tree: each module's own parameters, then its persistent
// buffers, then its children, depth first (Module._save_to_state_dict + recursion).
std::vector<std::string> state_dict_order(const TensorTree& tree) {
  std::vector<std::string> out;
  std::vector<int> stack{0};
  while (!stack.empty()) {
    const ModuleNode& m = tree.modules[static_cast<std::size_t>(stack.back())];
    stack.pop_back();
    for (int p : m.params) out.push_back(tree.tensors[static_cast<std::size_t>(p)].name);
    for (int b : m.buffers)
      if (tree.tensors[static_cast<std::size_t>(b)].persistent) out.push_back(tree.tensors[static_cast<std::size_t>(b)].name);
    for (auto it = m.children.rbegin(); it != m.children.rend(); ++it) stack.push_back(*it);
  }
  return out;
}

// Reorders `tensors` by the model's state_dict order. Names the tree lacks keep their relative
// order after the known ones. Returns a note for the report.
std::string order_by_config(std::vector<TensorRecord>& tensors, const fs::path& folder, const std::string& mode) {
  std::error_code ec;
  const fs::path config = folder / "config.json";
  if (!fs::is_regular_file(config, ec)) {
    if (mode == "config")
      throw CliError{kExitFile, fmt::format("--order config: no config.json in {}", folder.string())};
    return "checkpoint order (no config.json beside the checkpoint)";
  }
  EstimateRequest req;
  req.config_text = io::read_file(config.string());
  req.name = folder.string();
  const Result<Model> model = build_model(std::move(req));
  if (!model) {
    if (mode == "config") cli_raise(model.error());
    return fmt::format("checkpoint order (config.json gives no model: {})", cli_message(model.error()));
  }
  std::unordered_map<std::string, std::size_t> rank;
  const auto order = state_dict_order(model->tree);
  for (std::size_t i = 0; i < order.size(); ++i) rank.emplace(order[i], i);
  std::size_t known = 0;
  for (const auto& t : tensors) known += rank.count(t.name);
  if (known == 0) {
    if (mode == "config")
      throw CliError{kExitInvalidInput, fmt::format("--order config: no checkpoint tensor is named as "
                                                    "in {}'s state dict", model->class_name())};
    return fmt::format("checkpoint order (no tensor name matches {}'s state dict)", model->class_name());
  }
  std::stable_sort(tensors.begin(), tensors.end(), [&](const TensorRecord& a, const TensorRecord& b) {
    const auto ra = rank.find(a.name), rb = rank.find(b.name);
    const std::size_t ka = ra == rank.end() ? SIZE_MAX : ra->second;
    const std::size_t kb = rb == rank.end() ? SIZE_MAX : rb->second;
    return ka < kb;
  });
  return fmt::format("{}'s state_dict order (config.json){}", model->class_name(),
                     known < tensors.size() ? fmt::format("; {} tensors it does not name go last",
                                                          tensors.size() - known) : "");
}

struct Dropped {
  std::string name, alias_of;
};

// A tensor viewing exactly the bytes of an earlier one is a tied alias: dropped, as
// save_pretrained drops it (transformers re-ties it when loading).
std::vector<Dropped> drop_aliases(std::vector<TensorRecord>& tensors) {
  const std::vector<std::size_t> alias = checkpoint::alias_targets(tensors);
  std::vector<Dropped> dropped;
  std::vector<TensorRecord> kept;
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (alias[i] != std::string::npos) dropped.push_back({tensors[i].name, tensors[alias[i]].name});
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (alias[i] == std::string::npos) kept.push_back(std::move(tensors[i]));
  tensors = std::move(kept);
  return dropped;
}

struct ShardPlan {
  std::vector<std::vector<std::size_t>> shards;  // tensor indices, state-dict order
  std::uint64_t total_size = 0;
};

// transformers 4.40 shard_checkpoint: sizes as dtype_byte_size counts them (bool = 1/8 byte),
// so the arithmetic is in bits (saturating: no checkpoint is 2^61 bytes).
std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

ShardPlan plan_shards(const std::vector<TensorRecord>& tensors, std::uint64_t max_bytes) {
  ShardPlan plan;
  plan.shards.emplace_back();
  std::uint64_t last_bits = 0, total_bits = 0;
  const std::uint64_t max_bits = sat_mul(max_bytes, 8);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    std::uint64_t bits = static_cast<std::uint64_t>(accounting_bits(tensors[i].dtype));
    for (auto d : tensors[i].shape) bits = sat_mul(bits, static_cast<std::uint64_t>(d));
    if (sat_add(last_bits, bits) > max_bits && !plan.shards.back().empty()) {
      plan.shards.emplace_back();
      last_bits = 0;
    }
    plan.shards.back().push_back(i);
    last_bits = sat_add(last_bits, bits);
    total_bits = sat_add(total_bits, bits);
  }
  plan.total_size = total_bits / 8 + (total_bits % 8 != 0);
  return plan;
}

// Streams one tensor's bytes in C order into `out`, at most kChunk at a time.
class TensorCopier {
 public:
  void copy(const TensorRecord& t, const std::string& path, io::OutputFile& out) {
    if (t.contiguous) {
      io::FileReader& in = reader(path);
      for (std::uint64_t done = 0; done < t.nbytes;) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, t.nbytes - done));
        buffer_.resize(n);
        in.read_into(t.data_offset + done, n, buffer_.data());
        out.write(buffer_.data(), n);
        done += n;
      }
      return;
    }
    // A strided view: walk the elements in C order over a mapping (the view was checked to lie
    // inside its storage when the .bin was read).
    io::MappedFile& map = mapping(path);
    const std::size_t elem = static_cast<std::size_t>(dtype_bits(t.dtype) / 8);
    const std::size_t rank = t.shape.size();
    std::vector<std::int64_t> index(rank, 0);
    const std::uint64_t numel = t.nbytes / elem;
    const std::uint8_t* base = map.data();
    buffer_.clear();
    for (std::uint64_t k = 0; k < numel; ++k) {
      std::uint64_t off = t.data_offset;
      for (std::size_t d = 0; d < rank; ++d)
        off += static_cast<std::uint64_t>(index[d]) * static_cast<std::uint64_t>(t.stride[d]) * elem;
      buffer_.append(reinterpret_cast<const char*>(base + off), elem);
      if (buffer_.size() >= kChunk) {
        out.write(buffer_.data(), buffer_.size());
        buffer_.clear();
      }
      for (std::size_t d = rank; d-- > 0;) {
        if (++index[d] < t.shape[d]) break;
        index[d] = 0;
      }
    }
    out.write(buffer_.data(), buffer_.size());
    buffer_.clear();
  }

 private:
  io::FileReader& reader(const std::string& path) {
    auto& r = readers_[path];
    if (!r) r = std::make_unique<io::FileReader>(path);
    return *r;
  }
  io::MappedFile& mapping(const std::string& path) {
    auto& m = maps_[path];
    if (!m) m = std::make_unique<io::MappedFile>(path);
    return *m;
  }
  std::map<std::string, std::unique_ptr<io::FileReader>> readers_;
  std::map<std::string, std::unique_ptr<io::MappedFile>> maps_;
  std::string buffer_;
};

struct ShardFile {
  std::string name;
  std::size_t tensors = 0;
  std::uint64_t bytes = 0;
};

ShardFile write_shard(const fs::path& dir, const std::string& name, const Source& src,
                      std::vector<const TensorRecord*> tensors, TensorCopier& copier) {
  // safetensors' layout: dtype descending, then name (byte order)
  std::sort(tensors.begin(), tensors.end(), [](const TensorRecord* a, const TensorRecord* b) {
    if (a->dtype != b->dtype) return static_cast<int>(a->dtype) > static_cast<int>(b->dtype);
    return a->name < b->name;
  });
  std::vector<safetensors::TensorEntry> entries;
  for (const TensorRecord* t : tensors) {
    if (safetensors_name(t->dtype).empty())
      throw CliError{kExitUnsupported, fmt::format("tensor '{}' is {}, which safetensors cannot store",
                                                   t->name, torch_name(t->dtype))};
    safetensors::TensorEntry e;
    e.name = t->name;
    e.dtype = t->dtype;
    e.shape = t->shape;
    entries.push_back(std::move(e));
  }
  entries = safetensors::layout(std::move(entries));
  const std::string header = safetensors::write_header(entries, {{"format", "pt"}});
  const fs::path path = dir / name;
  io::OutputFile out(path.string());
  out.write(header.data(), header.size());
  ShardFile shard{name, tensors.size(), header.size()};
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (entries[i].nbytes() != tensors[i]->nbytes)
      throw CliError{kExitInternal, fmt::format("tensor '{}': {} bytes laid out, {} to copy", tensors[i]->name,
                                                entries[i].nbytes(), tensors[i]->nbytes)};
    copier.copy(*tensors[i], src.path_of(*tensors[i]), out);
    shard.bytes += tensors[i]->nbytes;
  }
  out.finish();
  return shard;
}

void write_small_file(const fs::path& path, const std::string& text) {
  io::OutputFile out(path.string());
  out.write(text.data(), text.size());
  out.finish();
}

// The shards, the index when there are several, and config.json / generation_config.json from
// beside the input, written into `out` (the temporary folder). Returns the copied file names.
std::vector<std::string> write_folder(const std::string& out, const Source& src, const ShardPlan& plan,
                                      std::vector<ShardFile>& files) {
  TensorCopier copier;
  nlohmann::json weight_map = nlohmann::json::object();  // std::map: sorted keys
  const std::vector<TensorRecord>& tensors = src.checkpoint.tensors;
  const std::size_t n = plan.shards.size();
  for (std::size_t s = 0; s < n; ++s) {
    const std::string name = n == 1 ? std::string("model.safetensors")
                                    : fmt::format("model-{:05d}-of-{:05d}.safetensors", s + 1, n);
    std::vector<const TensorRecord*> members;
    for (std::size_t i : plan.shards[s]) {
      members.push_back(&tensors[i]);
      weight_map[tensors[i].name] = name;
    }
    files.push_back(write_shard(out, name, src, members, copier));
  }
  if (n > 1) {
    nlohmann::json index = {{"metadata", {{"total_size", plan.total_size}}}, {"weight_map", weight_map}};
    // json.dumps(indent=2, sort_keys=True)
    write_small_file(fs::path(out) / "model.safetensors.index.json", index.dump(2, ' ', /*ensure_ascii=*/true) + "\n");
  }
  std::vector<std::string> copied;
  std::error_code ec;
  for (const char* extra : {"config.json", "generation_config.json"})
    if (fs::is_regular_file(src.folder / extra, ec)) {
      write_small_file(fs::path(out) / extra, io::read_file((src.folder / extra).string()));
      copied.emplace_back(extra);
    }
  return copied;
}

struct ShardReport {
  std::string order_note;
  std::uint64_t max_shard_size = 0;
  std::uint64_t total_size = 0;
  std::vector<ShardFile> files;
  std::vector<Dropped> dropped;
  std::size_t materialised = 0;
  std::vector<std::string> copied;
};

void print_report(const ShardArgs& args, const Source& src, const ShardReport& r) {
  if (args.json) {
    nlohmann::ordered_json j;
    j["output"] = args.output;
    j["source"] = src.kind;
    j["order"] = r.order_note;
    j["max_shard_size"] = r.max_shard_size;
    j["total_size"] = r.total_size;
    j["shards"] = nlohmann::ordered_json::array();
    for (const auto& f : r.files) j["shards"].push_back({{"file", f.name}, {"tensors", f.tensors}, {"bytes", f.bytes}});
    j["dropped_aliases"] = nlohmann::ordered_json::array();
    for (const auto& d : r.dropped) j["dropped_aliases"].push_back({{"name", d.name}, {"alias_of", d.alias_of}});
    j["materialised_non_contiguous"] = r.materialised;
    j["copied"] = r.copied;
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{} → {}: {} tensors in {} file(s), {} bytes of weights; {}\n", args.input, args.output,
             src.checkpoint.tensors.size(), r.files.size(), r.total_size, r.order_note);
  for (const auto& f : r.files) fmt::print("  {}: {} tensors, {} bytes\n", f.name, f.tensors, f.bytes);
  for (const auto& d : r.dropped)
    fmt::print("  dropped '{}': it views the same bytes as '{}' (a tied weight; transformers re-ties it)\n", d.name,
               d.alias_of);
  if (r.materialised) fmt::print("  {} non-contiguous tensors written in C order\n", r.materialised);
}

std::uint64_t max_shard_size(const ShardArgs& args) {
  const Result<std::uint64_t> max = plan::parse_size(args.max_shard_size);
  if (!max) throw CliError{kExitUsage, fmt::format("--max-shard-size: {}", max.error().message())};
  if (*max == 0) throw CliError{kExitUsage, "--max-shard-size must be more than 0 bytes"};
  return *max;
}

}  // namespace

int run_shard(const ShardArgs& args) {
  return guarded([&] {
    ShardReport r;
    r.max_shard_size = max_shard_size(args);
    if (args.order != "auto" && args.order != "config" && args.order != "checkpoint")
      throw CliError{kExitUsage, fmt::format("--order '{}': use auto, config or checkpoint", args.order)};
    std::error_code ec;
    const fs::path out_dir = fs::absolute(args.output, ec);
    if (fs::exists(out_dir, ec) && !(fs::is_directory(out_dir, ec) && fs::is_empty(out_dir, ec)))
      throw CliError{kExitUsage, fmt::format("{}: already exists; shard writes a new folder", args.output)};

    Source src = read_source(args.input);
    std::vector<TensorRecord>& tensors = src.checkpoint.tensors;
    r.order_note = "checkpoint order (the .bin's state dict)";
    if (src.kind == "safetensors" && args.order != "checkpoint")
      r.order_note = order_by_config(tensors, src.folder, args.order);
    else if (src.kind == "safetensors")
      r.order_note = "checkpoint order (as the files list them)";
    r.dropped = drop_aliases(tensors);
    for (const auto& t : tensors) r.materialised += !t.contiguous;
    const ShardPlan plan = plan_shards(tensors, r.max_shard_size);
    r.total_size = plan.total_size;

    // An empty folder at OUT (the one case accepted above) is replaced atomically.
    io::AtomicFolder out(out_dir.string());
    r.copied = write_folder(out.temp(), src, plan, r.files);
    out.commit();
    print_report(args, src, r);
    return int{kExitOk};
  });
}

}  // namespace memfit::cli
