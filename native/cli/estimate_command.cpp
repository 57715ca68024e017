#include "estimate_command.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include <filesystem>

#include "cli_error.h"
#include "file_reader.h"
#include "hub_checkpoint.h"
#include "memfit/memory/estimate.h"
#include "memfit/memory/gpu_catalog.h"
#include "memfit/memory/lora.h"
#include "memfit/memory/will_it_run.h"
#include "memfit/report/convert_bytes.h"
#include "memfit/report/report_json.h"
#include "memfit/report/run_report.h"
#include "model_source.h"
#include "repo_command.h"
#include "option_flags.h"
#include "open_checkpoint.h"

namespace memfit::cli {
namespace {

std::string with_commas(std::uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

// `checkpoint`: what the tensors were read from, when the report's source is "checkpoint".
void print_memfit_details(const Report& r, const checkpoint::Checkpoint* checkpoint) {
  fmt::print("model class: {} ({} {}), {} parameters, buffers {}\n", r.model_class, r.library,
             r.model_type, with_commas(r.parameters), convert_bytes(r.buffers_bytes));
  if (r.source == "checkpoint" && checkpoint)
    fmt::print("source: {}, {} stored\n", checkpoint::format_description(checkpoint->format),
               convert_bytes(r.stored_bytes));
  std::string names;
  for (std::size_t i = 0; i < r.largest_layer_names.size() && i < 4; ++i)
    names += (i ? ", " : "") + r.largest_layer_names[i];
  if (r.largest_layer_names.size() > 4)
    names += fmt::format(" (+{} more of the same size)", r.largest_layer_names.size() - 4);
  fmt::print("largest layer: {}\n", names);
  for (const auto& row : r.rows) {
    if (row.training_parts.empty()) continue;
    std::string parts;
    for (const auto& p : row.training_parts)
      if (p.bytes > 0) parts += fmt::format("{}{} {}", parts.empty() ? "" : " + ", p.name, convert_bytes(p.bytes));
    fmt::print("training {} (AdamW, mixed precision): {} = {}\n", row.dtype, parts, row.training);
  }
  for (const auto& n : r.notes) fmt::print("note: {}\n", n);
  const bool guessed = std::any_of(r.figures.begin(), r.figures.end(), [](const FigureBasis& f) { return !f.exact; });
  for (const auto& f : r.figures)
    if (guessed) fmt::print("{}: {}, from {}\n", f.figure, f.exact ? "exact" : "approximate", f.basis);
}

// The will-it-run options of the command line (0 / "": not given, RunOptions' default);
// CliError(kExitUsage) for a bad number; a bad name is core's Error naming the option, which
// guarded() prints with the flag. Names are read by core's tables (memfit/memory/options.h).
RunOptions run_options(const EstimateArgs& a) {
  RunOptions o;
  auto usage = [](const std::string& msg) { return CliError{kExitUsage, msg}; };
  if (a.context < 0 || a.batch < 0 || a.rank < 0 || a.gpus < 0 || a.encoder_length < 0)
    throw usage("--context, --batch, --rank, --gpus and --encoder-length must be positive");
  if (a.context > 0) o.context = a.context;
  if (a.batch > 0) o.batch = a.batch;
  if (!a.kv_dtype.empty()) o.kv_dtype = parse_name(kKvDtypeNames, a.kv_dtype, "kv_dtype");
  if (!a.engine.empty()) o.engine = parse_name(kEngineNames, a.engine, "engine");
  if (!a.dtype.empty()) o.dtype = parse_weight_dtype(a.dtype, "dtype");
  if (!a.attention.empty()) o.attention = parse_name(kAttentionNames, a.attention, "attention");
  auto size = [&](const std::string& text, const char* flag) {
    const Result<double> v = capture([&] { return parse_memory_size(text, flag); });
    if (!v) throw usage(v.error().message());
    return *v;
  };
  if (!a.overhead.empty()) o.overhead_bytes = size(a.overhead, "--overhead");
  if (!a.vram.empty()) o.vram_bytes = size(a.vram, "--vram");
  o.gpu = a.gpu;
  o.encoder_length = a.encoder_length;
  const bool train_flags = a.rank > 0 || !a.targets.empty() || !a.optimizer.empty() ||
                           a.grad_checkpointing || a.zero != 0 || a.fsdp || a.gpus > 0;
  if (a.train.empty() && train_flags)
    throw usage("--rank, --targets, --optimizer, --grad-checkpointing, --zero, --fsdp and --gpus need --train");
  if (!a.train.empty()) {
    TrainingOptions t;
    t.method = parse_name(kTrainMethodNames, a.train, "train.method");
    if (a.rank > 0) t.rank = a.rank;
    if (!a.targets.empty()) t.targets = parse_lora_targets(a.targets);
    if (!a.optimizer.empty()) t.optimizer = parse_name(kOptimizerNames, a.optimizer, "train.optimizer");
    t.grad_checkpointing = a.grad_checkpointing;
    t.zero_stage = a.zero;
    t.fsdp = a.fsdp;
    if (a.gpus > 0) t.gpus = a.gpus;
    o.train = t;
  }
  return o;
}

// The checkpoint an unknown model_type falls back to: a Hub repo's headers by Range (safetensors,
// else .bin). Without weights, `unknown`'s error gains what was looked for.
checkpoint::Checkpoint fallback_checkpoint(hub::HubClient& client, const std::string& model,
                                           const ModelSource& src, const Error& unknown) {
  if (src.origin == "hub") {
    try {
      return checkpoint::open_hub_checkpoint(client, model);
    } catch (const Failure& f) {
      if (f.kind != FailureKind::kEntryNotFound) throw;
      throw Error(unknown.code(), fmt::format("{}; exact sizes from the checkpoint were tried instead, "
                                              "but {}", unknown.message(), f.message));
    }
  }
  if (src.origin == "file")
    throw Error(unknown.code(), fmt::format("{}; {} is a config alone: give its model folder or Hub id "
                                            "for exact sizes from the checkpoint's headers",
                                            unknown.message(), model));
  throw Error(unknown.code(),
              fmt::format("{}; exact sizes from the checkpoint were tried instead, but {} has no "
                          "safetensors or .bin weights", unknown.message(), model));
}

}  // namespace

bool EstimateArgs::wants_run() const {
  return context > 0 || batch > 0 || !kv_dtype.empty() || !engine.empty() || !dtype.empty() ||
         !attention.empty() || !overhead.empty() || encoder_length > 0 || !vram.empty() ||
         !gpu.empty() || !train.empty() || rank > 0 || !targets.empty() || !optimizer.empty() ||
         grad_checkpointing || zero != 0 || fsdp || gpus > 0;
}

// The options a repo of another kind uses (memfit/repo/repo_kind.h): --dtype, --vram, --context.
RepoArgs repo_args(const EstimateArgs& args) {
  RepoArgs r;
  r.target = args.model;
  r.json = args.json;
  r.options.dtype = args.dtype;
  r.options.context = args.context;
  if (!args.vram.empty()) r.options.gpu_bytes = static_cast<std::uint64_t>(parse_memory_size(args.vram, "--vram"));
  return r;
}

int run_estimate(const EstimateArgs& args) {
  return guarded([&] {
    if (!args.compat.empty() && args.compat != "accelerate")
      throw CliError{kExitUsage, fmt::format("--compat: unknown value '{}' (only 'accelerate')",
                                             args.compat)};
    if (args.source != "auto" && args.source != "config" && args.source != "checkpoint")
      throw CliError{kExitUsage, fmt::format("--source: unknown value '{}' (auto, config, checkpoint)",
                                             args.source)};
    // Will-it-run options are checked before anything is fetched.
    std::optional<RunOptions> run_opts;
    if (args.wants_run()) run_opts = run_options(args);
    hub::HubClient client(hub::HubOptions::from_environment());
    const bool want_checkpoint = args.source != "config" && args.compat.empty();
    std::optional<checkpoint::Checkpoint> checkpoint;
    ModelSource src;
    if (checkpoint::is_checkpoint_file(args.model)) {
      // A .safetensors or .bin file, or an index: the checkpoint, and a config.json beside it.
      checkpoint = checkpoint::open_checkpoint(args.model);
      src.name = args.name.empty() ? args.model : args.name;
      src.library = args.library;
      src.origin = "file";
      const auto beside = std::filesystem::path(args.model).parent_path() / "config.json";
      std::error_code ec;
      if (std::filesystem::is_regular_file(beside, ec)) src.config_text = io::read_file(beside.string());
    } else {
      // A folder or a Hub repo may be another kind than one model (GGUF files, a diffusers
      // pipeline, sentence-transformers, a PEFT adapter): its listing says which.
      std::optional<repo::RepoFiles> listing;
      std::error_code ec;
      if (std::filesystem::is_directory(args.model, ec) || hub::looks_like_repo_id(args.model)) {
        listing = list_repo(args.model, &client);
        const repo::RepoKind kind =
            repo::detect_kind(listing->listing, args.library.empty() ? listing->library : args.library);
        if (kind != repo::RepoKind::kModel)
          return run_repo_report(kind, std::move(*listing), repo_args(args), &client);
      }
      ResolveOptions how{args.library, args.name};
      if (listing) how.hub_library = &listing->library;
      src = resolve_model(args.model, how, &client);
      if (want_checkpoint && src.origin == "directory" && checkpoint::has_weights(args.model))
        checkpoint = checkpoint::open_checkpoint(args.model);
      if (want_checkpoint && src.origin == "hub" && (args.exact || args.source == "checkpoint"))
        checkpoint = checkpoint::open_hub_checkpoint(client, args.model);
    }
    if (args.source == "checkpoint" && !checkpoint)
      throw CliError{kExitFile, fmt::format("{}: --source checkpoint, but no safetensors or .bin "
                                            "weights were found (a Hub id needs --exact)", args.model)};
    auto request = [&] {
      EstimateRequest req = model_request(src, args.compat, args.class_name);
      req.dtypes = args.dtypes;
      if (checkpoint) {
        // A .bin keeps tied weights under both names (one storage); safetensors keep the first only.
        req.checkpoint = checkpoint->untied_tree_tensors();
        req.checkpoint_format = checkpoint::format_name(checkpoint->format);
        req.source = EstimateRequest::Source::kCheckpoint;
        for (const auto& w : checkpoint->warnings) fmt::print(stderr, "memfit: warning: {}\n", w);
      }
      return req;
    };
    auto fail = [&](const Error& e) {
      if (args.json) fmt::print(stderr, "{}\n", error_to_json(Error(e.code(), cli_message(e))).dump());
      else fmt::print(stderr, "memfit: error: {}\n", cli_message(e));
      return exit_code_for(e.code());
    };
    // The report alone only sums sizes: repeated experts stay one module with a count (its JSON
    // says so in module_repeats). Will-it-run reads every tensor by name.
    const TreeForm form = run_opts ? TreeForm::kNamed : TreeForm::kCompact;
    Result<Model> model = build_model(request(), form);  // the config is parsed here, once
    // An unknown model_type is never a dead end: a Hub repo's weights give exact sizes by Range
    // (a folder's were read above already). Without any, the error says what was tried.
    if (!model && model.error().code() == ErrorCode::kUnknownModelType && !checkpoint && want_checkpoint &&
        args.source == "auto") {
      Result<checkpoint::Checkpoint> fallback =
          capture([&] { return fallback_checkpoint(client, args.model, src, model.error()); });
      if (!fallback) return fail(fallback.error());
      checkpoint = std::move(fallback).value();
      model = build_model(request(), form);
    }
    if (!model) return fail(model.error());
    const Result<Report> report = estimate(*model);
    if (!report) return fail(report.error());
    std::optional<RunReport> run;
    if (run_opts) {
      Result<RunReport> r = will_it_run(*model, *run_opts);
      if (!r) return fail(r.error());
      run = std::move(r).value();
    }
    if (args.json) {
      auto j = report_to_json(*report);
      if (run) {
        const auto extra = run_report_to_json(*run);
        for (const auto& [key, value] : extra.items()) j[key] = value;
      }
      fmt::print("{}\n", j.dump(2));
    } else {
      fmt::print("{}\n", render_table(*report));
      if (model->request.mode == Mode::kMemfit) print_memfit_details(*report, checkpoint ? &*checkpoint : nullptr);
      if (run) fmt::print("{}", render_run_report(*run));
    }
    return int{kExitOk};
  });
}

}  // namespace memfit::cli
