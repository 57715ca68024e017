#include "offload_folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "exit_codes.h"
#include "model_source.h"

namespace memfit::cli {
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

[[noreturn]] void raise_errno(const std::string& path, const char* what) {
  throw CliError{kExitFile, fmt::format("{}: cannot {} ({})", path, what, std::strerror(errno))};
}

void check_name(const std::string& name) {
  // The name becomes a file name inside the folder: it must not leave it or hide in it.
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos || name.size() + 4 > 255)
    throw CliError{kExitUsage, fmt::format("tensor '{}' cannot be offloaded: '{}.dat' is not a plain "
                                           "file name", name, name)};
}

void fsync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_WRONLY) | O_CLOEXEC);
  if (fd < 0) raise_errno(path, "open for fsync");
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  errno = err;
  if (rc != 0) raise_errno(path, "fsync");
}

class OutFile {
 public:
  explicit OutFile(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) raise_errno(path_, "create");
  }
  ~OutFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  OutFile(const OutFile&) = delete;
  OutFile& operator=(const OutFile&) = delete;
  void write(const void* data, std::size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd_, p, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) raise_errno(path_, "write");
      p += n;
      size -= static_cast<std::size_t>(n);
      written_ += static_cast<std::uint64_t>(n);
    }
  }
  void close(bool sync) {
    if (sync && ::fsync(fd_) != 0) raise_errno(path_, "fsync");
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) raise_errno(path_, "close");
  }
  std::uint64_t written() const { return written_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t written_ = 0;
};

std::string make_temp_dir(const fs::path& folder, const char* tag) {
  std::string tmpl = folder.string() + tag + "XXXXXX";
  if (!::mkdtemp(tmpl.data())) raise_errno(tmpl, "create a temporary folder");
  return tmpl;
}

// Puts `tmp` in place of `folder`: an atomic exchange when the kernel has one, else old aside,
// new in, old removed (a crash between the two renames leaves no `folder`, never a partial one).
void install(const std::string& tmp, const std::string& folder) {
  std::error_code ec;
  if (!fs::exists(folder, ec)) {
    if (::rename(tmp.c_str(), folder.c_str()) != 0) raise_errno(folder, "rename the new folder into place");
    return;
  }
#ifdef RENAME_EXCHANGE
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, folder.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(tmp, ec);  // now the old folder
    return;
  }
#endif
  const std::string old = make_temp_dir(fs::path(folder), ".old-");
  fs::remove(old, ec);
  if (::rename(folder.c_str(), old.c_str()) != 0) raise_errno(folder, "move the old folder aside");
  if (::rename(tmp.c_str(), folder.c_str()) != 0) raise_errno(folder, "rename the new folder into place");
  fs::remove_all(old, ec);
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
      throw CliError{kExitUsage, fmt::format("tensor '{}' is {}, which numpy (and so an Accelerate "
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
    text = read_file((dir / "index.json").string());
  } catch (const CliError&) {
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
  std::error_code ec;
  const fs::path target = fs::absolute(folder, ec);
  if (!target.parent_path().empty()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = make_temp_dir(target, ".tmp-");
  try {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const OffloadEntry& e = entries[i];
      const std::string path = (fs::path(tmp) / (e.name + ".dat")).string();
      OutFile out(path);
      produce(i, e, [&](const void* data, std::size_t size) { out.write(data, size); });
      if (out.written() != e.nbytes())
        throw CliError{kExitInvalidInput,
                       fmt::format("offloading '{}': {} bytes were produced; {} [{}] needs {}", e.name,
                                   out.written(), torch_name(e.dtype), fmt::join(e.shape, ", "), e.nbytes())};
      out.close(options.fsync);
      result.bytes_written += out.written();
    }
    OutFile index((fs::path(tmp) / "index.json").string());
    index.write(index_text.data(), index_text.size());
    index.close(options.fsync);
    if (options.fsync) fsync_path(tmp, true);
    install(tmp, target.string());
    if (options.fsync) fsync_path(target.parent_path().string(), true);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  return result;
}

std::vector<OffloadEntry> read_offload_index(const std::string& folder) {
  const std::string path = (fs::path(folder) / "index.json").string();
  const std::string text = read_file(path);
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw CliError{kExitInvalidInput, fmt::format("{}: not JSON ({})", path, e.what())};
  }
  if (!j.is_object()) throw CliError{kExitInvalidInput, fmt::format("{}: not a JSON object", path)};
  std::vector<OffloadEntry> out;
  for (const auto& [name, info] : j.items()) {
    if (info.is_object() && info.contains("safetensors_file"))
      throw CliError{kExitUnsupported, fmt::format("{}: '{}' points into a safetensors file, not a .dat "
                                                   "file", path, name)};
    if (!info.is_object() || !info.contains("dtype") || !info["dtype"].is_string() ||
        !info.contains("shape") || !info["shape"].is_array())
      throw CliError{kExitInvalidInput, fmt::format("{}: '{}' must be {{\"dtype\": str, \"shape\": [int, …]}}",
                                                    path, name)};
    OffloadEntry e;
    e.name = name;
    check_name(e.name);
    const auto dt = dtype_from_offload_name(info["dtype"].get<std::string>());
    if (!dt)
      throw CliError{kExitUnsupported, fmt::format("{}: '{}' has dtype '{}', which memfit does not know",
                                                   path, name, info["dtype"].get<std::string>())};
    e.dtype = *dt;
    for (const auto& d : info["shape"]) {
      if (!d.is_number_unsigned() || d.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
        throw CliError{kExitInvalidInput, fmt::format("{}: '{}' has a shape entry that is not a "
                                                      "non-negative integer", path, name)};
      e.shape.push_back(d.get<std::int64_t>());
    }
    out.push_back(std::move(e));
  }
  return out;
}

MappedFile map_offloaded(const std::string& folder, const OffloadEntry& entry) {
  check_name(entry.name);
  MappedFile f((fs::path(folder) / (entry.name + ".dat")).string());
  if (f.size() != entry.nbytes())
    throw CliError{kExitInvalidInput,
                   fmt::format("{}: {} bytes; '{}' ({} [{}]) needs {}", f.path(), f.size(), entry.name,
                               torch_name(entry.dtype), fmt::join(entry.shape, ", "), entry.nbytes())};
  return f;
}

}  // namespace memfit::cli
