// Repo kinds sentence-transformers and PEFT (core/repo): synthetic repos — configs and safetensors
// headers written here — answered round by round as a caller would. Every expected number is the
// arithmetic of the shapes written below (nn.Linear: in·out + out; LoRA: r·(in + out)).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "memfit/error.h"
#include "memfit/format/safetensors.h"
#include "memfit/repo/repo_kind.h"

using namespace memfit;
using namespace memfit::repo;

namespace {

// A safetensors header's JSON text (what RepoFiles::headers holds) for these tensors.
std::string header(std::vector<std::pair<std::string, std::pair<DType, Shape>>> specs) {
  std::vector<safetensors::TensorEntry> entries;
  for (auto& [name, s] : specs) {
    safetensors::TensorEntry e;
    e.name = name;
    e.dtype = s.first;
    e.shape = s.second;
    entries.push_back(e);
  }
  const std::string prefix = safetensors::write_header(safetensors::layout(entries), {});
  return prefix.substr(8);
}

// A repo: its files as texts and headers; the caller's loop reads what repo_needs() asks for.
struct FakeRepo {
  std::map<std::string, std::string> texts, headers;  // by file_key
  RepoFiles files;
  std::vector<FileNeed> asked;

  // A file the repo lacks and the kind needs is left out, and the report is asked for anyway
  // (it must then name the file).
  RepoReport answer(RepoKind kind, RepoOptions options = {}) {
    bool lacking = false;
    for (int step = 0; step < kMaxRepoSteps && !lacking; ++step) {
      const auto needs = repo_needs(kind, files);
      if (needs.empty()) break;
      for (const auto& n : needs) {
        asked.push_back(n);
        const std::string key = n.key();
        if (n.form == FileNeed::Form::kSafetensorsHeader) {
          REQUIRE_MESSAGE(headers.count(key), key);
          files.headers[key] = headers[key];
        } else if (texts.count(key)) {
          files.texts[key] = texts[key];
        } else if (n.optional) {
          files.texts[key] = "";
        } else {
          lacking = true;
        }
      }
    }
    if (!lacking) REQUIRE(repo_needs(kind, files).empty());
    return repo_report(kind, files, options);
  }
  bool was_asked(const std::string& key) const {
    for (const auto& n : asked)
      if (n.key() == key) return true;
    return false;
  }
};

FakeRepo make_repo(std::map<std::string, std::string> texts, std::map<std::string, std::string> headers,
                   const std::string& name = "org/model") {
  FakeRepo r;
  r.files.repo = name;
  for (const auto& [k, v] : texts)
    if (k.find(':') == std::string::npos) r.files.listing.push_back(k);
  for (const auto& [k, v] : headers)
    if (k.find(':') == std::string::npos) r.files.listing.push_back(k);
  r.texts = std::move(texts);
  r.headers = std::move(headers);
  return r;
}

// A tiny BERT: H=32, 2 layers, I=64, vocab 100, 64 positions, 2 token types.
const char* kBert = R"({"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": 32,
  "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64, "vocab_size": 100,
  "max_position_embeddings": 64, "type_vocab_size": 2, "layer_norm_eps": 1e-12})";

const char* kModules = R"([
  {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
  {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
  {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
  {"idx": 3, "name": "3", "path": "3_Normalize", "type": "sentence_transformers.models.Normalize"}])";

FakeRepo st_repo() {
  return make_repo(
      {{"modules.json", kModules},
       {"config.json", kBert},
       {"sentence_bert_config.json", R"({"max_seq_length": 48, "do_lower_case": false})"},
       {"1_Pooling/config.json", R"({"word_embedding_dimension": 32, "pooling_mode_cls_token": true,
           "pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": false})"},
       {"2_Dense/config.json", R"({"in_features": 64, "out_features": 16, "bias": true,
           "activation_function": "torch.nn.modules.activation.Tanh"})"}},
      {// Two tensors stand for the transformer's checkpoint: 100·32 + 32·32 floats in float16.
       {"model.safetensors", header({{"embeddings.word_embeddings.weight", {DType::kF16, {100, 32}}},
                                      {"pooler.dense.weight", {DType::kF16, {32, 32}}},
                                      {"embeddings.position_ids", {DType::kI64, {1, 64}}}})},
       {"2_Dense/model.safetensors", header({{"linear.weight", {DType::kF32, {16, 64}}},
                                              {"linear.bias", {DType::kF32, {16}}}})}});
}

}  // namespace

