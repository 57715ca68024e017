// `memfit generate`: prompt → ids (the model's tokenizer; --chat through its chat template) →
// the decoding loop (generation.h) with transformers' token choice (core's Sampler) → text,
// streamed as it comes, up to a stop string or an EOS id.
#include <cstdio>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "command_setup.h"
#include "failure.h"
#include "file_reader.h"
#include "generation.h"
#include "hub_model.h"
#include "load_tokenizer.h"
#include "pipeline_rank.h"
#include "memfit/chat/chat_template.h"
#include "memfit/generate/sampling.h"
#include "memfit/generate/stopping.h"
#include "process_memory.h"
#include "torch_types.h"

namespace memfit::torchrt {
namespace fs = std::filesystem;
using tokenizer::TokenId;
using tokenizer::Tokenizer;

namespace {

// The folder a model's side files (config, generation_config.json, the tokenizer) are in.
fs::path model_folder(const std::string& dir, const GenerateArgs& a) {
  const fs::path p = a.placement.config.empty() ? fs::path(dir) : fs::path(a.placement.config);
  return fs::is_directory(p) ? p : p.parent_path();
}

std::optional<OJson> read_json(const fs::path& path) {
  if (!fs::exists(path)) return std::nullopt;
  OJson j = OJson::parse(io::read_file(path.string()), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Failure{FailureKind::kInvalidInput, fmt::format("{}: not valid JSON", path.string())};
  return j;
}

// generation_config.json's EOS ids, else those of the config the load already parsed.
std::vector<std::int64_t> eos_ids(const Config& config, const fs::path& folder) {
  const auto generation = read_json(folder / "generation_config.json");
  const nlohmann::json gen = generation ? nlohmann::json(*generation) : nlohmann::json();
  return value_or_raise(generate::eos_token_ids(generation ? &gen : nullptr, nlohmann::json(config.json())));
}

// The tokenizer: --tokenizer, else the model's folder. Without one, --tokens still runs (ids out).
std::optional<Tokenizer> find_tokenizer(const GenerateArgs& a, const fs::path& folder) {
  if (!a.tokenizer.empty()) return text::load_tokenizer(a.tokenizer);
  for (const char* f : {"tokenizer.json", "vocab.json"})
    if (fs::exists(folder / f)) return text::load_tokenizer(folder.string());
  if (!a.tokens.empty()) return std::nullopt;
  throw Failure{FailureKind::kFile, fmt::format("{}: no tokenizer.json (or vocab.json + merges.txt) for --{}; name "
                                                "one with --tokenizer, or give --tokens IDS",
                                                folder.string(), a.chat.empty() ? "prompt" : "chat")};
}

fs::path tokenizer_folder(const GenerateArgs& a, const fs::path& folder) {
  if (a.tokenizer.empty()) return folder;
  const fs::path p(a.tokenizer);
  return fs::is_directory(p) ? p : p.parent_path();
}

// --chat TEXT as apply_chat_template([{"role": "user", "content": TEXT}], add_generation_prompt=True).
std::string chat_prompt(const GenerateArgs& a, const fs::path& folder) {
  const fs::path path = tokenizer_folder(a, folder) / "tokenizer_config.json";
  const auto config = read_json(path);
  if (!config) throw Failure{FailureKind::kFile, fmt::format("--chat needs the chat template: no {}", path.string())};
  Result<std::string> tmpl = chat::chat_template_of(*config);
  if (!tmpl) throw Failure{FailureKind::kInvalidInput, fmt::format("{}: {}", path.string(), tmpl.error().message())};
  const OJson messages = OJson::array({OJson{{"role", "user"}, {"content", a.chat}}});
  Result<std::string> text = chat::render_chat(*tmpl, messages, true, chat::special_tokens_context(*config));
  if (!text) throw Failure{FailureKind::kInvalidInput, fmt::format("{}: {}", path.string(), text.error().message())};
  return *text;
}

std::vector<std::int64_t> prompt_ids(const GenerateArgs& a, const std::optional<Tokenizer>& tok,
                                     const fs::path& folder) {
  if (!a.tokens.empty()) {
    const auto rows = parse_token_rows(a.tokens);
    if (rows.size() != 1) throw Failure{FailureKind::kUsage, "--tokens: generate takes one row of ids"};
    return {rows[0].begin(), rows[0].end()};
  }
  // A chat template writes the special tokens itself (apply_chat_template: add_special_tokens=False).
  const bool chat = !a.chat.empty();
  const auto enc = value_or_raise(tok->encode(chat ? chat_prompt(a, folder) : a.prompt, !chat && !a.no_special));
  return {enc.ids.begin(), enc.ids.end()};
}

double decimal(const std::string& text, const char* option, double fallback) {
  if (text.empty()) return fallback;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (*end != '\0') throw Failure{FailureKind::kUsage, fmt::format("{}: '{}' is not a number", option, text)};
  return v;
}

generate::SamplingOptions sampling_options(const GenerateArgs& a) {
  generate::SamplingOptions o;
  o.greedy = a.greedy || a.temperature.empty();
  if (a.greedy && !a.temperature.empty())
    throw Failure{FailureKind::kUsage, "--greedy and --temperature exclude each other"};
  o.temperature = decimal(a.temperature, "--temperature", 1.0);
  o.top_k = a.top_k;
  o.top_p = decimal(a.top_p, "--top-p", 1.0);
  o.repetition_penalty = decimal(a.repetition_penalty, "--repetition-penalty", 1.0);
  o.seed = static_cast<std::uint64_t>(a.seed);
  if (o.greedy && (a.top_k > 0 || !a.top_p.empty()))
    throw Failure{FailureKind::kUsage, "--top-k and --top-p sample: give --temperature too (1 leaves the logits as they are)"};
  Result<generate::SamplingOptions> v = generate::validated(o);
  if (!v) throw Failure{FailureKind::kUsage, v.error().message()};
  return *v;
}

// The new tokens' text as it grows: decoded whole each time (a token's text can depend on its
// neighbours), cut at the first stop string, and what can no longer change printed.
class TextStream {
 public:
  TextStream(const Tokenizer* tok, std::vector<std::string> stops, bool print)
      : tok_(tok), stops_(std::move(stops)), print_(print) {}

  // False when a stop string has appeared (the text is cut before it).
  bool add(std::int64_t id) {
    ids_.push_back(static_cast<TokenId>(id));
    if (!tok_) {
      if (print_) fmt::print("{} ", id), std::fflush(stdout);
      return true;
    }
    text_ = value_or_raise(tok_->decode(ids_, /*skip_special_tokens=*/true));
    const generate::StopMatch stop = generate::find_stop(text_, stops_);
    if (stop.found) text_.resize(stop.cut);
    flush(stop.found ? text_.size() : generate::printable_length(text_, stops_));
    return !stop.found;
  }
  void finish() {
    flush(text_.size());
    if (print_) fmt::print("\n");
  }
  std::optional<std::string> text() const { return tok_ ? std::optional<std::string>(text_) : std::nullopt; }

 private:
  void flush(std::size_t upto) {
    if (!print_ || upto <= printed_) return;
    std::fwrite(text_.data() + printed_, 1, upto - printed_, stdout);
    std::fflush(stdout);
    printed_ = upto;
  }
  const Tokenizer* tok_;
  std::vector<std::string> stops_;
  bool print_;
  std::vector<TokenId> ids_;
  std::string text_;
  std::size_t printed_ = 0;
};

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

// The token choice of transformers' generate (core's Sampler) for the decoding loop.
std::function<std::int64_t(const at::Tensor&, const std::vector<std::int64_t>&)> sampled_by(generate::Sampler& sampler) {
  return [&sampler](const at::Tensor& logits, const std::vector<std::int64_t>& ids) {
    const float* p = logits.data_ptr<float>();
    return value_or_raise(sampler.next(std::vector<float>(p, p + logits.numel()), ids));
  };
}

}  // namespace

void run_generate(const GenerateArgs& args) {
  checkpoint::SnapshotNeeds needs;  // a Hub model: the tokenizer too, unless --tokenizer names one
  needs.generation_config = true;
  needs.tokenizer = args.tokenizer.empty();
  GenerateArgs local = args;  // the same run on the local (downloaded) folder
  local.dir = local_model(args.dir, args.placement, needs);
  const std::string& dir = local.dir;
  if (args.pipeline.nodes > 0 && args.pipeline.rank != 0) {  // a later stage: no tokenizer, no output
    generate::Sampler sampler(sampling_options(args));
    GenerateRequest sampling;
    sampling.choose = sampled_by(sampler);
    return serve_pipeline_rank(local, sampling);
  }
  const fs::path folder = model_folder(dir, args);
  const std::optional<Tokenizer> tok = find_tokenizer(args, folder);
  const std::vector<std::int64_t> prompt = prompt_ids(args, tok, folder);
  if (prompt.empty()) throw Failure{FailureKind::kUsage, "the prompt is empty: it tokenizes to no ids"};
  generate::Sampler sampler(sampling_options(args));
  if (!args.stop.empty() && !tok)
    throw Failure{FailureKind::kUsage, "--stop needs a tokenizer (to decode the text it looks for)"};
  std::unique_ptr<PipelineRank> pipe = args.pipeline.nodes > 0 ? std::make_unique<PipelineRank>(local) : nullptr;
  ExecSetup setup(dir, args.placement, args.exec, pipe ? pipe->picker() : StagePicker{});
  if (pipe) pipe->loaded(setup);

  GenerateRequest req;
  req.prompt = prompt;
  req.max_new_tokens = args.max_new_tokens;
  req.eos = eos_ids(setup.model->plan.model.config, folder);
  req.choose = sampled_by(sampler);
  TextStream stream(tok ? &*tok : nullptr, args.stop, !args.json);
  req.on_token = [&stream](std::int64_t id) { return stream.add(id); };
  const GenerateResult r = pipe ? pipe->generate(setup, req) : generate(*setup.exec, req);
  stream.finish();
  if (args.json) {
    OJson j;
    j["prompt_ids"] = prompt;
    j["new_token_ids"] = r.new_ids;
    if (const auto text = stream.text()) j["text"] = *text;
    else j["text"] = nullptr;
    j["stopped_at"] = r.stopped_at;
    j["stats"] = stats_json(r);
    j["stats"]["peak_rss_bytes"] = read_process_memory().peak_rss_bytes;
    j["stats"]["compute_dtype"] = std::string(torch_name(from_scalar_type(setup.options.compute_dtype)));
    j["stats"]["weights_dtype"] = std::string(torch_name(setup.model->plan.dtype));
    j["threads"] = setup.threads;
    j["prefetch"] = setup.options.prefetch;
    if (pipe) j["pipeline"] = {{"ranks", args.pipeline.nodes}, {"stages", pipe->split().text()}};
    fmt::print("{}\n", j.dump());
    return;
  }
  if (args.stats)
    fmt::print(stderr, "memfit: {} new tokens (stopped at {}); prefill {:.3f} s; decode {:.2f} tokens/s; "
               "{:.1f} MB streamed per token\n", r.new_ids.size(), r.stopped_at, r.prefill_seconds,
               r.tokens_per_second(), r.streamed_bytes_per_token() / 1e6);
}

}  // namespace memfit::torchrt
