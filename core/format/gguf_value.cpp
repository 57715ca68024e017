// GGUF values: type names, typed accessors, builders, and the header writer (tests, fuzzing).
#include <cstring>

#include <fmt/format.h>

#include "memfit/format/gguf.h"

namespace memfit::gguf {

std::string_view value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kUint8: return "uint8";
    case ValueType::kInt8: return "int8";
    case ValueType::kUint16: return "uint16";
    case ValueType::kInt16: return "int16";
    case ValueType::kUint32: return "uint32";
    case ValueType::kInt32: return "int32";
    case ValueType::kFloat32: return "float32";
    case ValueType::kBool: return "bool";
    case ValueType::kString: return "string";
    case ValueType::kArray: return "array";
    case ValueType::kUint64: return "uint64";
    case ValueType::kInt64: return "int64";
    case ValueType::kFloat64: return "float64";
  }
  return "unknown";
}

bool is_integer_type(ValueType t) {
  switch (t) {
    case ValueType::kUint8: case ValueType::kInt8: case ValueType::kUint16: case ValueType::kInt16:
    case ValueType::kUint32: case ValueType::kInt32: case ValueType::kUint64: case ValueType::kInt64:
      return true;
    default: return false;
  }
}

bool is_float_type(ValueType t) { return t == ValueType::kFloat32 || t == ValueType::kFloat64; }

bool is_signed(ValueType t) {
  return t == ValueType::kInt8 || t == ValueType::kInt16 || t == ValueType::kInt32 || t == ValueType::kInt64;
}

std::uint64_t value_type_width(ValueType t) {
  switch (t) {
    case ValueType::kUint8: case ValueType::kInt8: case ValueType::kBool: return 1;
    case ValueType::kUint16: case ValueType::kInt16: return 2;
    case ValueType::kUint32: case ValueType::kInt32: case ValueType::kFloat32: return 4;
    case ValueType::kUint64: case ValueType::kInt64: case ValueType::kFloat64: return 8;
    case ValueType::kString: case ValueType::kArray: return 0;
  }
  return 0;
}

namespace {

// Element k of a numeric array, as the scalar Value it would be.
Value element(const Value& a, std::uint64_t k) {
  Value v;
  v.type = a.elem;
  const std::uint64_t w = value_type_width(a.elem);
  const char* p = a.raw.data() + k * w;
  auto get = [&](auto x) { std::memcpy(&x, p, sizeof(x)); return x; };
  switch (a.elem) {
    case ValueType::kUint8: case ValueType::kBool: v.u = get(std::uint8_t{}); break;
    case ValueType::kUint16: v.u = get(std::uint16_t{}); break;
    case ValueType::kUint32: v.u = get(std::uint32_t{}); break;
    case ValueType::kUint64: v.u = get(std::uint64_t{}); break;
    case ValueType::kInt8: v.i = get(std::int8_t{}); break;
    case ValueType::kInt16: v.i = get(std::int16_t{}); break;
    case ValueType::kInt32: v.i = get(std::int32_t{}); break;
    case ValueType::kInt64: v.i = get(std::int64_t{}); break;
    case ValueType::kFloat32: v.f = get(float{}); break;
    case ValueType::kFloat64: v.f = get(double{}); break;
    case ValueType::kString: case ValueType::kArray: break;
  }
  return v;
}

bool numeric_array(const Value& a, std::uint64_t k) {
  return a.is_array() && value_type_width(a.elem) > 0 && k < a.count && a.raw.size() == a.count * value_type_width(a.elem);
}

}  // namespace