TEST_CASE("repo st: Transformer + Pooling (cls+mean) + Dense + Normalize, from headers") {
  FakeRepo repo = st_repo();
  REQUIRE((detect_kind(repo.files.listing, "") == RepoKind::kSentenceTransformers));
  const RepoReport r = repo.answer(RepoKind::kSentenceTransformers);
  const Json& f = r.fields;
  REQUIRE(f["modules"].size() == 4);
  // Transformer: 100·32 + 32·32 = 4224 parameters (position_ids is an int64 buffer, not one),
  // 4224·2 bytes + 64·8 of position_ids.
  CHECK(f["modules"][0]["parameters"] == 4224);
  CHECK(f["modules"][0]["bytes"] == 4224 * 2 + 64 * 8);
  CHECK(f["modules"][0]["source"] == "header");
  CHECK(f["modules"][0]["output_dimension"] == 32);
  // Pooling: two modes over 32 → 64, no parameters.
  CHECK(f["modules"][1]["output_dimension"] == 64);
  CHECK(f["modules"][1]["parameters"] == 0);
  CHECK(f["pooling"] == "cls+mean");
  // Dense 64 → 16 with bias: 64·16 + 16 = 1040 float32.
  CHECK(f["modules"][2]["parameters"] == 1040);
  CHECK(f["modules"][2]["bytes"] == 1040 * 4);
  CHECK(f["modules"][3]["parameters"] == 0);
  CHECK(f["parameters"] == 4224 + 1040);
  CHECK(f["bytes"] == 4224 * 2 + 512 + 1040 * 4);
  CHECK(f["embedding_dimension"] == 16);  // the last Dense's out_features
  CHECK(f["max_seq_length"] == 48);
  CHECK(f["max_seq_length_source"] == "sentence_bert_config.json");
  CHECK(f["complete"] == true);
  REQUIRE(r.tables.size() == 1);
  CHECK(r.tables[0].rows.size() == 4);
  // The tokenizer is not read when sentence_bert_config.json gives max_seq_length.
  CHECK_FALSE(repo.was_asked("tokenizer_config.json"));
  // A dtype asked for casts the floats: Transformer 4224·4 (+ the int64 buffer), Dense the same.
  FakeRepo again = st_repo();
  RepoOptions o;
  o.dtype = "float32";
  const RepoReport r32 = again.answer(RepoKind::kSentenceTransformers, o);
  CHECK(r32.fields["bytes"] == 4224 * 4 + 512 + 1040 * 4);
}

TEST_CASE("repo st: a Transformer from its config alone (BertModel), Pooling's width, the tokenizer's limit") {
  FakeRepo repo = make_repo(
      {{"modules.json", R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])"},
       {"config.json", kBert},
       {"tokenizer_config.json", R"({"model_max_length": 40})"},
       {"1_Pooling/config.json", R"({"word_embedding_dimension": 32, "pooling_mode": "max"})"}},
      {});
  const RepoReport r = repo.answer(RepoKind::kSentenceTransformers);
  // BertModel (AutoModel, not architectures[0]'s BertForMaskedLM), H=32, I=64, L=2:
  //   embeddings 100·32 + 64·32 + 2·32 + LayerNorm 2·32       = 5376
  //   a layer: q,k,v,o 4·(32·32+32) + LN 64 + 32·64+64 + 64·32+32 + LN 64 = 8544
  //   pooler 32·32 + 32                                        = 1056
  const std::uint64_t params = 5376 + 2 * 8544 + 1056;
  CHECK(r.fields["modules"][0]["parameters"] == params);
  CHECK(r.fields["modules"][0]["bytes"] == params * 4);  // no torch_dtype: float32
  CHECK(r.fields["modules"][0]["source"] == "config");
  CHECK(r.fields["embedding_dimension"] == 32);  // Pooling "max": one mode
  CHECK(r.fields["pooling"] == "max");
  // No sentence_bert_config.json: min(max_position_embeddings 64, model_max_length 40).
  CHECK(r.fields["max_seq_length"] == 40);
  CHECK(repo.was_asked("tokenizer_config.json"));
}

