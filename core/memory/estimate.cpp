#include "memfit/memory/estimate.h"

#include <algorithm>

#include <fmt/format.h>

#include "memfit/memory/largest_layer.h"
#include "memfit/memory/module_sizes.h"
#include "memfit/model/arch.h"
#include "memfit/model/config.h"
#include "memfit/model/keep_fp32.h"
#include "memfit/model/model_class.h"
#include "memfit/report/ascii_table.h"
#include "memfit/report/convert_bytes.h"

namespace memfit {
namespace {

const std::vector<std::string> kAccelerateDtypes{"float32", "float16", "int8", "int4"};
const std::vector<std::string> kMemfitDtypes{"float32", "float16", "bfloat16", "int8", "int4"};

std::vector<std::string> checked_dtypes(const EstimateRequest& req) {
  const auto& allowed = estimate_dtypes(req.mode);
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
    // A tensor kept in float32 at this row's dtype (transformers' keep-in-fp32 rules apply to
    // float16 and bfloat16 loads only) is not A + B·b: that row is sized on its own and never
    // serves a derivation. The float32 and integer rows keep nothing and stay linear.
    if (opt.keep_fp32 && keeps_any(*opt.dtype)) return compute_module_sizes(tree, opt, order);
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
  bool keeps_any(DType load) const {
    return std::any_of(tree.tensors.begin(), tree.tensors.end(),
                       [&](const TensorInfo& t) { return kept_in_fp32(t.keep_fp32, load); });
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
  RowSizer row_sizes{tree, order, {}, {0, 0}};
  for (const auto& d : dtypes) {
    SizeOptions opt;
    opt.include_legacy_buffers = false;
    opt.bool_as_bit = false;
    opt.dtype = row_dtype(d);
    opt.cast_floats = true;
    opt.keep_fp32 = true;
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

// The report of `model` whose tree, narrowed to this mode's era when it came from the config, is
// Which figures are exact: the weights always are (the checkpoint's headers, or the family's tree
// from the config); the KV cache is a guess when no family read the config (generic keys).
std::vector<FigureBasis> figure_bases(const Model& model) {
  std::vector<FigureBasis> out;
  out.push_back({"weights", true,
                 model.from_checkpoint ? "checkpoint headers" : "config (" + model.library + " " + model.model_type + ")"});
  if (!model.dims.value) return out;
  const std::string basis = model.unknown_family
                                ? "generic config keys (num_hidden_layers, num_attention_heads, "
                                  "num_key_value_heads, head_dim, hidden_size)"
                                : "config (the " + model.model_type + " family's layers)";
  out.push_back({"kv_cache", !model.unknown_family, basis});
  out.push_back({"activations", !model.unknown_family, basis});
  return out;
}

// `tree` (model.tree itself is not read: the caller may have moved it into `tree`).
Report report_for(const Model& model, const TensorTree& tree) {
  const EstimateRequest& req = model.request;
  const std::vector<std::string> dtypes = checked_dtypes(req);
  const bool compat = req.mode == Mode::kAccelerate;
  Report report;
  report.name = req.name;
  report.library = model.library;
  report.model_type = model.model_type;
  report.model_class = tree.class_name();
  report.mode = req.mode;
  report.parameters = model.parameters;
  report.notes = model.notes;
  report.comparison = model.comparison;
  report.figures = figure_bases(model);
  const std::vector<int> order = tree.named_module_tensors();  // shared by every sizing
  if (model.from_checkpoint) {
    report.source = "checkpoint";
    report.checkpoint_format = req.checkpoint_format;
    SizeOptions stored;
    stored.bool_as_bit = false;
    report.stored_bytes = bits_to_bytes(compute_module_sizes(tree, stored, order).total());
  }

  SizeOptions f32;
  f32.include_legacy_buffers = compat;
  f32.bool_as_bit = compat;
  const ModuleSizes sizes = compute_module_sizes(tree, f32, order);
  const LargestLayer largest =
      largest_layer(tree, sizes, compat ? LayerRule::kAccelerate : LayerRule::kComplete);
  report.largest_layer_names = largest.names;
  report.module_sizes.reserve(sizes.order.size());
  for (const TreeItem& item : sizes.order) {
    report.module_sizes.emplace_back(item.name(tree), bits_to_bytes(sizes.at(item)));
    if (!item.is_tensor && tree.modules[static_cast<std::size_t>(item.index)].repeat > 1)
      report.module_repeats.emplace_back(item.name(tree), tree.modules[static_cast<std::size_t>(item.index)].repeat);
  }
  const std::vector<std::uint64_t> copies = tree.multiplicities();
  Bits buffer_bits = 0, legacy_bits = 0;
  std::uint64_t legacy_count = 0;
  for (const auto& t : tree.tensors) {
    if (t.kind != TensorKind::kBuffer) continue;
    const std::uint64_t n = copies[static_cast<std::size_t>(t.module)];
    if (counted(t, f32)) buffer_bits += tensor_bits(t, f32) * n;
    if (t.era == BufferEra::kLegacyOnly) {
      legacy_count += n;
      SizeOptions all = f32;
      all.include_legacy_buffers = true;
      legacy_bits += tensor_bits(t, all) * n;
    }
  }
  report.buffers_bytes = bits_to_bytes(buffer_bits);

  if (compat) {
    accelerate_rows(tree, dtypes, sizes, largest, report);
  } else {
    memfit_rows(tree, order, dtypes, static_cast<double>(report.parameters), report);
    if (legacy_count > 0)
      report.notes.push_back(fmt::format(
          "{} buffers that only transformers 4.40 allocates (rotary caches, causal masks; {}) "
          "are not counted; --compat accelerate counts them",
          legacy_count, convert_bytes(bits_to_bytes(legacy_bits))));
  }
  return report;
}

// The config's tree as this mode's transformers allocates it; the checkpoint's tree as is.
// `Tree` is `const TensorTree&` (the tree is copied to be narrowed) or `TensorTree&&` (it is
// narrowed in place: the page's and the benchmark's estimate own their model).
template <typename Tree>
Report report_in_era(const Model& model, Tree&& tree) {
  if (model.from_checkpoint) return report_for(model, tree);
  return report_for(model, for_era(std::forward<Tree>(tree), model.request.mode == Mode::kAccelerate));
}

}  // namespace

const std::vector<std::string>& estimate_dtypes(Mode mode) {
  return mode == Mode::kAccelerate ? kAccelerateDtypes : kMemfitDtypes;
}

std::string mode_name(Mode m) { return m == Mode::kAccelerate ? "accelerate" : "memfit"; }

Result<Report> estimate(const EstimateRequest& req) {
  // Only sizes are summed: repeated experts stay one module with a count.
  Result<Model> model = build_model(req, TreeForm::kCompact);
  if (!model) return model.error();
  // The model is ours: its tree is narrowed without a copy (a 50k-tensor copy per estimate).
  Model& m = model.value();
  return capture([&] { return report_in_era(m, std::move(m.tree)); });
}

namespace {

using SizeList = std::vector<std::pair<std::string, double>>;

// Entries [begin, end) of a compact list, names renamed below `from` to `to`. An entry at or below
// a repeated module not yet being written out opens a block: it and the entries below that module
// that follow it, written once per copy. A repeated module's own tensors come first, its buffers
// much later (accelerate lists parameters, then buffers), so one module may open two blocks.
void write_named(const Report& r, std::size_t begin, std::size_t end, const std::string& from,
                 const std::string& to, SizeList& out) {
  const CopyNames renamed{from.size(), to};
  auto under = [](const std::string& n, const std::string& m) {
    return n.size() > m.size() && n.compare(0, m.size(), m) == 0 && n[m.size()] == '.';
  };
  for (std::size_t i = begin; i < end;) {
    const std::string& name = r.module_sizes[i].first;
    const std::pair<std::string, std::int64_t>* outer = nullptr;
    for (const auto& rep : r.module_repeats)
      if (rep.first.size() > from.size() && (name == rep.first || under(name, rep.first)) &&
          (!outer || rep.first.size() < outer->first.size()))
        outer = &rep;
    if (!outer) {
      out.emplace_back(renamed(name), r.module_sizes[i].second);
      ++i;
      continue;
    }
    const bool opens = name == outer->first;
    std::size_t block = opens ? i + 1 : i;
    while (block < end && under(r.module_sizes[block].first, outer->first)) ++block;
    const std::string first = renamed(outer->first);
    for (std::int64_t k = 0; k < outer->second; ++k) {
      const std::string copy = k == 0 ? first : repeat_name(first, k);
      if (opens) out.emplace_back(copy, r.module_sizes[i].second);
      write_named(r, opens ? i + 1 : i, block, outer->first, copy, out);
    }
    i = block;
  }
}

}  // namespace

std::vector<std::pair<std::string, double>> named_module_sizes(const Report& report) {
  if (report.module_repeats.empty()) return report.module_sizes;
  SizeList out;
  write_named(report, 0, report.module_sizes.size(), "", "", out);
  return out;
}

Result<Report> estimate(const Model& model) {
  return capture([&] { return report_in_era(model, model.tree); });
}

std::string render_table(const Report& report) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : report.rows) rows.push_back({r.dtype, r.largest_layer, r.total, r.training});
  return create_ascii_table({"dtype", "Largest Layer", "Total Size", "Training using Adam"}, rows,
                            fmt::format("Memory Usage for loading `{}`", report.name));
}

}  // namespace memfit
