// `memfit generate`: prompt → ids → the decoding loop (generation.h) → text streamed as it comes.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "command_setup.h"
#include "failure.h"
#include "file_reader.h"
#include "generation.h"
#include "process_memory.h"
#include "torch_types.h"

namespace memfit::torchrt {
namespace fs = std::filesystem;
namespace {

// The folder a model's side files (generation_config.json, the tokenizer) are looked up in.
fs::path model_folder(const GenerateArgs& a) {
  const fs::path p = a.placement.config.empty() ? fs::path(a.dir) : fs::path(a.placement.config);
  return fs::is_directory(p) ? p : p.parent_path();
}

// EOS ids: generation_config.json's eos_token_id, else config.json's (an id or a list of ids).
std::vector<std::int64_t> eos_ids(const fs::path& folder) {
  for (const char* file : {"generation_config.json", "config.json"}) {
    const fs::path path = folder / file;
    if (!fs::exists(path)) continue;
    const OJson j = OJson::parse(io::read_file(path.string()), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded())
      throw Failure{FailureKind::kInvalidInput, fmt::format("{}: not valid JSON", path.string())};
    const auto it = j.find("eos_token_id");
    if (it == j.end() || it->is_null()) continue;
    std::vector<std::int64_t> out;
    for (const auto& v : it->is_array() ? *it : OJson::array({*it})) {
      if (!v.is_number_integer())
        throw Failure{FailureKind::kInvalidInput,
                      fmt::format("{}: eos_token_id holds {}, expected an integer id or a list of them",
                                  path.string(), v.dump())};
      out.push_back(v.get<std::int64_t>());
    }
    return out;
  }
  return {};
}

std::vector<std::int64_t> prompt_ids(const GenerateArgs& a) {
  if (a.tokens.empty())
    throw Failure{FailureKind::kUnsupported, "--prompt and --chat need the tokenizer, which is not built in yet; "
                                             "give --tokens IDS"};
  const auto rows = parse_token_rows(a.tokens);
  if (rows.size() != 1) throw Failure{FailureKind::kUsage, "--tokens: generate takes one row of ids"};
  return {rows[0].begin(), rows[0].end()};
}

OJson stats_json(const GenerateResult& r) {
  OJson j;
  j["tokens_per_s"] = r.tokens_per_second();
  j["prefill_s"] = r.prefill_seconds;
  j["decode_s"] = r.decode_seconds;
  j["decode_tokens"] = r.decode_forwards;
  j["bytes_streamed_per_token"] = r.streamed_bytes_per_token();
  if (r.io_bound_tokens_per_second() > 0) j["io_bound_tokens_per_s"] = r.io_bound_tokens_per_second();
  else j["io_bound_tokens_per_s"] = nullptr;
  return j;
}

}  // namespace

void run_generate(const GenerateArgs& args) {
  const std::vector<std::int64_t> prompt = prompt_ids(args);
  ExecSetup setup(args.dir, args.placement, args.exec);
  GenerateRequest req;
  req.prompt = prompt;
  req.max_new_tokens = args.max_new_tokens;
  req.eos = eos_ids(model_folder(args));
  if (!args.json)
    req.on_token = [](std::int64_t id) {
      fmt::print("{} ", id);
      std::fflush(stdout);
      return true;
    };
  const GenerateResult r = generate(*setup.exec, req);
  if (args.json) {
    OJson j;
    j["prompt_ids"] = prompt;
    j["new_token_ids"] = r.new_ids;
    j["text"] = nullptr;
    j["stopped_at"] = r.stopped_at;
    j["stats"] = stats_json(r);
    j["stats"]["peak_rss_bytes"] = read_process_memory().peak_rss_bytes;
    j["stats"]["compute_dtype"] = std::string(torch_name(from_scalar_type(setup.options.compute_dtype)));
    j["stats"]["weights_dtype"] = std::string(torch_name(setup.model->plan.dtype));
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print("\n");
  if (args.stats)
    fmt::print(stderr, "memfit: {} new tokens ({}); prefill {:.3f} s; decode {:.2f} tokens/s; {:.1f} MB streamed per token\n",
               r.new_ids.size(), r.stopped_at, r.prefill_seconds, r.tokens_per_second(),
               r.streamed_bytes_per_token() / 1e6);
}

}  // namespace memfit::torchrt
