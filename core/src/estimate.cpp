#include "memfit/estimate.h"

#include <algorithm>

#include <fmt/format.h>

#include "memfit/arch.h"
#include "memfit/ascii_table.h"
#include "memfit/config.h"
#include "memfit/convert_bytes.h"
#include "memfit/largest_layer.h"
#include "memfit/model_class.h"
#include "memfit/module_sizes.h"

namespace memfit {
namespace {

const std::vector<std::string> kAccelerateDtypes{"float32", "float16", "int8", "int4"};
const std::vector<std::string> kMemfitDtypes{"float32", "float16", "bfloat16", "int8", "int4"};

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
  throw Error(ErrorCode::kMissingKey,
              "config.json: no 'model_type' (transformers) or 'architecture' (timm); "
              "pass --library_name if the model is from another library");
}

struct Built {
  TensorTree tree;
  std::string library, model_type;
  std::vector<std::string> notes;
  bool from_checkpoint = false;
  std::optional<TreeComparison> comparison;
  std::uint64_t parameters = 0;
};

Built build_from_config(const EstimateRequest& req);

std::string names_preview(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 3) out += fmt::format(" (+{} more)", names.size() - 3);
  return out;
}

// memfit's exact path: the tensors the checkpoint holds, at their stored dtypes; the config (if
// it can be built) lends class names for no-split semantics and is compared name by name.
Built build_from_checkpoint(const EstimateRequest& req) {
  Built out;
  out.from_checkpoint = true;
  out.tree = tree_from_checkpoint(req.checkpoint);
  std::optional<Config> config;
  if (!req.config_text.empty()) {
    config.emplace(Config::parse(req.config_text, "config.json"), "config.json");
    try {
      Built cfg = build_from_config(req);
      out.library = cfg.library;
      out.model_type = cfg.model_type;
      adopt_classes(out.tree, cfg.tree);
      out.tree.modules.front().class_name = cfg.tree.class_name();
      std::optional<DType> stored;
      if (auto td = config->string_opt({"torch_dtype"})) stored = dtype_from_name(*td);
      TreeComparison cmp = compare_trees(cfg.tree, req.checkpoint, stored);
      if (!cmp.missing.empty())
        out.notes.push_back(fmt::format("{} tensors the config implies are not in the checkpoint: {}",
                                        cmp.missing.size(), names_preview(cmp.missing)));
      if (!cmp.unexpected.empty())
        out.notes.push_back(fmt::format("{} checkpoint tensors the config does not imply: {}",
                                        cmp.unexpected.size(), names_preview(cmp.unexpected)));
      if (!cmp.shape_mismatches.empty())
        out.notes.push_back(fmt::format("{} tensors differ in shape from the config, e.g. {}",
                                        cmp.shape_mismatches.size(),
                                        cmp.shape_mismatches.front().name));
      out.comparison = std::move(cmp);
    } catch (const Error& e) {
      out.notes.push_back("the config could not be used (" + e.message() +
                          "); repeated blocks of the checkpoint are the no-split units");
    }
  } else {
    out.notes.push_back("no config: repeated blocks of the checkpoint are the no-split units");
  }
  if (out.library.empty()) out.library = req.library.empty() ? "transformers" : req.library;
  out.parameters = checkpoint_parameter_count(req.checkpoint, config ? &*config : nullptr);
  return out;
}

Built build(const EstimateRequest& req) {
  const bool use_checkpoint = !req.checkpoint.empty() && req.mode == Mode::kMemfit &&
                              req.source != EstimateRequest::Source::kConfig;
  if (req.source == EstimateRequest::Source::kCheckpoint && req.checkpoint.empty())
    throw Error(ErrorCode::kInvalidArgument, "--source checkpoint: no safetensors checkpoint found");
  if (use_checkpoint) return build_from_checkpoint(req);
  Built b = build_from_config(req);
  b.tree = for_era(std::move(b.tree), req.mode == Mode::kAccelerate);
  b.parameters = b.tree.parameter_count();
  return b;
}

Built build_from_config(const EstimateRequest& req) {
  Json json = req.config_text.empty() ? Json::object()
                                      : Config::parse(req.config_text, "config.json");
  Built out;
  out.library = detect_library(req, json);
  Config config(std::move(json), "config.json");
  std::string key;
  if (out.library == "timm") {
    key = config.string_or({"architecture"}, timm_architecture(req.name));
  } else {
    auto mt = config.string_opt({"model_type"});
    if (!mt)
      throw Error(ErrorCode::kMissingKey,
                  "config.json: missing required key 'model_type' (needed to pick the "
                  "architecture)");
    key = *mt;
  }
  const Family* family = find_family(out.library, key);
  if (!family)
    throw Error(ErrorCode::kUnknownModelType,
                fmt::format("{} '{}' is not supported; supported: {}",
                            out.library == "timm" ? "timm architecture" : "model_type", key,
                            supported_keys(out.library)));
  out.model_type = key;
  const std::string cls =
      select_class(*family, config, req.mode, req.class_override, &out.notes);
  out.tree = family->build(BuildRequest{config, cls, req.name});
  return out;
}

