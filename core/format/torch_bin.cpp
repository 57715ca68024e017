#include "memfit/format/torch_bin.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "memfit/format/torch_pickle.h"

namespace memfit::torch_bin {
namespace {

[[noreturn]] void fail(ErrorCode code, std::string message) { throw Error(code, std::move(message)); }

template <typename T>
T value_or_throw(Result<T> r) {
  if (!r) throw r.error();
  return std::move(r).value();
}

// The one `<stem>/data.pkl` at the archive's top level names the stem.
std::string find_stem(const zip::Archive& a) {
  std::string stem;
  int found = 0;
  for (const auto& e : a.entries) {
    const std::size_t slash = e.name.find('/');
    if (slash == std::string::npos || slash == 0 || e.name.compare(slash, std::string::npos, "/data.pkl") != 0)
      continue;
    if (found++ == 0) stem = e.name.substr(0, slash);
    else
      fail(ErrorCode::kTorchBinNoDataPkl,
           fmt::format("{}: two pickles ('{}/data.pkl' and '{}'); a torch.save archive has one",
                       a.name, stem, e.name));
  }
  if (found == 0)
    fail(ErrorCode::kTorchBinNoDataPkl,
         fmt::format("{}: a zip archive without a '<name>/data.pkl' entry: not a torch.save checkpoint",
                     a.name));
  return stem;
}

// `read_dir` is zip::read_archive (every entry located) or zip::read_directory (none).
zip::Archive open_archive(const zip::ByteSource& src,
                          Result<zip::Archive> (*read_dir)(const zip::ByteSource&)) {
  Result<zip::Archive> a = read_dir(src);
  if (a) return std::move(a).value();
  const ErrorCode c = a.error().code();
  if (c != ErrorCode::kZipNoEndOfCentralDirectory && c != ErrorCode::kZipTooSmall) throw a.error();
  // Say what it probably is: the legacy torch.save format is a bare pickle stream (0x80 PROTO).
  std::string first;
  if (src.size > 0)
    if (Result<std::string> r = src.read(0, 1); r && !r->empty()) first = *r;
  fail(ErrorCode::kTorchBinNotZip,
       fmt::format("{}: not a zip archive{}; memfit reads the zip format torch.save writes since "
                   "torch 1.6 (re-save it with a current torch, or convert it to safetensors)",
                   src.name,
                   !first.empty() && static_cast<unsigned char>(first[0]) == 0x80
                       ? " (it looks like the legacy pickle-stream torch.save format)" : ""));
}

}  // namespace

std::optional<std::uint64_t> span_elements(const Shape& shape, const std::vector<std::int64_t>& stride) {
  std::uint64_t last = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return 0;
  }
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const auto size = static_cast<std::uint64_t>(shape[d]);
    const auto st = static_cast<std::uint64_t>(stride[d]);
    std::uint64_t reach = 0;
    if (__builtin_mul_overflow(size - 1, st, &reach) || __builtin_add_overflow(last, reach, &last))
      return std::nullopt;
  }
  if (last == UINT64_MAX) return std::nullopt;
  return last + 1;
}

