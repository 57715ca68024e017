#include "offload_folder.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "atomic_write.h"
#include "failure.h"
#include "file_reader.h"

namespace memfit::checkpoint {
namespace fs = std::filesystem;
namespace {

// torch dtype → numpy's name, as `str(array.dtype)` prints it (offload_weight); bfloat16 is
// written under its own name with int16 bytes.
struct NumpyName {
  DType dtype;
  const char* name;
};
constexpr NumpyName kNumpyNames[] = {
    {DType::kF32, "float32"}, {DType::kF16, "float16"}, {DType::kF64, "float64"},
    {DType::kBF16, "bfloat16"}, {DType::kI64, "int64"}, {DType::kI32, "int32"},
    {DType::kI16, "int16"}, {DType::kI8, "int8"}, {DType::kU8, "uint8"}, {DType::kBool, "bool"},
    {DType::kC64, "complex64"}, {DType::kU16, "uint16"}, {DType::kU32, "uint32"}, {DType::kU64, "uint64"},
};

void check_name(const std::string& name) {
  // The name becomes a file name inside the folder: it must not leave it or hide in it.
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos || name.size() + 4 > 255)
    throw Failure{FailureKind::kUsage, fmt::format("tensor '{}' cannot be offloaded: '{}.dat' is not a plain "
                                           "file name", name, name)};
}

}  // namespace

std::uint64_t OffloadEntry::nbytes() const {
  // A product that overflows saturates: no file has that size, so it never matches.
  std::uint64_t n = static_cast<std::uint64_t>(dtype_bits(dtype) / 8);
  for (auto d : shape)
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n)) return UINT64_MAX;
  return n;
}

std::optional<std::string> offload_dtype_name(DType dt) {
  for (const auto& n : kNumpyNames)
    if (n.dtype == dt) return std::string(n.name);
  return std::nullopt;
}

std::optional<DType> dtype_from_offload_name(const std::string& name) {
  for (const auto& n : kNumpyNames)
    if (name == n.name) return n.dtype;
  return std::nullopt;
}

std::string offload_index_json(const std::vector<OffloadEntry>& entries) {
  nlohmann::ordered_json index = nlohmann::ordered_json::object();
  for (const auto& e : entries) {
    const auto dtype = offload_dtype_name(e.dtype);
    if (!dtype)
      throw Failure{FailureKind::kUsage, fmt::format("tensor '{}' is {}, which numpy (and so an Accelerate "
                                             "offload folder) cannot hold", e.name, torch_name(e.dtype))};
    index[e.name] = {{"dtype", *dtype}, {"shape", e.shape}};
  }
  // json.dump(indent=2): ensure_ascii, ", "/": " separators, no trailing newline
  return index.dump(2, ' ', /*ensure_ascii=*/true);
}

bool offload_folder_matches(const std::string& folder, const std::vector<OffloadEntry>& entries) {
  std::error_code ec;
  const fs::path dir(folder);
  if (!fs::is_regular_file(dir / "index.json", ec)) return false;
  std::string text;
  try {
    text = io::read_file((dir / "index.json").string());
  } catch (const Failure&) {
    return false;
  }
  if (text != offload_index_json(entries)) return false;
  for (const auto& e : entries) {
    const fs::path dat = dir / (e.name + ".dat");
    if (!fs::is_regular_file(dat, ec)) return false;
    if (fs::file_size(dat, ec) != e.nbytes() || ec) return false;
  }
  return true;
}

OffloadWriteResult write_offload_folder(const std::string& folder, const std::vector<OffloadEntry>& entries,
                                        const TensorProducer& produce, const OffloadWriteOptions& options) {
  for (const auto& e : entries) check_name(e.name);
  const std::string index_text = offload_index_json(entries);  // refuses numpy-less dtypes first
  OffloadWriteResult result;
  result.folder = folder;
  if (offload_folder_matches(folder, entries)) {
    result.reused = true;
    return result;
  }
  io::AtomicFolder out(folder);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const OffloadEntry& e = entries[i];
    io::OutputFile dat((fs::path(out.temp()) / (e.name + ".dat")).string());
    produce(i, e, [&](const void* data, std::size_t size) { dat.write(data, size); });
    if (dat.written() != e.nbytes())
      throw Failure{FailureKind::kInvalidInput,
                    fmt::format("offloading '{}': {} bytes were produced; {} [{}] needs {}", e.name,
                                dat.written(), torch_name(e.dtype), fmt::join(e.shape, ", "), e.nbytes())};
    dat.finish(options.fsync);
    result.bytes_written += dat.written();
  }
  io::OutputFile index((fs::path(out.temp()) / "index.json").string());
  index.write(index_text.data(), index_text.size());
  index.finish(options.fsync);
  out.commit(options.fsync);
  return result;
}

std::vector<OffloadEntry> read_offload_index(const std::string& folder) {
  const std::string path = (fs::path(folder) / "index.json").string();
  const std::string text = io::read_file(path);
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Failure{FailureKind::kInvalidInput, fmt::format("{}: not JSON ({})", path, e.what())};
  }
  if (!j.is_object()) throw Failure{FailureKind::kInvalidInput, fmt::format("{}: not a JSON object", path)};
  std::vector<OffloadEntry> out;
  for (const auto& [name, info] : j.items()) {
    if (info.is_object() && info.contains("safetensors_file"))
      throw Failure{FailureKind::kUnsupported, fmt::format("{}: '{}' points into a safetensors file, not a .dat "
                                                   "file", path, name)};
    if (!info.is_object() || !info.contains("dtype") || !info["dtype"].is_string() ||
        !info.contains("shape") || !info["shape"].is_array())
      throw Failure{FailureKind::kInvalidInput, fmt::format("{}: '{}' must be {{\"dtype\": str, \"shape\": [int, …]}}",
                                                    path, name)};
    OffloadEntry e;
    e.name = name;
    check_name(e.name);
    const auto dt = dtype_from_offload_name(info["dtype"].get<std::string>());
    if (!dt)
      throw Failure{FailureKind::kUnsupported, fmt::format("{}: '{}' has dtype '{}', which memfit does not know",
                                                   path, name, info["dtype"].get<std::string>())};
    e.dtype = *dt;
    for (const auto& d : info["shape"]) {
      if (!d.is_number_unsigned() || d.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
        throw Failure{FailureKind::kInvalidInput, fmt::format("{}: '{}' has a shape entry that is not a "
                                                      "non-negative integer", path, name)};
      e.shape.push_back(d.get<std::int64_t>());
    }
    out.push_back(std::move(e));
  }
  return out;
}

io::MappedFile map_offloaded(const std::string& folder, const OffloadEntry& entry) {
  check_name(entry.name);
  io::MappedFile f((fs::path(folder) / (entry.name + ".dat")).string());
  if (f.size() != entry.nbytes())
    throw Failure{FailureKind::kInvalidInput,
                   fmt::format("{}: {} bytes; '{}' ({} [{}]) needs {}", f.path(), f.size(), entry.name,
                               torch_name(entry.dtype), fmt::join(entry.shape, ", "), entry.nbytes())};
  return f;
}

}  // namespace memfit::checkpoint