std::vector<std::string> checked_dtypes(const EstimateRequest& req) {
  const auto& allowed = req.mode == Mode::kAccelerate ? kAccelerateDtypes : kMemfitDtypes;
  if (req.dtypes.empty()) return allowed;
  for (const auto& d : req.dtypes)
    if (std::find(allowed.begin(), allowed.end(), d) == allowed.end())
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("dtype '{}' is not one of: {}", d, fmt::join(allowed, ", ")));
  return req.dtypes;
}

DType row_dtype(const std::string& name) {
  if (name == "int4") return DType::kInt4;
  return *dtype_from_name(name);
}

// `python_int`: in accelerate the figure is a Python int (see convert_bytes).
void format_row(ReportRow& row, bool largest_int = false, bool total_int = false) {
  row.largest_layer = convert_bytes(row.largest_layer_bytes, largest_int);
  row.total = convert_bytes(row.total_bytes, total_int);
  row.training = row.training_bytes ? convert_bytes(*row.training_bytes, total_int) : "N/A";
}

// accelerate 0.30.1: the float32 figures divided per dtype, training per estimate_training_usage.
void accelerate_rows(const TensorTree& tree, const std::vector<std::string>& dtypes,
                     const ModuleSizes& sizes, const LargestLayer& largest, Report& report) {
  const double total = bits_to_bytes(sizes.total());
  const double layer = bits_to_bytes(largest.bits);
  const bool total_int = !sizes.fractional(TreeItem{false, 0});
  const bool layer_int = largest.names.empty() || !sizes.fractional(tree, largest.names[0]);
  for (const auto& d : dtypes) {
    ReportRow row;
    row.dtype = d;
    const double div = d == "float16" ? 2 : d == "int8" ? 4 : d == "int4" ? 8 : 1;
    row.total_bytes = total / div;
    row.largest_layer_bytes = layer / div;
    if (d == "float32") row.training_bytes = total * 4;         // model + grads + 2 states, step
    else if (d == "float16") row.training_bytes = total * 2;    // max(model, 1.5x grads, 2x states)
    // float32 keeps Python ints; the other rows were divided (true division gives floats), and
    // float16's training is a max over ints too.
    const bool f32 = d == "float32";
    format_row(row, f32 && layer_int, f32 && total_int);
    if (d == "float16") row.training = convert_bytes(*row.training_bytes, total_int);
    report.rows.push_back(std::move(row));
  }
}

// A row's sizes are linear in its dtype's bits b: floating tensors count b bits per element,
// the others their own size, so every module and tensor is S(b) = A + B·b. Once two widths are
// sized, a narrower one is derived exactly (integers) instead of walking the tree again: a
// 70B model's five rows cost two sizings, not five.
struct RowSizer {
  const TensorTree& tree;
  const std::vector<int>& order;
  ModuleSizes sized[2];  // the first two widths sized, sized[0] the wider once both are
  int bits[2] = {0, 0};

  ModuleSizes operator()(const SizeOptions& opt) {
    const int b = dtype_bits(*opt.dtype);
    if (b == bits[0]) return sized[0];
    if (b == bits[1]) return sized[1];
    if (bits[1] && b < bits[0]) {
      ModuleSizes out = sized[0];
      derive(out.module_bits, sized[1].module_bits, b);
      derive(out.tensor_bits, sized[1].tensor_bits, b);
      return out;
    }
    ModuleSizes s = compute_module_sizes(tree, opt, order);
    if (!bits[1]) {
      const int slot = bits[0] ? 1 : 0;
      sized[slot] = s;
      bits[slot] = b;
      if (bits[1] > bits[0]) {
        std::swap(sized[0], sized[1]);
        std::swap(bits[0], bits[1]);
      }
    }
    return s;
  }
  // x: the wider sizing, becoming width b; narrow: the narrower one.
  void derive(std::vector<Bits>& x, const std::vector<Bits>& narrow, int b) const {
    const auto step = static_cast<Bits>(bits[0] - bits[1]), drop = static_cast<Bits>(bits[0] - b);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] -= (x[i] - narrow[i]) / step * drop;
  }
};