bool is_contiguous(const Shape& shape, const std::vector<std::int64_t>& stride) {
  std::int64_t expected = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) return true;
    if (shape[d] != 1 && stride[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

namespace {

// data.pkl (and byteorder, when present) of an archive whose entries they name are located.
torch_pickle::StateDict read_state_dict(const zip::ByteSource& source, const zip::Archive& archive,
                                        const std::string& stem) {
  const std::string pkl_name = stem + "/data.pkl";
  const zip::Entry* pkl = archive.find(pkl_name);  // find_stem found it
  const std::string pickle = value_or_throw(zip::read_entry(source, archive, *pkl, kMaxPickleSize));
  if (const zip::Entry* bo = archive.find(stem + "/byteorder")) {
    const std::string order = value_or_throw(zip::read_entry(source, archive, *bo, 64));
    if (order != "little")
      fail(ErrorCode::kInvalidValue,
           fmt::format("{}: byteorder '{}': only little-endian checkpoints are supported",
                       source.name, order));
  }
  return value_or_throw(torch_pickle::load_state_dict(pickle, source.name + "/" + pkl_name));
}

struct Placed {
  std::uint64_t offset, nbytes;  // offset 0: the entry was not located
};

// Each storage → its entry, checked once: present, STORED, exactly numel × element size bytes.
std::unordered_map<std::string, Placed> place_storages(const zip::ByteSource& source,
                                                      const zip::Archive& archive,
                                                      const std::string& stem,
                                                      const torch_pickle::StateDict& sd) {
  std::unordered_map<std::string, Placed> placed;
  for (const auto& st : sd.storages) {
    const std::string entry_name = stem + "/data/" + st.key;
    const zip::Entry* e = archive.find(entry_name);
    if (!e)
      fail(ErrorCode::kTorchBinMissingStorage,
           fmt::format("{}: storage '{}' ({} × {}) has no entry '{}' in the archive",
                       source.name, st.key, st.numel, torch_name(st.dtype), entry_name));
    value_or_throw(zip::check_stored(archive, *e));
    const std::uint64_t elem = static_cast<std::uint64_t>(dtype_bits(st.dtype) / 8);
    std::uint64_t want = 0;
    if (__builtin_mul_overflow(st.numel, elem, &want) || e->uncompressed_size != want)
      fail(ErrorCode::kTorchBinStorageSizeMismatch,
           fmt::format("{}: storage '{}' declares {} × {} = {} bytes; its entry '{}' holds {}",
                       source.name, st.key, st.numel, torch_name(st.dtype),
                       want == 0 && st.numel != 0 ? std::string("overflowing") : std::to_string(want),
                       entry_name, e->uncompressed_size));
    placed.emplace(st.key, Placed{e->data_offset, e->uncompressed_size});
  }
  return placed;
}

// The state dict's tensors resolved against the storage entries of the archive. `located`: the
// storage entries' local headers were read, so absolute offsets are known (else they stay 0).
Checkpoint resolve(const zip::ByteSource& source, const zip::Archive& archive, std::string stem,
                   const torch_pickle::StateDict& sd, bool located) {
  Checkpoint ck;
  ck.stem = std::move(stem);
  ck.located = located;
  ck.ordered_dict = sd.ordered_dict;
  ck.storages = sd.storages.size();
  const std::unordered_map<std::string, Placed> placed = place_storages(source, archive, ck.stem, sd);
  for (const auto& r : sd.tensors) {
    Tensor t;
    t.name = r.name;
    t.dtype = r.dtype;
    t.shape = r.shape;
    t.stride = r.stride;
    t.storage_key = r.storage_key;
    t.storage_offset = r.storage_offset;
    const Placed& p = placed.at(r.storage_key);
    t.storage_file_offset = located ? p.offset : 0;
    t.storage_nbytes = p.nbytes;
    const std::uint64_t elem = static_cast<std::uint64_t>(dtype_bits(r.dtype) / 8);
    const std::optional<std::uint64_t> span = span_elements(r.shape, r.stride);
    std::uint64_t numel = 1;
    for (auto d : r.shape)
      if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(d), &numel))
        fail(ErrorCode::kTorchBinTensorOutOfStorage,
             fmt::format("{}: tensor '{}': its shape overflows 64 bits", source.name, r.name));
    const std::string shape_text = fmt::format("[{}]", fmt::join(r.shape, ", "));
    const std::string stride_text = fmt::format("[{}]", fmt::join(r.stride, ", "));
    // The view [offset, offset + span) must lie inside the storage's numel elements.
    if (!span || r.storage_offset > r.storage_numel || *span > r.storage_numel - r.storage_offset)
      fail(ErrorCode::kTorchBinTensorOutOfStorage,
           fmt::format("{}: tensor '{}' (shape {}, stride {}, offset {}) needs {} elements of "
                       "storage '{}', which has {}", source.name, r.name, shape_text, stride_text,
                       r.storage_offset,
                       span ? fmt::format("{}", r.storage_offset + *span) : std::string("more than 2^64"),
                       r.storage_key, r.storage_numel));
    t.numel = numel;
    // numel can exceed the span (stride 0 repeats elements), so this product is checked too.
    if (__builtin_mul_overflow(numel, elem, &t.nbytes))
      fail(ErrorCode::kTorchBinTensorOutOfStorage,
           fmt::format("{}: tensor '{}': {} elements of {} bytes overflow 64 bits", source.name,
                       r.name, numel, elem));
    t.span_bytes = *span * elem;
    t.data_offset = located ? p.offset + r.storage_offset * elem : 0;
    t.contiguous = is_contiguous(r.shape, r.stride);
    ck.tensors.push_back(std::move(t));
  }
  return ck;
}

// Locates a metadata entry, and checks that its data ends before the next entry begins (the
// check read_archive makes for every entry, made here for the entries that are read).
void locate_metadata_entry(const zip::ByteSource& source, zip::Archive& archive, zip::Entry& en) {
  value_or_throw(zip::locate(source, archive, en));
  const std::uint64_t end = zip::entry_extent(archive, en).second;
  if (en.data_offset > end || en.compressed_size > end - en.data_offset)
    fail(ErrorCode::kZipEntryOverlap,
         fmt::format("{}: entry '{}': its {} bytes of data at offset {} run into the next entry at {}",
                     source.name, en.name, en.compressed_size, en.data_offset, end));
}

}  // namespace

Result<Checkpoint> read(const zip::ByteSource& source) {
  return capture([&] {
    const zip::Archive archive = open_archive(source, zip::read_archive);
    std::string stem = find_stem(archive);
    const torch_pickle::StateDict sd = read_state_dict(source, archive, stem);
    return resolve(source, archive, std::move(stem), sd, true);
  });
}

Result<std::vector<std::string>> metadata_entries(const zip::Archive& archive) {
  return capture([&] {
    const std::string stem = find_stem(archive);
    std::vector<std::string> names{stem + "/data.pkl"};
    if (archive.find(stem + "/byteorder")) names.push_back(stem + "/byteorder");
    return names;
  });
}

Result<Checkpoint> read_metadata(const zip::ByteSource& source) {
  return capture([&] {
    zip::Archive archive = open_archive(source, zip::read_directory);
    std::string stem = find_stem(archive);
    const std::vector<std::string> names = value_or_throw(metadata_entries(archive));
    for (auto& en : archive.entries)
      if (std::find(names.begin(), names.end(), en.name) != names.end())
        locate_metadata_entry(source, archive, en);
    const torch_pickle::StateDict sd = read_state_dict(source, archive, stem);
    return resolve(source, archive, std::move(stem), sd, false);
  });
}

}  // namespace memfit::torch_bin