TEST_CASE("repo st: an unknown module type is named in a note, not an error") {
  FakeRepo repo = make_repo(
      {{"modules.json", R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                            {"idx": 2, "name": "2", "path": "2_Custom", "type": "my_package.Whitening"}])"},
       {"config.json", kBert},
       {"sentence_bert_config.json", R"({"max_seq_length": 64})"},
       {"1_Pooling/config.json", R"({"word_embedding_dimension": 32})"}},
      {{"model.safetensors", header({{"w", {DType::kF32, {10}}}})}});
  const RepoReport r = repo.answer(RepoKind::kSentenceTransformers);
  CHECK(r.fields["modules"][2]["known"] == false);
  CHECK(r.fields["modules"][2]["parameters"].is_null());
  CHECK(r.fields["complete"] == false);
  CHECK(r.fields["embedding_dimension"] == 32);  // Pooling's default: mean alone
  bool named = false;
  for (const auto& n : r.notes) named = named || n.find("my_package.Whitening") != std::string::npos;
  CHECK(named);
}

TEST_CASE("repo st: hostile modules.json") {
  auto code_of = [](const std::string& modules) {
    FakeRepo repo = make_repo({{"modules.json", modules}, {"config.json", kBert}}, {});
    try {
      repo.answer(RepoKind::kSentenceTransformers);
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::kInternal;
  };
  CHECK((code_of("{\"idx\": 0}") == ErrorCode::kRepoInvalid));          // not a list
  CHECK((code_of("[") == ErrorCode::kInvalidJson));
  CHECK((code_of("[]") == ErrorCode::kRepoInvalid));
  CHECK((code_of(R"([{"idx": 0, "name": "0", "path": ""}])") == ErrorCode::kRepoInvalid));  // no type
  CHECK((code_of(R"([{"idx": 0, "name": "0", "path": "../../etc", "type": "sentence_transformers.models.Pooling"}])") ==
         ErrorCode::kRepoInvalid));
  CHECK((code_of(R"([{"idx": -1, "name": "0", "path": "", "type": "x.Y"}])") == ErrorCode::kRepoInvalid));
  // A Pooling module whose config is missing: named as a missing file.
  CHECK((code_of(R"([{"idx": 0, "name": "0", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])") ==
         ErrorCode::kRepoMissingFile));
}

TEST_CASE("repo st: a sharded Transformer is sized from its shards, checked against the index") {
  const char* modules = R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}])";
  const std::string shard1 = "model-00001-of-00002.safetensors", shard2 = "model-00002-of-00002.safetensors";
  // total_size: 100·32·2 + 32·32·2 bytes
  auto sharded = [&](const std::string& weight_map) {
    return make_repo({{"modules.json", modules},
                      {"config.json", kBert},
                      {"model.safetensors.index.json",
                       R"({"metadata": {"total_size": 8448}, "weight_map": {)" + weight_map + "}}"}},
                     {{shard1, header({{"embeddings.word_embeddings.weight", {DType::kF16, {100, 32}}}})},
                      {shard2, header({{"pooler.dense.weight", {DType::kF16, {32, 32}}}})}});
  };
  FakeRepo repo = sharded(R"("embeddings.word_embeddings.weight": ")" + shard1 +
                          R"(", "pooler.dense.weight": ")" + shard2 + "\"");
  const RepoReport r = repo.answer(RepoKind::kSentenceTransformers);
  CHECK(repo.was_asked(shard1));
  CHECK(repo.was_asked(shard2));
  CHECK(r.fields["modules"][0]["parameters"] == 100 * 32 + 32 * 32);
  CHECK(r.fields["modules"][0]["bytes"] == 8448);
  CHECK(r.fields["modules"][0]["source"] == "header");
  // The index names a tensor its shard lacks: an error naming the index, not a smaller model.
  FakeRepo bad = sharded(R"("embeddings.word_embeddings.weight": ")" + shard1 + R"(", "pooler.dense.weight": ")" +
                         shard2 + R"(", "pooler.dense.bias": ")" + shard2 + "\"");
  std::string message;
  try {
    bad.answer(RepoKind::kSentenceTransformers);
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK_MESSAGE(message.find("model.safetensors.index.json") != std::string::npos, message);
  CHECK_MESSAGE(message.find("pooler.dense.bias") != std::string::npos, message);
}

// ---- PEFT ----

