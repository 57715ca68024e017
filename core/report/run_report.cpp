// The JSON and text forms of a RunReport (memfit/report/run_report.h).
#include "memfit/report/run_report.h"

#include <fmt/format.h>

#include "memfit/report/convert_bytes.h"

namespace memfit {
namespace {

using OJson = nlohmann::ordered_json;

std::string with_commas(double v) {
  std::string s = fmt::format("{:.0f}", v);
  const std::size_t start = s[0] == '-' ? 1 : 0;
  for (int i = static_cast<int>(s.size()) - 3; i > static_cast<int>(start); i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

OJson parts_json(const std::vector<MemoryPart>& parts) {
  OJson a = OJson::array();
  for (const auto& p : parts) a.push_back({{"name", p.name}, {"bytes", p.bytes}});
  return a;
}

}  // namespace

nlohmann::ordered_json run_report_to_json(const RunReport& r) {
  OJson out;
  const InferenceEstimate& i = r.inference;
  OJson inf;
  inf["engine"] = std::string(engine_name(i.engine));
  inf["context"] = i.context;
  inf["batch"] = i.batch;
  inf["dtype"] = i.dtype;
  inf["kv_dtype"] = i.kv_dtype;
  inf["attention"] = i.attention;
  inf["kv_bytes_per_token"] = i.kv.bytes_per_token;
  inf["kv_cache_bytes"] = i.kv.total();
  inf["cross_attention_kv_bytes"] = i.kv.cross_bytes;
  if (i.kv.encoder_length > 0) inf["encoder_length"] = i.kv.encoder_length;
  OJson layers = {{"full", r.layout.full_layers()}, {"sliding", r.layout.sliding_layers()}, {"mla", r.layout.mla}};
  for (const auto& l : r.layout.layers)
    if (l.sliding) {
      layers["window"] = l.window;
      break;
    }
  if (!r.layout.window_rule.empty()) layers["window_rule"] = r.layout.window_rule;
  // Only where the model has them, so that other models' JSON keeps its shape.
  if (const int n = r.layout.count(AttentionKind::kChunked)) layers["chunked"] = n;
  if (const int n = r.layout.count(AttentionKind::kRecurrent)) {
    layers["recurrent"] = n;
    inf["recurrent_state_bytes"] = i.kv.state_bytes;
  }
  inf["kv_layers"] = layers;
  inf["weights_bytes"] = i.weights_bytes;
  inf["weights_source"] = r.weights_source;
  inf["quantization"] = r.quantization.empty() ? OJson() : OJson(r.quantization);
  inf["activation_bytes"] = i.activations.bytes;
  inf["activation_parts"] = parts_json(i.activations.parts);
  inf["tokens_per_step"] = i.activations.tokens_per_step;
  inf["overhead_bytes"] = i.overhead_bytes;
  inf["total_bytes"] = i.total_bytes();
  inf["model_max_context"] = r.model_max_context;
  inf["notes"] = r.notes;
  out["inference"] = inf;

  if (r.training) {
    const TrainingEstimate& t = *r.training;
    const TrainingOptions& to = *r.training_options;
    OJson tr;
    tr["method"] = std::string(train_method_name(t.method));
    tr["trainable_parameters"] = t.trainable_parameters;
    if (t.method != TrainMethod::kFull) {
      tr["rank"] = to.rank;
      tr["targets"] = to.targets;
      tr["lora_modules"] = t.lora_modules;
    }
    tr["optimizer"] = std::string(optimizer_name(to.optimizer));
    tr["sequence_length"] = to.sequence_length;
    tr["batch"] = to.batch;
    tr["grad_checkpointing"] = to.grad_checkpointing;
    tr["gpus"] = to.gpus;
    tr["sharding"] = to.fsdp ? "fsdp" : to.zero_stage > 0 ? fmt::format("zero-{}", to.zero_stage) : "none";
    tr["weights_bytes"] = t.weights_bytes;
    tr["gradient_bytes"] = t.gradient_bytes;
    tr["master_weights_bytes"] = t.master_weights_bytes;
    tr["optimizer_bytes"] = t.optimizer_bytes;
    tr["activation_bytes"] = t.activation_bytes;
    tr["activation_parts"] = parts_json(t.activations.parts);
    tr["overhead_bytes"] = t.overhead_bytes;
    tr["total_bytes"] = t.total_bytes();
    tr["notes"] = t.notes;
    out["training"] = tr;
  }
  if (r.fit) {
    const FitReport& f = *r.fit;
    OJson fit;
    fit["for"] = r.training ? "training" : "inference";
    fit["vram_bytes"] = f.vram_bytes;
    fit["usable_bytes"] = f.usable_bytes;
    if (f.gpu)
      fit["gpu"] = {{"name", std::string(f.gpu->name)},
                    {"memory_bytes", f.gpu->memory_bytes},
                    {"bandwidth_bytes_per_s", f.gpu->bandwidth_bytes_s},
                    {"bf16_flops", f.gpu->bf16_flops}};
    else
      fit["gpu"] = nullptr;
    fit["context"] = f.context;
    fit["batch"] = f.batch;
    fit["max_context"] = f.max_context;
    fit["max_batch"] = f.max_batch;
    fit["fits"] = f.fits;
    fit["gpus_needed"] = f.gpus_needed;
    if (f.roofline)
      fit["tokens_per_second"] = {{"decode", f.roofline->decode_tokens_per_s},
                                  {"prefill", f.roofline->prefill_tokens_per_s},
                                  {"label", "roofline estimate (memory-bound decode, compute-bound prefill)"}};
    else
      fit["tokens_per_second"] = nullptr;
    out["fit"] = fit;
  }
  return out;
}

std::string render_run_report(const RunReport& r) {
  const InferenceEstimate& i = r.inference;
  std::string s;
  auto line = [&](const std::string& name, double bytes, const std::string& detail = {}) {
    s += fmt::format("  {:<18}{:>12}{}\n", name, convert_bytes(bytes), detail.empty() ? "" : "  " + detail);
  };
  if (r.transformer)
    s += fmt::format("inference ({}, {} weights, {} attention) at context {} × batch {}:\n",
                     engine_name(i.engine), i.dtype, i.attention, with_commas(static_cast<double>(i.context)),
                     with_commas(static_cast<double>(i.batch)));
  else
    s += fmt::format("inference ({}, {} weights):\n", engine_name(i.engine), i.dtype);
  line("weights", i.weights_bytes,
       r.quantization.empty() ? "" : fmt::format("({})", r.quantization));
  if (r.generative) {
    std::string kinds = fmt::format("{} full", r.layout.full_layers());
    const int chunked = r.layout.count(AttentionKind::kChunked);
    if (const int sliding = r.layout.sliding_layers() - chunked; sliding > 0)
      kinds += fmt::format(" + {} sliding-window", sliding);
    if (chunked > 0) kinds += fmt::format(" + {} chunked", chunked);
    if (const int n = r.layout.count(AttentionKind::kRecurrent); n > 0)
      kinds += fmt::format(" + {} recurrent (state {})", n, convert_bytes(i.kv.state_bytes));
    line("KV cache", i.kv.total(),
         fmt::format("({}, {} bytes/token; {} layers{}{})", i.kv_dtype, with_commas(i.kv.bytes_per_token), kinds,
                     r.layout.mla ? ", MLA" : "",
                     i.kv.cross_bytes > 0 ? fmt::format("; cross-attention {}", convert_bytes(i.kv.cross_bytes)) : ""));
  }
  if (!i.activations.parts.empty()) {
    std::string parts;
    for (const auto& p : i.activations.parts)
      parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", p.name, convert_bytes(p.bytes));
    line("activations", i.activations.bytes,
         fmt::format("({} tokens per step: {})", with_commas(static_cast<double>(i.activations.tokens_per_step)), parts));
  }
  line("runtime overhead", i.overhead_bytes);
  line("total", i.total_bytes());
  if (r.training) {
    const TrainingEstimate& t = *r.training;
    const TrainingOptions& to = *r.training_options;
    std::string what = std::string(train_method_name(t.method));
    if (t.method != TrainMethod::kFull) {
      std::string targets;
      for (const auto& x : to.targets) targets += (targets.empty() ? "" : ",") + x;
      what += fmt::format(" r={} on {} ({} modules)", to.rank, targets, t.lora_modules);
    }
    s += fmt::format("training ({}: {} trainable parameters; {}; sequence {} × batch {}{}{}):\n", what,
                     with_commas(static_cast<double>(t.trainable_parameters)), optimizer_name(to.optimizer),
                     with_commas(static_cast<double>(to.sequence_length)), with_commas(static_cast<double>(to.batch)),
                     to.grad_checkpointing ? ", gradient checkpointing" : "",
                     to.gpus > 1 ? fmt::format(", per GPU of {}", to.gpus) : "");
    line("weights", t.weights_bytes);
    line("gradients", t.gradient_bytes);
    if (t.master_weights_bytes > 0) line("fp32 master weights", t.master_weights_bytes);
    line("optimizer states", t.optimizer_bytes);
    line("activations", t.activation_bytes);
    line("runtime overhead", t.overhead_bytes);
    line("total", t.total_bytes());
    for (const auto& n : t.notes) s += "  note: " + n + "\n";
  }
  if (r.fit) {
    const FitReport& f = *r.fit;
    s += fmt::format("fit on {}{}: {} at context {} × batch {}; max context {} at batch {}; max batch {} at "
                     "context {}; {}\n",
                     convert_bytes(f.vram_bytes), f.gpu ? fmt::format(" ({})", f.gpu->name) : "",
                     f.fits ? "fits" : "does not fit", with_commas(static_cast<double>(f.context)),
                     with_commas(static_cast<double>(f.batch)), with_commas(static_cast<double>(f.max_context)),
                     with_commas(static_cast<double>(f.batch)), with_commas(static_cast<double>(f.max_batch)),
                     with_commas(static_cast<double>(f.context)),
                     f.gpus_needed > 0 ? fmt::format("{} GPU{} needed", f.gpus_needed, f.gpus_needed > 1 ? "s" : "")
                                       : "no number of these GPUs holds it");
    if (f.usable_bytes != f.vram_bytes)
      s += fmt::format("  (vLLM uses {} of it: gpu_memory_utilization 0.9)\n", convert_bytes(f.usable_bytes));
    if (f.roofline)
      s += fmt::format("  roofline estimate: decode ≈ {} tokens/s, prefill ≈ {} tokens/s\n",
                       with_commas(f.roofline->decode_tokens_per_s), with_commas(f.roofline->prefill_tokens_per_s));
  }
  for (const auto& n : r.notes) s += "note: " + n + "\n";
  return s;
}

}  // namespace memfit
