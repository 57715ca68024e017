#include "torch_args.h"

#include <cstdlib>
#include <set>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "failure.h"
#include "memfit/plan/strategy.h"

namespace memfit::torchrt {
namespace {

// One option: a text value, an integer in [lo, hi], a flag, or a repeatable text value.
struct Option {
  const char* name;
  const char* help;
  std::string* text = nullptr;
  int* number = nullptr;
  bool* flag = nullptr;
  int lo = 0, hi = 0;
  std::vector<std::string>* list = nullptr;
};

Option text(const char* name, std::string* to, const char* help) { return {name, help, to}; }
Option number(const char* name, int* to, int lo, int hi, const char* help) {
  return {name, help, nullptr, to, nullptr, lo, hi};
}
Option flag(const char* name, bool* to, const char* help) { return {name, help, nullptr, nullptr, to}; }
Option list(const char* name, std::vector<std::string>* to, const char* help) {
  return {name, help, nullptr, nullptr, nullptr, 0, 0, to};
}

[[noreturn]] void usage(std::string message) { throw Failure{FailureKind::kUsage, std::move(message)}; }

void add_placement(std::vector<Option>& out, PlacementArgs& p) {
  static const std::string device_map_help =
      plan::strategy_list() + ", a JSON file (memfit plan --output), or inline JSON such as "
      "'{\"\": \"disk\"}' (default: all on the execution device)";
  out.push_back(text("--device-map", &p.device_map, device_map_help.c_str()));
  out.push_back(text("--max-memory", &p.max_memory, "budgets, e.g. 0=8GiB,cpu=16GiB (default: what is free)"));
  out.push_back(text("--offload-folder", &p.offload_folder, "offload folder for .bin weights placed on disk"));
  out.push_back(text("--dtype", &p.dtype, "dtype of the weights in memory (default: the checkpoint's floating dtype)"));
  out.push_back(text("--config", &p.config, "config.json (or its folder) when it is not next to the weights"));
  out.push_back(text("--revision", &p.revision, "branch, tag or commit of a Hub ORG/NAME (default main)"));
  out.push_back(text("--token", &p.token, "Hub token for a gated or private ORG/NAME (default: $HF_TOKEN, the token file)"));
  out.push_back(flag("--allow-missing", &p.allow_missing, "load even if the checkpoint lacks some tensors"));
  out.push_back(flag("--ignore-unexpected", &p.ignore_unexpected, "skip tensors the model does not have"));
}

std::vector<Option> load_options(LoadArgs& a) {
  std::vector<Option> out;
  add_placement(out, a.placement);
  out.push_back(flag("--json", &a.json, "print JSON"));
  return out;
}

void add_exec(std::vector<Option>& out, ExecArgs& a) {
  out.push_back(flag("--no-prefetch", &a.no_prefetch, "fetch each block's weights only when it runs"));
  out.push_back(number("--prefetch-depth", &a.prefetch_depth, 1, 64, "blocks fetched ahead (default 1)"));
  out.push_back(number("--threads", &a.threads, 0, 1024,
                       "compute threads: OpenBLAS's where LibTorch calls a threaded OpenBLAS, else LibTorch's "
                       "(default: one per core; one fewer when disk weights stream with prefetch)"));
  out.push_back(text("--compute-dtype", &a.compute_dtype,
                     "dtype blocks compute in (default: float32 on a CPU, the weights' dtype on a GPU)"));
  out.push_back(flag("--evict", &a.evict, "drop disk weights from the page cache after use (benchmarks)"));
}

std::vector<Option> forward_options(ForwardArgs& a) {
  std::vector<Option> out{text("--tokens", &a.tokens, "token ids, e.g. 464,2068,7586; rows separated by ';' (required)")};
  add_placement(out, a.placement);
  add_exec(out, a.exec);
  out.push_back(number("--generate", &a.generate, 0, 4096, "greedy new tokens after the prompt (KV cache)"));
  out.push_back(number("--repeat", &a.repeat, 1, 1000, "forward passes to run (timing)"));
  out.push_back(flag("--json", &a.json, "print JSON: shape, last_logits, seconds, …"));
  return out;
}

void add_pipeline(std::vector<Option>& out, PipelineArgs& p) {
  out.push_back(number("--nodes", &p.nodes, 0, 4096, "pipeline over this many ranks, each one stage (with --rank, --master)"));
  out.push_back(number("--rank", &p.rank, 0, 4095, "this process's rank: 0 tokenizes and prints, the last samples"));
  out.push_back(text("--master", &p.master, "HOST:PORT of rank 0's rendezvous (it listens there)"));
  out.push_back(text("--stages", &p.stages, "each rank's blocks, e.g. 0-11,12-23 (default: balanced by bytes)"));
  out.push_back(number("--local-ranks", &p.local_ranks, 2, 4096, "start this many ranks here, on 127.0.0.1"));
  out.push_back(number("--timeout", &p.timeout, 1, 86400, "seconds a rank waits for another (default 60)"));
  out.push_back(text("--backend", &p.backend, "process group: gloo (default; over TCP) or nccl (a CUDA LibTorch's)"));
  out.push_back(number("--load-timeout", &p.load_timeout, 1, 86400, "seconds ranks wait for each other's loads (default 600)"));
}

std::vector<Option> generate_options(GenerateArgs& a) {
  std::vector<Option> out{
      list("--prompt", &a.prompts, "prompt text, tokenized with the model's tokenizer (repeatable: several prompts)"),
      text("--prompts-file", &a.prompts_file, "prompts instead, one per line"),
      text("--tokens", &a.tokens, "prompt token ids instead, e.g. 464,2068,7586 (rows separated by ';': several)"),
      text("--chat", &a.chat, "one user message, formatted by the model's chat_template"),
      text("--tokenizer", &a.tokenizer, "tokenizer.json or its folder (default: next to the weights)"),
      number("--max-new-tokens", &a.max_new_tokens, 1, 1 << 20, "tokens to generate at most (default 20)"),
      flag("--greedy", &a.greedy, "always the most likely token (the default without --temperature)"),
      text("--temperature", &a.temperature, "sample at this temperature (> 0)"),
      number("--top-k", &a.top_k, 0, 1 << 30, "sample among the k most likely tokens (0: all)"),
      text("--top-p", &a.top_p, "sample within this probability mass (0 < p <= 1)"),
      number("--seed", &a.seed, 0, 2147483647, "sampling seed (default 0)"),
      text("--repetition-penalty", &a.repetition_penalty, "penalize tokens already seen (> 0; 1 = off)"),
      list("--stop", &a.stop, "stop when the text contains STR (repeatable)"),
      flag("--no-special", &a.no_special, "add no special tokens (BOS) to --prompt"),
  };
  add_placement(out, a.placement);
  add_exec(out, a.exec);
  add_pipeline(out, a.pipeline);
  out.push_back(flag("--stats", &a.stats, "print tokens/s, prefill time and bytes streamed per token"));
  out.push_back(flag("--json", &a.json, "print JSON: prompt_ids, new_token_ids, text, stopped_at, stats"));
  out.push_back(text("--logits-out", &a.logits_out, "write each step's logits to FILE as JSON Lines (a pipeline's last rank)"));
  return out;
}

std::string help_text(const std::string& command, const char* what, const std::vector<Option>& options) {
  std::string out = fmt::format("{}\nUsage: memfit {} DIR|ORG/NAME [OPTIONS]\n\n  DIR       model folder, .safetensors/.bin "
                                "file, or index\n  ORG/NAME  a Hub model, downloaded into the Hugging Face cache ($HF_HUB_CACHE, "
                                "$HF_HOME/hub or ~/.cache/huggingface/hub); HF_TOKEN, HF_ENDPOINT and HF_HUB_OFFLINE "
                                "apply\n\nOptions:\n", what, command);
  for (const Option& o : options)
    out += fmt::format("  {:<22} {}\n", std::string(o.name) + (o.flag ? "" : " VALUE"), o.help);
  return out;
}

void set(const Option& o, std::string_view value) {
  if (o.list) {
    o.list->emplace_back(value);
    return;
  }
  if (o.text) {
    *o.text = std::string(value);
    return;
  }
  const std::string v(value);
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < o.lo || n > o.hi)
    usage(fmt::format("{}: '{}' is not an integer in [{}, {}]", o.name, v, o.lo, o.hi));
  *o.number = static_cast<int>(n);
}

// Fills `options` and `dir` from argv[2..], and `given` with the name of each option that was on
// the command line (even with an empty value); false when --help was asked.
bool parse_options(int argc, const char* const* argv, const std::vector<Option>& options, std::string& dir,
                   std::set<std::string>& given) {
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return false;
    if (arg.rfind("--", 0) != 0) {
      if (!dir.empty()) usage(fmt::format("unexpected argument '{}': DIR is already '{}'", arg, dir));
      dir = std::string(arg);
      continue;
    }
    const std::size_t eq = arg.find('=');
    const std::string_view name = arg.substr(0, eq);
    const Option* o = nullptr;
    for (const Option& x : options)
      if (name == x.name) o = &x;
    if (!o) usage(fmt::format("unknown option '{}' (--help lists them)", name));
    given.insert(o->name);
    if (o->flag) {
      if (eq != std::string_view::npos) usage(fmt::format("{} takes no value", name));
      *o->flag = true;
    } else if (eq != std::string_view::npos) {
      set(*o, arg.substr(eq + 1));
    } else {
      if (i + 1 >= argc) usage(fmt::format("{} needs a value", name));
      set(*o, argv[++i]);
    }
  }
  if (dir.empty()) usage("DIR is required (a model folder, .safetensors/.bin file, or index; or a Hub id ORG/NAME)");
  return true;
}

}  // namespace

