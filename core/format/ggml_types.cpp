#include "memfit/format/ggml_types.h"

#include <algorithm>
#include <cctype>

namespace memfit::ggml {
namespace {

// QK_K = 256 (the K-, IQ- and TQ-quants' super-block). Bytes per block are ggml-common.h's
// static_asserts: e.g. block_q4_K = 2 × ggml_half + K_SCALE_SIZE (12) + QK_K / 2 = 144.
constexpr std::int64_t kQK = 256;

const std::vector<TypeTraits> kTypes = {
    {0, "f32", 1, 4, false},
    {1, "f16", 1, 2, false},
    {2, "q4_0", 32, 18, true},
    {3, "q4_1", 32, 20, true},
    {6, "q5_0", 32, 22, true},
    {7, "q5_1", 32, 24, true},
    {8, "q8_0", 32, 34, true},
    {9, "q8_1", 32, 36, true},
    {10, "q2_K", kQK, 84, true},
    {11, "q3_K", kQK, 110, true},
    {12, "q4_K", kQK, 144, true},
    {13, "q5_K", kQK, 176, true},
    {14, "q6_K", kQK, 210, true},
    {15, "q8_K", kQK, 292, true},
    {16, "iq2_xxs", kQK, 66, true},
    {17, "iq2_xs", kQK, 74, true},
    {18, "iq3_xxs", kQK, 98, true},
    {19, "iq1_s", kQK, 50, true},
    {20, "iq4_nl", 32, 18, true},
    {21, "iq3_s", kQK, 110, true},
    {22, "iq2_s", kQK, 82, true},
    {23, "iq4_xs", kQK, 136, true},
    {24, "i8", 1, 1, false},
    {25, "i16", 1, 2, false},
    {26, "i32", 1, 4, false},
    {27, "i64", 1, 8, false},
    {28, "f64", 1, 8, false},
    {29, "iq1_m", kQK, 56, true},
    {30, "bf16", 1, 2, false},
    {34, "tq1_0", kQK, 54, true},
    {35, "tq2_0", kQK, 66, true},
    {39, "mxfp4", 32, 17, true},   // one E8M0 scale + 16 bytes of E2M1 pairs
    {40, "nvfp4", 64, 36, true},   // four UE4M3 sub-block scales + 32 bytes of E2M1 pairs
    {41, "q1_0", 128, 18, true},   // one ggml_half scale + a sign bit per value
};

struct Removed {
  std::uint32_t id;
  std::string_view what;
};
constexpr Removed kRemoved[] = {
    {4, "Q4_2 (removed from ggml)"},
    {5, "Q4_3 (removed from ggml)"},
    {31, "Q4_0_4_4 (removed from GGUF files: use Q4_0 with runtime repacking)"},
    {32, "Q4_0_4_8 (removed from GGUF files: use Q4_0 with runtime repacking)"},
    {33, "Q4_0_8_8 (removed from GGUF files: use Q4_0 with runtime repacking)"},
    {36, "IQ4_NL_4_4 (removed from GGUF files: use IQ4_NL with runtime repacking)"},
    {37, "IQ4_NL_4_8 (removed from GGUF files: use IQ4_NL with runtime repacking)"},
    {38, "IQ4_NL_8_8 (removed from GGUF files: use IQ4_NL with runtime repacking)"},
};

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

const std::vector<TypeTraits>& all_types() { return kTypes; }

const TypeTraits* type_traits(std::uint32_t id) {
  for (const auto& t : kTypes)
    if (t.id == id) return &t;
  return nullptr;
}

std::optional<std::string_view> removed_type(std::uint32_t id) {
  for (const auto& r : kRemoved)
    if (r.id == id) return r.what;
  return std::nullopt;
}

const TypeTraits* type_by_name(std::string_view name) {
  for (const auto& t : kTypes)
    if (iequal(t.name, name)) return &t;
  return nullptr;
}

}  // namespace memfit::ggml
