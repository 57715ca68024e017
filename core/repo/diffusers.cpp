// diffusers pipelines (Stable Diffusion, SDXL, SD3, FLUX, …): model_index.json names the
// components; each model component's weights are sized from its safetensors headers (or a
// transformers text encoder from its config alone), and the pipeline's GPU peak is given for
// diffusers' three ways to run it: everything on the GPU, enable_model_cpu_offload and
// enable_sequential_cpu_offload (docs/diffusers.md).
#include <algorithm>

#include <fmt/format.h>

#include "diffusers_parts.h"
#include "repo_tensors.h"
#include "kinds.h"
#include "memfit/error.h"
#include "memfit/format/strict_json.h"
#include "memfit/report/convert_bytes.h"

namespace memfit::repo {
namespace {

using diffusers::Component;
using diffusers::ComponentSize;
using diffusers::WeightsChoice;

constexpr const char* kIndexFile = "model_index.json";

std::string config_path(const Component& c) { return c.name + "/config.json"; }

bool in_folder(const RepoFiles& files, const std::string& folder) {
  const std::string head = folder + "/";
  return std::any_of(files.listing.begin(), files.listing.end(),
                     [&](const std::string& p) { return p.compare(0, head.size(), head) == 0; });
}

std::optional<DType> requested_dtype(const RepoOptions& options) {
  if (options.dtype.empty()) return std::nullopt;
  const auto dt = dtype_from_name(options.dtype);
  if (!dt || (*dt != DType::kF32 && *dt != DType::kF16 && *dt != DType::kBF16))
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("dtype: '{}' is not a dtype a diffusers pipeline loads in (float32, float16, "
                            "bfloat16)", options.dtype),
                {{0, 5}});
  return dt;
}

// One line of the components table, and what the offload modes need of it.
struct Part {
  Component component;
  WeightsChoice weights;
  ComponentSize size;
  std::string status;  // why it has no weights: "" when it has
};

// A model component with weights must have its config (diffusers instantiates the class from
// it); a config that was read must be a JSON object.
void check_config(const RepoFiles& files, const Part& p) {
  const std::string path = config_path(p.component);
  if (p.weights.form != WeightsChoice::Form::kNone && !has_file(files, path))
    throw Error(ErrorCode::kRepoMissingFile,
                fmt::format("{}: missing (the component '{}' has weights; diffusers builds {} from its "
                            "config)", path, p.component.name, p.component.class_name));
  auto it = files.texts.find(path);
  if (it == files.texts.end() || it->second.empty()) return;
  Json j;
  if (auto err = parse_strict_json(it->second, 64, &j, JsonDialect::kPython))
    throw Error(ErrorCode::kRepoInvalid, fmt::format("{}: not valid JSON ({})", path, err->detail));
  if (!j.is_object())
    throw Error(ErrorCode::kRepoInvalid, fmt::format("{}: expected a JSON object, got {}", path, j.type_name()));
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string with_bytes(const std::string& what, std::uint64_t bytes) {
  return fmt::format("{} ({})", what, convert_bytes(static_cast<double>(bytes)));
}

struct OffloadMode {
  std::string name, call;
  std::uint64_t peak = 0;
  std::vector<std::string> on_gpu;  // what is on the GPU at the peak
  Json detail = Json::object();
};

// (b) enable_model_cpu_offload: the sequence's components take turns on the GPU; excluded ones
// are moved there whole; model components outside the sequence (a ControlNet) are offloaded by
// their own hook and stay on the GPU once used until the call ends — counted as resident.
OffloadMode model_offload(const std::vector<Part>& parts, const diffusers::OffloadPolicy& policy) {
  OffloadMode m{"model offload", "enable_model_cpu_offload()", 0, {}, Json::object()};
  const Part* largest = nullptr;
  Json resident = Json::array();
  for (const Part& p : parts) {
    if (!p.size.has_weights) continue;
    const std::string& n = p.component.name;
    const bool seq = std::find(policy.sequence.begin(), policy.sequence.end(), n) != policy.sequence.end();
    const bool excluded = std::find(policy.excluded.begin(), policy.excluded.end(), n) != policy.excluded.end();
    if (excluded || !seq) {
      m.peak += p.size.bytes;
      m.on_gpu.push_back(with_bytes(n + (excluded ? ", excluded from offload" : ", outside the sequence"),
                                    p.size.bytes));
      resident.push_back({{"component", n}, {"bytes", p.size.bytes},
                          {"why", excluded ? "excluded" : "outside_sequence"}});
      continue;
    }
    if (!largest || p.size.bytes > largest->size.bytes) largest = &p;
  }
  if (largest) {
    m.peak += largest->size.bytes;
    m.on_gpu.insert(m.on_gpu.begin(), with_bytes(largest->component.name, largest->size.bytes));
  }
  Json seq = Json::array();
  for (const auto& s : policy.sequence) seq.push_back(s);
  m.detail = {{"largest_component", largest ? Json(largest->component.name) : Json(nullptr)},
              {"largest_component_bytes", largest ? largest->size.bytes : 0},
              {"resident", std::move(resident)},
              {"sequence", std::move(seq)},
              {"known_pipeline", policy.known}};
  return m;
}

// (c) enable_sequential_cpu_offload: accelerate's cpu_offload hooks each module with tensors of
// its own, so the GPU holds one module's weights at a time; excluded components go there whole.
OffloadMode sequential_offload(const std::vector<Part>& parts, const diffusers::OffloadPolicy& policy) {
  OffloadMode m{"sequential offload", "enable_sequential_cpu_offload()", 0, {}, Json::object()};
  const Part* largest = nullptr;
  Json resident = Json::array();
  for (const Part& p : parts) {
    if (!p.size.has_weights) continue;
    const std::string& n = p.component.name;
    if (std::find(policy.excluded.begin(), policy.excluded.end(), n) != policy.excluded.end()) {
      m.peak += p.size.bytes;
      m.on_gpu.push_back(with_bytes(n + ", excluded from offload", p.size.bytes));
      resident.push_back({{"component", n}, {"bytes", p.size.bytes}, {"why", "excluded"}});
      continue;
    }
    if (!largest || p.size.largest_module_bytes > largest->size.largest_module_bytes) largest = &p;
  }
  std::string module;
  if (largest) {
    m.peak += largest->size.largest_module_bytes;
    module = largest->component.name + (largest->size.largest_module.empty() ? "" : "." + largest->size.largest_module);
    m.on_gpu.insert(m.on_gpu.begin(), with_bytes(module, largest->size.largest_module_bytes));
  }
  m.detail = {{"component", largest ? Json(largest->component.name) : Json(nullptr)},
              {"module", largest ? Json(largest->size.largest_module) : Json(nullptr)},
              {"module_bytes", largest ? largest->size.largest_module_bytes : 0},
              {"resident", std::move(resident)}};
  return m;
}

std::string weights_cell(const Part& p) {
  if (!p.status.empty()) return p.status;
  return p.size.source;
}

}  // namespace

std::vector<FileNeed> diffusers_needs(const RepoFiles& files) {
  if (!has_file(files, kIndexFile)) return {{"", kIndexFile, FileNeed::Form::kText, false}};
  const auto index = diffusers::parse_model_index(text_of(files, kIndexFile));
  std::vector<FileNeed> needs;
  auto want = [&](const std::string& path, FileNeed::Form form, bool optional) {
    if (!has_file(files, path)) needs.push_back({"", path, form, optional});
  };
  for (const Component& c : index.components) {
    const WeightsChoice w = diffusers::choose_weights(files, c.name);
    if (w.form == WeightsChoice::Form::kNone && diffusers::is_weightless_class(c)) continue;
    // Without weights only a transformers config says anything (it is sized from it).
    const bool weights = w.form != WeightsChoice::Form::kNone;
    if (listed(files, config_path(c)) && (weights || c.library == "transformers"))
      want(config_path(c), FileNeed::Form::kText, !weights);
    if (w.form == WeightsChoice::Form::kSafetensors) {
      want(w.file, FileNeed::Form::kSafetensorsHeader, false);
    } else if (w.form == WeightsChoice::Form::kShardedSafetensors) {
      if (!has_file(files, w.file)) {
        want(w.file, FileNeed::Form::kText, false);
        continue;
      }
      for (const std::string& shard : index_shard_paths(files, w.file)) {
        if (!listed(files, shard))
          throw Error(ErrorCode::kRepoMissingFile,
                      fmt::format("{}: named by {}, not in the repo", shard, w.file));
        want(shard, FileNeed::Form::kSafetensorsHeader, false);
      }
    }
  }
  return needs;
}

RepoReport diffusers_report(const RepoFiles& files, const RepoOptions& options) {
  const auto index = diffusers::parse_model_index(text_of(files, kIndexFile));
  const std::optional<DType> dtype = requested_dtype(options);
  RepoReport report;
  report.kind = RepoKind::kDiffusers;
  report.title = fmt::format("{}: diffusers {}{}", files.repo.empty() ? "pipeline" : files.repo, index.class_name,
                             index.version.empty() ? "" : " (diffusers " + index.version + ")");

  std::vector<Part> parts;
  std::vector<std::string> model_components;
  for (const Component& c : index.components) {
    Part p{c, diffusers::choose_weights(files, c.name), {}, ""};
    check_config(files, p);
    if (p.weights.form == WeightsChoice::Form::kNone && diffusers::is_weightless_class(c)) {
      p.status = "no weights (not a torch module)";
    } else if (!in_folder(files, c.name)) {
      p.status = "not in the repo";
      report.notes.push_back(fmt::format("{}: model_index.json lists {}, the repo has no {}/ folder "
                                         "(from_pretrained needs it passed in, or {}=None)",
                                         c.name, c.class_name, c.name, c.name));
    } else {
      p.size = diffusers::size_component(files, c, p.weights, dtype);
      if (!p.size.has_weights) p.status = p.size.source;
      for (auto& n : p.size.notes) report.notes.push_back(std::move(n));
      if (p.size.has_weights) model_components.push_back(c.name);
    }
    parts.push_back(std::move(p));
  }

  // The components table and the pipeline's total.
  RepoTable table{"components", {"component", "class", "weights", "parameters", "dtype", "bytes"}, {}};
  std::uint64_t total_bytes = 0, total_params = 0;
  bool params_known = true;
  Json components = Json::array();
  for (const Part& p : parts) {
    const bool w = p.size.has_weights;
    table.rows.push_back({p.component.name, p.component.class_name, weights_cell(p),
                          w && p.size.parameters ? std::to_string(*p.size.parameters) : "-",
                          w && !p.size.dtypes.empty() ? join(p.size.dtypes, ", ") : "-",
                          w ? convert_bytes(static_cast<double>(p.size.bytes)) : "-"});
    if (w) {
      total_bytes += p.size.bytes;
      if (p.size.parameters) total_params += *p.size.parameters;
      else params_known = false;
    }
    Json files_json = Json::array();
    if (p.weights.form == WeightsChoice::Form::kOtherFormat)
      for (const auto& f : p.weights.other_files) files_json.push_back(f);
    else if (p.weights.form != WeightsChoice::Form::kNone)
      files_json.push_back(p.weights.file);
    components.push_back(
        {{"name", p.component.name},
         {"library", p.component.library},
         {"class", p.component.class_name},
         {"has_weights", w},
         {"source", weights_cell(p)},
         {"files", std::move(files_json)},
         {"variant", p.weights.variant.empty() ? Json(nullptr) : Json(p.weights.variant)},
         {"parameters", w && p.size.parameters ? Json(*p.size.parameters) : Json(nullptr)},
         {"dtypes", w ? Json(p.size.dtypes) : Json::array()},
         {"bytes", w ? p.size.bytes : 0},
         {"largest_module", w ? Json(p.size.largest_module) : Json(nullptr)},
         {"largest_module_bytes", w ? p.size.largest_module_bytes : 0}});
  }
  table.rows.push_back({"total", "", "", params_known ? std::to_string(total_params) : "≥ " + std::to_string(total_params),
                        "", convert_bytes(static_cast<double>(total_bytes))});
  report.tables.push_back(std::move(table));

  // The offload modes.
  const diffusers::OffloadPolicy policy = diffusers::offload_policy(index.class_name, model_components);
  OffloadMode none{"no offload", "pipe.to(\"cuda\")", total_bytes, {"every component"}, Json::object()};
  std::vector<OffloadMode> modes{none, model_offload(parts, policy), sequential_offload(parts, policy)};
  RepoTable offload{"offload modes (weights only)", {"mode", "call", "peak GPU", "on the GPU at the peak"}, {}};
  if (options.gpu_bytes > 0) offload.columns.push_back("fits " + convert_bytes(static_cast<double>(options.gpu_bytes)));
  Json modes_json = Json::object();
  const char* keys[] = {"none", "model", "sequential"};
  for (std::size_t i = 0; i < modes.size(); ++i) {
    OffloadMode& m = modes[i];
    std::vector<std::string> row{m.name, m.call, convert_bytes(static_cast<double>(m.peak)), join(m.on_gpu, " + ")};
    m.detail["peak_bytes"] = m.peak;
    if (options.gpu_bytes > 0) {
      row.push_back(m.peak <= options.gpu_bytes ? "yes" : "no");
      m.detail["fits"] = m.peak <= options.gpu_bytes;
    }
    offload.rows.push_back(std::move(row));
    modes_json[keys[i]] = std::move(m.detail);
  }
  report.tables.push_back(std::move(offload));

  report.lines.push_back(fmt::format("total: {}{} parameters, {}", params_known ? "" : "at least ", total_params,
                                     convert_bytes(static_cast<double>(total_bytes))));
  if (options.gpu_bytes > 0) {
    std::vector<std::string> fit;
    for (std::size_t i = 0; i < modes.size(); ++i)
      if (modes[i].peak <= options.gpu_bytes) fit.push_back(modes[i].call);
    report.lines.push_back(fit.empty() ? fmt::format("no mode fits {} (weights alone)",
                                                     convert_bytes(static_cast<double>(options.gpu_bytes)))
                                       : fmt::format("fits {}: {}", convert_bytes(static_cast<double>(options.gpu_bytes)),
                                                     join(fit, ", ")));
  }

  report.notes.push_back(dtype ? fmt::format("floating weights at {} (torch_dtype); integer tensors as stored",
                                             torch_name(*dtype))
                               : "weights as stored; from_pretrained without torch_dtype loads floating weights "
                                 "as float32 (--dtype float32 sizes that)");
  report.notes.push_back("peaks count weights only: activations, the VAE decode and the CUDA context come on top");
  if (!policy.known)
    report.notes.push_back(fmt::format("{} is not in memfit's table of model_cpu_offload_seq: every model "
                                       "component is assumed offloaded in turn", index.class_name));
  if (!index.absent.empty())
    report.notes.push_back(fmt::format("not part of this pipeline (null in model_index.json): {}", join(index.absent, ", ")));

  report.fields = {{"pipeline", index.class_name},
                   {"diffusers_version", index.version},
                   {"dtype", dtype ? Json(std::string(torch_name(*dtype))) : Json(nullptr)},
                   {"components", std::move(components)},
                   {"absent", index.absent},
                   {"total", {{"parameters", total_params}, {"parameters_known", params_known}, {"bytes", total_bytes}}},
                   {"offload", std::move(modes_json)},
                   {"gpu_bytes", options.gpu_bytes}};
  return report;
}

}  // namespace memfit::repo
