#include "memfit/memory/stored_form.h"

#include <fmt/format.h>

#include "memfit/memory/quantization.h"
#include "memfit/model/model_dims.h"
#include "memfit/model/tree_builder.h"

namespace memfit {
namespace {

std::optional<DType> named_dtype(const Config& c, std::string* key) {
  for (const char* k : {"torch_dtype", "dtype"})
    if (auto v = c.json().find(k); v != c.json().end() && v->is_string())
      if (auto d = dtype_from_name(v->get<std::string>())) {
        *key = k;
        return d;
      }
  return std::nullopt;
}

std::int64_t vocab_of(const Model& m) {
  if (m.dims.value) return m.dims.value->vocab;
  return text_config(m.config).dim_or({"vocab_size"}, 0);
}

}  // namespace

std::optional<DType> declared_dtype(const Config& config, std::string* how) {
  std::string key;
  if (auto d = named_dtype(config, &key)) {
    *how = "config.json's " + key;
    return d;
  }
  if (auto text = config.sub("text_config"))
    if (auto d = named_dtype(*text, &key)) {
      *how = "text_config's " + key;
      return d;
    }
  return std::nullopt;
}

DType stored_float_dtype(const Config& config, const std::optional<QuantScheme>& scheme, std::string* how) {
  if (auto d = declared_dtype(config, how)) return *d;
  if (scheme && scheme->method == QuantMethod::kMxfp4) {
    *how = "no torch_dtype: mxfp4's default, bfloat16";
    return DType::kBF16;
  }
  *how = "no torch_dtype: transformers' default, float32";
  return DType::kF32;
}

std::vector<StoredTensor> stored_form(const TensorTree& tree, DType dtype,
                                      const std::optional<QuantScheme>& scheme, std::int64_t vocab) {
  std::vector<const QuantizedTensor*> quantized_of(tree.tensors.size(), nullptr);
  std::vector<QuantizedTensor> quantized;
  if (scheme) {
    quantized = quantized_tensors(tree, vocab, *scheme);
    for (const auto& q : quantized) quantized_of[static_cast<std::size_t>(q.tensor)] = &q;
  }
  std::vector<StoredTensor> out;
  out.reserve(tree.tensors.size());
  for (std::size_t i = 0; i < tree.tensors.size(); ++i) {
    const TensorInfo& t = tree.tensors[i];
    if (t.is_alias() || (t.kind == TensorKind::kBuffer && !t.persistent)) continue;
    const int index = static_cast<int>(i);
    const QuantLayout layout = quantized_of[i] ? quantized_layout(*quantized_of[i], *scheme) : QuantLayout{};
    if (layout.count > 0) {
      for (const auto& p : layout) out.push_back({p.name(t.name), p.dtype, p.shape(), p.bytes(), index});
      continue;
    }
    // A tensor kept in float32 on load is stored at the checkpoint's dtype unless its writer
    // stores it in float32 (TensorInfo::stored_fp32).
    const DType d = !is_floating(t.dtype) ? t.dtype : t.stored_fp32 ? DType::kF32 : dtype;
    out.push_back({t.name, d, t.shape, stored_bytes(t.shape, d), index});
  }
  return out;
}

ModelStoredForm stored_form(const Model& model) {
  const QuantScheme* q = model.quantization.get();  // throws an unknown quant_method's error
  const std::optional<QuantScheme> scheme = q ? std::optional<QuantScheme>(*q) : std::nullopt;
  ModelStoredForm out;
  out.dtype = stored_float_dtype(model.config, scheme, &out.dtype_source);
  const TensorTree tree = model.from_checkpoint ? model.tree : for_era(model.tree, /*legacy=*/false);
  out.tensors = stored_form(tree, out.dtype, scheme, vocab_of(model));
  for (const auto& t : out.tensors) out.total_bytes += t.bytes;
  return out;
}

namespace {

// The config with num_hidden_layers (where text_config() finds it) raised by `extra`.
Json with_more_layers(const Config& config, std::int64_t extra) {
  Json json = config.json();
  Json* node = &json;
  if (!json.contains("num_hidden_layers") && json.contains("text_config") && json["text_config"].is_object())
    node = &json["text_config"];
  (*node)["num_hidden_layers"] = (*node)["num_hidden_layers"].get<std::int64_t>() + extra;
  return json;
}

// What a DeepSeek MTP layer adds to a decoder layer (vLLM deepseek_mtp.py's
// DeepSeekMultiTokenPredictorLayer).
TensorTree mtp_extras(std::int64_t first, std::int64_t count, std::int64_t hidden, std::int64_t vocab) {
  TreeBuilder b("DeepSeekMTP");
  {
  auto model = b.module("model", "DeepseekV3Model");
  auto layers = b.module("layers", "ModuleList");
  for (std::int64_t i = first; i < first + count; ++i) {
    auto layer = b.module(std::to_string(i), "DeepSeekMultiTokenPredictorLayer");
    auto one = [&](const char* name, const char* cls, Shape shape) {
      auto m = b.module(name, cls);
      b.param("weight", std::move(shape));
    };
    one("embed_tokens", "VocabParallelEmbedding", {vocab, hidden});
    one("enorm", "RMSNorm", {hidden});
    one("hnorm", "RMSNorm", {hidden});
    one("eh_proj", "Linear", {hidden, 2 * hidden});
    auto head = b.module("shared_head", "SharedHead");
    one("norm", "RMSNorm", {hidden});
    one("head", "ParallelLMHead", {vocab, hidden});
  }
  }
  return b.finish();
}

}  // namespace

std::vector<StoredTensor> mtp_stored_form(const Model& model) {
  const IgnoredOnLoad ignore(model.config);
  if (ignore.mtp_layers() == 0 || !model.has_config) return {};
  const std::int64_t first = ignore.first_mtp_layer(), count = ignore.mtp_layers();
  EstimateRequest req = model.request;
  req.config_text = with_more_layers(model.config, count).dump();
  req.checkpoint.clear();
  req.source = EstimateRequest::Source::kConfig;
  const Result<Model> longer = build_model(std::move(req));
  if (!longer || !longer->dims.value) return {};
  const ModelStoredForm form = stored_form(*longer);
  std::vector<StoredTensor> out;
  for (const auto& t : form.tensors)
    if (t.name.rfind("model.layers.", 0) == 0 && ignore.matches(t.name)) out.push_back(t);
  const ModelDims& d = *longer->dims.value;
  for (auto& t : stored_form(mtp_extras(first, count, d.hidden, d.vocab), form.dtype,
                             model.quantization.value, d.vocab))
    out.push_back(std::move(t));
  return out;
}

IgnoredOnLoad::IgnoredOnLoad(const Config& config) {
  const Config text = text_config(config);
  const std::int64_t nextn = text.count_or({"num_nextn_predict_layers"}, 0);
  if (nextn > 0) {
    first_mtp_layer_ = text.count_or({"num_hidden_layers"}, -1);
    mtp_layers_ = first_mtp_layer_ >= 0 ? nextn : 0;
  }
}

bool IgnoredOnLoad::matches(const std::string& name) const {
  auto ends_with = [&](const char* s) {
    const std::size_t n = std::char_traits<char>::length(s);
    return name.size() >= n && name.compare(name.size() - n, n, s) == 0;
  };
  if (ends_with(".rotary_emb.inv_freq") || name == "rotary_emb.inv_freq") return true;
  if (name.rfind("mtp.", 0) == 0) return true;
  for (std::int64_t i = 0; i < mtp_layers_; ++i)
    if (name.rfind(fmt::format("model.layers.{}.", first_mtp_layer_ + i), 0) == 0) return true;
  return false;
}

}  // namespace memfit
