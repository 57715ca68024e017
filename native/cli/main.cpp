// memfit — will it fit? The command-line face of memfit's core.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "estimate_command.h"
#include "gguf_command.h"
#include "inspect_command.h"
#include "validate_command.h"
#include "plan_command.h"
#include "shard_command.h"
#include "tokenize_command.h"
#include "exit_codes.h"
#include "torch_exec.h"
#include "memfit/memory/llamacpp_offload.h"
#include "memfit/memory/options.h"
#include "memfit/plan/strategy.h"

int main(int argc, char** argv) {
  // `memfit load|forward|generate` run on LibTorch in memfit-torch (next to this binary), so that the
  // estimator never links or loads LibTorch.
  if (argc >= 2 && memfit::cli::is_torch_subcommand(argv[1])) return memfit::cli::exec_torch(argc, argv);
  memfit::cli::rewrite_llamacpp_flags(argc, argv);
  CLI::App app{"memfit: memory estimates and device maps for large models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "memfit 0.1.0");

  using memfit::kRunDefaults;
  using memfit::name_list;
  memfit::cli::EstimateArgs est;
  CLI::App* estimate = app.add_subcommand(
      "estimate", "Memory needed to load (and train) a model, from its config.json");
  estimate->add_option("model", est.model, "Hub id (org/name), a config.json, a model folder, FILE.gguf, or org/name:FILE.gguf")
      ->required();
  estimate->add_option("--name", est.name, "Name shown in the title (default: MODEL)");
  estimate->add_option("--library_name,--library", est.library, "transformers or timm")
      ->check(CLI::IsMember({"transformers", "timm"}));
  estimate->add_option("--dtypes", est.dtypes,
                       "dtypes to report (float32 float16 bfloat16 int8 int4)");
  estimate->add_option("--compat", est.compat,
                       "'accelerate': reproduce `accelerate estimate-memory` exactly");
  estimate->add_option("--class", est.class_name, "model class to build (e.g. LlamaModel)");
  estimate->add_option("--source", est.source,
                       "auto (safetensors headers when a folder has them), config, checkpoint");
  estimate->add_flag("--exact", est.exact,
                     "for a Hub id: exact sizes from the checkpoint by HTTP Range (safetensors headers, else a .bin's zip directory and pickle)");
  estimate->add_flag("--json", est.json, "print the report as JSON");
  // Will it run? (inference, training, GPU fit: README "Will it run?", docs/memory-model.md)
  estimate->add_option("--context", est.context,
                       fmt::format("tokens per sequence (default: min({}, model max))", kRunDefaults.context));
  estimate->add_option("--batch", est.batch, fmt::format("sequences at once (default {})", kRunDefaults.batch));
  estimate->add_option("--kv-dtype", est.kv_dtype,
                       "KV cache dtype: " + name_list(memfit::kKvDtypeNames) + " (default: the weights')");
  estimate->add_option("--engine", est.engine, name_list(memfit::kEngineNames, kRunDefaults.engine));
  estimate->add_option("--dtype", est.dtype,
                       "weights: " + memfit::weight_dtype_list() +
                           " (int8/int4/nf4/fp4: bitsandbytes; q8_0/q4_0: GGUF)");
  estimate->add_option("--attention", est.attention, name_list(memfit::kAttentionNames, kRunDefaults.attention));
  estimate->add_option("--overhead", est.overhead,
                       "runtime overhead per GPU (default " + fmt::format("{}MiB", kRunDefaults.overhead_bytes / (1 << 20)) + ")");
  estimate->add_option("--encoder-length", est.encoder_length,
                       "encoder-decoder: encoder tokens (default: max_source_positions, else context)");
  estimate->add_option("--vram", est.vram, "GPU memory, e.g. 24GiB: solve the largest context / batch");
  estimate->add_option("--gpu", est.gpu, "a GPU from the catalogue, e.g. \"RTX 4090\"");
  estimate->add_option("--train", est.train, name_list(memfit::kTrainMethodNames));
  estimate->add_option("--rank", est.rank, fmt::format("LoRA rank (default {})", kRunDefaults.rank));
  estimate->add_option("--targets", est.targets,
                       fmt::format("LoRA target modules, comma-separated, or all-linear (default {})",
                                   kRunDefaults.targets));
  estimate->add_option("--optimizer", est.optimizer, name_list(memfit::kOptimizerNames, kRunDefaults.optimizer));
  estimate->add_flag("--grad-checkpointing", est.grad_checkpointing, "keep only layer inputs");
  estimate->add_option("--zero", est.zero, "DeepSpeed ZeRO stage 1, 2 or 3 over --gpus");
  estimate->add_flag("--fsdp", est.fsdp, "FSDP FULL_SHARD over --gpus");
  estimate->add_option("--gpus", est.gpus, "GPUs to shard training over");
  // GGUF models (llama.cpp's flag names; README "GGUF").
  memfit::cli::GgufArgs gg;
  auto add_gguf_flags = [](CLI::App* cmd, memfit::cli::GgufArgs& g) {
    cmd->add_option("--ctx-size,-c", g.ctx_size, "GGUF: context tokens (llama.cpp -c; 0: the model's; default 4096)");
    cmd->add_option("--cache-type-k", g.cache_type_k, "GGUF: K cache type (-ctk): " + memfit::cache_type_list() + " (default f16)");
    cmd->add_option("--cache-type-v", g.cache_type_v, "GGUF: V cache type (-ctv), as --cache-type-k");
  };
  add_gguf_flags(estimate, gg);
  estimate->add_option("--gpu-layers", gg.gpu_layers, "GGUF: layers on the GPU (llama.cpp -ngl; default all)");
  estimate->add_option("--flash-attn", gg.flash_attn, "GGUF: on, off or auto (-fa; default auto = on)");
  estimate->add_option("--ubatch-size", gg.ubatch, "GGUF: physical batch (-ub; default 512)");
  estimate->add_option("--parallel", gg.parallel, "GGUF: sequences (-np; default 1)");

  memfit::cli::InspectArgs ins;
  CLI::App* inspect = app.add_subcommand(
      "inspect", "List the tensors of a safetensors file, sharded folder or Hub repo (headers only)");
  inspect->add_option("target", ins.target, "FILE.safetensors, index.json, folder, org/name, FILE.gguf, or org/name:FILE.gguf")
      ->required();
  inspect->add_flag("--json", ins.json, "print JSON");
  add_gguf_flags(inspect, ins.gguf);
  inspect->add_option("--vram", ins.gguf.vram, "a repo of GGUF files: does each fit this GPU memory (e.g. 24GiB)");

  memfit::cli::ValidateArgs val;
  CLI::App* validate = app.add_subcommand(
      "validate", "Compare a checkpoint (or its bare index.json) with the tensors and bytes its config implies");
  validate->add_option("config", val.config, "config.json, model folder, or org/name (alone: its config and index)")
      ->required();
  validate->add_option("checkpoint", val.checkpoint,
                       "model.safetensors.index.json, FILE.safetensors, folder, or org/name");
  validate->add_option("--class", val.class_name, "model class (default: architectures[0])");
  validate->add_flag("--json", val.json, "print JSON");

  memfit::cli::PlanArgs pl;
  CLI::App* plan = app.add_subcommand(
      "plan", "Where each layer goes for given GPU/CPU/disk budgets (accelerate's device_map, or fit)");
  plan->add_option("model", pl.model, "Hub id, config.json, or model folder")->required();
  plan->add_option("--max-memory", pl.max_memory, "budgets, e.g. 0=24GiB,1=24GiB,cpu=64GiB");
  plan->add_option("--device-map", pl.strategy, memfit::plan::strategy_list())
      ->check(CLI::IsMember(memfit::name_vector(memfit::plan::kStrategyNames)));
  plan->add_option("--dtype", pl.dtype, "dtype the weights are loaded in (e.g. float16)");
  plan->add_option("--no-split", pl.no_split, "module classes never split (default: the model's)");
  plan->add_option("--special-dtype", pl.special_dtypes, "NAME=DTYPE overrides");
  plan->add_flag("--offload-buffers", pl.offload_buffers, "offload buffers with their modules");
  plan->add_flag("--no-disk", pl.no_disk, "fail instead of offloading to disk");
  plan->add_option("--context", pl.context,
                   fmt::format("tokens per sequence (fit: KV cache), default {}", kRunDefaults.context));
  plan->add_option("--batch", pl.batch, fmt::format("sequences (fit: KV cache), default {}", kRunDefaults.batch));
  plan->add_option("--overhead", pl.overhead,
                   "runtime overhead per GPU (fit), default " + fmt::format("{}MiB", kRunDefaults.overhead_bytes / (1 << 20)));
  plan->add_option("--class", pl.class_name, "model class (default: architectures[0], the class that is loaded)");
  plan->add_option("--compat", pl.compat, "'accelerate': accelerate's AutoModel class and 4.40 buffers, as `accelerate` maps it")
      ->check(CLI::IsMember({"accelerate"}));
  plan->add_option("--library_name,--library", pl.library, "transformers or timm");
  plan->add_flag("--explain", pl.explain, "say what each device holds and why");
  plan->add_flag("--json", pl.json, "print JSON");
  plan->add_option("--output", pl.output, "write the device map (JSON) to this file");
  plan->add_option("--check", pl.check, "validate a device map file against the model instead");
  plan->add_option("--nodes", pl.nodes,
                   "hosts, one pipeline stage each: 'a=0:24GiB,1:24GiB,cpu:64GiB;b=0:24GiB,cpu:32GiB' "
                   "(optional gpu:NAME per host for its speed)");
  plan->add_option("--link", pl.link, "network between the hosts: BANDWIDTH[,LATENCY], default 10Gbps,50us");
  plan->add_option("--balance", pl.balance, "stages balanced by memory (default) or compute")
      ->check(CLI::IsMember({"memory", "compute"}));

  // Listed for --help only: main() hands them to memfit-torch before parsing.
  app.add_subcommand("load", "Validate, load and place a checkpoint by a device map (LibTorch: memfit-torch)");
  app.add_subcommand("forward", "Run a model to logits, offloaded blocks streamed with prefetch (memfit-torch)");
  app.add_subcommand("generate", "Generate text from a prompt, streaming it (memfit-torch)");

  memfit::cli::ShardArgs sh;
  CLI::App* shard = app.add_subcommand(
      "shard", "(Re)shard a checkpoint (safetensors or .bin) into safetensors shards + index");
  shard->add_option("input", sh.input, ".safetensors, .bin, index.json, or a model folder")->required();
  shard->add_option("output", sh.output, "the folder to create (must not exist)")->required();
  shard->add_option("--max-shard-size", sh.max_shard_size, "largest shard, e.g. 2GB, 400KB, 5GiB (default 5GB)");
  shard->add_option("--order", sh.order,
                    "state-dict order: auto (config.json beside a safetensors checkpoint), config, checkpoint")
      ->check(CLI::IsMember({"auto", "config", "checkpoint"}));
  shard->add_flag("--json", sh.json, "print JSON");

  memfit::cli::TokenizeArgs tk;
  CLI::App* tokenize = app.add_subcommand(
      "tokenize", "Text to token ids (or --decode ids to text) with a model's tokenizer.json, vocab.json + merges.txt "
      "or SentencePiece tokenizer.model");
  tokenize->add_option("path", tk.path, "tokenizer.json, a SentencePiece .model, or a model folder")->required();
  tokenize->add_option("--text", tk.text, "the text (with --decode: ids, e.g. 1,2,3); default: all of stdin, a final newline included");
  tokenize->add_flag("--jsonl", tk.jsonl,
                     "stdin: one JSON string per line → one {\"ids\", \"tokens\"} per line (--decode: a list of ids → {\"text\"})");
  tokenize->add_flag("--no-special", tk.no_special, "no special tokens added (--decode: special tokens skipped)");
  tokenize->add_flag("--decode", tk.decode, "ids in, text out");
  tokenize->add_flag("--json", tk.json, "print JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : memfit::cli::kExitUsage;
  }
  if (estimate->parsed() && memfit::cli::is_gguf_target(est.model)) {
    // The transformers-side spellings would be ignored on this path: say which flag to use.
    if (est.context > 0 || !est.kv_dtype.empty() || !est.dtype.empty() || est.batch > 0) {
      fmt::print(stderr, "memfit: error: a GGUF model takes llama.cpp's flags: --ctx-size (not --context), "
                         "--cache-type-k/--cache-type-v (not --kv-dtype), --parallel (not --batch); its weights' "
                         "types are the file's (no --dtype)\n");
      return memfit::cli::kExitUsage;
    }
    gg.target = est.model;
    gg.json = est.json;
    gg.vram = est.vram;
    gg.overhead = est.overhead;
    return memfit::cli::run_gguf_estimate(gg);
  }
  if (estimate->parsed()) return memfit::cli::run_estimate(est);
  if (inspect->parsed() && memfit::cli::is_gguf_target(ins.target)) {
    ins.gguf.target = ins.target;
    ins.gguf.json = ins.json;
    return memfit::cli::run_gguf_inspect(ins.gguf);
  }
  if (inspect->parsed()) return memfit::cli::run_inspect(ins);
  if (validate->parsed()) return memfit::cli::run_validate(val);
  if (plan->parsed()) return memfit::cli::run_plan(pl);
  if (shard->parsed()) return memfit::cli::run_shard(sh);
  if (tokenize->parsed()) return memfit::cli::run_tokenize(tk);
  return memfit::cli::kExitUsage;
}
