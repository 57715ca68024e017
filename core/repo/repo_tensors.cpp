#include "repo_tensors.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "memfit/error.h"
#include "memfit/format/safetensors.h"
#include "memfit/memory/stored_form.h"
#include "memfit/format/checkpoint_index.h"
#include "memfit/report/convert_bytes.h"
#include "kinds.h"

namespace memfit::repo {

std::optional<DType> option_dtype(const RepoOptions& options) {
  if (options.dtype.empty()) return std::nullopt;
  auto dt = dtype_from_name(options.dtype);
  if (!dt || !is_floating(*dt))
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("dtype '{}' is not a floating dtype (float32, float16, bfloat16, …)", options.dtype));
  return dt;
}

std::uint64_t bytes_as(const SizedTensor& t, std::optional<DType> cast) {
  if (!cast || !is_floating(t.dtype)) return t.bytes;
  // numel is bounded by the header's checked byte size (at most 2^64 bits), so this cannot wrap
  // for any dtype of at most 64 bits.
  return t.numel / 8 * static_cast<std::uint64_t>(dtype_bits(*cast)) +
         t.numel % 8 * static_cast<std::uint64_t>(dtype_bits(*cast)) / 8;
}

safetensors::Header parsed_header(const RepoFiles& files, const std::string& key) {
  auto it = files.headers.find(key);
  if (it == files.headers.end())
    throw Error(ErrorCode::kRepoMissingFile,
                fmt::format("{}{}: its safetensors header was not read (it is needed to answer this repo)",
                            files.repo.empty() ? "" : files.repo + ": ", key));
  std::optional<std::uint64_t> size;
  if (auto s = files.sizes.find(key); s != files.sizes.end()) size = s->second;
  const std::string source = files.repo.empty() ? key : files.repo + ": " + key;
  auto header = safetensors::parse_header(it->second, size, source);
  if (!header) throw header.error();
  return std::move(header).value();
}

namespace {
void append_sized(std::vector<SizedTensor>& out, const safetensors::Header& header) {
  for (const auto& t : header.tensors) out.push_back({t.name, t.dtype, t.shape, t.numel, t.nbytes()});
}

// The index at `index_path`, parsed; throws its own error naming the file.
CheckpointIndex read_index(const RepoFiles& files, const std::string& index_path) {
  auto index = parse_index(text_of(files, index_path), index_path);
  if (!index) throw index.error();
  return std::move(index).value();
}

// A shard's path: beside its index.
std::string shard_path(const std::string& index_path, const std::string& shard) {
  return index_path.substr(0, index_path.rfind('/') + 1) + shard;
}
}  // namespace

std::vector<SizedTensor> header_tensors(const RepoFiles& files, const std::string& key) {
  const safetensors::Header header = parsed_header(files, key);
  std::vector<SizedTensor> out;
  out.reserve(header.tensors.size());
  append_sized(out, header);
  return out;
}

std::vector<SizedTensor> sized_tensors(const ShardHeaders& headers) {
  std::vector<SizedTensor> out;
  for (const auto& [file, h] : headers) append_sized(out, h);
  return out;
}

ShardHeaders index_headers(const RepoFiles& files, const std::string& index_path) {
  const CheckpointIndex index = read_index(files, index_path);
  ShardHeaders shards;
  for (const std::string& shard : index.shards) shards.emplace_back(shard, parsed_header(files, shard_path(index_path, shard)));
  const std::string source = files.repo.empty() ? index_path : files.repo + ": " + index_path;
  if (auto ok = check_index_against_shards(index, shards, source); !ok) throw ok.error();
  return shards;
}

std::vector<std::string> index_shard_paths(const RepoFiles& files, const std::string& index_path) {
  const CheckpointIndex index = read_index(files, index_path);
  std::vector<std::string> out;
  for (const auto& shard : index.shards) out.push_back(shard_path(index_path, shard));
  return out;
}

std::vector<SizedTensor> stored_tensors(const Model& model) {
  const ModelStoredForm form = stored_form(model);
  std::vector<SizedTensor> out;
  out.reserve(form.tensors.size());
  for (const auto& t : form.tensors) {
    std::uint64_t numel = 1;
    for (std::int64_t d : t.shape) numel *= static_cast<std::uint64_t>(d);  // the tree checked each product
    out.push_back({t.name, t.dtype, t.shape, numel, t.bytes});
  }
  return out;
}

TensorTotals totals(const std::vector<SizedTensor>& tensors, std::optional<DType> cast) {
  TensorTotals t;
  for (const auto& x : tensors) {
    if (is_floating(x.dtype)) t.parameters += x.numel;  // not saved buffers (position_ids)
    t.bytes += bytes_as(x, cast);
  }
  return t;
}

std::string dtype_summary(const std::vector<SizedTensor>& tensors, std::optional<DType> cast) {
  if (cast) return std::string(torch_name(*cast));
  std::map<DType, std::uint64_t> by;
  for (const auto& t : tensors) by[t.dtype] += t.bytes;
  std::vector<std::pair<DType, std::uint64_t>> order(by.begin(), by.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [dt, bytes] : order) out += (out.empty() ? "" : "+") + std::string(torch_name(dt));
  return out.empty() ? "-" : out;
}

std::string size_text(std::uint64_t bytes) { return convert_bytes(static_cast<double>(bytes), true); }

std::string generic_name(const std::string& name) {
  std::string out;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('.', start);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(start, end - start);
    const bool number = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (start) out += '.';
    out += number ? "*" : part;
    start = end + 1;
  }
  return out;
}

std::string join_path(const std::string& folder, const std::string& file) {
  if (folder.empty() || folder == ".") return file;
  return folder.back() == '/' ? folder + file : folder + "/" + file;
}

}  // namespace memfit::repo
