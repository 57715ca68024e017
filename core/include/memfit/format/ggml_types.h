// memfit/format/ggml_types.h — ggml's tensor types as GGUF files store them: the id, ggml's own
// name, the block size (values per block) and the bytes per block.
//
// Provenance: ggml-org/llama.cpp, ggml/include/ggml.h (enum ggml_type: the ids and the removed
// ones) and ggml/src/ggml.c (type_traits: blck_size, type_size = sizeof(block_*) from
// ggml-common.h). A tensor of ne0 × ne1 × ne2 × ne3 values takes
// ne0 / block_size × type_size × ne1 × ne2 × ne3 bytes, and ne0 must be a multiple of the block.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace memfit::ggml {

struct TypeTraits {
  std::uint32_t id = 0;
  std::string_view name;          // ggml's type_name: "f32", "q4_K", "iq2_xxs", "mxfp4"
  std::int64_t block_size = 1;    // values per block (1 for plain types)
  std::uint64_t type_size = 4;    // bytes per block
  bool quantized = false;
  double bits_per_value() const { return 8.0 * static_cast<double>(type_size) / static_cast<double>(block_size); }
};

// Every type ggml defines, in id order.
const std::vector<TypeTraits>& all_types();
// The traits of `id`, or nullptr when ggml defines no such type (or removed it).
const TypeTraits* type_traits(std::uint32_t id);
// For an id ggml removed (Q4_2, Q4_3, Q4_0_4_4, Q4_0_4_8, Q4_0_8_8, IQ4_NL_4_4/4_8/8_8): what it
// was and what replaces it; nullopt for any other id.
std::optional<std::string_view> removed_type(std::uint32_t id);
// By name, ASCII case-insensitive ("Q8_0", "q4_k", "f16"); nullptr when unknown.
const TypeTraits* type_by_name(std::string_view name);

}  // namespace memfit::ggml
