// PEFT adapters (issue 18): adapter_config.json names the base model (another repo, whose
// config.json is read) and the adapter; the adapter's tensors come from adapter_model.safetensors'
// header (exact) or, without it, from r and target_modules over the base model's tree
// (memfit/memory/lora.h). The merged model is merge_and_unload()'s: LoRA deltas fold into the
// base weights they wrap, modules_to_save replace their base modules.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "kinds.h"
#include "memfit/error.h"
#include "memfit/model/arch.h"
#include "memfit/model/model.h"
#include "memfit/model/model_dims.h"
#include "peft_config.h"
#include "repo_tensors.h"

namespace memfit::repo {
namespace {

constexpr const char* kConfig = "adapter_config.json";
constexpr const char* kWeights = "adapter_model.safetensors";
constexpr const char* kPrefix = "base_model.model.";

// PeftModel's task_type → the transformers auto class its base is loaded with.
std::string_view auto_class_for(std::string_view task_type) {
  if (task_type == "CAUSAL_LM") return "AutoModelForCausalLM";
  if (task_type == "SEQ_CLS") return "AutoModelForSequenceClassification";
  if (task_type == "SEQ_2_SEQ_LM") return "AutoModelForSeq2SeqLM";
  if (task_type == "TOKEN_CLS") return "AutoModelForTokenClassification";
  if (task_type == "QUESTION_ANS") return "AutoModelForQuestionAnswering";
  if (task_type == "FEATURE_EXTRACTION") return "AutoModel";
  return {};
}

Model base_model(const peft::AdapterConfig& a, const std::string& config_text, std::vector<std::string>& notes) {
  EstimateRequest req;
  req.config_text = config_text;
  req.name = a.base_model;
  auto built = build_model(req);
  if (!built) throw built.error();
  Model m = std::move(built).value();
  const std::string_view wanted = auto_class_for(a.task_type);
  if (wanted.empty()) return m;
  const Family* f = find_family(m.library, m.model_type);
  if (!f) return m;
  for (const auto& c : f->classes) {
    if (c.auto_class != wanted) continue;
    if (c.name == m.class_name()) return m;
    req.class_override = std::string(c.name);
    auto again = build_model(req);
    if (!again) throw again.error();
    return std::move(again).value();
  }
  notes.push_back(fmt::format("task_type {} asks for {}, which memfit does not describe for {}; the base is "
                              "sized as {}", a.task_type, wanted, m.model_type, m.class_name()));
  return m;
}

std::int64_t vocab_of(const Model& m) {
  if (m.dims.value) return m.dims.value->vocab;
  return text_config(m.config).dim_or({"vocab_size"}, 0);
}

struct AdapterTensor {
  SizedTensor t;
  std::string module;   // the wrapped (or saved) module, without base_model.model.
  bool lora = false;    // a LoRA piece (folds into its base weight on merge)
  std::int64_t r = 0;   // LoRA: the rank (lora_A's rows)
};

// "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight" → module and piece.
AdapterTensor classify(SizedTensor t, bool lora_type) {
  AdapterTensor a;
  std::string name = t.name;
  if (name.rfind(kPrefix, 0) == 0) name = name.substr(std::string(kPrefix).size());
  const auto at = lora_type ? name.find(".lora_") : std::string::npos;
  if (at != std::string::npos) {
    a.module = name.substr(0, at);
    a.lora = true;
    const std::string piece = name.substr(at + 1);
    if ((piece == "lora_A.weight" || piece == "lora_embedding_A") && !t.shape.empty()) a.r = t.shape[0];
  } else {
    const auto dot = name.rfind('.');
    a.module = dot == std::string::npos ? name : name.substr(0, dot);
  }
  a.t = std::move(t);
  a.t.name = name;
  return a;
}

SizedTensor sized(std::string name, DType dtype, Shape shape) {
  SizedTensor t{std::move(name), dtype, std::move(shape), 1, 0};
  for (auto d : t.shape) t.numel *= static_cast<std::uint64_t>(d);
  t.bytes = t.numel * static_cast<std::uint64_t>(dtype_bits(dtype)) / 8;
  return t;
}

// target_modules null: PEFT's default for the base's model_type, as get_peft_model applies it.
void use_default_targets(peft::AdapterConfig& a, const std::string& model_type, std::vector<std::string>& notes) {
  auto targets = peft::lora_default_targets(model_type);
  if (!targets)
    throw Error(ErrorCode::kRepoInvalid,
                fmt::format("{}: target_modules is null and PEFT has no default for model_type '{}' (it asks for "
                            "target_modules); memfit needs target_modules, or {} to read", kConfig, model_type, kWeights));
  a.target_list = std::move(*targets);
  a.targets_given = true;
  notes.push_back(fmt::format("target_modules is null: PEFT's default for {} is {}", model_type, a.targets_text()));
}

// The adapter's tensors from r and target_modules over the base tree, as LoraLayer.update_layer
// creates them and get_peft_model_state_dict saves them.
std::vector<AdapterTensor> planned_tensors(const peft::AdapterConfig& a, const Model& base,
                                           const std::vector<SizedTensor>& base_tensors,
                                           std::vector<std::string>& notes) {
  const TensorTree tree = for_era(base.tree, /*legacy=*/false);
  const LoraPlan plan = [&] {
    try {
      return lora_plan(tree, vocab_of(base), peft::lora_select(a), a.targets_text(),
                       a.target_regex && !a.all_linear() ? " (re.fullmatch on each module name)"
                                                         : " (a module whose name is a target or ends with '.' + target)");
    } catch (const Error& e) {
      // The adapter's own file is wrong for this base, not the command line.
      if (e.code() != ErrorCode::kInvalidArgument) throw;
      throw Error(ErrorCode::kRepoInvalid, fmt::format("{} over {} ({}): {}", kConfig, a.base_model,
                                                       base.class_name(), e.message()));
    }
  }();
  // get_peft_model(autocast_adapter_dtype=True) keeps LoRA weights in float32.
  constexpr DType kAdapterDtype = DType::kF32;
  std::vector<AdapterTensor> out;
  for (const auto& ad : plan.adapters) {
    const int mi = tree.find_module(ad.module);
    const bool embedding = mi >= 0 && tree.modules[static_cast<std::size_t>(mi)].class_name.find("Embedding") != std::string::npos;
    auto add = [&](const std::string& piece, Shape shape, std::int64_t r) {
      AdapterTensor t;
      t.t = sized(ad.module + "." + piece, kAdapterDtype, std::move(shape));
      t.module = ad.module;
      t.lora = true;
      t.r = r;
      out.push_back(std::move(t));
    };
    add(embedding ? "lora_embedding_A" : "lora_A.weight", {ad.a_rows, ad.a_cols}, ad.a_rows);
    add(embedding ? "lora_embedding_B" : "lora_B.weight", {ad.b_rows, ad.b_cols}, 0);
    if (a.lora_bias) add("lora_B.bias", {ad.b_rows}, 0);
    if (a.use_dora) add("lora_magnitude_vector", {ad.b_rows}, 0);  // DoRA: one magnitude per output
  }
  // modules_to_save and bias="all" / "lora_only": the base's own tensors, saved whole.
  std::vector<std::string> wrapped;
  for (const auto& ad : plan.adapters) wrapped.push_back(ad.module + ".");
  for (const auto& bt : base_tensors) {
    const auto dot = bt.name.rfind('.');
    const std::string module = dot == std::string::npos ? "" : bt.name.substr(0, dot);
    const bool is_bias = bt.name.find("bias") != std::string::npos;
    bool save = peft::is_module_to_save(a, module);
    save = save || (a.bias == "all" && is_bias);
    if (a.bias == "lora_only" && is_bias)
      for (const auto& w : wrapped) save = save || bt.name.rfind(w, 0) == 0;
    if (!save) continue;
    AdapterTensor t;
    t.t = bt;
    t.module = module;
    out.push_back(std::move(t));
  }
  for (const auto& t : a.target_list)
    if (t == "embed_tokens" || t == "lm_head")
      notes.push_back("target_modules names an embedding layer: PEFT then also saves the input and output "
                      "embeddings whole (save_embedding_layers='auto'), which this count leaves out");
  if (a.has_target_parameters)
    notes.push_back("target_parameters (LoRA on parameters, e.g. MoE experts) are not counted from the config");
  return out;
}

std::string rank_text(std::int64_t lo, std::int64_t hi) {
  if (lo == 0) return "-";
  return lo == hi ? std::to_string(lo) : fmt::format("{}–{}", lo, hi);
}

}  // namespace

std::vector<FileNeed> peft_needs(const RepoFiles& files) {
  if (!has_file(files, kConfig)) return {{"", kConfig, FileNeed::Form::kText, false}};
  peft::AdapterConfig a = peft::parse_adapter_config(text_of(files, kConfig));
  if (a.base_model.empty())
    throw Error(ErrorCode::kRepoInvalid,
                fmt::format("{}: base_model_name_or_path is empty; memfit needs the base model (its config.json)", kConfig));
  std::vector<FileNeed> out;
  const FileNeed base{a.base_model, "config.json", FileNeed::Form::kText, false};
  if (!has_file(files, base.key())) out.push_back(base);
  if (listed(files, kWeights) && !has_file(files, kWeights))
    out.push_back({"", kWeights, FileNeed::Form::kSafetensorsHeader, false});
  return out;
}

RepoReport peft_report(const RepoFiles& files, const RepoOptions& options) {
  peft::AdapterConfig a = peft::parse_adapter_config(text_of(files, kConfig));
  if (a.base_model.empty())
    throw Error(ErrorCode::kRepoInvalid,
                fmt::format("{}: base_model_name_or_path is empty; memfit needs the base model (its config.json)", kConfig));
  const bool have_header = files.headers.count(kWeights) != 0;
  if (!a.is_lora() && !have_header)
    throw Error(ErrorCode::kUnsupportedLibrary,
                fmt::format("{}: peft_type {}: memfit sizes LoRA adapters from r and target_modules, other "
                            "types only from {} (this repo lists none)", kConfig, a.peft_type, kWeights));
  const std::optional<DType> cast = option_dtype(options);
  RepoReport r;
  r.kind = RepoKind::kPeft;

  // The base model, from its config.json.
  const std::string base_key = file_key(a.base_model, "config.json");
  const std::string& base_text = text_of(files, base_key);
  if (base_text.empty())
    throw Error(ErrorCode::kRepoMissingFile,
                fmt::format("base model {}: config.json was not found (adapter_config.json's "
                            "base_model_name_or_path names it)", a.base_model));
  Model base = [&] {
    try {
      return base_model(a, base_text, r.notes);
    } catch (const Error& e) {
      throw Error(e.code(), fmt::format("base model {} ({}): {}", a.base_model, base_key, e.message()));
    }
  }();
  const std::vector<SizedTensor> base_tensors = stored_tensors(base);
  const TensorTotals base_totals{base.parameters, totals(base_tensors, cast).bytes};
  const std::string base_dtype = dtype_summary(base_tensors, cast);

  // The adapter's tensors.
  std::vector<AdapterTensor> adapter;
  if (have_header) {
    for (auto& t : header_tensors(files, kWeights)) adapter.push_back(classify(std::move(t), a.is_lora()));
  } else {
    if (listed(files, "adapter_model.bin"))
      r.notes.push_back("adapter_model.bin is not read: the adapter is counted from r and target_modules");
    if (!a.targets_given) use_default_targets(a, base.model_type, r.notes);
    adapter = planned_tensors(a, base, base_tensors, r.notes);
    r.notes.push_back("adapter weights counted in float32 (get_peft_model's autocast_adapter_dtype)");
  }

  // Group by module pattern (numbered layers as *): LoRA pieces, then saved tensors.
  struct Group {
    std::string name;
    bool lora = false;
    std::vector<std::string> modules;
    std::int64_t r_lo = 0, r_hi = 0;
    std::vector<SizedTensor> tensors;
  };
  std::vector<Group> groups;
  std::map<std::pair<bool, std::string>, std::size_t> group_of;
  for (const auto& t : adapter) {
    const auto key = std::make_pair(t.lora, generic_name(t.module));
    auto it = group_of.find(key);
    if (it == group_of.end()) {
      it = group_of.emplace(key, groups.size()).first;
      groups.push_back({key.second, t.lora, {}, 0, 0, {}});
    }
    Group& g = groups[it->second];
    if (std::find(g.modules.begin(), g.modules.end(), t.module) == g.modules.end()) g.modules.push_back(t.module);
    if (t.r > 0) {
      g.r_lo = g.r_lo ? std::min(g.r_lo, t.r) : t.r;
      g.r_hi = std::max(g.r_hi, t.r);
    }
    g.tensors.push_back(t.t);
  }
  std::stable_sort(groups.begin(), groups.end(), [](const Group& x, const Group& y) { return x.lora > y.lora; });

  std::vector<SizedTensor> all_adapter;
  for (const auto& t : adapter) all_adapter.push_back(t.t);
  const TensorTotals adapter_totals = totals(all_adapter, cast);
  std::size_t wrapped = 0;
  RepoTable adapter_table{"adapter (" + a.peft_type + ")", {"modules", "count", "r", "parameters", "size", "dtype"}, {}};
  Json group_fields = Json::array();
  for (const auto& g : groups) {
    const TensorTotals gt = totals(g.tensors, cast);
    if (g.lora) wrapped += g.modules.size();
    const std::string label = g.lora || !a.is_lora() ? g.name : g.name + " (saved whole)";
    adapter_table.rows.push_back({label, std::to_string(g.modules.size()), rank_text(g.r_lo, g.r_hi),
                                  std::to_string(gt.parameters), size_text(gt.bytes), dtype_summary(g.tensors, cast)});
    group_fields.push_back({{"modules", g.name}, {"count", g.modules.size()}, {"kind", g.lora ? "lora" : "saved"},
                            {"r", g.r_hi ? Json(g.r_hi) : Json()}, {"parameters", gt.parameters},
                            {"bytes", gt.bytes}, {"dtype", dtype_summary(g.tensors, cast)}});
  }

  // The merged model (LoRA only): LoRA pieces fold into the weights they wrap (no new tensor);
  // a saved tensor replaces the base tensor of its name, kept at the base's dtype.
  std::map<std::string, const SizedTensor*> base_by_name;
  for (const auto& t : base_tensors) base_by_name[t.name] = &t;
  const TensorTree& tree = base.tree;
  std::int64_t delta_params = 0, delta_bytes = 0;
  std::vector<std::string> missing;
  for (const auto& t : adapter) {
    if (!a.is_lora()) break;  // other types' tensors are not named after base tensors
    if (t.lora) {
      if (tree.find_module(t.module) < 0 && std::find(missing.begin(), missing.end(), t.module) == missing.end())
        missing.push_back(t.module);
      continue;
    }
    auto it = base_by_name.find(t.t.name);
    if (it == base_by_name.end()) {
      if (std::find(missing.begin(), missing.end(), t.t.name) == missing.end()) missing.push_back(t.t.name);
      continue;
    }
    const SizedTensor& b = *it->second;
    SizedTensor as_base = b;
    as_base.numel = t.t.numel;
    as_base.bytes = b.numel ? b.bytes / b.numel * t.t.numel : 0;
    delta_params += static_cast<std::int64_t>(t.t.numel) - static_cast<std::int64_t>(b.numel);
    delta_bytes += static_cast<std::int64_t>(bytes_as(as_base, cast)) - static_cast<std::int64_t>(bytes_as(b, cast));
  }
  if (!missing.empty())
    r.notes.push_back(fmt::format("{} adapter module(s) or tensor(s) are not in the base model as memfit builds "
                                  "it ({}): {}{}", missing.size(), base.class_name(), missing.front(),
                                  missing.size() > 1 ? ", …" : ""));

  const std::uint64_t total_bytes = base_totals.bytes + adapter_totals.bytes;
  RepoTable base_table{"base model", {"model", "type", "class", "parameters", "size", "dtype"}, {}};
  base_table.rows.push_back({a.base_model, base.model_type, base.class_name(), std::to_string(base_totals.parameters),
                             size_text(base_totals.bytes), base_dtype});
  r.title = fmt::format("{}: PEFT {} adapter of {}{}", files.repo.empty() ? "repo" : files.repo, a.peft_type,
                        a.base_model, a.is_lora() ? fmt::format(" (r={}, lora_alpha={})", a.r, a.lora_alpha) : "");
  r.tables.push_back(std::move(base_table));
  r.tables.push_back(std::move(adapter_table));
  r.lines.push_back(fmt::format("adapter: {} parameters, {} ({}, from {})", adapter_totals.parameters,
                                size_text(adapter_totals.bytes), a.is_lora() ? fmt::format("{} modules wrapped", wrapped) : a.peft_type,
                                have_header ? kWeights : "r and target_modules"));
  r.lines.push_back(fmt::format("base + adapter: {}", size_text(total_bytes)));
  Json merged;
  if (a.is_lora()) {
    const std::uint64_t merged_bytes = static_cast<std::uint64_t>(static_cast<std::int64_t>(base_totals.bytes) + delta_bytes);
    const std::uint64_t merged_params =
        static_cast<std::uint64_t>(static_cast<std::int64_t>(base_totals.parameters) + delta_params);
    r.lines.push_back(fmt::format("merged (merge_and_unload): {} — LoRA deltas fold into the base weights; "
                                  "modules_to_save replace their base modules", size_text(merged_bytes)));
    merged = {{"parameters", merged_params}, {"bytes", merged_bytes},
              {"how", "base + (saved tensors - the base tensors they replace), at the base's dtype; "
                      "LoRA pieces add nothing"}};
  } else {
    r.notes.push_back(fmt::format("peft_type {}: the merged size is not computed (memfit merges LoRA only)", a.peft_type));
  }

  Json targets = a.target_regex ? Json(*a.target_regex) : Json(a.target_list);
  r.fields = {{"peft_type", a.peft_type},
              {"task_type", a.task_type.empty() ? Json() : Json(a.task_type)},
              {"base_model", a.base_model},
              {"base", {{"model_type", base.model_type}, {"class", base.class_name()}, {"library", base.library},
                        {"parameters", base_totals.parameters}, {"bytes", base_totals.bytes}, {"dtype", base_dtype}}},
              {"adapter", {{"source", have_header ? "header" : "config"},
                           {"r", a.is_lora() ? Json(a.r) : Json()},
                           {"lora_alpha", a.is_lora() ? Json(a.lora_alpha) : Json()},
                           {"use_dora", a.use_dora},
                           {"target_modules", a.is_lora() ? targets : Json()},
                           {"modules_wrapped", wrapped},
                           {"parameters", adapter_totals.parameters},
                           {"bytes", adapter_totals.bytes},
                           {"dtype", dtype_summary(all_adapter, cast)},
                           {"groups", std::move(group_fields)}}},
              {"total", {{"parameters", base_totals.parameters + adapter_totals.parameters}, {"bytes", total_bytes}}},
              {"merged", merged}};
  return r;
}

}  // namespace memfit::repo
