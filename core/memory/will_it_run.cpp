#include "memfit/memory/will_it_run.h"

#include <algorithm>

#include <fmt/format.h>

#include "memfit/memory/quantization.h"
#include "memfit/memory/stored_form.h"
#include "memfit/model/model_dims.h"
#include "memfit/option_error.h"

namespace memfit {
namespace {

KvDtype kv_dtype_for(DType compute) {
  switch (compute) {
    case DType::kF32: return KvDtype::kF32;
    case DType::kF16: return KvDtype::kF16;
    default: return KvDtype::kBF16;
  }
}

std::optional<DType> config_dtype(const Config& c) {
  std::string how;
  auto dt = declared_dtype(c, &how);
  if (!dt || !is_floating(*dt)) return std::nullopt;
  return dt;
}

bool generation_class(const std::string& cls) {
  for (const char* p : {"CausalLM", "LMHead", "ConditionalGeneration", "Seq2SeqLM"})
    if (cls.find(p) != std::string::npos) return true;
  return false;
}

struct WeightsPlan {
  DType compute = DType::kF32;
  std::optional<QuantScheme> quant;
  std::string source;
};

// The compute dtype and quantization: the dtype option, else the checkpoint as stored, else the
// config's quantization_config (read with the model) and torch_dtype.
WeightsPlan plan_weights(const Model& model, const RunOptions& o) {
  const Config& config = model.config;
  const bool from_checkpoint = model.from_checkpoint;
  WeightsPlan w;
  w.compute = config_dtype(config).value_or(DType::kF32);
  if (o.dtype) {
    w.source = "--dtype";  // a value of the reports' "weights_source" (CLI outputs keep it)
    if (o.dtype->quant) {
      w.quant = quant_scheme_for(*o.dtype->quant, o.engine == Engine::kLlamaCpp);
      if (w.compute == DType::kF32) w.compute = DType::kF16;  // transformers' default when quantizing
      return w;
    }
    w.compute = *o.dtype->floating;
  } else if (from_checkpoint) {
    w.source = "checkpoint";
  } else if (const QuantScheme* q = model.quantization.get()) {
    w.quant = *q;
    w.source = "quantization_config";
    if (w.quant->compute_dtype && is_floating(*w.quant->compute_dtype) && !config_dtype(config))
      w.compute = *w.quant->compute_dtype;
    if (w.compute == DType::kF32) w.compute = DType::kF16;
  } else {
    w.source = "config";
  }
  return w;
}

void check_ranges(std::int64_t context, const RunOptions& o) {
  if (context < 1 || context > kMaxSolvedContext)
    throw option_error("context", fmt::format(" must be between 1 and {}, got {}", kMaxSolvedContext, context));
  if (o.batch < 1 || o.batch > kMaxSolvedBatch)
    throw option_error("batch", fmt::format(" must be between 1 and {}, got {}", kMaxSolvedBatch, o.batch));
  if (o.overhead_bytes < 0) throw option_error("overhead", " must not be negative");
}

std::string_view window_policy(Engine e) {
  switch (e) {
    case Engine::kTransformers: return "transformers keeps min(window, context) tokens there";
    case Engine::kVllm:
      return "vLLM's hybrid KV cache manager keeps window − 1 + max_num_batched_tokens (2048) tokens "
             "there, in blocks of 16, plus one block (with the hybrid manager disabled, vLLM charges "
             "them at full length)";
    case Engine::kLlamaCpp: return "llama.cpp's SWA cache holds window + n_ubatch (512) cells, padded to 256";
  }
  return "";
}

void layout_notes(const AttentionLayout& L, Engine engine, std::int64_t encoder_length,
                  std::vector<std::string>& notes) {
  for (const auto& l : L.layers) {
    if (!l.sliding) continue;
    notes.push_back(fmt::format("{} of {} layers attend through a sliding window of {} tokens (from '{}'); {}",
                                L.sliding_layers(), L.layers.size(), l.window, L.window_rule,
                                window_policy(engine)));
    break;
  }
  if (const int n = L.count(AttentionKind::kRecurrent); n > 0) {
    const bool ssm_f32 = std::any_of(L.layers.begin(), L.layers.end(), [](const AttentionLayer& l) { return l.state.ssm_f32; });
    notes.push_back(fmt::format("{} of {} layers keep a recurrent state (linear attention / SSM) of a fixed size "
                                "per sequence, whatever the context; {}",
                                n, L.layers.size(),
                                engine == Engine::kLlamaCpp ? "llama.cpp keeps it in F32"
                                : ssm_f32 ? "the SSM part in float32 (the config's mamba_ssm_cache_dtype), "
                                            "the conv part in the weights' dtype"
                                          : "kept in the weights' dtype"));
  }
  const auto mla = std::find_if(L.layers.begin(), L.layers.end(),
                                [](const AttentionLayer& l) { return l.kind == AttentionKind::kMla; });
  if (mla != L.layers.end())
    notes.push_back(engine == Engine::kTransformers
                        ? fmt::format("MLA: transformers caches the decompressed per-head K ({}) and V ({}); "
                                      "vLLM and llama.cpp cache the {}-wide latent",
                                      mla->k_head_dim, mla->v_head_dim, L.mla_latent)
                        : fmt::format("MLA: the compressed latent (kv_lora_rank + qk_rope_head_dim = {}) is "
                                      "cached once per token and layer", L.mla_latent));
  if (L.cross_layers > 0)
    notes.push_back(fmt::format("cross-attention caches K and V of {} encoder tokens in each of {} decoder layers",
                                encoder_length, L.cross_layers));
}

// Total inference bytes as a function of (context, batch): weights and overhead fixed, KV cache
// and activations recomputed.
MemoryFunction inference_memory(const RunReport& r, const ModelDims* dims, const KvOptions& ko,
                                const ActivationOptions& ao) {
  const double fixed = r.inference.weights_bytes + r.inference.overhead_bytes;
  const bool gen = r.generative;
  const AttentionLayout layout = r.layout;
  return [=](std::int64_t c, std::int64_t b) {
    KvOptions k = ko;
    k.context = c;
    k.batch = b;
    ActivationOptions a = ao;
    a.context = c;
    a.batch = b;
    return fixed + (gen ? kv_cache(layout, k).total() : 0.0) + (dims ? inference_activations(*dims, a).bytes : 0.0);
  };
}

// Total training bytes as a function of (sequence length, micro-batch).
MemoryFunction training_memory(const TrainingEstimate& t, const TrainingOptions& to, const ModelDims& dims,
                               double element_bytes) {
  const double fixed = t.total_bytes() - t.activation_bytes + t.dequant_workspace_bytes;
  return [=](std::int64_t s, std::int64_t b) {
    return fixed + training_activations(dims, s, b, element_bytes, to.attention, to.grad_checkpointing).bytes;
  };
}

}  // namespace

Result<RunReport> will_it_run(const EstimateRequest& req, const RunOptions& o) {
  Result<Model> model = build_model(req);
  if (!model) return model.error();
  return will_it_run(*model, o);
}

Result<RunReport> will_it_run(const Model& model, const RunOptions& o) {
  return capture([&]() -> RunReport {
    RunReport r;
    r.notes = model.notes;
    const TensorTree& tree = model.tree;

    const ModelDims* dims = nullptr;
    if (model.dims.known()) {
      try {
        dims = model.dims.get();
      } catch (const Error& e) {
        if (generation_class(tree.class_name())) throw;
        r.notes.push_back("activations not estimated (" + e.message() + ")");
      }
    } else {
      r.notes.push_back("not a transformers config: activations and KV cache not estimated");
    }
    r.generative = dims && dims->generative;
    r.transformer = dims != nullptr;

    const WeightsPlan w = plan_weights(model, o);
    r.weights_source = w.source;
    if (w.quant) r.quantization = w.quant->describe();
    r.model_max_context = dims ? dims->max_positions : 0;
    const std::int64_t context =
        o.context ? *o.context
                  : (r.model_max_context > 0 ? std::min(kRunDefaults.context, r.model_max_context)
                                             : kRunDefaults.context);
    check_ranges(context, o);
    const KvDtype kv_dtype = o.kv_dtype.value_or(kv_dtype_for(w.compute));

    InferenceEstimate& inf = r.inference;
    inf.engine = o.engine;
    inf.dtype = std::string(torch_name(w.compute));
    inf.kv_dtype = std::string(kv_dtype_name(kv_dtype));
    inf.attention = std::string(attention_impl_name(o.attention));
    inf.context = context;
    inf.batch = o.batch;
    inf.weights_bytes = weight_bytes(tree, dims ? dims->vocab : 0, w.compute, w.quant).bytes;
    inf.overhead_bytes = o.overhead_bytes;
    KvOptions ko;
    ko.engine = o.engine;
    ko.dtype = kv_dtype;
    ko.context = context;
    ko.batch = o.batch;
    ko.encoder_length = o.encoder_length;
    ko.state_element_bytes = dtype_bits(w.compute) / 8.0;
    if (r.generative) {
      r.layout = attention_layout(*dims);
      inf.kv = kv_cache(r.layout, ko);
      layout_notes(r.layout, o.engine, inf.kv.encoder_length, r.notes);
    } else if (dims) {
      r.notes.push_back(fmt::format("{} does not generate: no KV cache", tree.class_name()));
    }
    ActivationOptions ao;
    ao.engine = o.engine;
    ao.attention = o.attention;
    ao.element_bytes = dtype_bits(w.compute) / 8.0;
    ao.context = context;
    ao.batch = o.batch;
    ao.encoder_length = inf.kv.encoder_length > 0 ? inf.kv.encoder_length : o.encoder_length;
    if (dims) inf.activations = inference_activations(*dims, ao);
    if (r.model_max_context > 0 && context > r.model_max_context)
      r.notes.push_back(fmt::format("context {} exceeds the model's {} positions", context, r.model_max_context));

    if (o.train) {
      if (!dims) throw option_error("train", " needs a transformers config.json");
      TrainingOptions t = *o.train;
      t.sequence_length = context;
      t.batch = o.batch;
      t.compute = w.compute;
      t.attention = o.attention;
      t.overhead_bytes = o.overhead_bytes;
      r.training = estimate_training(tree, *dims, t, w.quant);
      r.training_options = t;
    }

    if (o.vram_bytes || !o.gpu.empty()) {
      const GpuSpec* gpu = o.gpu.empty() ? nullptr : &find_gpu(o.gpu);
      const double vram = o.vram_bytes ? *o.vram_bytes : gpu->memory_bytes;
      const bool vllm = !r.training && o.engine == Engine::kVllm;
      const MemoryFunction total = r.training
                                       ? training_memory(*r.training, *r.training_options, *dims, ao.element_bytes)
                                       : inference_memory(r, dims, ko, ao);
      FitReport fit = solve_fit(total, vram, vllm ? vram * o.gpu_memory_utilization : vram, context, o.batch,
                                o.overhead_bytes);
      fit.gpu = gpu;
      if (gpu && dims && !r.training) {
        // An MoE decode step reads its dense weights and only the experts its tokens go through.
        const double params = static_cast<double>(model.parameters);
        const double routed_share = params > 0 ? routed_expert_parameters(tree) / params : 0;
        const double decode_weights =
            inf.weights_bytes * (1.0 - routed_share * (1.0 - experts_touched(*dims, o.batch)));
        fit.roofline = roofline(*gpu, std::max<std::int64_t>(1, fit.gpus_needed), inf.weights_bytes, decode_weights,
                                inf.kv.total(), active_parameters(tree, *dims), context, o.batch,
                                4.0 * static_cast<double>(dims->layers * dims->heads * dims->head_dim));
      }
      if (gpu && !gpu->bf16) r.notes.push_back(std::string(gpu->name) + " has no bfloat16: its float16 throughput is used");
      r.fit = fit;
    }
    return r;
  });
}

}  // namespace memfit
