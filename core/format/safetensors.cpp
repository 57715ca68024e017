#include "memfit/format/safetensors.h"

#include <algorithm>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "memfit/format/strict_json.h"
#include "safetensors_fast.h"

namespace memfit::safetensors {
namespace {

[[noreturn]] void fail(ErrorCode code, std::string_view source, const std::string& msg) {
  throw Error(code, fmt::format("{}: {}", source, msg));
}

std::string shape_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// `name` and `what` only go into the message: nothing is formatted unless the check fails.
std::uint64_t as_u64(const Json& v, std::string_view source, std::string_view name,
                     std::string_view what, ErrorCode code) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return v.get<std::uint64_t>();
  fail(code, source,
       fmt::format("tensor '{}': {} must be a non-negative integer, got {}", name, what, v.dump()));
}

TensorEntry parse_entry(const std::string& name, const Json& v, std::string_view source) {
  // Built only for a message: a 1,000-tensor header must not format 1,000 strings to succeed.
  auto where = [&] { return fmt::format("tensor '{}'", name); };
  if (!v.is_object())
    fail(ErrorCode::kSafetensorsInvalidEntry, source,
         fmt::format("{}: expected an object with dtype, shape, data_offsets; got {}", where(),
                     v.type_name()));
  for (const auto& [k, _] : v.items())
    if (k != "dtype" && k != "shape" && k != "data_offsets")
      fail(ErrorCode::kSafetensorsInvalidEntry, source,
           fmt::format("{}: unexpected field '{}'", where(), k));
  for (const char* k : {"dtype", "shape", "data_offsets"})
    if (!v.contains(k))
      fail(ErrorCode::kSafetensorsInvalidEntry, source, fmt::format("{}: missing '{}'", where(), k));
  TensorEntry t;
  t.name = name;
  const Json& dt = v["dtype"];
  if (!dt.is_string())
    fail(ErrorCode::kSafetensorsInvalidEntry, source,
         fmt::format("{}: dtype must be a string, got {}", where(), dt.dump()));
  const auto dtype = dtype_from_safetensors(dt.get<std::string>());
  if (!dtype)
    fail(ErrorCode::kSafetensorsUnknownDtype, source,
         fmt::format("{}: unknown dtype '{}'", where(), dt.get<std::string>()));
  t.dtype = *dtype;
  const Json& shape = v["shape"];
  if (!shape.is_array())
    fail(ErrorCode::kSafetensorsInvalidShape, source,
         fmt::format("{}: shape must be a list of integers, got {}", where(), shape.dump()));
  std::uint64_t numel = 1;
  for (const auto& d : shape) {
    const std::uint64_t dim =
        as_u64(d, source, name, "each shape dimension", ErrorCode::kSafetensorsInvalidShape);
    if (dim > static_cast<std::uint64_t>(INT64_MAX) || __builtin_mul_overflow(numel, dim, &numel))
      fail(ErrorCode::kSafetensorsSizeOverflow, source,
           fmt::format("{}: the element count of shape {} overflows 64 bits", where(), shape.dump()));
    t.shape.push_back(static_cast<std::int64_t>(dim));
  }
  t.numel = numel;
  const Json& off = v["data_offsets"];
  if (!off.is_array() || off.size() != 2)
    fail(ErrorCode::kSafetensorsInvalidOffsets, source,
         fmt::format("{}: data_offsets must be [begin, end], got {}", where(), off.dump()));
  t.begin = as_u64(off[0], source, name, "data_offsets begin", ErrorCode::kSafetensorsInvalidOffsets);
  t.end = as_u64(off[1], source, name, "data_offsets end", ErrorCode::kSafetensorsInvalidOffsets);
  if (t.end < t.begin)
    fail(ErrorCode::kSafetensorsInvalidOffsets, source,
         fmt::format("{}: data_offsets [{}, {}] end before begin", where(), t.begin, t.end));
  std::uint64_t bits = 0;
  if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(dtype_bits(t.dtype)), &bits))
    fail(ErrorCode::kSafetensorsSizeOverflow, source,
         fmt::format("{}: {} elements of {} overflow 64 bits", where(), numel, dt.get<std::string>()));
  if (bits % 8 != 0)
    fail(ErrorCode::kSafetensorsMisalignedSize, source,
         fmt::format("{}: {} elements of {} ({} bits) do not end on a byte boundary", where(), numel,
                     dt.get<std::string>(), bits));
  if (t.end - t.begin != bits / 8)
    fail(ErrorCode::kSafetensorsSizeMismatch, source,
         fmt::format("{}: {} {} needs {} bytes, data_offsets [{}, {}] give {}", where(),
                     dt.get<std::string>(), shape_str(t.shape), bits / 8, t.begin, t.end,
                     t.end - t.begin));
  return t;
}