namespace {

// A tiny Llama: H=64, I=128, 2 layers, 4 heads of 16, 2 KV heads (k/v out 32), vocab 256, bf16.
const char* kLlama = R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
  "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
  "vocab_size": 256, "max_position_embeddings": 128, "rms_norm_eps": 1e-6, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16"})";
// embed 256·64 + 2·(q 64·64 + k 64·32 + v 64·32 + o 64·64 + 3·64·128 + 2·64) + norm 64 + lm_head 256·64
constexpr std::uint64_t kLlamaParams = 16384 + 2 * (4096 + 2048 + 2048 + 4096 + 3 * 8192 + 128) + 64 + 16384;

FakeRepo peft_repo(const std::string& adapter_config, std::map<std::string, std::string> headers = {}) {
  return make_repo({{"adapter_config.json", adapter_config}, {"meta/tiny-llama:config.json", kLlama}},
                   std::move(headers), "org/adapter");
}

std::string lora_config(const std::string& extra) {
  return R"({"peft_type": "LORA", "task_type": "CAUSAL_LM", "base_model_name_or_path": "meta/tiny-llama",
             "r": 8, "lora_alpha": 16)" + extra + "}";
}

ErrorCode peft_error(FakeRepo repo) {
  try {
    repo.answer(RepoKind::kPeft);
  } catch (const Error& e) {
    return e.code();
  }
  return ErrorCode::kInternal;
}

}  // namespace

TEST_CASE("repo peft: LoRA from r and target_modules over the base's tree") {
  FakeRepo repo = peft_repo(lora_config(R"(, "target_modules": ["q_proj", "v_proj"])"));
  REQUIRE((detect_kind(repo.files.listing, "") == RepoKind::kPeft));
  const RepoReport r = repo.answer(RepoKind::kPeft);
  CHECK(repo.was_asked("meta/tiny-llama:config.json"));
  const Json& f = r.fields;
  CHECK(f["base"]["parameters"] == kLlamaParams);
  CHECK(f["base"]["bytes"] == kLlamaParams * 2);  // bfloat16
  CHECK(f["base"]["class"] == "LlamaForCausalLM");
  // Per layer: q 8·(64+64) + v 8·(64+32) = 1792; two layers; float32.
  CHECK(f["adapter"]["parameters"] == 2 * 1792);
  CHECK(f["adapter"]["bytes"] == 2 * 1792 * 4);
  CHECK(f["adapter"]["modules_wrapped"] == 4);
  CHECK(f["adapter"]["source"] == "config");
  CHECK(f["total"]["bytes"] == kLlamaParams * 2 + 2 * 1792 * 4);
  CHECK(f["merged"]["bytes"] == kLlamaParams * 2);  // LoRA folds in: the base's size
  CHECK(f["merged"]["parameters"] == kLlamaParams);
  REQUIRE(r.tables.size() == 2);
  CHECK(r.tables[1].rows.size() == 2);  // model.layers.*.self_attn.q_proj and …v_proj
  CHECK(r.tables[1].rows[0][0] == "model.layers.*.self_attn.q_proj");
  CHECK(r.tables[1].rows[0][1] == "2");
}

TEST_CASE("repo peft: a regex target, rank_pattern, layers_to_transform, DoRA") {
  {  // re.fullmatch: layer 1's q_proj and k_proj only: 8·128 + 8·96
    FakeRepo repo = peft_repo(lora_config(R"x(, "target_modules": ".*\\.layers\\.1\\.self_attn\\.(q_proj|k_proj)")x"));
    CHECK(repo.answer(RepoKind::kPeft).fields["adapter"]["parameters"] == 1024 + 768);
  }
  {  // a regex that is a suffix, not a full name, matches nothing (fullmatch)
    FakeRepo repo = peft_repo(lora_config(R"(, "target_modules": "q_proj")"));
    CHECK((peft_error(repo) == ErrorCode::kRepoInvalid));
  }
  {  // rank_pattern: v_proj at r=4: 2·(8·128 + 4·96)
    FakeRepo repo = peft_repo(lora_config(R"(, "target_modules": ["q_proj", "v_proj"], "rank_pattern": {"v_proj": 4})"));
    CHECK(repo.answer(RepoKind::kPeft).fields["adapter"]["parameters"] == 2 * (1024 + 384));
  }
  {  // layers_to_transform [0]: layer 0's q and v
    FakeRepo repo = peft_repo(lora_config(R"(, "target_modules": ["q_proj", "v_proj"], "layers_to_transform": [0])"));
    CHECK(repo.answer(RepoKind::kPeft).fields["adapter"]["parameters"] == 1792);
  }
  {  // DoRA: a magnitude per output: + 64 (q) + 32 (v) per layer
    FakeRepo repo = peft_repo(lora_config(R"(, "target_modules": ["q_proj", "v_proj"], "use_dora": true)"));
    CHECK(repo.answer(RepoKind::kPeft).fields["adapter"]["parameters"] == 2 * (1792 + 96));
  }
  {  // modules_to_save: lm_head saved whole at the base's dtype (256·64 bf16); merge keeps the size
    FakeRepo repo = peft_repo(lora_config(R"(, "target_modules": ["q_proj"], "modules_to_save": ["lm_head"])"));
    const Json f = repo.answer(RepoKind::kPeft).fields;
    CHECK(f["adapter"]["parameters"] == 2 * 1024 + 16384);
    CHECK(f["adapter"]["bytes"] == 2 * 1024 * 4 + 16384 * 2);
    CHECK(f["merged"]["bytes"] == kLlamaParams * 2);
  }
  {  // all-linear: every Linear but lm_head: per layer q 1024, k 768, v 768, o 1024, gate/up 8·192, down 8·192
    FakeRepo repo = peft_repo(lora_config(R"(, "target_modules": "all-linear")"));
    CHECK(repo.answer(RepoKind::kPeft).fields["adapter"]["parameters"] == 2 * (1024 + 768 + 768 + 1024 + 3 * 1536));
  }
}

