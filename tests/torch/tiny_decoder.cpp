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

}  // namespace memfit::test