void parse_metadata(const Json& v, std::string_view source, Header& h) {
  if (!v.is_object())
    fail(ErrorCode::kSafetensorsInvalidMetadata, source,
         fmt::format("__metadata__ must be an object of strings, got {}", v.type_name()));
  for (const auto& [k, val] : v.items()) {
    if (!val.is_string())
      fail(ErrorCode::kSafetensorsInvalidMetadata, source,
           fmt::format("__metadata__['{}'] must be a string, got {}", k, val.dump()));
    h.metadata.emplace_back(k, val.get<std::string>());
  }
}

// Sorted by offset the tensors must tile [0, data_size) exactly.
void check_tiling(Header& h, std::string_view source) {
  std::vector<std::size_t> order(h.tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = h.tensors[a];
    const auto& y = h.tensors[b];
    return std::tie(x.begin, x.end) < std::tie(y.begin, y.end);
  });
  std::uint64_t expected = 0;
  const TensorEntry* prev = nullptr;
  for (std::size_t i : order) {
    const TensorEntry& t = h.tensors[i];
    if (t.begin > expected)
      fail(ErrorCode::kSafetensorsHole, source,
           prev ? fmt::format("{} unused bytes between tensor '{}' (ends at {}) and tensor '{}' "
                              "(begins at {})",
                              t.begin - expected, prev->name, expected, t.name, t.begin)
                : fmt::format("the first tensor '{}' begins at {}, expected 0", t.name, t.begin));
    if (t.begin < expected)
      fail(ErrorCode::kSafetensorsOverlap, source,
           fmt::format("tensor '{}' [{}, {}] overlaps tensor '{}', which ends at {}", t.name,
                       t.begin, t.end, prev->name, expected));
    expected = t.end;
    prev = &t;
  }
  h.data_size = expected;
}

// The tensors tile the data buffer, which fills the rest of the file when its size is known.
void check_layout(Header& h, std::optional<std::uint64_t> file_size, std::string_view source) {
  check_tiling(h, source);
  if (file_size && *file_size != h.file_size())
    fail(ErrorCode::kSafetensorsFileSizeMismatch, source,
         fmt::format("file is {} bytes; 8 + header {} + data {} = {}", *file_size, h.header_size,
                     h.data_size, h.file_size()));
}

}  // namespace

Result<std::uint64_t> read_header_size(std::string_view first_bytes, std::string_view source) {
  return capture([&]() -> std::uint64_t {
    if (first_bytes.size() < 8)
      fail(ErrorCode::kSafetensorsHeaderTooSmall, source,
           fmt::format("{} bytes; a safetensors file starts with an 8-byte header length",
                       first_bytes.size()));
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(first_bytes[i]);
    if (n > kMaxHeaderSize)
      fail(ErrorCode::kSafetensorsHeaderTooLarge, source,
           fmt::format("header length {} exceeds the format's limit of {} bytes", n,
                       kMaxHeaderSize));
    return n;
  });
}

Result<bool> check_header_start(std::string_view header_prefix, std::string_view source) {
  return capture([&]() -> bool {
    if (!header_prefix.empty() && header_prefix.front() != '{')
      fail(ErrorCode::kSafetensorsHeaderStart, source,
           fmt::format("the header must start with '{{', got byte 0x{:02x}",
                       static_cast<unsigned char>(header_prefix.front())));
    return true;
  });
}