TEST_CASE("repo peft: target_modules null is PEFT's default for the base's model_type") {
  // The same adapter as one that names the default's modules; the note says which were taken.
  const std::string kGpt2 = R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 64,
    "n_layer": 2, "n_head": 4, "vocab_size": 256, "n_positions": 128})";
  const struct {
    const char* base;
    std::string config;
    const char* targets;  // PEFT's TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING entry
  } cases[] = {{"llama", kLlama, R"(["q_proj", "v_proj"])"}, {"gpt2", kGpt2, R"(["c_attn"])"}};
  for (const auto& c : cases) {
    CAPTURE(c.base);
    auto answer = [&](const std::string& targets) {
      FakeRepo repo = make_repo({{"adapter_config.json", lora_config(R"(, "target_modules": )" + targets)},
                                 {"meta/tiny-llama:config.json", c.config}},
                                {}, "org/adapter");
      return repo.answer(RepoKind::kPeft);
    };
    const RepoReport by_default = answer("null");
    const RepoReport named = answer(c.targets);
    CHECK(by_default.fields["adapter"]["modules_wrapped"].get<int>() > 0);
    CHECK(by_default.fields["adapter"] == named.fields["adapter"]);
    CHECK(by_default.fields["merged"] == named.fields["merged"]);
    std::string notes;
    for (const auto& n : by_default.notes) notes += n + " | ";
    CHECK_MESSAGE(notes.find(std::string("target_modules is null: PEFT's default for ") + c.base) != std::string::npos,
                  notes);
  }
  // A model_type PEFT has no default for: named, as PEFT asks for target_modules.
  std::string olmo2 = kLlama;
  olmo2.replace(olmo2.find("\"llama\""), 7, "\"olmo2\"");
  olmo2.replace(olmo2.find("LlamaForCausalLM"), 16, "Olmo2ForCausalLM");
  FakeRepo repo = make_repo({{"adapter_config.json", lora_config(R"(, "target_modules": null)")},
                             {"meta/tiny-llama:config.json", olmo2}},
                            {}, "org/adapter");
  try {
    repo.answer(RepoKind::kPeft);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK((e.code() == ErrorCode::kRepoInvalid));
    CHECK_MESSAGE(e.message().find("no default for model_type 'olmo2'") != std::string::npos, e.message());
  }
}