TorchCommand parse_torch_command(int argc, const char* const* argv) {
  TorchCommand c;
  const std::string command = argc > 1 ? argv[1] : "";
  std::set<std::string> given;
  // Parses one command's options; on --help, fills c.help and leaves c.kind at kHelp.
  auto parse = [&](TorchCommand::Kind kind, const std::vector<Option>& options, std::string& dir, const char* what) {
    if (parse_options(argc, argv, options, dir, given)) c.kind = kind;
    else c.help = help_text(command, what, options);
  };
  if (command == "load") {
    parse(TorchCommand::Kind::kLoad, load_options(c.load), c.load.dir,
          "Validate a checkpoint against its config, load it by a device map, report placement, time, GB/s and "
          "peak RSS");
    return c;
  }
  if (command == "forward") {
    parse(TorchCommand::Kind::kForward, forward_options(c.forward), c.forward.dir,
          "Run a forward pass to logits (block by block, offloaded weights streamed with prefetch)");
    if (c.kind == TorchCommand::Kind::kForward && c.forward.tokens.empty())
      usage("--tokens is required (token ids, e.g. 464,2068,7586)");
    return c;
  }
  if (command == "generate") {
    parse(TorchCommand::Kind::kGenerate, generate_options(c.generate), c.generate.dir,
          "Generate text: tokenize the prompt, decode token by token with a KV cache, stream the text");
    // Given, even empty: an empty --prompt is an empty prompt (run_generate names it), not none.
    if (c.kind == TorchCommand::Kind::kGenerate &&
        given.count("--prompt") + given.count("--prompts-file") + given.count("--tokens") + given.count("--chat") != 1)
      usage("generate needs exactly one of --prompt TEXT (repeatable), --prompts-file FILE, --tokens IDS or --chat TEXT");
    return c;
  }
  if (command == "--help" || command == "-h") {
    c.help = "memfit-torch: load and run models on LibTorch (as `memfit load|forward|generate`)\n"
             "Usage: memfit load|forward|generate DIR|ORG/NAME [OPTIONS]  (--help after one lists its options)\n";
    return c;
  }
  usage(command.empty() ? "a command is required: load, forward or generate"
                        : fmt::format("unknown command '{}': load, forward or generate", command));
}

}  // namespace memfit::torchrt