// memfit: each dtype sized on its own; training is the real mixed-precision sum.
void memfit_rows(const TensorTree& tree, const std::vector<int>& order,
                 const std::vector<std::string>& dtypes, double params, Report& report) {
  RowSizer row_sizes{tree, order};
  for (const auto& d : dtypes) {
    SizeOptions opt;
    opt.include_legacy_buffers = false;
    opt.bool_as_bit = false;
    opt.dtype = row_dtype(d);
    opt.cast_floats = true;
    const ModuleSizes sizes = row_sizes(opt);
    const LargestLayer largest = largest_layer(tree, sizes, LayerRule::kComplete);
    ReportRow row;
    row.dtype = d;
    row.total_bytes = bits_to_bytes(sizes.total());
    row.largest_layer_bytes = bits_to_bytes(largest.bits);
    if (is_floating(*opt.dtype)) {
      const double weight_bytes = dtype_bits(*opt.dtype) / 8.0;
      row.training_parts = {
          {"weights", row.total_bytes},
          {"gradients", params * weight_bytes},
          {"fp32 master weights", *opt.dtype == DType::kF32 ? 0.0 : params * 4},
          {"adam moments", params * 8},
      };
      double sum = 0;
      for (const auto& p : row.training_parts) sum += p.bytes;
      row.training_bytes = sum;
    }
    format_row(row);
    report.rows.push_back(std::move(row));
  }
}

}  // namespace

std::string mode_name(Mode m) { return m == Mode::kAccelerate ? "accelerate" : "memfit"; }

Result<TensorTree> build_tree(const EstimateRequest& req, std::string* model_type,
                              std::vector<std::string>* notes) {
  return capture([&]() -> TensorTree {
    const bool checkpoint = !req.checkpoint.empty() && req.mode == Mode::kMemfit &&
                            req.source != EstimateRequest::Source::kConfig;
    Built b = checkpoint ? build(req) : build_from_config(req);
    if (model_type) *model_type = b.model_type;
    if (notes) *notes = b.notes;
    return std::move(b.tree);
  });
}

Result<Report> estimate(const EstimateRequest& req) {
  return capture([&]() -> Report {
    const std::vector<std::string> dtypes = checked_dtypes(req);
    Built b = build(req);
    const bool compat = req.mode == Mode::kAccelerate;
    Report report;
    report.name = req.name;
    report.library = b.library;
    report.model_type = b.model_type;
    report.model_class = b.tree.class_name();
    report.mode = req.mode;
    report.parameters = b.parameters;
    report.notes = std::move(b.notes);
    report.comparison = std::move(b.comparison);
    const std::vector<int> order = b.tree.named_module_tensors();  // shared by every sizing
    if (b.from_checkpoint) {
      report.source = "checkpoint";
      report.checkpoint_format = req.checkpoint_format;
      SizeOptions stored;
      stored.bool_as_bit = false;
      report.stored_bytes = bits_to_bytes(compute_module_sizes(b.tree, stored, order).total());
    }

    SizeOptions f32;
    f32.include_legacy_buffers = compat;
    f32.bool_as_bit = compat;
    const ModuleSizes sizes = compute_module_sizes(b.tree, f32, order);
    const LargestLayer largest =
        largest_layer(b.tree, sizes, compat ? LayerRule::kAccelerate : LayerRule::kComplete);
    report.largest_layer_names = largest.names;
    report.module_sizes.reserve(sizes.order.size());
    for (const TreeItem& item : sizes.order)
      report.module_sizes.emplace_back(item.name(b.tree), bits_to_bytes(sizes.at(item)));
    Bits buffer_bits = 0, legacy_bits = 0;
    int legacy_count = 0;
    for (const auto& t : b.tree.tensors) {
      if (t.kind != TensorKind::kBuffer) continue;
      if (counted(t, f32)) buffer_bits += tensor_bits(t, f32);
      if (t.era == BufferEra::kLegacyOnly) {
        ++legacy_count;
        SizeOptions all = f32;
        all.include_legacy_buffers = true;
        legacy_bits += tensor_bits(t, all);
      }
    }
    report.buffers_bytes = bits_to_bytes(buffer_bits);

    if (compat) {
      accelerate_rows(b.tree, dtypes, sizes, largest, report);
    } else {
      memfit_rows(b.tree, order, dtypes, static_cast<double>(report.parameters), report);
      if (legacy_count > 0)
        report.notes.push_back(fmt::format(
            "{} buffers that only transformers 4.40 allocates (rotary caches, causal masks; {}) "
            "are not counted; --compat accelerate counts them",
            legacy_count, convert_bytes(bits_to_bytes(legacy_bits))));
    }
    return report;
  });
}

std::string render_table(const Report& report) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : report.rows) rows.push_back({r.dtype, r.largest_layer, r.total, r.training});
  return create_ascii_table({"dtype", "Largest Layer", "Total Size", "Training using Adam"}, rows,
                            fmt::format("Memory Usage for loading `{}`", report.name));
}

}  // namespace memfit
