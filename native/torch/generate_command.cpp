// `memfit generate`: prompt → ids (the model's tokenizer; --chat through its chat template) →
// the decoding loop (generation.h) with transformers' token choice (core's Sampler) → text,
// streamed as it comes, up to a stop string or an EOS id.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "command_setup.h"
#include "failure.h"
#include "file_reader.h"
#include "generation.h"
#include "hub_model.h"
#include "load_tokenizer.h"
#include "logits_log.h"
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

// Every prompt's ids: --tokens rows, each --prompt, the lines of --prompts-file, or --chat.
std::vector<std::vector<std::int64_t>> prompt_ids(const GenerateArgs& a, const std::optional<Tokenizer>& tok,
                                                  const fs::path& folder) {
  std::vector<std::vector<std::int64_t>> out;
  if (!a.tokens.empty()) {  // rows of any lengths: each prompt is its own sequence (no padding)
    std::istringstream rows(a.tokens);
    for (std::string row; std::getline(rows, row, ';');) {
      const auto ids = parse_token_rows(row)[0];
      out.emplace_back(ids.begin(), ids.end());
    }
    return out;
  }
  // A chat template writes the special tokens itself (apply_chat_template: add_special_tokens=False).
  const bool chat = !a.chat.empty();
  std::vector<std::string> texts = chat ? std::vector<std::string>{chat_prompt(a, folder)} : a.prompts;
  if (!a.prompts_file.empty()) {
    std::istringstream lines(io::read_file(a.prompts_file));
    for (std::string line; std::getline(lines, line);)
      if (!line.empty()) texts.push_back(line);
    if (texts.empty()) throw Failure{FailureKind::kUsage, fmt::format("--prompts-file {}: no prompt in it", a.prompts_file)};
  }
  for (const std::string& text : texts) {
    const auto enc = value_or_raise(tok->encode(text, !chat && !a.no_special));
    out.emplace_back(enc.ids.begin(), enc.ids.end());
  }
  return out;
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
// neighbours), cut at the first stop string, and what can no longer change printed — while the
// stream is live (several prompts print one after another: each waits for the ones before it).
class TextStream {
 public:
  TextStream(const Tokenizer* tok, std::vector<std::string> stops, bool print)
      : tok_(tok), stops_(std::move(stops)), print_(print) {}

  // False when a stop string has appeared (the text is cut before it).
  bool add(std::int64_t id) {
    ids_.push_back(static_cast<TokenId>(id));
    if (!tok_) {
      ids_text_ += fmt::format("{} ", id);
      ready_ = ids_text_.size();
      flush();
      return true;
    }
    text_ = value_or_raise(tok_->decode(ids_, /*skip_special_tokens=*/true));
    const generate::StopMatch stop = generate::find_stop(text_, stops_);
    if (stop.found) text_.resize(stop.cut);
    ready_ = stop.found ? text_.size() : generate::printable_length(text_, stops_);
    flush();
    return !stop.found;
  }
  void finish() {
    finished_ = true;
    ready_ = shown().size();
    flush();
  }
  void go_live() {
    live_ = true;
    flush();
  }
  bool finished() const { return finished_; }
  std::optional<std::string> text() const { return tok_ ? std::optional<std::string>(text_) : std::nullopt; }

 private:
  const std::string& shown() const { return tok_ ? text_ : ids_text_; }
  void flush() {
    if (!print_ || !live_) return;
    if (ready_ > printed_) {
      std::fwrite(shown().data() + printed_, 1, ready_ - printed_, stdout);
      printed_ = ready_;
    }
    if (finished_ && !ended_) fmt::print("\n"), ended_ = true;
    std::fflush(stdout);
  }
  const Tokenizer* tok_;
  std::vector<std::string> stops_;
  bool print_;
  bool live_ = false, finished_ = false, ended_ = false;
  std::vector<TokenId> ids_;
  std::string text_, ids_text_;
  std::size_t ready_ = 0, printed_ = 0;
};

// One stream per prompt, printed in prompt order: the first unfinished one is live.
class TextStreams {
 public:
  TextStreams(std::size_t n, const Tokenizer* tok, const std::vector<std::string>& stops, bool print) {
    for (std::size_t i = 0; i < n; ++i) streams_.emplace_back(tok, stops, print);
    advance();
  }
  bool add(std::size_t i, std::int64_t id) { return streams_[i].add(id); }
  void finish(std::size_t i) {
    streams_[i].finish();
    advance();
  }
  const TextStream& operator[](std::size_t i) const { return streams_[i]; }

 private:
  void advance() {
    while (live_ < streams_.size() && streams_[live_].finished()) ++live_;
    if (live_ < streams_.size()) streams_[live_].go_live();
  }
  std::vector<TextStream> streams_;
  std::size_t live_ = 0;
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

// One prompt's request as the process choosing ids needs it: transformers' token choice (core's
// Sampler), one per prompt and seeded alike, so each prompt samples as it would alone; and the
// --logits-out log, if this process writes it.
GenerateRequest choosing_request(const GenerateArgs& a, std::size_t prompt, LogitsLog* log) {
  GenerateRequest r;
  auto sampler = std::make_shared<generate::Sampler>(sampling_options(a));
  r.choose = [sampler](const at::Tensor& logits, const std::vector<std::int64_t>& ids) {
    const float* p = logits.data_ptr<float>();
    return value_or_raise(sampler->next(std::vector<float>(p, p + logits.numel()), ids));
  };
  if (log) {
    auto step = std::make_shared<std::size_t>(0);
    r.on_logits = [log, prompt, step](const at::Tensor& logits) { log->write(prompt, (*step)++, logits); };
  }
  return r;
}

OJson sequence_json(const std::vector<std::int64_t>& prompt, const GenerateResult& r, const TextStream& stream) {
  OJson j;
  j["prompt_ids"] = prompt;
  j["new_token_ids"] = r.new_ids;
  if (const auto text = stream.text()) j["text"] = *text;
  else j["text"] = nullptr;
  j["stopped_at"] = r.stopped_at;
  j["stats"] = stats_json(r);
  return j;
}

OJson pipeline_json(const GenerateArgs& args, const PipelineRank& pipe, const PipelineRun& run) {
  OJson j = {{"ranks", args.pipeline.nodes}, {"stages", pipe.split().text()}, {"micro_batches", run.results.size()}};
  j["link_s_per_token"] = run.link_seconds_per_token >= 0 ? OJson(run.link_seconds_per_token) : OJson(nullptr);
  j["per_rank"] = OJson::array();
  for (const RankStats& r : run.ranks)
    j["per_rank"].push_back({{"rank", r.rank}, {"decode_forward_s", r.decode_forward_seconds},
                             {"decode_steps", r.decode_steps}, {"recv_wait_s", r.link.recv_seconds},
                             {"send_wait_s", r.link.send_seconds}, {"messages_sent", r.link.messages_sent},
                             {"bytes_sent", r.link.bytes_sent}});
  return j;
}

}  // namespace

void run_generate(const GenerateArgs& args) {
  checkpoint::SnapshotNeeds needs;  // a Hub model: the tokenizer too, unless --tokenizer names one
  needs.generation_config = true;
  needs.tokenizer = args.tokenizer.empty();
  GenerateArgs local = args;  // the same run on the local (downloaded) folder
  local.dir = local_model(args.dir, args.placement, needs);
  const std::string& dir = local.dir;
  const bool pipeline = args.pipeline.nodes > 0;
  // The logits come out of one process alone, or a pipeline's last rank.
  std::optional<LogitsLog> log;
  if (!args.logits_out.empty() && (!pipeline || args.pipeline.rank == args.pipeline.nodes - 1)) log.emplace(args.logits_out);
  LogitsLog* log_ptr = log ? &*log : nullptr;
  if (pipeline && args.pipeline.rank != 0) {  // a later stage: no tokenizer, no output
    sampling_options(args);                   // named here too, before any rank loads
    return serve_pipeline_rank(local, [&](std::size_t k) { return choosing_request(args, k, log_ptr); });
  }
  const fs::path folder = model_folder(dir, args);
  const std::optional<Tokenizer> tok = find_tokenizer(args, folder);
  const std::vector<std::vector<std::int64_t>> prompts = prompt_ids(args, tok, folder);
  for (std::size_t k = 0; k < prompts.size(); ++k)
    if (prompts[k].empty())
      throw Failure{FailureKind::kUsage, prompts.size() == 1 ? std::string("the prompt is empty: it tokenizes to no ids")
                                                             : fmt::format("prompt {} is empty: it tokenizes to no ids", k + 1)};
  sampling_options(args);
  if (!args.stop.empty() && !tok)
    throw Failure{FailureKind::kUsage, "--stop needs a tokenizer (to decode the text it looks for)"};
  std::unique_ptr<PipelineRank> pipe = pipeline ? std::make_unique<PipelineRank>(local) : nullptr;
  // A pipeline's rank 0 reports its load failing to the others (they name it, not a lost master).
  std::optional<ExecSetup> loaded;
  if (pipe) pipe->reporting([&] { loaded.emplace(dir, args.placement, args.exec, pipe->picker()); });
  else loaded.emplace(dir, args.placement, args.exec);
  ExecSetup& setup = *loaded;
  if (pipe) pipe->loaded(setup);

  TextStreams streams(prompts.size(), tok ? &*tok : nullptr, args.stop, !args.json);
  const std::vector<std::int64_t> eos = eos_ids(setup.model->plan.model.config, folder);
  std::vector<GenerateRequest> reqs;
  for (std::size_t k = 0; k < prompts.size(); ++k) {
    GenerateRequest req = choosing_request(args, k, log_ptr);
    req.prompt = prompts[k];
    req.max_new_tokens = args.max_new_tokens;
    req.eos = eos;
    req.on_token = [&streams, k](std::int64_t id) { return streams.add(k, id); };
    req.on_end = [&streams, k] { streams.finish(k); };
    reqs.push_back(std::move(req));
  }
  const auto t0 = std::chrono::steady_clock::now();
  PipelineRun run;
  if (pipe) {
    run = pipe->generate(setup, reqs);
  } else {  // one process: the prompts one after another
    for (const GenerateRequest& req : reqs) run.results.push_back(generate(*setup.exec, req));
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (args.json) {
    OJson j;
    if (reqs.size() == 1) {
      j = sequence_json(prompts[0], run.results[0], streams[0]);
    } else {
      j["outputs"] = OJson::array();
      std::size_t tokens = 0;
      for (std::size_t k = 0; k < reqs.size(); ++k) {
        j["outputs"].push_back(sequence_json(prompts[k], run.results[k], streams[k]));
        tokens += run.results[k].new_ids.size();
      }
      j["stats"] = {{"wall_s", wall}, {"new_tokens", tokens}, {"throughput_tokens_per_s", tokens / wall}};
    }
    j["stats"]["peak_rss_bytes"] = read_process_memory().peak_rss_bytes;
    j["stats"]["compute_dtype"] = std::string(torch_name(from_scalar_type(setup.options.compute_dtype)));
    j["stats"]["weights_dtype"] = std::string(torch_name(setup.model->plan.dtype));
    j["threads"] = setup.threads;
    j["prefetch"] = setup.options.prefetch;
    if (pipe) j["pipeline"] = pipeline_json(args, *pipe, run);
    fmt::print("{}\n", j.dump());
    return;
  }
  if (args.stats)
    for (const GenerateResult& r : run.results)
      fmt::print(stderr, "memfit: {} new tokens (stopped at {}); prefill {:.3f} s; decode {:.2f} tokens/s; "
                 "{:.1f} MB streamed per token\n", r.new_ids.size(), r.stopped_at, r.prefill_seconds,
                 r.tokens_per_second(), r.streamed_bytes_per_token() / 1e6);
}

}  // namespace memfit::torchrt
