// memfit/memory/options.h — the vocabularies of the run options (engine, KV cache dtype,
// attention kernels, weights dtype, training method, optimizer), each one enum with ONE name
// table, and the defaults of every run option. The CLI's flag help and checks, the JSON API's
// fields and the reports' names all come from here (plan/strategy.h does the same for maps).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "memfit/model/dtype.h"
#include "memfit/name_table.h"

namespace memfit {

enum class Engine : std::uint8_t { kTransformers, kVllm, kLlamaCpp };
inline constexpr NameRow<Engine> kEngineNames[] = {
    {"transformers", Engine::kTransformers}, {"hf", Engine::kTransformers, true},
    {"vllm", Engine::kVllm},
    {"llama.cpp", Engine::kLlamaCpp},       {"llamacpp", Engine::kLlamaCpp, true},
    {"llama-cpp", Engine::kLlamaCpp, true},
};

enum class KvDtype : std::uint8_t { kF32, kF16, kBF16, kF8, kI8 };
inline constexpr NameRow<KvDtype> kKvDtypeNames[] = {
    {"float32", KvDtype::kF32},  {"fp32", KvDtype::kF32, true},     {"f32", KvDtype::kF32, true},
    {"float16", KvDtype::kF16},  {"fp16", KvDtype::kF16, true},     {"f16", KvDtype::kF16, true},
    {"half", KvDtype::kF16, true},
    {"bfloat16", KvDtype::kBF16}, {"bf16", KvDtype::kBF16, true},
    {"float8", KvDtype::kF8},    {"fp8", KvDtype::kF8, true},       {"fp8_e4m3", KvDtype::kF8, true},
    {"fp8_e5m2", KvDtype::kF8, true},
    {"int8", KvDtype::kI8},      {"q8_0", KvDtype::kI8, true},  // llama.cpp's int8 cache is q8_0
};

enum class AttentionImpl : std::uint8_t { kSdpa, kEager };  // sdpa: flash / memory-efficient kernels
inline constexpr NameRow<AttentionImpl> kAttentionNames[] = {
    {"sdpa", AttentionImpl::kSdpa}, {"flash", AttentionImpl::kSdpa, true},
    {"flash_attention_2", AttentionImpl::kSdpa, true},
    {"eager", AttentionImpl::kEager},
};

enum class TrainMethod : std::uint8_t { kFull, kLora, kQlora };
inline constexpr NameRow<TrainMethod> kTrainMethodNames[] = {
    {"full", TrainMethod::kFull}, {"lora", TrainMethod::kLora}, {"qlora", TrainMethod::kQlora}};

enum class Optimizer : std::uint8_t { kAdamW, kAdamW8bit, kAdafactor, kSgd };
inline constexpr NameRow<Optimizer> kOptimizerNames[] = {
    {"adamw", Optimizer::kAdamW},          {"adam", Optimizer::kAdamW, true},
    {"adamw_torch", Optimizer::kAdamW, true},
    {"adamw8bit", Optimizer::kAdamW8bit},  {"adamw_8bit", Optimizer::kAdamW8bit, true},
    {"adamw_bnb_8bit", Optimizer::kAdamW8bit, true}, {"paged_adamw_8bit", Optimizer::kAdamW8bit, true},
    {"adafactor", Optimizer::kAdafactor},
    {"sgd", Optimizer::kSgd},
};

// Weights loaded quantized: bitsandbytes (int8 = LLM.int8; int4, nf4 = NF4; fp4), fp8, and
// GGUF's q8_0 / q4_0 (with llama.cpp, int8 / int4 mean those).
enum class WeightQuant : std::uint8_t { kInt8, kInt4, kNf4, kFp4, kFp8, kQ8_0, kQ4_0 };
inline constexpr NameRow<WeightQuant> kWeightQuantNames[] = {
    {"int8", WeightQuant::kInt8}, {"int4", WeightQuant::kInt4}, {"nf4", WeightQuant::kNf4},
    {"fp4", WeightQuant::kFp4},   {"fp8", WeightQuant::kFp8},   {"float8", WeightQuant::kFp8, true},
    {"q8_0", WeightQuant::kQ8_0}, {"q4_0", WeightQuant::kQ4_0},
};
// The floating dtypes listed for the weights (any floating dtype_from_name() name is accepted).
inline constexpr NameRow<DType> kWeightFloatNames[] = {
    {"float32", DType::kF32}, {"float16", DType::kF16}, {"bfloat16", DType::kBF16}};

// The weights' dtype as the `dtype` option names it: a floating dtype, or a quantization (whose
// compute dtype the model's config decides).
struct WeightDtype {
  std::optional<DType> floating;
  std::optional<WeightQuant> quant;
};
// A quantization name first (fp8 is a quantization, not float8_e4m3fn weights), then any
// floating dtype name; Error naming `option` otherwise.
WeightDtype parse_weight_dtype(std::string_view name, std::string_view option);
// "float32, float16, bfloat16, int8, int4, nf4, fp4, fp8, q8_0, q4_0".
std::string weight_dtype_list();

inline std::string_view engine_name(Engine e) { return name_of(kEngineNames, e); }
inline std::string_view kv_dtype_name(KvDtype d) { return name_of(kKvDtypeNames, d); }
inline std::string_view attention_impl_name(AttentionImpl a) { return name_of(kAttentionNames, a); }
inline std::string_view train_method_name(TrainMethod m) { return name_of(kTrainMethodNames, m); }
inline std::string_view optimizer_name(Optimizer o) { return name_of(kOptimizerNames, o); }

// The default of every run option, once: RunOptions, TrainingOptions, plan::PlanRequest and
// plan::FitOptions start from these, and the CLI's help text and its plan flags print them.
struct RunDefaults {
  std::int64_t context = 4096;  // estimate: capped at the model's own maximum
  std::int64_t batch = 1;
  Engine engine = Engine::kTransformers;
  AttentionImpl attention = AttentionImpl::kSdpa;
  double overhead_bytes = 500.0 * 1024 * 1024;  // CUDA context + library workspaces, per GPU
  double gpu_memory_utilization = 0.9;          // vLLM's default share of the GPU
  TrainMethod train_method = TrainMethod::kFull;
  std::int64_t rank = 8;
  std::string_view targets = "all-linear";
  Optimizer optimizer = Optimizer::kAdamW;
  std::int64_t gpus = 1;
  int zero_stage = 0;
};
inline constexpr RunDefaults kRunDefaults{};

}  // namespace memfit