Result<Header> parse_header(std::string_view header_json, std::optional<std::uint64_t> file_size,
                            std::string_view source) {
  return capture([&]() -> Header {
    Header h;
    h.header_size = header_json.size();
    if (header_json.size() > kMaxHeaderSize)
      fail(ErrorCode::kSafetensorsHeaderTooLarge, source,
           fmt::format("header of {} bytes exceeds {}", header_json.size(), kMaxHeaderSize));
    if (header_json.empty())
      fail(ErrorCode::kSafetensorsHeaderStart, source, "the header is empty; it must be a JSON object");
    if (auto start = check_header_start(header_json, source); !start) throw start.error();
    if (auto bad = invalid_utf8_at(header_json))
      fail(ErrorCode::kSafetensorsInvalidUtf8, source,
           fmt::format("the header is not valid UTF-8 (byte {} of the header)", *bad));
    if (auto fast = parse_header_fast(header_json)) {
      // The common case: a well-formed header, read without building a JSON tree.
      h.tensors = std::move(fast->tensors);
      h.metadata = std::move(fast->metadata);
      check_layout(h, file_size, source);
      return h;
    }
    // Anything unusual: the strict parser finds and names the problem.
    Json j;
    if (auto err = parse_strict_json(header_json, kMaxJsonDepth, &j)) {
      const ErrorCode code = err->kind == StrictJsonError::kDuplicateKey
                                 ? ErrorCode::kSafetensorsDuplicateName
                                 : ErrorCode::kSafetensorsInvalidJson;
      fail(code, source, fmt::format("header JSON: {}", err->detail));
    }
    if (!j.is_object())
      fail(ErrorCode::kSafetensorsInvalidJson, source,
           fmt::format("the header must be a JSON object, got {}", j.type_name()));
    h.tensors.reserve(j.size());
    for (const auto& [name, v] : j.items()) {
      if (name == "__metadata__") parse_metadata(v, source, h);
      else h.tensors.push_back(parse_entry(name, v, source));
    }
    check_layout(h, file_size, source);
    return h;
  });
}

Result<Header> parse(std::string_view bytes, std::optional<std::uint64_t> file_size,
                     std::string_view source) {
  auto n = read_header_size(bytes, source);
  if (!n) return n.error();
  if (bytes.size() - 8 < *n)
    return Error(ErrorCode::kSafetensorsHeaderTruncated,
                 fmt::format("{}: the header length says {} bytes, only {} follow", source, *n,
                             bytes.size() - 8));
  return parse_header(bytes.substr(8, *n), file_size, source);
}

std::vector<TensorEntry> layout(std::vector<TensorEntry> tensors) {
  std::uint64_t offset = 0;
  for (auto& t : tensors) {
    t.numel = 1;
    for (auto d : t.shape) t.numel *= static_cast<std::uint64_t>(d);
    t.begin = offset;
    t.end = offset + (t.numel * static_cast<std::uint64_t>(dtype_bits(t.dtype)) + 7) / 8;
    offset = t.end;
  }
  return tensors;
}

std::string write_header(const std::vector<TensorEntry>& tensors,
                         const std::vector<std::pair<std::string, std::string>>& metadata) {
  Json j = Json::object();
  if (!metadata.empty()) {
    Json m = Json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    j["__metadata__"] = m;
  }
  // Appended to the ordered object directly: its operator[] searches linearly, which made a
  // 90,000-tensor header quadratic. Names must be unique; a duplicate is a caller's bug.
  std::set<std::string_view> seen;
  auto& members = j.get_ref<Json::object_t&>();
  for (const auto& t : tensors) {
    if (!seen.insert(t.name).second)
      throw Error(ErrorCode::kInternal, fmt::format("write_header: tensor '{}' is given twice", t.name));
    members.Json::object_t::Container::emplace_back(
        t.name, Json{{"dtype", std::string(safetensors_name(t.dtype))},
                     {"shape", t.shape},
                     {"data_offsets", {t.begin, t.end}}});
  }
  std::string text = j.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + text;
}

}  // namespace memfit::safetensors