std::optional<std::int64_t> Value::as_int() const {
  if (is_signed(type)) return i;
  if (is_integer_type(type) || type == ValueType::kBool) {
    if (u > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<std::int64_t>(u);
  }
  return std::nullopt;
}

std::optional<double> Value::as_number() const {
  if (is_float_type(type)) return f;
  if (is_signed(type)) return static_cast<double>(i);
  if (is_integer_type(type) || type == ValueType::kBool) return static_cast<double>(u);
  return std::nullopt;
}

std::optional<std::int64_t> Value::int_at(std::uint64_t k) const {
  if (!numeric_array(*this, k)) return std::nullopt;
  return element(*this, k).as_int();
}

std::optional<double> Value::number_at(std::uint64_t k) const {
  if (!numeric_array(*this, k)) return std::nullopt;
  return element(*this, k).as_number();
}

const Value* File::find(std::string_view key) const {
  for (const auto& kv : metadata)
    if (kv.key == key) return &kv.value;
  return nullptr;
}

std::uint64_t File::tensor_bytes() const {
  std::uint64_t n = 0;
  for (const auto& t : tensors) n += t.nbytes;
  return n;
}

Value make_uint(ValueType t, std::uint64_t v) {
  Value out;
  out.type = t;
  out.u = v;
  return out;
}
Value make_int(ValueType t, std::int64_t v) {
  Value out;
  out.type = t;
  out.i = v;
  return out;
}
Value make_float(ValueType t, double v) {
  Value out;
  out.type = t;
  out.f = v;
  return out;
}
Value make_bool(bool v) { return make_uint(ValueType::kBool, v ? 1 : 0); }
Value make_string(std::string v) {
  Value out;
  out.type = ValueType::kString;
  out.text = std::move(v);
  return out;
}

namespace {

template <typename T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

void put_string(std::string& out, const std::string& s) {
  put<std::uint64_t>(out, s.size());
  out += s;
}

// The scalar's bytes (no type tag).
void put_scalar(std::string& out, const Value& v) {
  switch (v.type) {
    case ValueType::kUint8: case ValueType::kBool: put<std::uint8_t>(out, static_cast<std::uint8_t>(v.u)); break;
    case ValueType::kUint16: put<std::uint16_t>(out, static_cast<std::uint16_t>(v.u)); break;
    case ValueType::kUint32: put<std::uint32_t>(out, static_cast<std::uint32_t>(v.u)); break;
    case ValueType::kUint64: put<std::uint64_t>(out, v.u); break;
    case ValueType::kInt8: put<std::int8_t>(out, static_cast<std::int8_t>(v.i)); break;
    case ValueType::kInt16: put<std::int16_t>(out, static_cast<std::int16_t>(v.i)); break;
    case ValueType::kInt32: put<std::int32_t>(out, static_cast<std::int32_t>(v.i)); break;
    case ValueType::kInt64: put<std::int64_t>(out, v.i); break;
    case ValueType::kFloat32: put<float>(out, static_cast<float>(v.f)); break;
    case ValueType::kFloat64: put<double>(out, v.f); break;
    case ValueType::kString: put_string(out, v.text); break;
    case ValueType::kArray: break;
  }
}

void put_value(std::string& out, const Value& v) {
  if (!v.is_array()) return put_scalar(out, v);
  put<std::uint32_t>(out, static_cast<std::uint32_t>(v.elem));
  put<std::uint64_t>(out, v.count);
  if (v.elem == ValueType::kString)
    for (const auto& s : v.strings) put_string(out, s);
  else if (v.elem == ValueType::kArray)
    for (const auto& item : v.items) put_value(out, item);
  else
    out += v.raw;
}

}  // namespace

Value make_array(ValueType elem, const std::vector<Value>& elements) {
  Value out;
  out.type = ValueType::kArray;
  out.elem = elem;
  out.count = elements.size();
  for (const auto& e : elements) {
    if (elem == ValueType::kString) out.strings.push_back(e.text);
    else if (elem == ValueType::kArray) out.items.push_back(e);
    else put_scalar(out.raw, e);
  }
  return out;
}

std::string write_header(std::uint32_t version, const std::vector<KeyValue>& metadata,
                         const std::vector<TensorInfo>& tensors, std::uint64_t alignment) {
  std::string out = "GGUF";
  put<std::uint32_t>(out, version);
  put<std::int64_t>(out, static_cast<std::int64_t>(tensors.size()));
  put<std::int64_t>(out, static_cast<std::int64_t>(metadata.size()));
  for (const auto& kv : metadata) {
    put_string(out, kv.key);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(kv.value.type));
    put_value(out, kv.value);
  }
  for (const auto& t : tensors) {
    put_string(out, t.name);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(t.ne.size()));
    for (auto d : t.ne) put<std::int64_t>(out, d);
    put<std::uint32_t>(out, t.type);
    put<std::uint64_t>(out, t.offset);
  }
  if (!tensors.empty()) out.resize((out.size() + alignment - 1) / alignment * alignment, '\0');
  return out;
}

std::uint64_t layout(std::vector<TensorInfo>& tensors, std::uint64_t alignment) {
  std::uint64_t at = 0;
  for (auto& t : tensors) {
    const ggml::TypeTraits& tr = *ggml::type_traits(t.type);
    t.numel = 1;
    for (auto d : t.ne) t.numel *= static_cast<std::uint64_t>(d);
    const std::uint64_t ne0 = t.ne.empty() ? 1 : static_cast<std::uint64_t>(t.ne[0]);
    t.nbytes = ne0 / static_cast<std::uint64_t>(tr.block_size) * tr.type_size * (ne0 == 0 ? 0 : t.numel / ne0);
    t.offset = at;
    at = (at + t.nbytes + alignment - 1) / alignment * alignment;
  }
  return at;
}

}  // namespace memfit::gguf