TEST_CASE("repo peft: the adapter's header is exact; a saved, resized lm_head changes the merged size") {
  const std::string h = header({
      {"base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", {DType::kF32, {16, 64}}},
      {"base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight", {DType::kF32, {64, 16}}},
      {"base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight", {DType::kF32, {16, 64}}},
      {"base_model.model.model.layers.1.self_attn.q_proj.lora_B.weight", {DType::kF32, {64, 16}}},
      {"base_model.model.lm_head.weight", {DType::kBF16, {300, 64}}},
  });
  // The config says r=8 and other targets: the header wins.
  FakeRepo repo = peft_repo(lora_config(R"(, "target_modules": ["v_proj"])"), {{"adapter_model.safetensors", h}});
  const RepoReport r = repo.answer(RepoKind::kPeft);
  const Json& f = r.fields;
  CHECK(f["adapter"]["source"] == "header");
  CHECK(f["adapter"]["parameters"] == 4 * 1024 + 300 * 64);
  CHECK(f["adapter"]["bytes"] == 4 * 1024 * 4 + 300 * 64 * 2);
  CHECK(f["adapter"]["modules_wrapped"] == 2);
  CHECK(f["adapter"]["groups"][0]["r"] == 16);
  CHECK(f["total"]["bytes"] == kLlamaParams * 2 + 4 * 1024 * 4 + 300 * 64 * 2);
  // lm_head [256, 64] replaced by [300, 64], at the base's bfloat16: 44·64 more.
  CHECK(f["merged"]["parameters"] == kLlamaParams + 44 * 64);
  CHECK(f["merged"]["bytes"] == (kLlamaParams + 44 * 64) * 2);
}

TEST_CASE("repo peft: hostile adapters") {
  // No base model named.
  CHECK((peft_error(peft_repo(R"({"peft_type": "LORA", "r": 8, "target_modules": ["q_proj"]})")) ==
         ErrorCode::kRepoInvalid));
  // The base's config.json absent (read as empty), or never read: a missing file, named.
  {
    FakeRepo repo = make_repo({{"adapter_config.json", lora_config(R"(, "target_modules": ["q_proj"])")}}, {});
    repo.files.texts["adapter_config.json"] = repo.texts["adapter_config.json"];
    repo.files.texts["meta/tiny-llama:config.json"] = "";
    try {
      repo_report(RepoKind::kPeft, repo.files, {});
      FAIL("no error");
    } catch (const Error& e) {
      CHECK((e.code() == ErrorCode::kRepoMissingFile));
      CHECK(e.message().find("base model meta/tiny-llama") != std::string::npos);
    }
    repo.files.texts.erase("meta/tiny-llama:config.json");
    try {
      repo_report(RepoKind::kPeft, repo.files, {});
      FAIL("no error");
    } catch (const Error& e) {
      CHECK((e.code() == ErrorCode::kRepoMissingFile));
      CHECK(e.message().find("meta/tiny-llama:config.json") != std::string::npos);
    }
  }
  // Targets that match nothing, a container, a rank of 0, a bad regex, no targets.
  CHECK((peft_error(peft_repo(lora_config(R"(, "target_modules": ["nope"])"))) == ErrorCode::kRepoInvalid));
  CHECK((peft_error(peft_repo(lora_config(R"(, "target_modules": ["self_attn"])"))) == ErrorCode::kRepoInvalid));
  CHECK((peft_error(peft_repo(R"({"peft_type": "LORA", "base_model_name_or_path": "meta/tiny-llama", "r": 0,
                                  "target_modules": ["q_proj"]})")) == ErrorCode::kInvalidValue));
  CHECK((peft_error(peft_repo(lora_config(R"(, "target_modules": "(?<=x)q_proj")"))) == ErrorCode::kRepoInvalid));
  CHECK((peft_error(peft_repo(lora_config(R"(, "target_modules": 3)"))) == ErrorCode::kWrongType));
  // Another PEFT type without its weights' header: named, not guessed.
  CHECK((peft_error(peft_repo(R"({"peft_type": "IA3", "base_model_name_or_path": "meta/tiny-llama"})")) ==
         ErrorCode::kUnsupportedLibrary));
  CHECK((peft_error(peft_repo("[1]")) == ErrorCode::kInvalidJson));
}

TEST_CASE("repo peft: another PEFT type with its header: the adapter's size, no merged figure") {
  FakeRepo repo = peft_repo(R"({"peft_type": "IA3", "base_model_name_or_path": "meta/tiny-llama"})",
                            {{"adapter_model.safetensors",
                              header({{"base_model.model.model.layers.0.mlp.down_proj.ia3_l", {DType::kF32, {1, 128}}},
                                      {"base_model.model.model.layers.1.mlp.down_proj.ia3_l", {DType::kF32, {1, 128}}}})}});
  const Json f = repo.answer(RepoKind::kPeft).fields;
  CHECK(f["adapter"]["parameters"] == 256);
  CHECK(f["adapter"]["bytes"] == 1024);
  CHECK(f["merged"].is_null());
}
