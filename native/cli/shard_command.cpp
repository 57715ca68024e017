#include "shard_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bin_checkpoint.h"
#include "checkpoint_reader.h"
#include "exit_codes.h"
#include "file_reader.h"
#include "mapped_file.h"
#include "memfit/format/safetensors.h"
#include "memfit/memory/estimate.h"
#include "memfit/plan/device.h"
#include "model_source.h"

namespace memfit::cli {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kChunk = 8u << 20;  // bytes copied per read/write: the memory bound

// One tensor to write, wherever its bytes are.
struct SourceTensor {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  std::string file;                  // path of the file holding the bytes
  std::uint64_t data_offset = 0;     // absolute offset of the first element
  std::uint64_t nbytes = 0;          // contiguous size
  bool contiguous = true;
  std::vector<std::int64_t> stride;  // elements (non-contiguous .bin views)
  std::string storage;               // "file|key" for .bin (alias detection), "" for safetensors
  std::uint64_t storage_offset = 0;
};

struct Source {
  std::vector<SourceTensor> tensors;  // checkpoint order
  fs::path folder;                    // where config.json would be
  std::string kind;                   // "safetensors" | "bin"
};

[[noreturn]] void raise(const Error& e) { throw CliError{exit_code_for(e.code()), e.message()}; }
[[noreturn]] void raise_errno(const std::string& path, const char* what) {
  throw CliError{kExitFile, fmt::format("{}: cannot {} ({})", path, what, std::strerror(errno))};
}

Source read_source(const std::string& input) {
  std::error_code ec;
  if (!fs::exists(input, ec)) throw CliError{kExitFile, fmt::format("{}: no such file or folder", input)};
  Source src;
  src.folder = fs::is_directory(input, ec) ? fs::path(input) : fs::path(input).parent_path();
  if (is_bin_checkpoint_path(input)) {
    src.kind = "bin";
    const BinCheckpoint ck = read_bin_checkpoint(input);
    for (const auto& t : ck.tensors) {
      SourceTensor s;
      s.name = t.name;
      s.dtype = t.dtype;
      s.shape = t.shape;
      s.file = t.file;
      s.data_offset = t.data_offset;
      s.nbytes = t.nbytes;
      s.contiguous = t.contiguous;
      s.stride = t.stride;
      s.storage = t.file + "|" + t.storage_key;
      s.storage_offset = t.storage_offset;
      src.tensors.push_back(std::move(s));
    }
    return src;
  }
  src.kind = "safetensors";
  const Checkpoint ck = read_local_checkpoint(input);
  for (const auto& w : ck.warnings) fmt::print(stderr, "memfit: warning: {}\n", w);
  const fs::path base = fs::is_directory(input, ec) ? fs::path(input) : fs::path(input).parent_path();
  for (const auto& [file, header] : ck.files) {
    const std::string path = ck.files.size() == 1 && !ck.index && !fs::is_directory(input, ec)
                                 ? input : (base / file).string();
    for (const auto& t : header.tensors) {
      SourceTensor s;
      s.name = t.name;
      s.dtype = t.dtype;
      s.shape = t.shape;
      s.file = path;
      s.data_offset = header.data_start() + t.begin;
      s.nbytes = t.nbytes();
      src.tensors.push_back(std::move(s));
    }
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
std::string order_by_config(std::vector<SourceTensor>& tensors, const fs::path& folder, const std::string& mode) {
  std::error_code ec;
  const fs::path config = folder / "config.json";
  if (!fs::is_regular_file(config, ec)) {
    if (mode == "config")
      throw CliError{kExitFile, fmt::format("--order config: no config.json in {}", folder.string())};
    return "checkpoint order (no config.json beside the checkpoint)";
  }
  EstimateRequest req;
  req.config_text = read_file(config.string());
  req.name = folder.string();
  const Result<Model> model = build_model(std::move(req));
  if (!model) {
    if (mode == "config") raise(model.error());
    return fmt::format("checkpoint order (config.json gives no model: {})", model.error().message());
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
  std::stable_sort(tensors.begin(), tensors.end(), [&](const SourceTensor& a, const SourceTensor& b) {
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
std::vector<Dropped> drop_aliases(std::vector<SourceTensor>& tensors) {
  std::vector<Dropped> dropped;
  std::map<std::string, std::string> first;  // view key → first name
  std::vector<SourceTensor> kept;
  for (auto& t : tensors) {
    if (!t.storage.empty()) {
      const std::string key = tensor_view_key(t.storage, t.storage_offset, t.shape, t.stride, t.dtype);
      const auto [it, fresh] = first.emplace(key, t.name);
      if (!fresh) {
        dropped.push_back({t.name, it->second});
        continue;
      }
    }
    kept.push_back(std::move(t));
  }
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

ShardPlan plan_shards(const std::vector<SourceTensor>& tensors, std::uint64_t max_bytes) {
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

class Writer {
 public:
  explicit Writer(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) raise_errno(path, "create");
  }
  ~Writer() {
    if (fd_ >= 0) ::close(fd_);
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  void write(const char* p, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) raise_errno(path_, "write");
      p += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  void finish() {
    if (::fsync(fd_) != 0) raise_errno(path_, "fsync");
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) raise_errno(path_, "close");
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// Streams one tensor's bytes in C order into `out`, at most kChunk at a time.
class TensorCopier {
 public:
  void copy(const SourceTensor& t, Writer& out) {
    if (t.contiguous) {
      FileReader& in = reader(t.file);
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
    MappedFile& map = mapping(t.file);
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
  FileReader& reader(const std::string& path) {
    auto& r = readers_[path];
    if (!r) r = std::make_unique<FileReader>(path);
    return *r;
  }
  MappedFile& mapping(const std::string& path) {
    auto& m = maps_[path];
    if (!m) m = std::make_unique<MappedFile>(path);
    return *m;
  }
  std::map<std::string, std::unique_ptr<FileReader>> readers_;
  std::map<std::string, std::unique_ptr<MappedFile>> maps_;
  std::string buffer_;
};

struct ShardFile {
  std::string name;
  std::size_t tensors = 0;
  std::uint64_t bytes = 0;
};

ShardFile write_shard(const fs::path& dir, const std::string& name, std::vector<const SourceTensor*> tensors,
                      TensorCopier& copier) {
  // safetensors' layout: dtype descending, then name (byte order)
  std::sort(tensors.begin(), tensors.end(), [](const SourceTensor* a, const SourceTensor* b) {
    if (a->dtype != b->dtype) return static_cast<int>(a->dtype) > static_cast<int>(b->dtype);
    return a->name < b->name;
  });
  std::vector<safetensors::TensorEntry> entries;
  for (const SourceTensor* t : tensors) {
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
  Writer out(path.string());
  out.write(header.data(), header.size());
  ShardFile shard{name, tensors.size(), header.size()};
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (entries[i].nbytes() != tensors[i]->nbytes)
      throw CliError{kExitInternal, fmt::format("tensor '{}': {} bytes laid out, {} to copy", tensors[i]->name,
                                                entries[i].nbytes(), tensors[i]->nbytes)};
    copier.copy(*tensors[i], out);
    shard.bytes += tensors[i]->nbytes;
  }
  out.finish();
  return shard;
}

void copy_small_file(const fs::path& from, const fs::path& to) {
  const std::string text = read_file(from.string());
  Writer out(to.string());
  out.write(text.data(), text.size());
  out.finish();
}

void fsync_dir(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the data files themselves were synced
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

int run_shard(const ShardArgs& args) {
  std::string tmp;
  try {
    const Result<std::uint64_t> max = plan::parse_size(args.max_shard_size);
    if (!max) throw CliError{kExitUsage, fmt::format("--max-shard-size: {}", max.error().message())};
    if (*max == 0) throw CliError{kExitUsage, "--max-shard-size must be more than 0 bytes"};
    if (args.order != "auto" && args.order != "config" && args.order != "checkpoint")
      throw CliError{kExitUsage, fmt::format("--order '{}': use auto, config or checkpoint", args.order)};
    std::error_code ec;
    const fs::path out_dir = fs::absolute(args.output, ec);
    if (fs::exists(out_dir, ec) && !(fs::is_directory(out_dir, ec) && fs::is_empty(out_dir, ec)))
      throw CliError{kExitUsage, fmt::format("{}: already exists; shard writes a new folder", args.output)};

    Source src = read_source(args.input);
    std::string order_note = "checkpoint order (the .bin's state dict)";
    if (src.kind == "safetensors" && args.order != "checkpoint")
      order_note = order_by_config(src.tensors, src.folder, args.order);
    else if (src.kind == "safetensors")
      order_note = "checkpoint order (as the files list them)";
    const std::vector<Dropped> dropped = drop_aliases(src.tensors);
    std::size_t materialised = 0;
    for (const auto& t : src.tensors) materialised += !t.contiguous;
    const ShardPlan plan = plan_shards(src.tensors, *max);

    if (!out_dir.parent_path().empty()) fs::create_directories(out_dir.parent_path(), ec);
    std::string tmpl = out_dir.string() + ".tmp-XXXXXX";
    if (!::mkdtemp(tmpl.data())) raise_errno(tmpl, "create a temporary folder");
    tmp = tmpl;

    TensorCopier copier;
    std::vector<ShardFile> files;
    nlohmann::json weight_map = nlohmann::json::object();  // std::map: sorted keys
    const std::size_t n = plan.shards.size();
    for (std::size_t s = 0; s < n; ++s) {
      const std::string name = n == 1 ? std::string("model.safetensors")
                                      : fmt::format("model-{:05d}-of-{:05d}.safetensors", s + 1, n);
      std::vector<const SourceTensor*> members;
      for (std::size_t i : plan.shards[s]) {
        members.push_back(&src.tensors[i]);
        weight_map[src.tensors[i].name] = name;
      }
      files.push_back(write_shard(tmp, name, members, copier));
    }
    if (n > 1) {
      nlohmann::json index = {{"metadata", {{"total_size", plan.total_size}}}, {"weight_map", weight_map}};
      const std::string text = index.dump(2, ' ', /*ensure_ascii=*/true) + "\n";  // json.dumps(indent=2, sort_keys=True)
      Writer w((fs::path(tmp) / "model.safetensors.index.json").string());
      w.write(text.data(), text.size());
      w.finish();
    }
    std::vector<std::string> copied;
    for (const char* extra : {"config.json", "generation_config.json"})
      if (fs::is_regular_file(src.folder / extra, ec)) {
        copy_small_file(src.folder / extra, fs::path(tmp) / extra);
        copied.emplace_back(extra);
      }
    fsync_dir(tmp);
    // rename(2) replaces an empty folder (the one case accepted above) atomically
    if (::rename(tmp.c_str(), out_dir.c_str()) != 0) raise_errno(out_dir.string(), "rename the new folder into place");
    tmp.clear();
    fsync_dir(out_dir.parent_path().string());

    if (args.json) {
      nlohmann::ordered_json j;
      j["output"] = args.output;
      j["source"] = src.kind;
      j["order"] = order_note;
      j["max_shard_size"] = *max;
      j["total_size"] = plan.total_size;
      j["shards"] = nlohmann::ordered_json::array();
      for (const auto& f : files) j["shards"].push_back({{"file", f.name}, {"tensors", f.tensors}, {"bytes", f.bytes}});
      j["dropped_aliases"] = nlohmann::ordered_json::array();
      for (const auto& d : dropped) j["dropped_aliases"].push_back({{"name", d.name}, {"alias_of", d.alias_of}});
      j["materialised_non_contiguous"] = materialised;
      j["copied"] = copied;
      fmt::print("{}\n", j.dump(2));
    } else {
      fmt::print("{} → {}: {} tensors in {} file(s), {} bytes of weights; {}\n", args.input, args.output,
                 src.tensors.size(), files.size(), plan.total_size, order_note);
      for (const auto& f : files) fmt::print("  {}: {} tensors, {} bytes\n", f.name, f.tensors, f.bytes);
      for (const auto& d : dropped)
        fmt::print("  dropped '{}': it views the same bytes as '{}' (a tied weight; transformers re-ties it)\n", d.name,
                   d.alias_of);
      if (materialised) fmt::print("  {} non-contiguous tensors written in C order\n", materialised);
    }
    return kExitOk;
  } catch (const CliError& e) {
    std::error_code ec;
    if (!tmp.empty()) fs::remove_all(tmp, ec);
    fmt::print(stderr, "memfit: error: {}\n", e.message);
    return e.exit_code;
  } catch (const Error& e) {
    std::error_code ec;
    if (!tmp.empty()) fs::remove_all(tmp, ec);
    fmt::print(stderr, "memfit: error: {}\n", e.message());
    return exit_code_for(e.code());
  } catch (const std::exception& e) {
    std::error_code ec;
    if (!tmp.empty()) fs::remove_all(tmp, ec);
    fmt::print(stderr, "memfit: error: {}\n", e.what());
    return kExitInternal;
  }
}

}  // namespace memfit::cli
