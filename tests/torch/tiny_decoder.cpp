#include "tiny_decoder.h"

#include <cstring>
#include <fstream>

#include <sys/stat.h>

#include <doctest/doctest.h>

#include "failure.h"

// memfit's Failure, shown with its message in any torch test that throws one.
REGISTER_EXCEPTION_TRANSLATOR(const memfit::Failure& f) { return doctest::String(f.message.c_str()); }

namespace memfit::test {

Weights llama_weights(const TinyDims& d, std::uint64_t seed) {
  at::manual_seed(seed);
  const auto mat = [](std::int64_t rows, std::int64_t cols) { return at::randn({rows, cols}) * 0.5; };
  const auto norm = [](std::int64_t n) { return 1 + at::randn({n}) * 0.1; };
  Weights w;
  w["model.embed_tokens.weight"] = at::randn({d.vocab, d.hidden});
  for (std::int64_t i = 0; i < d.layers; ++i) {
    const std::string n = "model.layers." + std::to_string(i) + ".";
    w[n + "input_layernorm.weight"] = norm(d.hidden);
    w[n + "self_attn.q_proj.weight"] = mat(d.heads * d.head_dim, d.hidden);
    w[n + "self_attn.k_proj.weight"] = mat(d.kv_heads * d.head_dim, d.hidden);
    w[n + "self_attn.v_proj.weight"] = mat(d.kv_heads * d.head_dim, d.hidden);
    w[n + "self_attn.o_proj.weight"] = mat(d.hidden, d.heads * d.head_dim);
    w[n + "post_attention_layernorm.weight"] = norm(d.hidden);
    w[n + "mlp.gate_proj.weight"] = mat(d.inter, d.hidden);
    w[n + "mlp.up_proj.weight"] = mat(d.inter, d.hidden);
    w[n + "mlp.down_proj.weight"] = mat(d.hidden, d.inter);
  }
  w["model.norm.weight"] = norm(d.hidden);
  w["lm_head.weight"] = mat(d.vocab, d.hidden);
  return w;
}

namespace {
// The causal-LM class of each model_type the tests write.
std::string causal_lm(const std::string& model_type) {
  static const std::map<std::string, std::string> classes = {
      {"llama", "Llama"},     {"mistral", "Mistral"},     {"qwen2", "Qwen2"},   {"qwen3", "Qwen3"},
      {"qwen3_moe", "Qwen3Moe"}, {"mixtral", "Mixtral"},  {"gemma", "Gemma"},   {"gemma2", "Gemma2"},
      {"gemma3_text", "Gemma3"}, {"phi3", "Phi3"}};
  return classes.at(model_type) + "ForCausalLM";
}
}  // namespace

nlohmann::json llama_config(const TinyDims& d, const std::string& model_type) {
  return {{"model_type", model_type},
          {"architectures", {causal_lm(model_type)}},
          {"vocab_size", d.vocab},
          {"hidden_size", d.hidden},
          {"intermediate_size", d.inter},
          {"num_hidden_layers", d.layers},
          {"num_attention_heads", d.heads},
          {"num_key_value_heads", d.kv_heads},
          {"head_dim", d.head_dim},
          {"max_position_embeddings", d.positions},
          {"rms_norm_eps", 1e-6},
          {"rope_theta", 10000.0},
          {"hidden_act", "silu"},
          {"tie_word_embeddings", false},
          {"torch_dtype", "float32"}};
}

void write_checkpoint(const std::string& dir, const Weights& w, const nlohmann::json& config) {
  ::mkdir(dir.c_str(), 0755);
  nlohmann::json header = {{"__metadata__", {{"format", "pt"}}}};
  std::string data;
  for (const auto& [name, t] : w) {  // std::map: sorted by name, as safetensors writes one dtype
    const auto c = t.to(at::kFloat).contiguous();
    const auto begin = data.size();
    data.append(static_cast<const char*>(c.data_ptr()), c.numel() * sizeof(float));
    header[name] = {{"dtype", "F32"}, {"shape", c.sizes().vec()}, {"data_offsets", {begin, data.size()}}};
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');
  const std::uint64_t n = h.size();
  std::ofstream out(dir + "/model.safetensors", std::ios::binary);
  char len[8];
  std::memcpy(len, &n, 8);  // little-endian hosts (x86-64, aarch64)
  out.write(len, 8);
  out << h << data;
  std::ofstream(dir + "/config.json") << config.dump(2);
}

Loaded load_tiny(const TempDir& tmp, const std::string& name, const Weights& w, const nlohmann::json& config,
                 const std::string& device_map) {
  static int written = 0;  // each checkpoint in a folder of its own, even under one name
  const std::string dir = tmp.path + "/" + name + "-" + std::to_string(++written);
  write_checkpoint(dir, w, config);
  return load(dir, device_map, "", std::nullopt, dir + "-offload");
}

at::Tensor logits_of(const Loaded& m, const at::Tensor& ids) { return run(m, ids, {/*prefetch=*/false}); }

at::Tensor tiny_ids(std::int64_t rows, std::int64_t T, std::int64_t vocab, std::int64_t salt) {
  std::vector<std::int64_t> ids;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t t = 0; t < T; ++t) ids.push_back((7 * t * t + 13 * r + 5 * t + 3 + salt) % vocab);
  return at::tensor(ids, at::TensorOptions().dtype(at::kLong)).view({rows, T});
}

double max_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

void check_close(const at::Tensor& a, const at::Tensor& b, double rel) {
  const double scale = std::max(1.0, b.abs().max().item<double>());
  CAPTURE(scale);
  CHECK(max_diff(a, b) <= rel * scale);
}

std::string layer(std::int64_t i) { return "model.layers." + std::to_string(i) + "."; }

void add_qk_norms(Weights& w, const TinyDims& d, const at::Tensor& q, const at::Tensor& k) {
  for (std::int64_t i = 0; i < d.layers; ++i) {
    const std::string n = "model.layers." + std::to_string(i) + ".self_attn.";
    w[n + "q_norm.weight"] = q.clone();
    w[n + "k_norm.weight"] = k.clone();
  }
}

// The dense MLP of each layer copied into `experts` identical experts under `module`, with a
// random router; the dense tensors removed.
Weights to_moe(Weights w, const TinyDims& d, std::int64_t experts, const std::string& module,
               const std::array<const char*, 3>& names, const std::vector<bool>& sparse) {
  at::manual_seed(11);
  for (std::int64_t i = 0; i < d.layers; ++i) {
    if (!sparse.empty() && !sparse[static_cast<std::size_t>(i)]) continue;
    const std::string n = layer(i);
    const at::Tensor dense[3] = {w[n + "mlp.gate_proj.weight"], w[n + "mlp.up_proj.weight"],
                                 w[n + "mlp.down_proj.weight"]};
    for (const char* p : {"gate_proj", "up_proj", "down_proj"}) w.erase(n + "mlp." + p + ".weight");
    w[n + module + ".gate.weight"] = at::randn({experts, d.hidden});
    for (std::int64_t e = 0; e < experts; ++e)
      for (int p = 0; p < 3; ++p)
        w[n + module + ".experts." + std::to_string(e) + "." + names[static_cast<std::size_t>(p)] + ".weight"] =
            dense[p].clone();
  }
  return w;
}

Weights to_phi3(Weights w, const TinyDims& d) {
  for (std::int64_t i = 0; i < d.layers; ++i) {
    const std::string a = layer(i) + "self_attn.", m = layer(i) + "mlp.";
    w[a + "qkv_proj.weight"] = at::cat({w[a + "q_proj.weight"], w[a + "k_proj.weight"], w[a + "v_proj.weight"]});
    w[m + "gate_up_proj.weight"] = at::cat({w[m + "gate_proj.weight"], w[m + "up_proj.weight"]});
    for (const char* p : {"q_proj", "k_proj", "v_proj"}) w.erase(a + p + ".weight");
    for (const char* p : {"gate_proj", "up_proj"}) w.erase(m + p + ".weight");
  }
  return w;
}

// Gemma 2 / 3 weights: Llama's plus the feed-forward norms (and Gemma 3's q/k norms).
Weights gemma2_weights(const TinyDims& d, bool qk_norms) {
  Weights w = llama_weights(d);
  at::manual_seed(21);
  for (std::int64_t i = 0; i < d.layers; ++i)
    for (const char* n : {"pre_feedforward_layernorm", "post_feedforward_layernorm"})
      w[layer(i) + n + ".weight"] = 1 + at::randn({d.hidden}) * 0.1;
  for (auto& [name, t] : w)
    if (name.find("norm") != std::string::npos) t = t - 1;  // stored as w, applied as 1 + w
  if (qk_norms) add_qk_norms(w, d, at::randn({d.head_dim}) * 0.1, at::randn({d.head_dim}) * 0.1);
  return w;
}

nlohmann::json gemma2_config(const TinyDims& d, const std::string& type) {
  nlohmann::json c = llama_config(d, type);
  c.erase("hidden_act");
  c["hidden_activation"] = "gelu_pytorch_tanh";
  c["query_pre_attn_scalar"] = d.head_dim;
  c["sliding_window"] = 64;
  return c;
}

namespace {
// Experts made distinct: expert e's down projection × (1 + 0.5·e).
Weights distinct_experts(Weights w, const std::string& down) {
  for (auto& [name, t] : w) {
    const auto at = name.find(".experts.");
    if (at == std::string::npos || name.find(down + ".weight") == std::string::npos) continue;
    t = t * (1 + 0.5 * std::stoi(name.substr(at + 9)));
  }
  return w;
}
}  // namespace

std::vector<TinyFamily> tiny_families(const TinyDims& d) {
  using nlohmann::json;
  std::vector<TinyFamily> out;
  const Weights base = llama_weights(d);
  at::manual_seed(31);
  const auto head_norm = [&] { return 1 + at::randn({d.head_dim}) * 0.1; };

  json llama = llama_config(d);
  llama["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                           {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 16}};
  out.push_back({"llama", base, llama});

  json mistral = llama_config(d, "mistral");
  mistral["sliding_window"] = 3;
  out.push_back({"mistral", base, mistral});

  Weights qwen2 = base;
  for (std::int64_t i = 0; i < d.layers; ++i)
    for (const char* p : {"q_proj", "k_proj", "v_proj"}) {
      const std::string n = layer(i) + "self_attn." + p;
      qwen2[n + ".bias"] = at::randn({qwen2.at(n + ".weight").size(0)});
    }
  out.push_back({"qwen2", qwen2, llama_config(d, "qwen2")});

  Weights qwen3 = base;
  add_qk_norms(qwen3, d, head_norm(), head_norm());
  out.push_back({"qwen3", qwen3, llama_config(d, "qwen3")});

  json qwen3_moe = llama_config(d, "qwen3_moe");
  qwen3_moe["num_experts"] = 4;
  qwen3_moe["num_experts_per_tok"] = 2;
  qwen3_moe["moe_intermediate_size"] = d.inter;
  qwen3_moe["mlp_only_layers"] = {1};
  out.push_back({"qwen3_moe",
                 distinct_experts(to_moe(qwen3, d, 4, "mlp", {"gate_proj", "up_proj", "down_proj"}, {true, false, true}),
                                  "down_proj"),
                 qwen3_moe});

  json mixtral = llama_config(d, "mixtral");
  mixtral["num_local_experts"] = 4;
  mixtral["num_experts_per_tok"] = 2;
  mixtral["sliding_window"] = 5;
  out.push_back({"mixtral", distinct_experts(to_moe(base, d, 4, "block_sparse_moe", {"w1", "w3", "w2"}), "w2"), mixtral});

  Weights gemma = base;
  gemma.erase("lm_head.weight");  // tied to embed_tokens (GemmaConfig's default)
  for (auto& [name, t] : gemma)
    if (name.find("norm") != std::string::npos) t = t - 1;
  json gemma_cfg = gemma2_config(d, "gemma");
  gemma_cfg.erase("query_pre_attn_scalar");
  gemma_cfg.erase("sliding_window");
  gemma_cfg["tie_word_embeddings"] = true;
  out.push_back({"gemma", gemma, gemma_cfg});

  json gemma2 = gemma2_config(d, "gemma2");  // the default caps, 50 and 30
  gemma2["sliding_window"] = 3;
  out.push_back({"gemma2", gemma2_weights(d, false), gemma2});

  json gemma3 = gemma2_config(d, "gemma3_text");
  gemma3["sliding_window"] = 3;
  gemma3["sliding_window_pattern"] = 2;
  gemma3["rope_local_base_freq"] = 100.0;
  gemma3["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}};
  out.push_back({"gemma3_text", gemma2_weights(d, true), gemma3});

  json phi3 = llama_config(d, "phi3");
  phi3["partial_rotary_factor"] = 0.5;
  phi3["sliding_window"] = 5;
  // Past the original length from the prompt on: a cache filled before the switch to the long
  // factors keeps keys rotated with the short ones (transformers' too), unlike a full forward.
  phi3["original_max_position_embeddings"] = 4;
  phi3["rope_scaling"] = {{"type", "longrope"},
                          {"short_factor", std::vector<double>{1.0, 1.5}},
                          {"long_factor", std::vector<double>{2.0, 4.0}}};
  out.push_back({"phi3", to_phi3(base, d), phi3});
  return out;
}

void for_each_family(const TinyDims& d, const std::function<void(const TinyFamily&, const Loaded&)>& check) {
  TempDir tmp;
  for (const TinyFamily& f : tiny_families(d)) {
    CAPTURE(f.name);
    check(f, load_tiny(tmp, f.name, f.weights, f.config));
  }
}

}  // namespace memfit::test
