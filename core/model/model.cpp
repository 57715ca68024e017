#include "memfit/model/model.h"

#include <fmt/format.h>

#include "memfit/model/arch.h"
#include "memfit/model/keep_fp32.h"
#include "memfit/model/model_class.h"
#include "memfit/option_error.h"

namespace memfit {
namespace {

// "timm/resnet50.a1_in1k" → "resnet50" (timm's parse_model_name + split_model_name_tag).
std::string timm_architecture(const std::string& name) {
  std::string base = name;
  if (auto colon = base.find(':'); colon != std::string::npos) base = base.substr(colon + 1);
  if (auto slash = base.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
  if (auto dot = base.find('.'); dot != std::string::npos) base = base.substr(0, dot);
  return base;
}

std::string detect_library(const EstimateRequest& req, const Json& json) {
  if (!req.library.empty()) {
    if (req.library != "transformers" && req.library != "timm")
      throw Error(ErrorCode::kUnsupportedLibrary,
                  fmt::format("library '{}' is not supported (supported: timm, transformers)",
                              req.library));
    return req.library;
  }
  if (json.contains("model_type")) return "transformers";
  if (json.contains("architecture") || req.name.rfind("timm/", 0) == 0) return "timm";
  throw OptionMessage()
      .text("config.json: no 'model_type' (transformers) or 'architecture' (timm); pass ")
      .option("library")
      .text(" if the model is from another library")
      .error(ErrorCode::kMissingKey);
}

std::string names_preview(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 3) out += fmt::format(" (+{} more)", names.size() - 3);
  return out;
}

// The family's tree of the selected class (every era), from `req` and the parsed m.config, and
// the dimensions the family read with it (left empty by families that do not read them).
void build_from_config(const EstimateRequest& req, Model& m, std::optional<ModelDims>* dims,
                       TreeForm form) {
  m.library = detect_library(req, m.config.json());
  std::string key;
  if (m.library == "timm") {
    key = m.config.string_or({"architecture"}, timm_architecture(req.name));
  } else {
    auto mt = m.config.string_opt({"model_type"});
    if (!mt)
      throw Error(ErrorCode::kMissingKey,
                  "config.json: missing required key 'model_type' (needed to pick the "
                  "architecture)");
    key = *mt;
  }
  const Family* family = find_family(m.library, key);
  if (!family)
    throw Error(ErrorCode::kUnknownModelType,
                fmt::format("{} '{}' is not supported; supported: {}",
                            m.library == "timm" ? "timm architecture" : "model_type", key,
                            supported_keys(m.library)));
  m.model_type = key;
  const std::string cls = select_class(*family, m.config, req.mode, req.class_override, &m.notes);
  m.tree = family->build(BuildRequest{m.config, cls, req.name, dims});
  keep_rotary_fp32(m.tree);
  m.parameters = m.tree.parameter_count();
  m.tree = form == TreeForm::kNamed ? expand(std::move(m.tree)) : compact(std::move(m.tree));
}

// memfit's exact path: the tensors the checkpoint holds, at their stored dtypes; the config (if
// it can be built) lends class names for no-split semantics and is compared name by name.
void build_from_checkpoint(Model& m, std::optional<ModelDims>* dims) {
  const EstimateRequest& req = m.request;
  m.from_checkpoint = true;
  TensorTree tree = tree_from_checkpoint(req.checkpoint);
  if (m.has_config) {
    try {
      // The config's model, without a copy of the request's checkpoint tensors.
      Model cfg;
      cfg.config = m.config;
      cfg.has_config = true;
      build_from_config(req, cfg, dims, TreeForm::kNamed);
      m.library = cfg.library;
      m.model_type = cfg.model_type;
      m.notes = cfg.notes;
      adopt_classes(tree, cfg.tree);
      adopt_keep_fp32(tree, cfg.tree);
      tree.modules.front().class_name = cfg.tree.class_name();
      std::optional<DType> stored;
      if (auto td = m.config.string_opt({"torch_dtype"})) stored = dtype_from_name(*td);
      TreeComparison cmp = compare_trees(cfg.tree, req.checkpoint, stored);
      if (!cmp.missing.empty())
        m.notes.push_back(fmt::format("{} tensors the config implies are not in the checkpoint: {}",
                                      cmp.missing.size(), names_preview(cmp.missing)));
      if (!cmp.unexpected.empty())
        m.notes.push_back(fmt::format("{} checkpoint tensors the config does not imply: {}",
                                      cmp.unexpected.size(), names_preview(cmp.unexpected)));
      if (!cmp.shape_mismatches.empty())
        m.notes.push_back(fmt::format("{} tensors differ in shape from the config, e.g. {}",
                                      cmp.shape_mismatches.size(), cmp.shape_mismatches.front().name));
      m.comparison = std::move(cmp);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kUnknownModelType) {
        m.unknown_family = true;
        m.model_type = m.config.string_or({"model_type"}, "");
        m.notes.push_back(fmt::format(
            "model_type '{}' is not supported: the weights are exact, from the checkpoint's headers; "
            "the KV cache and activations are approximate, from the config's generic keys "
            "(num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, hidden_size)",
            m.model_type));
      } else {
        m.notes.push_back("the config could not be used (" + e.message() +
                          "); repeated blocks of the checkpoint are the no-split units");
      }
    }
  } else {
    m.notes.push_back("no config: repeated blocks of the checkpoint are the no-split units");
  }
  if (m.library.empty()) m.library = req.library.empty() ? "transformers" : req.library;
  m.parameters = checkpoint_parameter_count(req.checkpoint, m.has_config ? &m.config : nullptr);
  m.tree = std::move(tree);
}

// The dims of a transformers config (the family's, else the generic reader's), finished with
// what the final tree says; their error is kept for will-it-run, which reports it.
void set_dims(Model& m, std::optional<ModelDims> from_family) {
  if (!m.has_config || !m.config.has("model_type")) return;
  try {
    ModelDims d = from_family ? std::move(*from_family) : read_model_dims(m.config);
    finish_model_dims(d, m.config, m.tree);
    m.dims.value = std::move(d);
  } catch (const Error& e) {
    m.dims.error = e;
  }
}

void set_quantization(Model& m) {
  if (!m.has_config) return;
  try {
    if (auto q = quant_scheme_from_config(m.config)) m.quantization.value = std::move(*q);
  } catch (const Error& e) {
    m.quantization.error = e;
  }
}

Model with_config(EstimateRequest request, Config config, bool has_config, TreeForm form) {
  Model m;
  m.request = std::move(request);
  m.config = std::move(config);
  m.has_config = has_config;
  const EstimateRequest& req = m.request;
  const bool use_checkpoint = !req.checkpoint.empty() && req.mode == Mode::kMemfit &&
                              req.source != EstimateRequest::Source::kConfig;
  if (req.source == EstimateRequest::Source::kCheckpoint && req.checkpoint.empty())
    throw option_error("source", " 'checkpoint': no safetensors checkpoint found");
  std::optional<ModelDims> dims;
  if (use_checkpoint) build_from_checkpoint(m, &dims);
  else build_from_config(m.request, m, &dims, form);
  set_dims(m, std::move(dims));
  set_quantization(m);
  return m;
}

}  // namespace

Result<Model> build_model(EstimateRequest request, TreeForm form) {
  return capture([&]() -> Model {
    const bool has_config = !request.config_text.empty();
    Config config(has_config ? Config::parse(request.config_text, "config.json") : Json::object(),
                  "config.json");
    return with_config(std::move(request), std::move(config), has_config, form);
  });
}

Result<Model> rebuild_for_mode(const Model& model, Mode mode) {
  return capture([&]() -> Model {
    EstimateRequest req = model.request;
    req.mode = mode;
    return with_config(std::move(req), model.config, model.has_config,
                       model.tree.has_repeats() ? TreeForm::kCompact : TreeForm::kNamed);
  });
}

}  // namespace memfit
